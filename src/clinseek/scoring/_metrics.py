"""Set precision / recall / F1 / exact match, and the single-label rule of binary tasks."""

from __future__ import annotations

from dataclasses import dataclass

BINARY_LABELS: frozenset[str] = frozenset({"yes", "no"})
"""The two normalised labels of EHR-Bench risk-prediction tasks."""


@dataclass(frozen=True, slots=True)
class SetMetrics:
    """Per-sample metrics, each in [0, 1]."""

    precision: float
    recall: float
    f1: float
    exact_match: float

    @classmethod
    def zero(cls) -> SetMetrics:
        """All metrics 0 (no valid answer, or a wrong single answer)."""
        return cls(0.0, 0.0, 0.0, 0.0)

    @classmethod
    def one(cls) -> SetMetrics:
        """All metrics 1 (a correct single answer)."""
        return cls(1.0, 1.0, 1.0, 1.0)


def set_metrics(pred: frozenset[str], gold: frozenset[str]) -> SetMetrics:
    """Sample-wise set metrics over already-normalised items.

    P = |pred ∩ gold| / |pred|, R = |pred ∩ gold| / |gold|, F1 = 2PR / (P + R) (0 when P + R = 0),
    EM = 1 iff pred == gold. An empty ``pred`` or an empty ``gold`` scores all zeros. Source:
    EHR-Bench sample-wise F1 as used by the ClinSeekAgent paper.
    """
    if not pred or not gold:
        return SetMetrics.zero()
    hits = len(pred & gold)
    precision = hits / len(pred)
    recall = hits / len(gold)
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    return SetMetrics(precision, recall, f1, 1.0 if pred == gold else 0.0)


def binary_metrics(pred: frozenset[str], gold: frozenset[str], labels: frozenset[str]) -> SetMetrics:
    """Binary tasks: the answer must be exactly one of the two labels, else every metric is 0.

    ``{"yes", "no"}`` scores 0 (the reference gives it F1 0.667); ``{"maybe"}`` scores 0; a
    correct single label scores 1. Duplicates were already removed by normalisation.
    """
    if len(pred) != 1 or not pred <= labels:
        return SetMetrics.zero()
    return SetMetrics.one() if pred == gold else SetMetrics.zero()
