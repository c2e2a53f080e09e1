"""The robust pieces of one decision's estimate: cleaning an arm of glitches, pairing adjacent
runs of the two arms, and the centre of a handful of runs (rule scale throughout)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from gitimprove.loop.stats import huber

# an arm of this many runs or fewer with no majority close to its median takes another run
SCATTER = 4


def center(xs: Sequence[float], sigma: float, k: float = 1.5) -> float:
    """A Huber centre for 3+ runs (a glitch pulls it by at most k·σ), else the mean."""
    return huber(xs, sigma, k) if len(xs) > 2 else statistics.fmean(xs)


def hodges_lehmann(xs: Sequence[float]) -> float:
    """The median of the pairwise (Walsh) averages of 3+ values, else their mean."""
    if len(xs) <= 2:
        return statistics.fmean(xs)
    return statistics.median(
        (xs[i] + xs[j]) / 2.0 for i in range(len(xs)) for j in range(i, len(xs))
    )


def clean(xs: Sequence[float], sigma: float, k: float) -> list[float]:
    """Runs more than k·σ from the median of 3+ runs are glitches (when they are a minority;
    when most runs are far from the median, none is singled out)."""
    if len(xs) < 3 or not sigma > 0:
        return list(xs)
    m = statistics.median(xs)
    kept = [x for x in xs if abs(x - m) <= k * sigma]
    return kept if 2 * len(kept) > len(xs) else list(xs)


def two_modes(xs: Sequence[float], sigma: float, k: float) -> bool:
    """Whether 4+ runs of one arm fall into two groups of two or more runs each, apart by more
    than 2k times each group's own spread and 10k times σ (the unchanged code's noise).
    A glitch (a load spike) is one run; a second group is something else, such as a forged
    line that won the race with the benchmark in some runs and lost it in others. σ is the
    noise measured before this decision: the two groups' own runs would inflate it."""
    xs = sorted(xs)
    floor = sigma if math.isfinite(sigma) else 0.0
    for i in range(2, len(xs) - 1):
        within = max(floor, statistics.stdev(xs[:i]), statistics.stdev(xs[i:]))
        if xs[i] - xs[i - 1] > max(2 * k * within, 10 * k * floor):
            return True
    return False


def arm(
    xs: Sequence[float], sigma: float, k: float, k2: float | None = None
) -> tuple[list[float], bool]:
    """An arm's clean runs, and whether its runs disagree so that another must decide: two
    runs apart by more than k·√2·σ, or up to SCATTER runs of which no majority lies within
    k·σ of their median (two glitches among three runs: which are the glitches, only more
    runs can tell). `k2`, if given, replaces k for two runs."""
    k2 = k if k2 is None else k2
    if len(xs) == 2 and sigma > 0 and abs(xs[0] - xs[1]) > k2 * math.sqrt(2.0) * sigma:
        return [], True
    if 3 <= len(xs) <= SCATTER and sigma > 0:
        m = statistics.median(xs)
        if 2 * sum(abs(x - m) <= k * sigma for x in xs) <= len(xs):
            return [], True
    return clean(xs, sigma, k), False


def a_position(seq: Sequence[str], i: int) -> int:
    """The place in the run order of the i-th incumbent run."""
    seen = -1
    for pos, arm_ in enumerate(seq):
        if arm_ == "A":
            seen += 1
            if seen == i:
                return pos
    return len(seq)


def pairs(seq: Sequence[str], b: Sequence[float], a: Sequence[float]) -> list[tuple[float, float]]:
    """Adjacent (candidate, incumbent) runs, paired greedily in run order."""
    out: list[tuple[float, float]] = []
    ib = ia = 0
    pending: tuple[str, float] | None = None
    for which in seq:
        if which == "B":
            x = b[ib]
            ib += 1
        else:
            x = a[ia]
            ia += 1
        if pending is not None and pending[0] != which:
            out.append((pending[1], x) if which == "A" else (x, pending[1]))
            pending = None
        else:
            pending = (which, x)
    return out


def clean_pairs(
    prs: Sequence[tuple[float, float]], diffs: Sequence[float], sigma: float, k: float
) -> tuple[list[int], bool]:
    """Indexes of the pairs to trust, and whether more pairs are needed to tell.

    A pair whose difference is far from the other pairs' is hit on one side (a glitch); with
    3+ pairs, so is one whose incumbent or candidate run is far from its arm's other runs. If
    the trusted pairs are not a clear majority, or two pairs disagree, more must decide."""
    n = len(diffs)
    if not sigma > 0 or n < 2:
        return list(range(n)), False
    if n == 2:
        if abs(diffs[0] - diffs[1]) > k * 2.0 * sigma:
            return [], True
        return [0, 1], False
    m = statistics.median(diffs)
    ma = statistics.median(p[1] for p in prs)
    mb = statistics.median(p[0] for p in prs)
    kept = [
        i
        for i, x in enumerate(diffs)
        if abs(x - m) <= k * math.sqrt(2.0) * sigma
        and abs(prs[i][1] - ma) <= k * sigma
        and abs(prs[i][0] - mb) <= k * sigma
    ]
    if 2 * len(kept) <= n:
        return kept, True
    return kept, False
