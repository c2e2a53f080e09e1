"""Small, dependency-free statistics: Student-t quantiles, robust spread."""

from __future__ import annotations

import math
import random as _random
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
    """The p-quantile of Student's t with `df` degrees of freedom (bisection on the CDF)."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must be in (0, 1)")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
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
def keep_boundary(alpha: float, n_ref: int, looks: tuple[int, ...], sims: int = 20000) -> float:
    """Group-sequential constant c: a no-effect candidate crosses z > c at ANY planned look
    with probability alpha (Monte Carlo, fixed seed, cached; extra runs go to the arm with
    fewer runs, ties to the candidate, as the rule allocates them)."""
    rng = _random.Random(12345)
    maxima = []
    last = looks[-1]
    for _ in range(sims):
        sb, nb = sum(rng.gauss(0.0, 1.0) for _ in range(n_ref)), n_ref
        sc, nc = rng.gauss(0.0, 1.0), 1
        best = -1e9
        li = 0
        while True:
            if nc == looks[li]:
                z = (sb / nb - sc / nc) / math.sqrt(1.0 / nc + 1.0 / nb)
                best = max(best, z)
                li += 1
                if li == len(looks):
                    break
            if nc <= nb:
                sc += rng.gauss(0.0, 1.0)
                nc += 1
            else:
                sb += rng.gauss(0.0, 1.0)
                nb += 1
            if nc > last:
                break
        maxima.append(best)
    maxima.sort()
    return maxima[int((1.0 - alpha) * sims)]


@cache
def t_ppf(p: float, df: float) -> float:
    return t_quantile(p, df)
