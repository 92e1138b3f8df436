"""Student's t and the exact two-sided binomial test, with the standard library only.

The paired tables need three distribution functions: the t quantile of the paper's interval, the
two-sided p of a paired t-test, and McNemar's p (exact binomial below 25 discordant pairs, else χ² on
one degree of freedom). They are computed here from the regularized incomplete beta function
(Lentz's continued fraction, Numerical Recipes §6.4) and ``math.erfc``, so the base install needs no
SciPy; tests compare them with SciPy's values to 1e-9.
"""

from __future__ import annotations

import math

_EPS = 1e-15
_TINY = 1e-300
_MAX_TERMS = 500


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_TERMS + 1):
        m2 = 2 * m
        for numerator in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                          -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"incomplete beta ({a}, {b}, {x}) did not converge")  # pragma: no cover


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


def _t_central(t: float, df: float) -> float:
    """P(|T| < |t|), accurate near t = 0 (where the two-sided tail is close to 1)."""
    return incomplete_beta(0.5, df / 2.0, t * t / (df + t * t))


def t_quantile(q: float, df: float) -> float:
    """The ``q`` quantile of Student's t with ``df`` degrees of freedom (``scipy.stats.t.ppf``), 0 < q < 1.

    Solved by bisection on |t| (both tails are monotone in it) to double precision: on the central
    probability |2q − 1| when it is below 0.5, else on the two-sided tail 2·min(q, 1 − q).
    """
    if not 0.0 < q < 1.0:
        raise ValueError(f"quantile level must be in (0, 1), got {q}")
    if q == 0.5:
        return 0.0
    central = abs(2.0 * q - 1.0)
    tail = 2.0 * min(q, 1.0 - q)

    def below(t: float) -> bool:  # is |t| below the wanted quantile?
        return _t_central(t, df) < central if central < 0.5 else t_two_sided_p(t, df) > tail

    low, high = 0.0, 1.0
    while below(high):
        high *= 2.0
    for _ in range(2000):
        mid = (low + high) / 2.0
        if mid in (low, high):
            break
        low, high = (mid, high) if below(mid) else (low, mid)
    value = (low + high) / 2.0
    return value if q > 0.5 else -value


def binomial_two_sided_p(k: int, n: int) -> float:
    """Exact two-sided p of ``k`` successes in ``n`` trials with p = 0.5 (``scipy.stats.binomtest``):
    the probability of an outcome at least as far from n/2 as ``k``."""
    low = min(k, n - k)
    if 2 * low == n:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(low + 1)) / 2.0**n
    return min(1.0, 2.0 * tail)


def chi2_1_sf(x: float) -> float:
    """P(X >= x) for χ² with one degree of freedom: erfc(sqrt(x / 2))."""
    return math.erfc(math.sqrt(max(x, 0.0) / 2.0))
