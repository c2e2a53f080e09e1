"""The anchors' keep rules, for benchmarks only (`[metric] rule = "single"` or `"median"`).

`single` is Karpathy's autoresearch: one run, kept when strictly better than the stored best.
`median` is autoresearch's "Noise: high": the median of `metric.runs` runs, kept when better
than the stored best by more than `min_delta`. Both compare against the number stored when the
incumbent was kept, never against fresh runs of it. They exist so `bench/decide_loop_bench.py`
can run the real loop with them on the same agent and seeds; the loop's own rule is
`loop/rule.py`.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

from gitimprove.config import MinDelta
from gitimprove.loop.outcome import Outcome

Run = Callable[[], float]


class StoredBest:
    """Keep when the median of `runs` runs beats the stored best by more than min_delta."""

    deterministic = False

    def __init__(self, direction: str, min_delta: MinDelta, runs: int) -> None:
        self.direction = direction
        self.sign = 1.0 if direction == "lower" else -1.0
        self.min_delta = min_delta
        self.runs = runs
        self.calib_runs = runs
        self.max_runs = runs
        self.best: float | None = None

    def calibrate(self, run_base: Run) -> list[float]:
        raw = [run_base() for _ in range(self.runs)]
        self.absorb_calibration(raw)
        return raw

    def absorb_calibration(self, raw: Sequence[float]) -> None:
        self.best = statistics.median(raw)

    def decide(
        self, run_base: Run, run_cand: Run, *, moved: bool | None = None, absorb: bool = True
    ) -> Outcome:
        best = self.best
        assert best is not None
        values = [run_cand() for _ in range(self.runs)]
        value = statistics.median(values)
        gain = self.sign * (best - value)
        if self.min_delta.relative:
            enough = gain > self.min_delta.value * abs(best)
        else:
            enough = gain > self.min_delta.value
        keep = gain > 0 and enough
        verdict = "stored-best" if keep or gain <= 0 else "below-min-delta"
        out = Outcome(
            keep, verdict, gain, 0.0, values, [], "B" * self.runs, "stored", 0, False, best, 1, 1
        )
        if absorb:
            self.absorb(out, moved=keep if moved is None else moved)
        return out

    def absorb(self, out: Outcome, *, moved: bool) -> None:
        if moved:
            self.moved_to(out)

    def moved_to(self, out: Outcome) -> None:
        self.best = statistics.median(out.candidate)
