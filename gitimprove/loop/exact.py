"""The deterministic rule: a candidate compared exactly with an incumbent that repeated exactly.

Every decision costs exactly one candidate run, keeps included, and no incumbent run: the
candidate is kept when its one value beats the incumbent's by `min_delta` or more, compared
exactly (a tie is never kept). What that does not protect: a candidate that makes the metric
noisy where the incumbent is not (`random.choice([60, 60, 300])`, mean worse than the
incumbent's 100, prints 60 two times in three) wins on one lucky run.

`[loop] confirm_deterministic = N` (N ≥ 2) buys that protection back for N − 1 more runs per
keep: a keep must then repeat exactly on N runs. A candidate whose runs differ is judged as
what it is, a noisy candidate against an exact value: the mean of its runs (no run set aside
as an outlier: against an exact incumbent every value it printed is its own) must beat the
incumbent by min_delta with the run's confidence, within `max_runs`, else it is discarded.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable

from gitimprove.config import MinDelta
from gitimprove.loop.outcome import Outcome
from gitimprove.loop.stats import t_quantile

Run = Callable[[], float]
_FIRST_LOOK = 3  # runs before the mean of a noisy candidate is first judged


def decide_exact(
    inc: float,
    run_cand: Run,
    *,
    sign: float,
    min_delta: MinDelta,
    confirm: int,
    confidence: float,
    max_runs: int,
) -> Outcome:
    """Decide a candidate against the exact incumbent value `inc` (see the module)."""
    threshold = min_delta.value * abs(inc) if min_delta.relative else min_delta.value

    def outcome(keep: bool, verdict: str, runs: list[float], half: float = 0.0) -> Outcome:
        gain = sign * (inc - statistics.fmean(runs)) if len(runs) > 1 else sign * (inc - runs[0])
        n = len(runs)
        return Outcome(keep, verdict, gain, half, runs, [], "B" * n, "exact", 0, False, inc, 0, n)

    v = run_cand()
    gain = sign * (inc - v)  # exact: no averaging of identical values
    enough = (inc != 0 or not min_delta.relative) and gain >= threshold
    if not (gain > 0 and enough):
        return outcome(False, "deterministic" if gain <= 0 else "below-min-delta", [v])
    runs = [v]
    if confirm <= 1:  # the default: one run decides, keeps included
        return outcome(True, "deterministic", runs)
    while len(runs) < confirm and runs[-1] == v:
        runs.append(run_cand())
    if runs[-1] == v:
        return Outcome(True, "deterministic", gain, 0.0, runs, [], "B" * len(runs), "exact",
                       0, False, inc, 0, len(runs))  # fmt: skip
    while True:  # the candidate is noisy: its mean against the exact value
        n = len(runs)
        if n >= _FIRST_LOOK:
            mean, sd = statistics.fmean(runs), statistics.stdev(runs)
            half = t_quantile(confidence, n - 1) * sd / math.sqrt(n)
            gain = sign * (inc - mean)
            if gain - half >= threshold and gain > 0:
                return outcome(True, "confident", runs, half)
            if gain + half < threshold or n >= max(max_runs, _FIRST_LOOK):
                return outcome(False, "futile" if gain + half < threshold else "inconclusive",
                               runs, half)  # fmt: skip
        runs.append(run_cand())
