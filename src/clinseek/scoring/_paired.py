"""Paired statistics over common questions (same qid, same question): bootstrap CI, the paper's t-interval, McNemar."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from ..errors import ScoringError
from ._summary_model import GroupDelta, PairedComparison, QuestionScore
from ._tdist import binomial_two_sided_p, chi2_1_sf, t_quantile, t_two_sided_p

_CHUNK = 1_000


def paired_bootstrap_ci(
    diffs: Sequence[float] | NDArray[np.float64],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean of paired differences (resampling question ids).

    Vectorised with numpy in chunks of 1,000 resamples; the same ``seed`` gives the same CI.
    Constant differences give a zero-width CI. Raises ``ValueError`` for an empty input.
    """
    values = np.asarray(diffs, dtype=np.float64)
    if values.size == 0:
        raise ValueError("paired_bootstrap_ci needs at least one difference")
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples, dtype=np.float64)
    for start in range(0, n_resamples, _CHUNK):
        size = min(_CHUNK, n_resamples - start)
        idx = rng.integers(0, values.size, size=(size, values.size))
        means[start : start + size] = values[idx].mean(axis=1)
    alpha = (1.0 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)


def t_interval(
    values: Sequence[float] | NDArray[np.float64], confidence: float = 0.95
) -> tuple[float, float]:
    """The paper's interval: mean ± t.ppf((1+c)/2, n−1) · sd/√n with sd at ddof = 1.

    Source: ClinSeekAgent's ``compute_ci_from_per_sample_scores.py`` (ref_data_scoring.md §3.3).
    Raises ``ValueError`` for fewer than two values.
    """
    arr = np.asarray(values, dtype=np.float64)
    if arr.size < 2:
        raise ValueError("t_interval needs at least two values")
    radius = float(t_quantile((1 + confidence) / 2, arr.size - 1) * arr.std(ddof=1) / np.sqrt(arr.size))
    mean = float(arr.mean())
    return mean - radius, mean + radius


T_MIN_N = 5
"""Fewest values a shown t-interval is computed from: below it t(0.975, n−1) ≥ 2.8 and sd is a guess
(n = 2 gives mean ± 12.7·sd/√2), so tables show '–' and the bootstrap CI alone."""


def shown_t_interval(values: Sequence[float] | NDArray[np.float64], low: float, high: float,
                     confidence: float = 0.95) -> tuple[float, float] | None:
    """:func:`t_interval` as the tables show it: ``None`` below :data:`T_MIN_N` values, else clipped to
    ``[low, high]``, the range the quantity can take (F1: [0, 1]; a paired Δ of F1: [−1, 1])."""
    if len(values) < T_MIN_N:
        return None
    t_low, t_high = t_interval(values, confidence)
    return max(low, t_low), min(high, t_high)


def mcnemar_p(b: int, c: int) -> float:
    """Two-sided McNemar p-value for discordant counts b (A right, B wrong) and c (A wrong, B right).

    Exact binomial test (n = b + c, p = 0.5) when b + c < 25; otherwise the χ² statistic with
    continuity correction, (|b − c| − 1)² / (b + c), on 1 degree of freedom. 1.0 when b + c = 0.
    """
    n = b + c
    if n == 0:
        return 1.0
    if n < 25:
        return binomial_two_sided_p(b, n)
    statistic = (abs(b - c) - 1) ** 2 / n
    return chi2_1_sf(statistic)


def _paired_t_p(diffs: NDArray[np.float64]) -> float:
    """Two-sided paired t-test p; constant differences give 1.0 (all zero) or 0.0 (t is infinite)."""
    if np.ptp(diffs) == 0:
        return 1.0 if diffs[0] == 0 else 0.0
    t = float(diffs.mean() / (diffs.std(ddof=1) / np.sqrt(diffs.size)))
    return t_two_sided_p(t, diffs.size - 1)


def _delta(
    group: str, pairs: list[tuple[QuestionScore, QuestionScore]], n_resamples: int, seed: int
) -> GroupDelta:
    a = np.array([qa.f1 for qa, _ in pairs])
    b = np.array([qb.f1 for _, qb in pairs])
    diffs = a - b
    low, high = paired_bootstrap_ci(diffs, n_resamples=n_resamples, seed=seed)
    t_low = t_high = p_t = None
    if diffs.size >= T_MIN_N:  # the t interval's rule: below it, one constant pair of Δ would give p = 0
        p_t = _paired_t_p(diffs)
    shown = shown_t_interval(diffs, -1.0, 1.0)
    if shown is not None:
        t_low, t_high = shown
    n_b = n_c = None
    p_mcnemar = None
    if all(qa.binary and qb.binary for qa, qb in pairs):
        right_a, right_b = a >= 0.5, b >= 0.5
        n_b, n_c = int(np.sum(right_a & ~right_b)), int(np.sum(~right_a & right_b))
        p_mcnemar = mcnemar_p(n_b, n_c)
    return GroupDelta(
        group=group,
        n=int(diffs.size),
        mean_a=float(a.mean()),
        mean_b=float(b.mean()),
        delta=float(diffs.mean()),
        ci_low=low,
        ci_high=high,
        t_low=t_low,
        t_high=t_high,
        p_t=p_t,
        mcnemar_b=n_b,
        mcnemar_c=n_c,
        mcnemar_p=p_mcnemar,
    )


