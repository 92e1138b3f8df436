"""The optional LLM judge: a verdict column beside the deterministic score, never mixed into it."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Protocol

import anyio

from ..errors import ClinseekError
from ..models import ChatModel, GenerateConfig, Message
from ._model import SampleScore, ScoreInput
from ._score import sample_route
from ._summary_model import QuestionScore

JUDGE_SYSTEM = (
    "You grade one answer to a clinical question against the gold answer. Reply with JSON only: "
    '{"match": true|false}. Accept synonyms and abbreviations of the same finding or concept; '
    "reject adjacent or broader concepts, extra claims and hedged answers that name both options."
)
_SINGLE = frozenset({"yes_no", "count", "datetime", "id", "name"})
_JSON = re.compile(r"\{.*\}", re.S)


class JudgeModel(Protocol):
    """Any async chat callable: OpenAI-style messages in, the reply text out."""

    async def __call__(self, messages: list[dict[str, str]]) -> str: ...


def judge_messages(row: ScoreInput) -> list[dict[str, str]]:
    """The two messages sent to the judge for one row (task, answer type, gold and answer)."""
    answer = " | ".join(row.answer or []) or "(empty response)"
    user = (
        f"Task: {row.task}\nAnswer type: {sample_route(row)}\n"
        f"Gold answer: {' | '.join(row.gold)}\nModel answer: {answer}"
    )
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


def parse_verdict(text: str) -> bool | None:
    """``match`` from the judge's reply (the first JSON object in it); ``None`` when unreadable."""
    found = _JSON.search(text)
    if not found:
        return None
    try:
        value = json.loads(found.group(0)).get("match")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, bool) else None


async def judge_rows(
    rows: Sequence[ScoreInput], judge: JudgeModel, *, concurrency: int = 4
) -> dict[tuple[str, str, str, str, int], bool | None]:
    """Ask ``judge`` about every answered multimodal single-answer row.

    Returns {(benchmark, mode, model, qid, run_index): verdict}; an unreadable reply, or a call
    that raised a ``ClinseekError`` (rate limit, provider down), is ``None`` (not judged), never
    "wrong". Other exceptions propagate.
    """
    todo = [r for r in rows if r.status == "answered" and r.answer and sample_route(r) in _SINGLE]
    verdicts: dict[tuple[str, str, str, str, int], bool | None] = {}
    limiter = anyio.Semaphore(max(1, concurrency))

    async def one(row: ScoreInput) -> None:
        async with limiter:
            try:
                reply = await judge(judge_messages(row))
            except ClinseekError:  # a failed judge call leaves the row unjudged, never "wrong"
                reply = ""
        verdicts[(*row.run_key, row.qid, row.run_index)] = parse_verdict(reply)

    async with anyio.create_task_group() as group:
        for row in todo:
            group.start_soon(one, row)
    return verdicts


def apply_verdicts(
    questions: Sequence[QuestionScore], verdicts: dict[tuple[str, str, str, str, int], bool | None]
) -> list[QuestionScore]:
    """Copies of ``questions`` with ``judge_match`` per run and ``judge_accuracy`` filled in.

    Where the reference's rules ran (``f1_reference`` set), a judged multimodal single-answer run's
    reference F1 becomes the verdict (1 or 0), as the reference grades such rows with its judge;
    clinseek's ``f1`` is never touched.
    """
    out: list[QuestionScore] = []
    for q in questions:
        runs = [
            _with_verdict(s, verdicts.get((q.benchmark, q.mode, q.model, q.qid, s.run_index))) for s in q.runs
        ]
        judged = [float(s.judge_match) for s in runs if s.scored and s.judge_match is not None]
        accuracy = sum(judged) / len(judged) if judged else None
        reference = [s.f1_reference for s in runs if s.f1_reference is not None]
        update: dict[str, object] = {"runs": runs, "judge_accuracy": accuracy}
        if reference:
            update["f1_reference"] = sum(reference) / len(reference)
        out.append(q.model_copy(update=update))
    return out


_SINGLE_ROUTES = frozenset({"yes_no", "count", "datetime", "id", "name"})


def _with_verdict(sample: SampleScore, verdict: bool | None) -> SampleScore:
    if verdict is None:
        return sample
    update: dict[str, object] = {"judge_match": verdict}
    if sample.f1_reference is not None and sample.route in _SINGLE_ROUTES:
        update["f1_reference"] = float(verdict)
    return sample.model_copy(update=update)


def chat_model_judge(model: ChatModel, *, max_output_tokens: int = 256) -> JudgeModel:
    """Wrap any ``clinseek.models.ChatModel`` as a judge (temperature 0, no tools)."""
    config = GenerateConfig(max_output_tokens=max_output_tokens, temperature=0.0)

    async def judge(messages: list[dict[str, str]]) -> str:
        turns = [
            Message(role="system" if m["role"] == "system" else "user", content=m["content"])
            for m in messages
        ]
        response = await model.generate(turns, config=config)
        return response.message.content

    return judge
