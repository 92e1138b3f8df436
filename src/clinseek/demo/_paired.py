"""Baseline-vs-baseline paired comparisons (the scorer pairs agent vs curated; the demo adds model vs model)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from ..scoring import GroupDelta, PairedComparison, QuestionScore, ScoreReport, compare_questions


def model_comparisons(
    questions: Sequence[QuestionScore], model_a: str, model_b: str, *, n_resamples: int, seed: int
) -> list[PairedComparison]:
    """Δ = ``model_a`` − ``model_b`` per (benchmark, mode), over the question ids scored in both.

    Uses :func:`clinseek.scoring.compare_questions` (paired bootstrap 95 % CI, the paper's
    t-interval, McNemar on binary groups), which pairs a qid only when both models answered the
    same question (``question_hash``). A (benchmark, mode) present for only one model, or without
    a scored question in common, is left out. Labels are ``benchmark/mode/model``.

    Raises:
        ScoringError: a qid names different questions for the two models (their runs used
            different benchmark builds); never a paired test over unrelated questions.
    """
    runs: dict[tuple[str, str, str], list[QuestionScore]] = defaultdict(list)
    for q in questions:
        runs[(q.benchmark, q.mode, q.model)].append(q)
    out: list[PairedComparison] = []
    for bench, mode, model in sorted(runs):
        other = runs.get((bench, mode, model_b))
        if model != model_a or not other:
            continue
        try:
            out.append(compare_questions(
                runs[(bench, mode, model)], other, label_a=f"{bench}/{mode}/{model_a}",
                label_b=f"{bench}/{mode}/{model_b}", n_resamples=n_resamples, seed=seed,
            ))
        except ValueError:  # nothing scored in common
            continue
    return out


def find_delta(report: ScoreReport, label_a: str, label_b: str, group: str) -> GroupDelta | None:
    """The ``group`` row (``overall``, ``task_type:decision_making``...) of the A − B comparison, if any."""
    for comparison in report.paired:
        if comparison.a == label_a and comparison.b == label_b:
            return next((g for g in comparison.groups if g.group == group), None)
    return None
