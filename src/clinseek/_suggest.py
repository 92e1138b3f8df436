"""Closest known names to an unknown one ("did you mean"), by rapidfuzz similarity (a leaf module)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rapidfuzz import fuzz, process, utils

MIN_SCORE = 60.0
"""Similarity (0-100, case-insensitive) below which a name is not offered."""
NEAR_BEST = 10.0
"""Only names within this many points of the best match are offered (not every ``ehr.*`` tool for ``ehr.x``)."""


def _similarity(a: str, b: str, **_: Any) -> float:
    """Mean of the whole-string and best-substring ratios: a typo and a fragment both score high,
    a shared prefix alone (``ehr.``) does not."""
    return (fuzz.ratio(a, b) + fuzz.partial_ratio(a, b)) / 2


def closest(name: str, choices: Iterable[str], limit: int = 3) -> list[str]:
    """Up to ``limit`` of ``choices`` most similar to ``name``, best first: none below :data:`MIN_SCORE`,
    none more than :data:`NEAR_BEST` below the best."""
    found = process.extract(name, list(choices), scorer=_similarity, processor=utils.default_process,
                            limit=limit, score_cutoff=MIN_SCORE)
    return [choice for choice, score, _ in found if score >= found[0][1] - NEAR_BEST]


def did_you_mean(name: str, choices: Iterable[str], limit: int = 3) -> str:
    """``" (did you mean 'a', 'b' or 'c'?)"`` for the :func:`closest` choices, or ``""`` when none is close."""
    found = [repr(c) for c in closest(name, choices, limit)]
    if not found:
        return ""
    return " (did you mean " + (f"{', '.join(found[:-1])} or {found[-1]}" if len(found) > 1 else found[0]) + "?)"
