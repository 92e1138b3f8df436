"""The loops' running accumulator of one run: calls, tool calls, token totals and cost (``clinseek.records`` types)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..records import CallRecord, ToolRecord, Usage


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
    usage: Usage = Field(default_factory=Usage)
    priced: bool | None = True
    cost_known: bool = True
    cost_usd: float = 0.0

    def add_call(self, record: CallRecord) -> None:
        """Record one model call and add its usage and cost to the totals."""
        self.calls.append(record)
        self.usage = self.usage + record.usage
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
