"""A run's budget of metric runs per decision, and what it says about its noise at the start.

With `max_runs = "auto"` the budget is chosen after calibration: the runs a decision needs to
confirm the smallest gain worth finding (min_delta, or 0.9σ if larger) 3 times in 4, between
8 and 64; it is planned again before every decision from the noise learned so far, so a
calibration taken on a busy machine (or hit by a glitch) does not inflate it for the whole run.
The baseline note keeps the noise and the first budget; a resumed run rebuilds the noise from
the notes and so plans every later budget as the uninterrupted run did.
"""

from __future__ import annotations

import math
import statistics
from typing import TYPE_CHECKING, Any

from gitimprove.loop.design import arms
from gitimprove.loop.noise import Noise
from gitimprove.loop.schedule import boldness
from gitimprove.state.record import NoiseRecord

if TYPE_CHECKING:
    from gitimprove.loop.rule import AdaptiveRule

_ND = statistics.NormalDist()
BUDGET = (8, 64)  # the range an automatic max_runs is chosen from
POWER_Z = 0.67  # the automatic budget confirms a gain worth finding 3 times in 4


def plan(rule: AdaptiveRule) -> int:
    """With `max_runs = "auto"`: the runs a decision needs to confirm the smallest gain
    worth finding 3 times in 4, in a window design (clamped to BUDGET)."""
    noise = rule.noise()
    if not rule.auto_budget or not noise.known or noise.sigma == 0:
        return rule.max_runs
    g = rule.worth_finding() / noise.sigma
    z = _ND.inv_cdf(1.0 - boldness(rule, noise.sigma, plan=True).alpha) * 1.15 + POWER_Z
    lo, hi = BUDGET
    for n in range(lo, hi + 1):
        seq = arms(rule.W, n, not rule.W, rule.first_a)
        nb, na = seq.count("B"), seq.count("A")
        if z * math.sqrt(1.0 / max(1, rule.W + na) + 1.0 / max(1, nb)) <= g:
            rule.max_runs = n
            return n
    rule.max_runs = hi
    return hi


def record(rule: AdaptiveRule) -> dict[str, Any]:
    """The baseline note's `noise` block: what a resumed run restores."""
    noise, prior = rule.noise(), rule.pool.prior
    return {
        "sigma": noise.sigma if noise.known else None,
        "df": noise.df,
        "prior_sigma": prior.sigma if prior is not None else None,
        "prior_df": prior.df if prior is not None else None,
        "prior_used": noise.prior_df > 0,
        "max_runs": rule.max_runs,
        "floor": rule.pool.floor,
    }


def restore(rule: AdaptiveRule, rec: NoiseRecord | None) -> None:
    if rec is None:
        return
    if rec.prior_sigma is not None and rec.prior_df:
        rule.pool.set_prior(Noise(rec.prior_sigma, rec.prior_df))
    if rec.max_runs:
        rule.max_runs = rec.max_runs


def message(rule: AdaptiveRule) -> str:
    """What calibration learned, said at a run's start."""
    noise = rule.noise()
    if rule.exact is not None:
        said = (
            "noise: none (the metric repeated exactly); each candidate is decided on one "
            "run, compared exactly with the incumbent"
        )
        if rule.confirm_exact > 1:
            said += f"; a keep must repeat exactly on {rule.confirm_exact} runs"
        return said
    if not noise.known:
        return "noise: unknown"
    prior = rule.pool.prior
    source = f"measured on {rule.calib_runs} runs"
    if noise.prior_df > 0:
        source += ", pooled with earlier runs of this metric on this machine"
    elif prior is not None:
        source += (
            f"; earlier runs here measured {_size(rule, prior.sigma)}, "
            "which this machine does not fit now"
        )
    g = rule.worth_finding()
    return (
        f"noise ≈ {_size(rule, noise.sigma)} per run ({source}); up to {rule.max_runs} runs "
        f"per decision, enough to confirm gains of about {_size(rule, g)} (planned again "
        "before each decision as the noise is learned)"
    )


def _size(rule: AdaptiveRule, x: float) -> str:
    if rule.relative:
        return f"{(math.exp(x) - 1.0) * 100:.2g}%"
    level = abs(rule.level0)
    # a percent of a level the runs scatter across 0 (within 2 sigma) says nothing
    if not level or 2.0 * rule.noise().sigma >= level:
        return f"{x:.3g}"
    return f"{x:.3g} ({x / level * 100:.2g}%)"
