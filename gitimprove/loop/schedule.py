"""How bold a decision is, by the noise of the metric relative to its level (docs/noise.md).

The rule's thresholds are in units of the measured σ, while the gains agents make are a few
percent of the metric whatever its noise. At 1% noise per run such gains are several σ: the
rule can be strict and still cheap. At 5–10% they are below one σ: a rule as strict keeps
almost nothing (it spends a tenth of the false keeps a 5-run median makes and loses gain to
it). So the false-keep probability, the smallest gain worth finding and the curtailment bar
follow the relative noise, interpolated in log σ between measured anchors, and the false-keep
probability is rounded to a few steps (each step is one Monte Carlo design, cached). Its
multiple is capped by the no-effect keeps it allows (≤ 5% at every decision index). × 5 from
5% noise (× 2.5 before) spends the room the futility discards leave: at 5% noise the runs
fell to 0.85× the median's through the replayed loop; the anchor at 3% keeps the regimes at
2% noise where they were.

The budget (`budget.py`) is planned with the multiple capped at PLAN_CAP: a larger
false-keep probability lowers the thresholds a decision must cross, and a budget planned from
it would shrink too, giving back in gain what the thresholds bought (measured: at 5% noise, ×
2.5 in both spent 0.70× the median's runs and lost 2 points of gain; × 2.5 in the thresholds
alone, 0.84× and gained 2).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gitimprove.loop.rule import AdaptiveRule

# relative noise per run → (false-keep probability as a multiple of the configured one, below
# 1 where gains are several σ; the smallest gain worth finding in σ; the curtailment bar as a
# multiple of the configured)
ANCHORS: tuple[tuple[float, float, float, float], ...] = (
    (0.012, 0.75, 1.0, 2.5),
    (0.02, 1.5, 1.0, 1.0),
    (0.03, 2.0, 0.94, 1.0),
    (0.05, 5.0, 0.87, 1.0),
)
PLAN_CAP = 1.5  # the false-keep multiple the budget is planned with, at most
ALPHA_STEP = 0.25  # the multiple of the false-keep probability is rounded to this
SURE_DF = 20  # the degrees of freedom σ needs before the false-keep probability grows
# a machine whose runs the screen drops as glitches this often (load spikes, bursts) is
# given at least GLITCHY_ALPHA as the false-keep multiple, its budget planned with up to
# GLITCHY_PLAN_CAP (docs/noise.md, step 8)
# (up to GLITCHY_NOISE of relative noise: above it the schedule is bold already, and a
# heavy-tailed noise, whose tails the screen drops too, lost gain to the smaller budget)
GLITCHY, GLITCHY_ALPHA, GLITCHY_PLAN_CAP, GLITCHY_NOISE = 0.05, 2.75, 2.0, 0.025


@dataclass(frozen=True)
class Boldness:
    alpha: float  # the false-keep probability the design spends
    find: float  # the smallest gain worth finding, in σ
    curtail: float  # the conditional power below which a candidate goes


def relative(rule: AdaptiveRule, sigma: float) -> float:
    """σ as a share of the metric's level (in the log scale σ is already one)."""
    level = 1.0 if rule.relative else abs(rule.level0)
    return sigma / level if level else math.inf


def boldness(
    rule: AdaptiveRule,
    sigma: float,
    window: int | None = None,
    df: float | None = None,
    *,
    plan: bool = False,
) -> Boldness:
    """The settings for noise σ. With no window yet (a run's first decision) or σ resting
    on fewer than SURE_DF degrees of freedom, the false-keep probability is at most the
    configured one: the first decisions kept up to 5.3% of no-effect changes when they were
    bold too.
    `plan`: the settings the budget is planned with (the multiple capped at PLAN_CAP)."""
    if not rule.adapt or not sigma > 0:
        return Boldness(rule.alpha, rule.find, rule.curtail)
    rel = relative(rule, sigma)
    a, f, c = _interpolate(rel)
    a = max(ALPHA_STEP, round(a / ALPHA_STEP) * ALPHA_STEP)
    cap = PLAN_CAP
    if rel <= GLITCHY_NOISE and a < GLITCHY_ALPHA and rule.pool.glitch_share() >= GLITCHY:
        a, cap = GLITCHY_ALPHA, GLITCHY_PLAN_CAP
    if plan:
        a = min(a, cap)
    if window == 0 or (df is not None and df < SURE_DF):
        a = min(a, 1.0)
    return Boldness(rule.alpha * a, rule.find * f, rule.curtail * c)


def _interpolate(rel: float) -> tuple[float, float, float]:
    pts = ANCHORS
    if not rel < math.inf or rel >= pts[-1][0]:
        return pts[-1][1:]
    if rel <= pts[0][0]:
        return pts[0][1:]
    for lo, hi in itertools.pairwise(pts):
        if rel <= hi[0]:
            u = (math.log(rel) - math.log(lo[0])) / (math.log(hi[0]) - math.log(lo[0]))
            a, f, c = (x + u * (y - x) for x, y in zip(lo[1:], hi[1:], strict=True))
            return a, f, c
    return pts[-1][1:]
