"""The loop's budgets in one recorded value (STYLE rule 9)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..bench import TEXT_BUDGET_TOKENS


@dataclass(frozen=True, slots=True)
class AgentBudget:
    """Caps of one agent run; the runner records the value it used in the run manifest.

    The reference had 200 rounds, 32,768 output tokens per call, a silent 100,000-character cut of
    tool output and no context management (ref_agent_tools.md §6.6); these defaults are tighter
    and every cut is announced.

    Attributes:
        max_turns: model calls per run; the run ends as ``no_answer`` (``max_turns``) after them.
        max_output_tokens: output tokens per call; the one output cap of a run (it replaces
            ``GenerateConfig.max_output_tokens`` in every call, agent and curated).
        max_total_tokens: input + output tokens summed over the run; the run ends as
            ``no_answer`` (``token_budget``) once it is reached.
        max_tool_chars: characters of one tool output shown to the model (a second guard after the
            tools' own cap); a longer output is cut and says so.
        context_window_tokens: the model's context size in tokens, used to decide compaction (the
            size of the next request is counted in tokens: the provider's counts of the last call
            plus the new messages counted by the server's tokenizer or the conservative estimate).
        compact_at: fraction of ``context_window_tokens`` above which older tool outputs are replaced
            by a short notice (the newest ``keep_recent_tool_outputs`` are kept).
        keep_recent_tool_outputs: tool outputs kept verbatim when compacting.
        finish_notice_turns: when this many turns are left (or ``finish_notice_at`` of the token
            budget is used) the model is told once to call ``ehr.finish`` now.
        finish_notice_at: fraction of ``max_total_tokens`` that triggers the finish notice.
        reminders: turns without a tool call answered with a reminder before the run gives up.
        answer_corrections: ``ehr.finish`` calls with non-candidate items sent back once for correction.
        curated_budget_tokens: tokens of a Curated Input package rendered from the episode (the
            newest event blocks that fit; verbatim packages from the manifest are sent as they are).
    """

    max_turns: int = 40
    max_output_tokens: int = 8_192
    max_total_tokens: int = 1_000_000
    max_tool_chars: int = 20_000
    context_window_tokens: int = 128_000
    compact_at: float = 0.75
    keep_recent_tool_outputs: int = 4
    finish_notice_turns: int = 2
    finish_notice_at: float = 0.9
    reminders: int = 1
    answer_corrections: int = 1
    curated_budget_tokens: int = TEXT_BUDGET_TOKENS

    def as_dict(self) -> dict[str, Any]:
        """The budget as a JSON-able dict (for run manifests and the configuration hash)."""
        return asdict(self)
