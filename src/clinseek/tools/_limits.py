"""Every cap and timeout a tool call runs under, in one recorded value (STYLE rule 9)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Limits:
    """Caps and timeouts for tool calls; the runner records the value it used.

    Attributes:
        sql_timeout_s: wall-clock seconds one query may run before it is interrupted
            (the tool then returns the error kind ``"timeout"``).
        max_rows: rows shown per tool call; a tool that finds more says how many exist and how
            to narrow (time window, ``LIMIT``/``OFFSET``).
        max_tool_chars: characters of text one tool result may hold; longer output is cut at a
            row boundary and says so.
        max_cell_chars: characters shown of one value (long note text); the cut is marked.
        max_unique_values: distinct values ``ehr.get_unique_values`` lists before it shows only
            the most frequent ones.
        candidate_top_k: candidates returned per keyword by the fuzzy and semantic tools.
        fuzzy_min_score: rapidfuzz ``WRatio`` score (0-100) below which a fuzzy candidate is dropped.
        semantic_min_score: cosine similarity below which a semantic candidate is dropped.
        semantic_model_path: local directory of a sentence-transformers model for
            ``ehr.get_candidates_by_semantic_similarity`` (``None`` = the tool is not enabled).
    """

    sql_timeout_s: float = 10.0
    max_rows: int = 200
    max_tool_chars: int = 16_000
    max_cell_chars: int = 1_000
    max_unique_values: int = 50
    candidate_top_k: int = 5
    fuzzy_min_score: float = 50.0
    semantic_min_score: float = 0.5
    semantic_model_path: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The limits as a JSON-able dict (for run manifests)."""
        return asdict(self)
