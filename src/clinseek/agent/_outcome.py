"""What one run of the agent loop or the curated one-shot returns."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..models import Message
from ..records import CallRecord, ToolRecord, Usage
from ._extract import ParseMode

Status = Literal["answered", "no_answer", "infra_error"]
StopReason = Literal[
    "finish_tool_call",
    "answer_block",
    "parse_error",
    "no_tool_call",
    "max_turns",
    "token_budget",
    "context_length",
    "content_filter",
    "exception",
    "text_answer",
]


class AgentOutcome(BaseModel):
    """The result of one run: status, answer, the full transcript and its accounting.

    ``status`` separates ``answered`` (a valid answer), ``no_answer`` (the model ended without one;
    scored 0) and ``infra_error`` (a provider or harness failure; not scored, redone on resume). The
    transcript is kept in every case, errors included (the reference discarded it on errors).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Literal["agent", "curated"]
    status: Status
    completed: bool
    """True when the run ended on ``ehr.finish`` (agent) or a parsed ``<answer>`` block (curated)."""
    stop_reason: StopReason
    error: str | None = None
    error_type: str | None = None
    answer: list[str] | None = None
    """Valid items (candidate spelling); ``None`` when the run gave no valid answer."""
    parse_mode: ParseMode | None = None
    """How the answer was read (``finish_call``, ``answer_tag``, ``response_json``, ``final_answer``,
    ``candidate_match``; see ``extract_answer``); ``None`` when nothing was read."""
    invalid_answer: list[str] = Field(default_factory=list)
    parse_failures: int = 0
    messages: list[Message] = Field(default_factory=list)
    calls: list[CallRecord] = Field(default_factory=list)
    tools: list[ToolRecord] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = None
    turns: int = 0
    reminders: int = 0
    compactions: int = 0
    prompt_version: str
    images_sent: int = 0
    """Images sent to the model (task turn and tool pictures), by reference."""
    images_not_sent: int = 0
    """Images the run had for the model but did not send because it does not take images (a text
    note said how many); never dropped silently."""

    def tool_counts(self) -> dict[str, int]:
        """Number of calls per tool name."""
        counts: dict[str, int] = {}
        for record in self.tools:
            counts[record.name] = counts.get(record.name, 0) + 1
        return counts
