"""What a tool call runs against: one sealed episode, the limits, candidate lists and per-episode state."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._limits import Limits

if TYPE_CHECKING:
    from ..episode import Episode


@dataclass(slots=True)
class ToolContext:
    """Everything a tool may use. One context per episode (per question run); never shared.

    Attributes:
        episode: the sealed episode (one patient, one cutoff); every EHR read goes through it.
        limits: caps and timeouts for every call.
        candidates: the question's candidate lists by task name (``"diagnoses_ccs"`` ->
            candidate strings); the episode holds them as ``candidates.<name>_candidates``.
        state: per-episode scratch space for stateful tools (``ehr.think`` appends to
            ``state["thoughts"]``, ``ehr.finish`` sets ``state["answer"]``; the browser keeps
            its pages here).
    """

    episode: Episode
    limits: Limits = field(default_factory=Limits)
    candidates: Mapping[str, Sequence[str]] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
