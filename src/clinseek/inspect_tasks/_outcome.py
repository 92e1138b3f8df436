"""What the clinseek solvers record in each sample's store: how the run ended and how its answer was read."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..agent import PROMPT_VERSION, AnswerReading, ToolRecord

STORE_KEY = "clinseek"
"""The key of the sample store (``TaskState.store``, ``EvalSample.store`` in the log) that holds the outcome."""


class SampleOutcome(BaseModel):
    """One sample's run as the clinseek solver saw it; the scorer and ``clinseek import-inspect`` read it.

    The answer fields are an :class:`~clinseek.agent.AnswerReading` (the readers clinseek's own loops
    use); the rest is what a result row records besides the transcript.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    mode: Literal["agent", "curated"]
    status: Literal["answered", "no_answer"]
    stop_reason: str
    """As in ``ResultRow.stop_reason``; an inspect limit that ended the sample is ``token_budget``
    (token or cost limit), ``max_turns`` (message limit) or ``time_limit`` (time or working limit)."""
    completed: bool
    answer: list[str] | None = None
    invalid_answer: list[str] = Field(default_factory=list)
    parse_mode: str | None = None
    parse_failures: int = 0
    error: str | None = None
    turns: int = 0
    """Model calls of the run."""
    reminders: int = 0
    prompt_version: str = PROMPT_VERSION
    tools_offered: list[str] = Field(default_factory=list)
    """Canonical names of the tools offered (``[]`` in curated mode)."""
    tools: list[ToolRecord] = Field(default_factory=list)
    """Every tool call as clinseek ran it (canonical name, ``ok``, ``error_kind``, time, characters shown)."""
    images_sent: int = 0
    images_not_sent: int = 0

    @classmethod
    def of(cls, reading: AnswerReading, **fields: Any) -> SampleOutcome:
        """The outcome whose answer was read as ``reading``."""
        return cls(status=reading.status, stop_reason=reading.stop_reason, completed=reading.completed,
                   answer=reading.answer, invalid_answer=list(reading.invalid_answer), parse_mode=reading.parse_mode,
                   parse_failures=reading.parse_failures, error=reading.error, **fields)
