"""Paired statistics: bootstrap CI against analytic cases, the paper's t-interval, McNemar."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _scoring_helpers import question

from clinseek.scoring import compare_questions, mcnemar_p, paired_bootstrap_ci, t_interval


def test_constant_differences_give_a_zero_width_ci() -> None:
    low, high = paired_bootstrap_ci([0.25] * 50, n_resamples=2_000, seed=1)
    assert low == pytest.approx(0.25) and high == pytest.approx(0.25)


def test_bootstrap_ci_matches_the_normal_approximation_for_a_known_variance() -> None:
    diffs = np.random.default_rng(123).normal(0.1, 1.0, size=400)
    low, high = paired_bootstrap_ci(diffs, n_resamples=10_000, seed=7)
    se = diffs.std(ddof=1) / math.sqrt(diffs.size)
    assert (low + high) / 2 == pytest.approx(diffs.mean(), abs=0.2 * se)
    assert (high - low) / 2 == pytest.approx(1.959964 * se, rel=0.08)


def test_bootstrap_ci_is_reproducible_with_a_seed() -> None:
    diffs = np.random.default_rng(5).uniform(-1, 1, size=120)
    first = paired_bootstrap_ci(diffs, n_resamples=3_000, seed=42)
    assert paired_bootstrap_ci(diffs, n_resamples=3_000, seed=42) == first
    assert paired_bootstrap_ci(diffs, n_resamples=3_000, seed=43) != first


def test_bootstrap_needs_data() -> None:
    with pytest.raises(ValueError):
        paired_bootstrap_ci([])


def test_t_interval_hand_computed() -> None:
    # mean 3, sd (ddof=1) = sqrt(2.5), t_{0.975, 4} = 2.776445 → radius 2.776445 · sqrt(2.5) / sqrt(5)
    low, high = t_interval([1, 2, 3, 4, 5])
    radius = 2.776445 * math.sqrt(2.5) / math.sqrt(5)
    assert (low, high) == pytest.approx((3 - radius, 3 + radius), abs=1e-5)


def test_mcnemar_exact_binomial_for_few_discordant_pairs() -> None:
    # b = 8, c = 2: two-sided exact p = 2 · P(X ≤ 2 | n = 10, p = ½) = 2 · (1 + 10 + 45) / 1024
    assert mcnemar_p(8, 2) == pytest.approx(112 / 1024)
    assert mcnemar_p(2, 8) == pytest.approx(112 / 1024)


def test_mcnemar_chi_square_with_continuity_correction() -> None:
    # b = 30, c = 10: χ² = (|30 − 10| − 1)² / 40 = 9.025, p = erfc(sqrt(9.025 / 2))
    assert mcnemar_p(30, 10) == pytest.approx(math.erfc(math.sqrt(9.025 / 2)))


def test_mcnemar_without_discordant_pairs_is_one() -> None:
    assert mcnemar_p(0, 0) == 1.0


def test_compare_pairs_common_question_ids_only() -> None:
    a = [question("q1", 1.0), question("q2", 0.5), question("q3", 1.0), question("only_a", 1.0)]
    b = [question("q1", 0.0), question("q2", 0.5), question("q3", 0.5), question("only_b", 0.0)]
    comparison = compare_questions(a, b, label_a="A", label_b="B", n_resamples=500, seed=0)
    overall = comparison.groups[0]
    assert (overall.group, overall.n) == ("overall", 3)
    assert overall.delta == pytest.approx((1.0 + 0.0 + 0.5) / 3)
    assert overall.mcnemar_p is None  # not a binary group


def test_compare_reports_mcnemar_for_binary_groups() -> None:
    right_a = [1, 1, 1, 1, 0, 1]
    right_b = [0, 0, 0, 1, 1, 1]
    a = [question(f"q{i}", float(x), binary=True) for i, x in enumerate(right_a)]
    b = [question(f"q{i}", float(x), binary=True) for i, x in enumerate(right_b)]
    overall = compare_questions(a, b, label_a="A", label_b="B", n_resamples=500).groups[0]
    assert (overall.mcnemar_b, overall.mcnemar_c) == (3, 1)
    assert overall.mcnemar_p == pytest.approx(mcnemar_p(3, 1))  # 2 · 5/16 = 0.625
    assert overall.mcnemar_p == pytest.approx(0.625)


def test_compare_groups_by_task_type_category_and_task() -> None:
    a = [question("q1", 1.0, category="x", task="t1"), question("q2", 1.0, category="y", task="t2")]
    b = [question("q1", 0.0, category="x", task="t1"), question("q2", 1.0, category="y", task="t2")]
    groups = {g.group: g for g in compare_questions(a, b, label_a="A", label_b="B", n_resamples=200).groups}
    assert set(groups) == {
        "overall",
        "task_type:decision_making",
        "category:x",
        "category:y",
        "task:t1",
        "task:t2",
    }
    assert groups["category:x"].delta == 1.0 and groups["category:y"].delta == 0.0
    assert groups["category:x"].t_low is None  # one pair: no t-interval
    assert groups["category:y"].p_t is None


def test_compare_without_common_ids_raises() -> None:
    with pytest.raises(ValueError, match="no scored question id in common"):
        compare_questions([question("a", 1.0)], [question("b", 1.0)], label_a="A", label_b="B")


def test_shown_t_intervals_need_five_values_and_stay_in_range() -> None:
    from clinseek.scoring import T_MIN_N, shown_t_interval, t_interval

    assert T_MIN_N == 5
    assert shown_t_interval([1.0, 0.0], -1.0, 1.0) is None  # the paper's formula gives mean ± 6.35 here
    assert t_interval([1.0, 0.0]) == pytest.approx((-5.853, 6.853), abs=1e-3)
    values = [1.0, 0.0, 1.0, 0.0, 1.0]
    raw = t_interval(values)
    assert raw[0] < 0 and raw[1] > 1
    assert shown_t_interval(values, 0.0, 1.0) == (0.0, 1.0)
    assert shown_t_interval([0.5, 0.6, 0.5, 0.6, 0.55], 0.0, 1.0) == pytest.approx(t_interval([0.5, 0.6, 0.5, 0.6, 0.55]))


def test_tables_explain_their_columns() -> None:
    from clinseek.scoring import COLUMN_LEGEND, DELTA_HEADER, column_legend

    legend = column_legend(DELTA_HEADER)
    assert "p (McNemar): McNemar's test" in legend and "95% CI (t):" in legend and "'–' below n = 5" in legend
    assert set(COLUMN_LEGEND) >= {"p (McNemar)", "infra err", "no answer", "missing"}


@pytest.mark.parametrize(("n", "shown"), [(2, False), (4, False), (5, True)])
def test_the_t_test_p_follows_the_t_intervals_minimum_n(n: int, shown: bool) -> None:
    """newcomer20: two questions with the same Δ printed p (t) = 0 in a group whose t-interval was '–'."""
    a = [question(f"q{i}", 1.0) for i in range(n)]
    b = [question(f"q{i}", 0.5 if i else 0.0) for i in range(n)]
    overall = compare_questions(a, b, label_a="A", label_b="B", n_resamples=200).groups[0]
    assert (overall.p_t is not None) is shown and (overall.t_low is not None) is shown
