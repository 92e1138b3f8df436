"""Typed records of what happened during one run: model calls, tool calls and token totals."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..models import CallAttempt, ToolCallSource


class UsageTotals(BaseModel):
    """Token totals over every model call of one run (as the provider reported them)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_tokens: int = 0
    """Prompt tokens, including cached ones."""
    output_tokens: int = 0
    """Completion tokens, including reasoning tokens where the provider counts them there."""
    cached_input_tokens: int = 0
    """Prompt tokens served from the provider's prompt cache."""

    def plus(self, input_tokens: int, output_tokens: int, cached_input_tokens: int) -> UsageTotals:
        """Return the totals with one more call added."""
        return UsageTotals(
            input_tokens=self.input_tokens + input_tokens,
            output_tokens=self.output_tokens + output_tokens,
            cached_input_tokens=self.cached_input_tokens + cached_input_tokens,
        )

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


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
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
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


class Transcript(BaseModel):
    """Running accumulator the loops fill; frozen copies go into the outcome.

    ``priced`` says whether the model has a known price (:func:`clinseek.models.price_known`;
    ``None``: the model does not say): an unpriced model's cost is ``None`` even when no call was
    made or every call failed; a model that does not say has a known cost only when a call
    succeeded and every call's cost is known.
    """

    model_config = ConfigDict(extra="forbid")

    calls: list[CallRecord] = Field(default_factory=list)
    tools: list[ToolRecord] = Field(default_factory=list)
    usage: UsageTotals = Field(default_factory=UsageTotals)
    priced: bool | None = True
    cost_known: bool = True
    cost_usd: float = 0.0

    def add_call(self, record: CallRecord) -> None:
        """Record one model call and add its usage and cost to the totals."""
        self.calls.append(record)
        self.usage = self.usage.plus(record.input_tokens, record.output_tokens, record.cached_input_tokens)
        if record.cost_usd is None:
            self.cost_known = False
        else:
            self.cost_usd += record.cost_usd

    @property
    def total_cost_usd(self) -> float | None:
        """Summed cost; ``None`` when the model is unpriced or any call's cost was unknown."""
        if not self.cost_known or self.priced is False:
            return None
        if self.priced is None and not any(c.status == "ok" for c in self.calls):
            return None
        return self.cost_usd
