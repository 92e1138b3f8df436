""""Where to look next" after a demo: the files written and commands to replay, rescore and rerun."""

from __future__ import annotations

import shlex
from pathlib import Path

from ..bench import Question, load_questions
from ..errors import install_hint
from ..runner import model_slug
from ..scoring import ScoreReport
from ._config import DEMO_MODELS

DEMO_DOC = 'docs/demo.md, "What the demo shows (and what it does not)"'
"""Where the demo's numbers are explained (a section of docs/demo.md)."""


def _q(path: Path | str) -> str:
    return shlex.quote(str(path))


def replay_command(store: Path, question: Question, tool: str = "ehr.load_ehr", program: str = "clinseek") -> str:
    """A ``clinseek tool`` command that opens ``question``'s own sealed episode and runs ``tool`` once
    (``program``: how the user calls clinseek, e.g. ``.venv/bin/clinseek``)."""
    parts = [program, "tool", tool, "--store", _q(store), "--subject-id", str(question.subject_id),
             "--prediction-time", _q(question.prediction_time.isoformat(sep=" ")), "--policy", question.policy]
    if question.target_hadm_id is not None:
        parts += ["--target-hadm-id", str(question.target_hadm_id)]
    if question.target_stay_id is not None:
        parts += ["--target-stay-id", str(question.target_stay_id)]
    for study in question.study_ids:
        parts += ["--study-id", str(study)]
    for dicom in question.dicom_ids:
        parts += ["--dicom-id", _q(dicom)]
    if question.hide_cxr_reports:
        parts.append("--hide-cxr-reports")
    return " ".join(parts)


def _example(bench: Path) -> Question | None:
    """The first text decision-making question (else the first question) of the benchmark."""
    questions = load_questions(bench)
    text = [q for q in questions if q.task_type == "decision_making" and not q.study_ids]
    pool = text or questions
    return pool[0] if pool else None


def numbers_note(report: ScoreReport) -> str | None:
    """One line under the F1 table pointing to :data:`DEMO_DOC` for the numbers that surprise a newcomer:
    the count of text questions (43 subtasks x ``--per-task``: 129 with the defaults) and, when it happens,
    ``baseline:evidence`` scoring below ``baseline:null`` on the multimodal questions; ``None`` when the
    demo printed neither."""
    evidence, null = DEMO_MODELS
    text = max((r.overall.n_questions for r in report.runs if r.benchmark == "clinseek-bench-text"), default=0)
    mm = {(r.mode, r.model): r.overall.f1 for r in report.runs if r.benchmark == "clinseek-bench-mm"}
    pairs = [(mm.get((mode, evidence)), mm.get((mode, null))) for mode in ("agent", "curated")]
    below = any(a is not None and b is not None and a < b for a, b in pairs)
    why = ([f"{text} text questions"] if text else []) + ([f"{evidence} scores below {null} on mm"] if below else [])
    return f"Why {' and why '.join(why)}: {DEMO_DOC}" if why else None


def _openai_extra() -> str:
    """``; its extra: pip install ...`` while the ``[openai]`` extra (aiohttp, no SDK) is not installed, else ``""``."""
    from importlib.util import find_spec

    return "" if find_spec("aiohttp") is not None else f"; its extra: {install_hint('openai')}"


def next_steps(out: Path, store: Path, program: str = "clinseek") -> list[tuple[str, str]]:
    """(what, where/how) pairs the CLI prints after the tables; paths are those of this demo, commands
    start with ``program`` (how the user called clinseek: ``clinseek`` when it is on PATH)."""
    runs, bench = out / "runs", out / "bench"
    evidence, null = (model_slug(m) for m in DEMO_MODELS)
    text = runs / "clinseek-bench-text"
    steps = [
        ("scores, every table", str(out / "scores" / "summary.md")),
        ("per-question scores", str(out / "scores" / "per_question.jsonl")),
        ("trajectories (tool calls, answers)", str(text / "agent" / evidence / "results.jsonl")),
        ("the benchmark", str(bench / "ClinSeek-Bench_text.json")),
    ]
    example = _example(bench)
    if example is not None:
        steps.append((f"replay question {example.qid}'s episode", replay_command(store, example, program=program)))
    steps += [
        ("rescore", f"{program} score {_q(runs)} --out {_q(out / 'scores')}"),
        ("one paired table", f"{program} compare {_q(text / 'agent' / evidence)} {_q(text / 'agent' / null)}"),
        (f"a real LLM (OPENAI_API_KEY{_openai_extra()})",
         f"{program} run --bench {_q(bench)} --store {_q(store)} --model openai:gpt-5.1 --mode both --out {_q(runs)}"),
        ("a local server (vLLM, Ollama...; the same [openai] extra)",
         f"{program} run --bench {_q(bench)} --store {_q(store)} --model openai:MODEL "
         f"--base-url http://127.0.0.1:8000/v1 --mode both --out {_q(runs)}"),
    ]
    return steps
