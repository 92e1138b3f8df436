"""Typed records of what happened during one run: model calls (with their attempts) and tool calls."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ._usage import Usage

ToolCallSource = Literal["native", "content"]
"""Where a reply's tool calls were read: the provider's native fields, or its text content."""


class CallAttempt(BaseModel):
    """One HTTP attempt of a model call, as the retrying wrapper saw it (``clinseek.runner``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ok: bool
    """True for the attempt that returned the response."""
    latency_s: float
    """Wall time of this attempt in seconds (the provider's HTTP call; a failed attempt until it failed)."""
    error_type: str | None = None
    """Class name of the error of a failed attempt (``ProviderUnavailable``, ``RateLimited``...)."""
    status_code: int | None = None
    """The HTTP status of a failed attempt, when there was one."""
    error: str | None = None
    """The error message of a failed attempt (never holds a credential)."""
    wait_s: float = 0.0
    """Seconds waited after this attempt before the next one (backoff or ``retry-after``)."""


class CallRecord(BaseModel):
    """One model call: its turn, outcome, latency, attempts, usage and cost.

    A call is one request of the loop, retried by the runner's wrapper as needed; ``attempts`` lists
    every HTTP attempt. A call that finally failed is kept (``status="failed"``, ``error``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn: int
    """1-based turn of the loop (curated mode has one turn)."""
    latency_s: float
    """Wall time of the successful attempt (the provider's HTTP call), seconds; 0 for a failed call."""
    total_s: float | None = None
    """Wall time of the whole call: every attempt, backoff, rate-limit and concurrency waits
    (``None`` in rows written before it was recorded)."""
    status: Literal["ok", "failed"] = "ok"
    """``failed``: no attempt succeeded (``error`` says why); the run then ended."""
    error: str | None = None
    """The last error of a failed call."""
    error_type: str | None = None
    """Its class name (``ProviderUnavailable``, ``ContextLengthExceeded``...)."""
    attempts: list[CallAttempt] = Field(default_factory=list)
    """Every HTTP attempt (ok, latency, error, wait before the next); empty when no retrying wrapper
    tracked them (a single attempt)."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens of the call (zeros for a failed call, or when the reply reported none)."""
    usage_reported: bool = True
    """False when the reply carried no token usage (the counts are then 0 and the cost unknown)."""
    cost_usd: float | None = None
    """Cost from the price table; ``None`` when the model's price (or the call's usage) is unknown,
    never 0 for unknown. A failed call of a priced model costs 0 (error replies are not billed)."""
    stop_reason: str | None = None
    """The provider's stop reason (``tool_use``, ``end_turn``, ``stop``, ``length``...)."""
    request_id: str | None = None
    """The provider's request id, when it sent one."""
    tool_calls_source: ToolCallSource | None = None
    """Where the reply's tool calls were read: ``native`` fields or the ``content`` text (a server
    that does not parse them); ``None`` when it had none."""


class ToolRecord(BaseModel):
    """One tool call as executed by the loop."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn: int
    """1-based turn in which the model asked for the call."""
    name: str
    """Canonical dotted tool name (``ehr.run_sql_query``)."""
    ok: bool
    """False when the tool returned a structured error (``ToolError``)."""
    error_kind: str | None = None
    """The tool error kind (``bad_argument``, ``timeout``, ``unknown_tool``...), else ``None``."""
    elapsed_s: float = 0.0
    """Wall time of the tool call in seconds."""
    output_chars: int = 0
    """Characters of output shown to the model (after the loop's cap)."""
    truncated: bool = False
    """True when the tool or the loop cut the output (the output says so)."""
