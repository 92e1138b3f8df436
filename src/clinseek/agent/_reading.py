"""How a run's answer is read: from an ``ehr.finish`` call, from text, or from a Curated Input reply.

One reader per way a run can end, shared by the agent loop, Curated Input mode and any other loop that
drives clinseek's tools (the inspect_ai adapter), so an answer given the same way is read the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ._answer import validate_answer
from ._extract import ParseMode, extract_answer, finish_call_items
from ._outcome import StopReason
from ._prompts import INVALID_ANSWER

if TYPE_CHECKING:
    from ..bench import Question
    from ..tools import ToolContext


@dataclass(frozen=True, slots=True)
class AnswerReading:
    """What a run's end says about its answer (the answer fields of :class:`~clinseek.agent.AgentOutcome`).

    Attributes:
        status: ``answered`` (items from the candidate answers) or ``no_answer``.
        stop_reason: ``finish_tool_call``, ``text_answer``, ``no_tool_call``, ``answer_block`` or ``parse_error``.
        completed: the run ended as its mode asks (``ehr.finish``; one well-formed ``<answer>`` block).
        answer: the valid items in the candidates' spelling (``None``: no answer was read).
        invalid_answer: items outside the candidate answers.
        parse_mode: how the answer was read (``finish_call``, ``answer_tag`` or an extractor fallback).
        parse_failures: 1 when a Curated Input reply did not keep the format.
        error: why there is no answer.
    """

    status: Literal["answered", "no_answer"]
    stop_reason: StopReason
    completed: bool
    answer: list[str] | None = None
    invalid_answer: list[str] = field(default_factory=list)
    parse_mode: ParseMode | None = None
    parse_failures: int = 0
    error: str | None = None


def read_finish(items: list[str] | None, vocabulary: Sequence[str]) -> AnswerReading:
    """The answer of a successful ``ehr.finish`` call whose ``response`` held ``items`` (``finish_items``).

    ``vocabulary`` is :func:`answer_vocabulary` (empty: every item is valid). Items that are not candidates
    are cleaned and split as text answers are (:func:`~clinseek.agent._extract.finish_call_items`). An answer with no valid
    item and some invalid ones is ``no_answer``; a loop may first send :func:`correction_message`.
    """
    valid, invalid = validate_answer(finish_call_items(items or [], vocabulary), vocabulary)
    if items is not None and (valid or not invalid):
        return AnswerReading("answered", "finish_tool_call", True, answer=valid, invalid_answer=invalid,
                             parse_mode="finish_call")
    return AnswerReading("no_answer", "finish_tool_call", True, invalid_answer=invalid,
                         error="ehr.finish gave no item from the candidate answers")


def correction_message(invalid: Sequence[str]) -> str:
    """The user turn that asks once for an ``ehr.finish`` without the ``invalid`` items."""
    return INVALID_ANSWER.format(items=", ".join(repr(i) for i in invalid))


def read_text_answer(replies: Sequence[str], candidates: Sequence[str]) -> AnswerReading:
    """The answer a model that stopped calling tools wrote in text (``extract_answer``).

    ``replies`` are the contents of its assistant turns since its last tool call, newest first; the
    first that holds an answer decides. None: ``no_answer`` with stop reason ``no_tool_call``.
    """
    for content in replies:
        found = extract_answer(content, candidates)
        if found is None:
            continue
        valid, invalid = validate_answer(found.items, candidates)
        if valid:
            return AnswerReading("answered", "text_answer", False, answer=valid, invalid_answer=invalid,
                                 parse_mode=found.parse_mode)
        return AnswerReading("no_answer", "text_answer", False, invalid_answer=invalid, parse_mode=found.parse_mode,
                             error="the answer written in text held no item from the candidate answers")
    return AnswerReading("no_answer", "no_tool_call", False, error="the model stopped calling tools without ehr.finish")


def read_curated_reply(content: str, candidates: Sequence[str]) -> AnswerReading:
    """The answer of a Curated Input reply: one ``<answer>`` block (``answer_tag``, completed), else what
    the one extractor reads (recorded with its ``parse_mode`` and ``parse_failures = 1``), else ``no_answer``."""
    found = extract_answer(content, candidates)
    if found is None:
        return AnswerReading("no_answer", "parse_error", False, parse_failures=1,
                             error="the reply has no <answer> block and no answer in its text")
    stop: StopReason = "answer_block" if found.parse_mode == "answer_tag" else "text_answer"
    failures = 0 if found.well_formed else 1
    completed = stop == "answer_block" and not failures
    valid, invalid = validate_answer(found.items, candidates)
    if invalid and not valid:
        return AnswerReading("no_answer", stop, completed, invalid_answer=invalid, parse_failures=failures,
                             parse_mode=found.parse_mode, error="no item from the candidate answers")
    return AnswerReading("answered", stop, completed, answer=valid, invalid_answer=invalid, parse_failures=failures,
                         parse_mode=found.parse_mode)


def answer_vocabulary(ctx: ToolContext, question: Question) -> Sequence[str]:
    """The allowed answers: the question's candidates, else the names in its task's candidate table in
    the episode (AgentEHR-Bench), else none (every item is valid). Blocking (reads the episode)."""
    if question.candidates:
        return question.candidates
    from ..bench import table_name

    name = f"candidates.{table_name(question.task)}"
    if not ctx.episode.has_table(name):
        return ()
    found = ctx.episode.execute(f"SELECT DISTINCT candidate FROM {name} WHERE candidate IS NOT NULL",
                                tables=(), max_rows=10_000_000)
    return [r[0] for r in found.rows]
