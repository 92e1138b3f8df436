"""Curated Input mode: one call with the curated evidence package and a strict ``<answer>`` format."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..models import ContextLengthExceeded, GenerateConfig, ImageRef, Message, accepts_images
from ..tools import strip_ansi
from ._answer import AnswerFormatError, parse_answer_block, validate_answer
from ._budget import AgentBudget
from ._loop import _call_record
from ._outcome import AgentOutcome
from ._prompts import PROMPT_VERSION, SYSTEM_CURATED, curated_user_prompt, images_note
from ._records import Transcript

if TYPE_CHECKING:
    from ..bench import Question
    from ..models import ChatModel


def verbatim_package(question: Question) -> tuple[str | None, bool]:
    """The curated package a manifest row carries, decided by declared fields only.

    Returns:
        ``(text, embeds_question)``: ClinSeek-Bench-Text rows whose released ``question`` embeds the
        timeline, instruction and candidates → ``(question_text, True)``; rows with a curated
        ``curated_text`` (EHR-Bench ``input``, MM ``input_text``) → ``(curated_text, False)``;
        otherwise ``(None, False)`` and the caller renders the package from the sealed episode.
    """
    if question.benchmark == "clinseek-bench-text" and question.question_text:
        return question.question_text, True
    if question.curated_text:
        return question.curated_text, False
    return None, False


async def run_curated(
    model: ChatModel,
    question: Question,
    package: str,
    *,
    embeds_question: bool = False,
    budget: AgentBudget | None = None,
    config: GenerateConfig | None = None,
    images: Sequence[ImageRef] = (),
    vision: bool | None = None,
) -> AgentOutcome:
    """Answer ``question`` in one call from the curated ``package`` (no tools).

    The reply must end with exactly one ``<answer>`` block (one item per line); a reply without it
    is a ``no_answer`` with ``parse_failures = 1`` (counted, never guessed). Items outside the
    candidates are kept in ``invalid_answer``. ``images`` (by reference) go with the user turn
    when the model takes images (``vision``, default: its declared ``supports_vision``); otherwise
    a note after the package says how many were not shown, and ``images_not_sent`` counts them.

    Returns:
        The outcome; provider and harness failures end it as ``infra_error`` with the transcript.
    """
    budget = budget or AgentBudget()
    config = (config or GenerateConfig()).model_copy(update={"max_output_tokens": budget.max_output_tokens})
    sees = accepts_images(model) if vision is None else vision
    note = images_note(len(images), imaging_tools=False) if images and not sees else None
    text = strip_ansi(curated_user_prompt(question, package, embeds_question=embeds_question, note=note))
    messages = [Message.system(SYSTEM_CURATED), Message.user(text, list(images) if sees else [])]
    counts = {"images_sent": len(images) if sees else 0, "images_not_sent": 0 if sees else len(images)}
    transcript = Transcript()

    def done(status: str, stop: str, **kw: object) -> AgentOutcome:
        return AgentOutcome(
            mode="curated", status=status, completed=stop == "answer_block", stop_reason=stop,  # type: ignore[arg-type]
            messages=list(messages), calls=list(transcript.calls), usage=transcript.usage,
            cost_usd=transcript.total_cost_usd, turns=len(transcript.calls), prompt_version=PROMPT_VERSION,
            **counts, **kw,  # type: ignore[arg-type]
        )

    started = time.perf_counter()
    try:
        response = await model.generate(messages, [], config)
    except ContextLengthExceeded as err:
        return done("no_answer", "context_length", error=str(err), error_type=type(err).__name__)
    except Exception as err:  # provider or harness failure: not a wrong answer
        return done("infra_error", "exception", error=f"{type(err).__name__}: {err}", error_type=type(err).__name__)
    transcript.add_call(_call_record(1, response, time.perf_counter() - started))
    messages.append(response.message)
    try:
        items = parse_answer_block(response.message.content)
    except AnswerFormatError as err:
        return done("no_answer", "parse_error", error=str(err), parse_failures=1)
    valid, invalid = validate_answer(items, question.candidates)
    if invalid and not valid:
        return done("no_answer", "answer_block", invalid_answer=invalid, error="no item from the candidate answers")
    return done("answered", "answer_block", answer=valid, invalid_answer=invalid)
