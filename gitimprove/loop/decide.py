"""Keep or discard a candidate against an incumbent from fixed sets of samples.

Used by `git improve measure` for experiments made outside the loop: both arms have been run
a fixed number of times, so this is one planned look with Welch's t at the configured
confidence. A metric whose repeats are all identical is deterministic and decides by a
strict comparison with `min_delta` (NOISE.md rule 6). The loop's adaptive, sequential rule
builds on the same vocabulary.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from gitimprove.config import MinDelta
from gitimprove.loop.stats import spread, t_quantile


@dataclass(frozen=True)
class Decision:
    keep: bool
    delta: float  # candidate - incumbent, in metric units (signed as the metric)
    delta_pct: float | None
    gain: float  # improvement, > 0 means the candidate is better
    interval: tuple[float, float] | None  # of the gain, at the confidence
    reason: str

    @property
    def status(self) -> str:
        return "keep" if self.keep else "discard"


def _pct(x: float, base: float) -> float | None:
    return x / abs(base) * 100.0 if base else None


def _fmt_gain(gain: float, base: float, direction: str) -> str:
    pct = _pct(gain, base)
    better = (
        ("lower" if direction == "lower" else "higher")
        if gain >= 0
        else ("higher" if direction == "lower" else "lower")
    )
    amount = f"{abs(pct):.1f}%" if pct is not None else f"{abs(gain):.4g}"
    return f"{amount} {better}"


def decide_fixed(
    candidate: Sequence[float],
    incumbent: Sequence[float],
    *,
    direction: str,
    min_delta: MinDelta,
    confidence: float,
) -> Decision:
    if not candidate or not incumbent:
        raise ValueError("both arms need at least one sample")
    c_mean = statistics.fmean(candidate)
    i_mean = statistics.fmean(incumbent)
    sign = -1.0 if direction == "lower" else 1.0
    delta = c_mean - i_mean
    gain = sign * delta
    threshold = min_delta.value * abs(i_mean) if min_delta.relative else min_delta.value
    runs = f"{len(candidate)}+{len(incumbent)} runs"
    told = _fmt_gain(gain, i_mean, direction)

    deterministic = spread(candidate) == 0.0 and spread(incumbent) == 0.0
    if deterministic:
        keep = gain > 0 and gain >= threshold
        if keep:
            reason = f"kept: {told}, deterministic metric ({runs})"
        elif gain > 0:
            reason = f"discarded: {told}, below min_delta {min_delta} ({runs})"
        else:
            reason = f"discarded: {told}, deterministic metric ({runs})"
        return Decision(keep, delta, _pct(delta, i_mean), gain, (gain, gain), reason)

    if len(candidate) < 2 or len(incumbent) < 2:
        reason = (
            f"discarded: {told}, but a noisy metric needs at least 2 runs on each side ({runs})"
        )
        return Decision(False, delta, _pct(delta, i_mean), gain, None, reason)

    v1 = spread(candidate) ** 2 / len(candidate)
    v2 = spread(incumbent) ** 2 / len(incumbent)
    se = math.sqrt(v1 + v2)
    df_den = (v1**2 / (len(candidate) - 1) if v1 else 0.0) + (
        v2**2 / (len(incumbent) - 1) if v2 else 0.0
    )
    df = (v1 + v2) ** 2 / df_den if df_den > 0 else float(len(candidate) + len(incumbent) - 2)
    t = t_quantile(confidence, max(df, 1.0))
    low, high = gain - t * se, gain + t * se
    keep = low > 0 and gain >= threshold
    pct_lo, pct_hi = _pct(low, i_mean), _pct(high, i_mean)
    interval = (
        f"interval {pct_lo:.1f}–{pct_hi:.1f}%"
        if pct_lo is not None and pct_hi is not None
        else f"interval {low:.4g}–{high:.4g}"
    )
    conf = f"{confidence * 100:g}%"
    if keep:
        reason = f"kept: {told}, {interval} at {conf}, {runs}"
    elif low > 0:
        reason = f"discarded: {told}, below min_delta {min_delta}, {interval}, {runs}"
    else:
        reason = f"discarded: {told}, not confirmed at {conf} ({interval}, {runs})"
    return Decision(keep, delta, _pct(delta, i_mean), gain, (low, high), reason)