_GROUPINGS: tuple[tuple[str, Callable[[QuestionScore], str]], ...] = (
    ("task_type", lambda q: q.task_type),
    ("category", lambda q: q.category),
    ("task", lambda q: q.task),
)


OnChanged = Literal["error", "exclude"]
"""What :func:`compare_questions` does with a qid whose question differs between A and B."""


def _pairs(
    a: Sequence[QuestionScore], b: Sequence[QuestionScore]
) -> tuple[list[tuple[QuestionScore, QuestionScore]], list[tuple[QuestionScore, QuestionScore]]]:
    """(pairs of the same question, pairs of one qid naming different questions), by qid."""
    by_qid = {q.qid: q for q in b if q.scored}
    same: list[tuple[QuestionScore, QuestionScore]] = []
    changed: list[tuple[QuestionScore, QuestionScore]] = []
    for qa in sorted(a, key=lambda q: q.qid):
        qb = by_qid.get(qa.qid)
        if qa.scored and qb is not None:
            (same if _same_question(qa, qb) else changed).append((qa, qb))
    return same, changed


def _same_question(qa: QuestionScore, qb: QuestionScore) -> bool:
    """Equal ``question_hash`` (or neither recorded); or one side has no result row at all (``missing``
    with ``--manifest``: its hash is the manifest's) and the other records none: that row was scored as
    the same manifest's question, so the missing side's 0 pairs with it."""
    if qa.question_hash == qb.question_hash:
        return True
    return (_no_row(qa) and qb.question_hash is None) or (_no_row(qb) and qa.question_hash is None)


def _no_row(q: QuestionScore) -> bool:
    return q.status == "missing" and not q.runs


def _changed_error(label_a: str, label_b: str, changed: list[tuple[QuestionScore, QuestionScore]],
                   shared: int) -> ScoringError:
    qa, qb = changed[0]
    shown = [h[:12] if h else "not recorded" for h in (qa.question_hash, qb.question_hash)]
    return ScoringError(
        f"{label_a} vs {label_b}: {len(changed)} of {shared} shared question ids name different questions "
        f"(e.g. qid {qa.qid}: question_hash {shown[0]} vs {shown[1]}); the runs come from different "
        "benchmark builds (or one side does not record which question it answered), so a paired test "
        "over them would pair unrelated questions. Compare runs of the same benchmark build."
    )


def compare_questions(
    a: Sequence[QuestionScore],
    b: Sequence[QuestionScore],
    *,
    label_a: str,
    label_b: str,
    n_resamples: int = 10_000,
    seed: int = 0,
    on_changed: OnChanged = "error",
) -> PairedComparison:
    """Δ = A − B of per-question F1 over the questions scored in both, overall and per group.

    A question is paired when both sides scored its qid AND answered the same question: equal
    ``question_hash``, or neither side recording one (results written before it existed, the
    reference's files), or one side having no result row (``missing`` with a manifest) against a
    row that records none. Qids are positions that every benchmark build reuses, so a qid alone
    never pairs two questions. Groups follow A's task, task type and category. A binary question
    (binary or yes/no rule) is right when its F1 ≥ 0.5 (the mean over runs); McNemar is reported
    for groups whose questions are all binary.

    Args:
        on_changed: ``error`` (default) raises on any qid whose question differs; ``exclude``
            leaves those qids out and lists them in ``excluded_qids``.

    Raises:
        ScoringError: a shared qid names different questions (``on_changed="error"``), or every
            shared qid does (``exclude``).
        ValueError: no qid is scored in both.
    """
    pairs, changed = _pairs(a, b)
    if changed and (on_changed == "error" or not pairs):
        raise _changed_error(label_a, label_b, changed, len(pairs) + len(changed))
    if not pairs:
        raise ValueError(f"{label_a} and {label_b} have no scored question id in common")
    groups = [_delta("overall", pairs, n_resamples, seed)]
    for prefix, key in _GROUPINGS:
        buckets: dict[str, list[tuple[QuestionScore, QuestionScore]]] = defaultdict(list)
        for pair in pairs:
            buckets[key(pair[0])].append(pair)
        groups += [_delta(f"{prefix}:{name}", buckets[name], n_resamples, seed) for name in sorted(buckets)]
    scored_a, scored_b = {q.qid for q in a if q.scored}, {q.qid for q in b if q.scored}
    return PairedComparison(a=label_a, b=label_b, n_resamples=n_resamples, seed=seed, groups=groups,
                            excluded_qids=[qa.qid for qa, _ in changed], n_only_a=len(scored_a - scored_b),
                            n_only_b=len(scored_b - scored_a))
