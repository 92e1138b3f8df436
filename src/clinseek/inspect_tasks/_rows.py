"""One inspect_ai sample as a clinseek result row, scored by clinseek's one scorer.

The scorer (from the live ``TaskState``) and ``clinseek import-inspect`` (from the ``.eval`` log) build
the row with the same function, so the F1 inspect shows is the F1 ``clinseek score`` gives the imported
run. The answer comes from the solver's :class:`SampleOutcome`; a sample run by another solver is read
from its transcript with clinseek's readers (its last successful ``ehr.finish``, else the answer written
in text; in curated mode the last reply).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool
from inspect_ai.tool import ToolCall as InspectToolCall

from ..agent import (
    FINISH_TOOL,
    PROMPT_VERSION,
    AnswerReading,
    finish_items,
    read_curated_reply,
    read_finish,
    read_text_answer,
)
from ..models import ToolNameMap
from ..records import CallRecord, Usage
from ..runner import ResultRow, message_record, row_status
from ..scoring import SampleScore, score_input_from_row, score_sample
from ..tools import tool_names
from ._messages import ImageFiles, from_inspect, inspect_name_map
from ._outcome import STORE_KEY, SampleOutcome

QUESTION_FIELDS = ("benchmark", "task", "task_type", "category", "question_hash", "policy_version", "gold_aliases",
                   "answer_type", "candidates", "subject_id", "hadm_id", "prediction_time", "manifest")
"""The result-row fields a sample's metadata carries (``clinseek.runner.question_row_fields`` and the
benchmark); the gold label is the sample's ``target``."""


@dataclass(frozen=True, slots=True)
class RunIdentity:
    """What the rows of one inspect eval share.

    Attributes:
        model: the row's model name (``inspect:<inspect model>``, e.g. ``inspect:openai/gpt-4o``).
        mode: ``agent`` or ``curated``.
        config_hash: hash of the eval's configuration (``""`` for rows only scored, never written).
        runs_per_question: the eval's epochs.
        store_id: identity of the store the eval read.
    """

    model: str
    mode: Literal["agent", "curated"]
    config_hash: str = ""
    runs_per_question: int = 1
    store_id: str | None = None


@dataclass(frozen=True, slots=True)
class SampleView:
    """One sample as the scorer (a ``TaskState``) and the importer (an ``EvalSample``) both see it.

    Attributes:
        qid: the sample id. epoch: 1-based epoch (``run_index`` is ``epoch - 1``).
        metadata: the sample's metadata (:data:`QUESTION_FIELDS`). target: the gold label items.
        store: the sample store (the solver's outcome under ``"clinseek"``). messages: the transcript.
        error: the sample's error (an infrastructure failure), else ``None``.
    """

    qid: str
    epoch: int
    metadata: Mapping[str, Any]
    target: Sequence[str]
    store: Mapping[str, Any]
    messages: Sequence[ChatMessage]
    error: str | None = None
    error_type: str | None = None
    usage: Usage = field(default_factory=Usage)
    calls: Sequence[CallRecord] = ()
    cost_usd: float | None = None
    latency_s: float = 0.0
    started_at: str | None = None
    finished_at: str | None = None


def sample_outcome(view: SampleView, mode: Literal["agent", "curated"]) -> SampleOutcome:
    """The solver's recorded outcome, else the answer read from the transcript as clinseek reads it."""
    recorded = view.store.get(STORE_KEY)
    if recorded is not None:
        return SampleOutcome.model_validate(recorded)
    candidates = list(view.metadata.get("candidates") or [])
    turns = sum(isinstance(m, ChatMessageAssistant) for m in view.messages)
    if mode == "curated":
        last = next((m.text for m in reversed(view.messages) if isinstance(m, ChatMessageAssistant)), "")
        return SampleOutcome.of(read_curated_reply(last, candidates), mode=mode, turns=turns)
    return SampleOutcome.of(_transcript_reading(view.messages, candidates), mode=mode, turns=turns)


