"""Student's t, the exact binomial and χ²(1) of the paired tables match SciPy (values computed with
scipy 1.17 and pinned here, so the base install needs no SciPy)."""

from __future__ import annotations

import pytest

from clinseek.scoring import mcnemar_p, t_interval
from clinseek.scoring._tdist import binomial_two_sided_p, chi2_1_sf, t_quantile, t_two_sided_p

T_975 = {1: 12.706204736174694, 2: 4.302652729749462, 4: 2.7764451051977934, 9: 2.262157162798205,
         29: 2.045229642132703, 99: 1.9842169515864174, 999: 1.9623414611334493}
"""scipy.stats.t.ppf(0.975, df)."""


@pytest.mark.parametrize(("q", "df", "want"), [
    *((0.975, df, v) for df, v in T_975.items()),
    (0.995, 3, 5.840909309733355), (0.9, 15, 1.3406056078504558), (0.025, 7, -2.3646242515927844),
    (0.6, 50, 0.254699342988588), (0.5, 10, 0.0),
])
def test_t_quantile_matches_scipy(q: float, df: int, want: float) -> None:
    assert t_quantile(q, df) == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_t_quantile_and_the_two_sided_tail_are_inverse() -> None:
    for df in (1, 3, 12, 250):
        for q in (0.55, 0.8, 0.99, 0.99999):
            assert t_two_sided_p(t_quantile(q, df), df) == pytest.approx(2 * (1 - q), rel=1e-8)
    with pytest.raises(ValueError, match=r"must be in \(0, 1\)"):
        t_quantile(1.0, 3)


@pytest.mark.parametrize(("diffs", "want"), [
    ([0.1, -0.3, 0.25, 0.4, 0.0, 0.5, -0.1, 0.2], 0.20116678826907766),  # scipy.stats.ttest_1samp(x, 0).pvalue
    ([1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0], 0.00012940169548043978),
])
def test_paired_t_test_p_matches_scipy(diffs: list[float], want: float) -> None:
    n = len(diffs)
    mean = sum(diffs) / n
    sd = (sum((d - mean) ** 2 for d in diffs) / (n - 1)) ** 0.5
    assert t_two_sided_p(mean / (sd / n**0.5), n - 1) == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize(("k", "n", "want"), [  # scipy.stats.binomtest(k, n, 0.5).pvalue
    (0, 1, 1.0), (1, 1, 1.0), (3, 10, 0.34375), (5, 10, 1.0), (0, 24, 1.1920928955078125e-07),
    (7, 20, 0.26317596435546875), (13, 20, 0.26317596435546875),
])
def test_exact_binomial_matches_scipy(k: int, n: int, want: float) -> None:
    assert binomial_two_sided_p(k, n) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(("x", "want"), [(0.0, 1.0), (0.5, 0.47950012218695337),
                                         (3.841458820694124, 0.05), (10.0, 0.001565402258002549)])
def test_chi2_one_df_matches_scipy(x: float, want: float) -> None:
    assert chi2_1_sf(x) == pytest.approx(want, rel=1e-12)


def test_the_paired_statistics_use_them() -> None:
    assert mcnemar_p(3, 7) == pytest.approx(0.34375)  # exact below 25 discordant pairs
    assert mcnemar_p(20, 40) == pytest.approx(chi2_1_sf((20 - 1) ** 2 / 60))
    low, high = t_interval([0.0, 1.0, 0.5, 0.5])  # mean 0.5, sd sqrt(1/6), n 4: t.ppf(0.975, 3) = 3.18244630528
    assert (low + high) / 2 == pytest.approx(0.5)
    assert (high - low) / 2 == pytest.approx(3.1824463052837078 * (1 / 6) ** 0.5 / 2, rel=1e-9)
