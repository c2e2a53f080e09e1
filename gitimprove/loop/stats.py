"""Small, dependency-free statistics: Student-t quantiles, robust spread and location."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from functools import cache


def _betacf(a: float, b: float, x: float) -> float:
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + aa / c if abs(c) > 1e-300 else 1e300
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + aa / c if abs(c) > 1e-300 else 1e300
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 3e-14:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(ln)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    x = df / (df + t * t)
    tail = 0.5 * _betainc(df / 2.0, 0.5, x)
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t with `df` degrees of freedom: a Cornish-Fisher start,
    then Newton steps on the CDF (bisection when Newton strays)."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must be in (0, 1)")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    z = statistics.NormalDist().inv_cdf(p)
    n = df
    t = (
        z
        + (z**3 + z) / (4 * n)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * n**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * n**3)
    )
    log_c = math.lgamma((n + 1) / 2) - math.lgamma(n / 2) - 0.5 * math.log(n * math.pi)
    for _ in range(8):
        pdf = math.exp(log_c - (n + 1) / 2 * math.log1p(t * t / n))
        err = t_cdf(t, df) - p
        if abs(err) < 1e-12:
            return t
        step = err / pdf if pdf > 0 else math.inf
        if not math.isfinite(step) or t - step <= 0:
            break
        t -= step
        if abs(step) < 1e-10 * max(1.0, t):
            return t
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
        if hi > 1e8:
            return hi
    for _ in range(100):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def spread(samples: Sequence[float]) -> float:
    """Sample standard deviation (0 for fewer than two samples)."""
    return statistics.stdev(samples) if len(samples) >= 2 else 0.0


def huber(xs: Sequence[float], scale: float, k: float = 1.5) -> float:
    """Huber M-estimate of location (a run's pull is capped at k*scale); plain mean for <= 2."""
    if len(xs) <= 2 or not scale > 0:
        return statistics.fmean(xs)
    mu = float(statistics.median(xs))
    c = k * scale
    for _ in range(30):
        w = [1.0 if abs(x - mu) <= c else c / abs(x - mu) for x in xs]
        nxt = sum(wi * xi for wi, xi in zip(w, xs, strict=True)) / sum(w)
        if abs(nxt - mu) <= 1e-9 * scale:
            return nxt
        mu = nxt
    return mu


@cache
def t_ppf(p: float, df: float) -> float:
    return t_quantile(p, df)
