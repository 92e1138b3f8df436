"""The prompt version recorded with every result must change whenever the prompt text changes.

Results, resume keys and distilled training data are tied to ``PROMPT_VERSION``; two different
texts under one version would make runs look comparable when they are not. When this test fails
after an intended prompt edit: bump ``PROMPT_VERSION`` in ``clinseek/agent/_prompts.py`` and add
the new version with the printed digest below.
"""

from __future__ import annotations

import hashlib

from clinseek.agent import _prompts

PROMPT_DIGESTS = {
    "clinseek-prompts-v3": "307364c007ba57720c3141b1582ccffb3e61e8150aaa76a01c814ac856cd2577",
    "clinseek-prompts-v4": "307364c007ba57720c3141b1582ccffb3e61e8150aaa76a01c814ac856cd2577",  # AgentEHR role text
}


def _prompt_text_digest() -> str:
    texts = sorted(
        (name, value)
        for name, value in vars(_prompts).items()
        if name.isupper() and isinstance(value, str) and name != "PROMPT_VERSION"
    )
    blob = "\n\x00".join(f"{name}={value}" for name, value in texts)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def test_prompt_text_matches_its_version() -> None:
    digest = _prompt_text_digest()
    version = _prompts.PROMPT_VERSION
    assert version in PROMPT_DIGESTS, f"new prompt version {version}: add it with digest {digest}"
    assert PROMPT_DIGESTS[version] == digest, (
        f"the prompt text changed but PROMPT_VERSION is still {version}: bump it and record digest {digest}"
    )


TASK_PROMPT_DIGESTS = {
    "clinseek-prompts-v4": "0653059665d0bb5a49945f32ed77d50188dfe8347aa3424878f2b5c37f0464be",
}
"""Per prompt version: the digest of the task prompts of every registered task (the AgentEHR-Bench role
templates, the EHR-Bench prompt with each task's instruction), which module constants do not cover."""


def _task_prompts_digest() -> str:
    import datetime as dt

    from clinseek.bench import AGENTEHR_TASKS, TEXT_TASKS, Question

    def question(benchmark: str, task: str, instruction: str | None, candidates: tuple[str, ...]) -> Question:
        return Question(qid=f"q_{task}", benchmark=benchmark, source="clinseek-build", task=task,  # type: ignore[arg-type]
                        task_type="decision_making", category=None, subject_id=10000032,
                        prediction_time=dt.datetime(2180, 7, 23, 12), policy="clinseek-text-v1",
                        instruction=instruction, candidates=candidates, label=("a",))

    texts = [_prompts.agentehr_task_prompt(question("agentehr-bench", t.name, None, ())) for t in AGENTEHR_TASKS]
    texts += [_prompts.agentehr_task_prompt(question("agentehr-bench", "not_a_task", None, ("a", "b")))]
    texts += [_prompts.ehr_bench_task_prompt(question("clinseek-bench-text", t.name, t.instruction, ("a", "b")))
              for t in TEXT_TASKS]
    return hashlib.sha256("\n\x00".join(texts).encode("utf-8")).hexdigest()


def test_task_prompts_match_their_version() -> None:
    digest = _task_prompts_digest()
    version = _prompts.PROMPT_VERSION
    assert TASK_PROMPT_DIGESTS.get(version) == digest, (
        f"the task prompts changed under {version}: bump PROMPT_VERSION and record digest {digest}"
    )
