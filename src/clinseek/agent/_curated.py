"""Curated Input mode: one call with the curated evidence package, answered in one ``<answer>`` block."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..models import (
    ContextLengthExceeded,
    GenerateConfig,
    ImageRef,
    Message,
    ModelCallError,
    PromptRefused,
    accepts_images,
    price_known,
)
from ..tools import strip_ansi
from ._budget import AgentBudget
from ._loop import _call_record, failed_call_record
from ._outcome import AgentOutcome
from ._prompts import PROMPT_VERSION, SYSTEM_CURATED, curated_user_prompt, images_note
from ._reading import read_curated_reply
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

    The reply should end with exactly one ``<answer>`` block (one item per line): that is the
    Curated Input format (``parse_mode="answer_tag"``, ``completed``). Any other reply goes through
    the one extractor (``extract_answer``: the last ``<answer>`` block, an embedded
    ``{"response": ...}``, a "Final Answer:" list, a last line that names candidates); an answer
    read that way is recorded with its ``parse_mode`` and ``parse_failures = 1`` (the format was not
    kept), and a reply with none is a ``no_answer`` (``parse_error``). Items outside the
    candidates are kept in ``invalid_answer``. ``images`` (by reference) go with the user turn
    when the model takes images (``vision``, default: its declared ``supports_vision``); otherwise
    a note after the package says how many were not shown, and ``images_not_sent`` counts them.

    Returns:
        The outcome; provider and harness failures end it as ``infra_error`` with the transcript
        (the failed call recorded with its attempts).
    """
    budget = budget or AgentBudget()
    config = (config or GenerateConfig()).model_copy(update={"max_output_tokens": budget.max_output_tokens})
    sees = accepts_images(model) if vision is None else vision
    messages = curated_messages(question, package, embeds_question=embeds_question, images=images, vision=sees)
    counts = {"images_sent": len(images) if sees else 0, "images_not_sent": 0 if sees else len(images)}
    transcript = Transcript(priced=price_known(model))

    def done(status: str, stop: str, **kw: object) -> AgentOutcome:
        return AgentOutcome(
            mode="curated", status=status, completed=stop == "answer_block" and not kw.get("parse_failures"),  # type: ignore[arg-type]
            stop_reason=stop, messages=list(messages), calls=list(transcript.calls),  # type: ignore[arg-type]
            usage=transcript.usage, cost_usd=transcript.total_cost_usd, turns=len(transcript.calls),
            prompt_version=PROMPT_VERSION, **counts, **kw,  # type: ignore[arg-type]
        )

    started = time.perf_counter()
    try:
        response = await model.generate(messages, [], config)
    except ModelCallError as err:
        transcript.add_call(failed_call_record(1, err, time.perf_counter() - started, transcript.priced))
        if isinstance(err, ContextLengthExceeded):
            return done("no_answer", "context_length", error=str(err), error_type=type(err).__name__)
        if isinstance(err, PromptRefused):
            return done("no_answer", "content_filter", error=str(err), error_type=type(err).__name__)
        return done("infra_error", "exception", error=f"{type(err).__name__}: {err}", error_type=type(err).__name__)
    except Exception as err:  # a harness failure: not a wrong answer
        return done("infra_error", "exception", error=f"{type(err).__name__}: {err}", error_type=type(err).__name__)
    transcript.add_call(_call_record(1, response, time.perf_counter() - started))
    messages.append(response.message)
    reading = read_curated_reply(response.message.content, question.candidates)
    return done(reading.status, reading.stop_reason, answer=reading.answer, invalid_answer=reading.invalid_answer,
                parse_failures=reading.parse_failures, parse_mode=reading.parse_mode, error=reading.error)


def curated_messages(question: Question, package: str, *, embeds_question: bool = False,
                     images: Sequence[ImageRef] = (), vision: bool = True) -> list[Message]:
    """The system and user turns of a Curated Input call: the package, the task and its answer format.

    ``images`` (by reference) go with the user turn when ``vision``; otherwise a note after the package
    says how many were not shown.
    """
    note = images_note(len(images), imaging_tools=False) if images and not vision else None
    text = strip_ansi(curated_user_prompt(question, package, embeds_question=embeds_question, note=note))
    return [Message.system(SYSTEM_CURATED), Message.user(text, list(images) if vision else [])]