def _transcript_reading(messages: Sequence[ChatMessage], candidates: list[str]) -> AnswerReading:
    names = _all_names()
    finish = names.to_wire(FINISH_TOOL)
    done = [(m, call) for m, call in _paired_results(messages) if m.function == finish and m.error is None]
    if done:
        call = done[-1][1]
        response = call.arguments.get("response") if call is not None else None
        return read_finish(finish_items(response), candidates)
    replies: list[str] = []
    for message in reversed(messages):
        if isinstance(message, ChatMessageAssistant):
            if message.tool_calls:
                break
            replies.append(message.text)
    return read_text_answer(replies, candidates)


def _paired_results(messages: Sequence[ChatMessage]) -> list[tuple[ChatMessageTool, InspectToolCall | None]]:
    """Each tool result with the call it answers, in the transcript's order.

    A result answers a call of the assistant turn just before it, never of another turn: models repeat
    call ids across turns (Kimi K2 and llama-server send ``call_0`` in every turn), so an id names a
    call only within its turn. Within the turn each call answers once, in order (the one of the same
    function first when a turn repeats an id); a result whose turn has no such call pairs with ``None``.
    """
    pairs: list[tuple[ChatMessageTool, InspectToolCall | None]] = []
    pending: list[InspectToolCall] = []
    for message in messages:
        if isinstance(message, ChatMessageAssistant):
            pending = list(message.tool_calls or [])
        elif isinstance(message, ChatMessageTool):
            same = [c for c in pending if c.id == message.tool_call_id] if message.tool_call_id else pending
            call = next((c for c in same if c.function == message.function), same[0] if same else None)
            if call is not None:
                pending.remove(call)
            pairs.append((message, call))
    return pairs


def _all_names() -> ToolNameMap:
    return inspect_name_map(tool_names())


def result_row(view: SampleView, run: RunIdentity, images: ImageFiles | None = None) -> ResultRow:
    """The clinseek result row of ``view`` (``ResultRow``, as ``clinseek run`` writes them).

    A sample that ended in an error is an ``infra_error`` row (not scored, as in clinseek's runs); its
    transcript is kept. ``images`` receives the transcript's inline images (else they are left out).
    """
    run_index = view.epoch - 1
    names = _all_names()
    question = {k: view.metadata[k] for k in QUESTION_FIELDS if k in view.metadata}
    common: dict[str, Any] = dict(
        qid=view.qid, run_index=run_index, runs_per_question=run.runs_per_question,
        session_id=f"{view.qid}__run_{run_index}__{run.config_hash[:8]}", mode=run.mode, model=run.model,
        config_hash=run.config_hash, store_id=run.store_id, gold=list(view.target), usage=view.usage,
        messages=[message_record(from_inspect(m, names, images)) for m in view.messages], calls=list(view.calls),
        cost_usd=view.cost_usd, latency_s=view.latency_s, started_at=view.started_at,
        finished_at=view.finished_at, **question,
    )
    if view.error is not None:
        return ResultRow(**common, prompt_version=PROMPT_VERSION, status="infra_error", completed=False,
                         stop_reason="exception", error=view.error, error_type=view.error_type,
                         turns=len(view.calls))
    outcome = sample_outcome(view, run.mode)
    status, error = row_status(outcome.status, outcome.answer, outcome.error)
    counts: dict[str, int] = {}
    for record in outcome.tools:
        counts[record.name] = counts.get(record.name, 0) + 1
    return ResultRow(**common, prompt_version=outcome.prompt_version, status=status, completed=outcome.completed,
                     stop_reason=outcome.stop_reason, error=error, answer=outcome.answer,
                     invalid_answer=outcome.invalid_answer, parse_failures=outcome.parse_failures,
                     parse_mode=outcome.parse_mode, turns=outcome.turns, tool_calls=counts, tools=outcome.tools,
                     reminders=outcome.reminders, images_sent=outcome.images_sent,
                     images_not_sent=outcome.images_not_sent)


def score_row(row: ResultRow) -> SampleScore:
    """``row`` scored by clinseek's one scorer (``clinseek.scoring.score_sample``), as ``clinseek score`` does."""
    return score_sample(score_input_from_row(row.model_dump(mode="json"), {}))
