"""Deciding keep or discard: the rule a run uses, the numbers and sentence of a decision, and
the fixed-sample rule of `git improve measure`.

The loop's rule is `loop/rule.py` (sequential, interleaved, docs/noise.md); the anchors' rules
for benchmarks are `loop/anchors.py`. Whatever decided, `report` turns the outcome into the
note's numbers (a `wording.Change`) and one sentence made from those numbers.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from gitimprove.config import Config, MinDelta
from gitimprove.loop import wording
from gitimprove.loop.anchors import StoredBest
from gitimprove.loop.outcome import Outcome
from gitimprove.loop.rule import AdaptiveRule
from gitimprove.loop.stats import spread, t_quantile
from gitimprove.loop.wording import Change

Rule = AdaptiveRule | StoredBest


def make_rule(cfg: Config, *, confidence: float, strict_ab: bool = False) -> Rule:
    """The run's rule from its configuration (`metric.rule` is for benchmarks only)."""
    direction = cfg.direction
    min_delta: MinDelta = cfg.get("metric", "min_delta")
    kind = str(cfg.get("metric", "rule"))
    if kind == "single":
        return StoredBest(direction, min_delta, 1)
    if kind == "median":
        return StoredBest(direction, min_delta, int(cfg.get("metric", "runs")))
    max_runs = cfg.get("metric", "max_runs")
    return AdaptiveRule(
        direction=direction,
        min_delta=min_delta,
        max_runs=max_runs,
        confidence=confidence,
        window=0 if strict_ab else AdaptiveRule.WINDOW,
        confirm_exact=int(cfg.get("loop", "confirm_deterministic")),
    )


def report(rule: Rule, out: Outcome) -> tuple[Change, str]:
    """The decision's numbers and its sentence, made from the same numbers."""
    direction = rule.direction
    varies = out.mode == "exact" and len(set(out.candidate)) > 1
    if varies:  # a noisy candidate against an exact incumbent: judged on its mean
        change = Change.of(statistics.fmean(out.candidate), out.reference)
    elif out.mode in ("exact", "stored"):
        change = Change.of(statistics.median(out.candidate), out.reference)
    else:
        relative = isinstance(rule, AdaptiveRule) and rule.relative
        change = Change.from_gain(direction, relative, out.reference, out.gain, out.half)
    said = wording.change_words(change, direction)
    n = len(out.candidate)
    if out.mode == "exact":
        tail = "deterministic metric, " + (
            f"mean of {n} runs of a candidate that varies ({min(out.candidate):g} to "
            f"{max(out.candidate):g})"
            if varies
            else (f"the same on {n} runs" if n > 1 else "1 run")
        )
        if out.keep:
            return change, f"kept: {said}, {tail}"
        if out.verdict == "below-min-delta":
            return change, f"discarded: {said}, below min_delta {rule.min_delta}, {tail}"
        return change, f"discarded: {said}, {tail}"
    if out.mode == "stored":
        runs = f"median of {n} run{'s' if n != 1 else ''}" if n > 1 else "1 run"
        against = f"the stored best {wording.num(out.reference)}"
        if out.keep:
            return change, f"kept: {said} than {against}, {runs}"
        if out.verdict == "below-min-delta":
            return (
                change,
                f"discarded: {said} than {against}, below min_delta {rule.min_delta}, {runs}",
            )
        return change, f"discarded: {said} than {against}, {runs}"
    interval = wording.interval_words(change, direction)
    runs = wording.runs_words(n, len(out.incumbent), out.window_used)
    core = f"{said}, {interval}, {runs}" if interval else f"{said}, {runs}"
    total = f"{out.runs} run{'s' if out.runs != 1 else ''}"
    if out.keep:
        return change, f"kept: {core}"
    if out.verdict == "two-modes":
        return change, (
            f"discarded after {total}: {core}; its runs fall into two groups (two or more runs "
            "far from the rest agree with each other): a result that holds only in some runs"
        )
    if out.verdict == "inconclusive":
        return change, f"discarded as inconclusive after {total}: {core}"
    if out.verdict == "below-min-delta":
        return change, f"discarded after {total}: {core}; below min_delta {rule.min_delta}"
    budget = rule.max_runs if isinstance(rule, AdaptiveRule) else n
    return change, (
        f"discarded after {total}: {core}; not promising enough for more runs (up to {budget})"
    )


# --- `git improve measure`: both arms run a fixed number of times ------------------------


@dataclass(frozen=True)
class Decision:
    keep: bool
    change: Change
    reason: str

    @property
    def status(self) -> str:
        return "keep" if self.keep else "discard"

    @property
    def delta(self) -> float:
        return self.change.delta

    @property
    def delta_pct(self) -> float | None:
        return self.change.delta_pct


def decide_fixed(
    candidate: Sequence[float],
    incumbent: Sequence[float],
    *,
    direction: str,
    min_delta: MinDelta,
    confidence: float,
) -> Decision:
    """One planned look with Welch's t; a metric whose repeats are all identical is
    deterministic and decides by an exact comparison with `min_delta`."""
    if not candidate or not incumbent:
        raise ValueError("both arms need at least one sample")
    sign = -1.0 if direction == "lower" else 1.0
    runs = wording.runs_words(len(candidate), len(incumbent))
    if len(candidate) == len(incumbent) == 1 or (
        spread(candidate) == 0.0 and spread(incumbent) == 0.0
    ):
        # compare the values themselves: the mean of identical floats is not always the value
        c, i = statistics.median(candidate), statistics.median(incumbent)
        change = Change.of(c, i)
        gain = sign * (c - i)
        threshold = min_delta.value * abs(i) if min_delta.relative else min_delta.value
        keep = gain > 0 and gain >= threshold
        said = wording.change_words(change, direction)
        kind = (
            "deterministic metric" if len(candidate) > 1 or len(incumbent) > 1 else "one run each"
        )
        if keep:
            return Decision(True, change, f"kept: {said}, {kind}, {runs}")
        if gain > 0:
            return Decision(
                False, change, f"discarded: {said}, below min_delta {min_delta}, {kind}, {runs}"
            )
        return Decision(False, change, f"discarded: {said}, {kind}, {runs}")
    c_mean, i_mean = statistics.fmean(candidate), statistics.fmean(incumbent)
    if len(candidate) < 2 or len(incumbent) < 2:
        change = Change.of(c_mean, i_mean)
        said = wording.change_words(change, direction)
        return Decision(
            False,
            change,
            f"discarded: {said}, but a noisy metric needs at least 2 runs on each side ({runs})",
        )
    v1 = spread(candidate) ** 2 / len(candidate)
    v2 = spread(incumbent) ** 2 / len(incumbent)
    se = math.sqrt(v1 + v2)
    df_den = (v1**2 / (len(candidate) - 1) if v1 else 0.0) + (
        v2**2 / (len(incumbent) - 1) if v2 else 0.0
    )
    df = (v1 + v2) ** 2 / df_den if df_den > 0 else float(len(candidate) + len(incumbent) - 2)
    t = t_quantile(confidence, max(df, 1.0))
    delta = c_mean - i_mean
    change = Change.of(c_mean, i_mean, (delta - t * se, delta + t * se))
    gain = sign * delta
    threshold = min_delta.value * abs(i_mean) if min_delta.relative else min_delta.value
    keep = gain - t * se > 0 and gain >= threshold
    said = wording.change_words(change, direction)
    interval = wording.interval_words(change, direction)
    conf = f"{confidence * 100:g}%"
    if keep:
        return Decision(True, change, f"kept: {said}, {interval} at {conf}, {runs}")
    if gain - t * se > 0:
        return Decision(
            False, change, f"discarded: {said}, below min_delta {min_delta}, {interval}, {runs}"
        )
    if gain <= 0:  # no better at all: there is nothing to confirm
        return Decision(False, change, f"discarded: {said}, {interval} at {conf}, {runs}")
    return Decision(
        False, change, f"discarded: {said}, not confirmed at {conf} ({interval}, {runs})"
    )
