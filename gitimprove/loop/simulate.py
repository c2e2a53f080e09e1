"""Simulated hill-climbs for checking the decision rule (docs/noise.md), standard library only.

A metric run of code with true value T returns T * exp(level + eps) (`machine.py`). Each
iteration the agent proposes a change of true relative effect e (45% none, 25% slight
regressions, 20% gains of 1-3%, 10% gains of 3-10%); the strategy decides, and a keep makes the
candidate the incumbent. Used by `bench/decide_bench.py` and the decision tests.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field, fields

from gitimprove.config import MinDelta
from gitimprove.loop.machine import SCENARIOS, Machine
from gitimprove.loop.rule import AdaptiveRule


def draw_effect(rng: random.Random) -> float:
    u = rng.random()
    if u < 0.45:
        return 0.0
    if u < 0.70:
        return -rng.uniform(0.0025, 0.03)
    if u < 0.90:
        return rng.uniform(0.01, 0.03)
    return rng.uniform(0.03, 0.10)


class Strategy:
    def setup(self, m: Machine, t: float) -> int:
        raise NotImplementedError

    def decide(self, m: Machine, tb: float, tc: float) -> tuple[bool, int]:
        raise NotImplementedError


class Adaptive(Strategy):
    """gitimprove's rule."""

    def __init__(self, **kw: object) -> None:
        self.kw = kw

    def setup(self, m: Machine, t: float) -> int:
        kw = dict(self.kw)
        md = MinDelta(float(kw.pop("md", 0.0)), True)  # type: ignore[arg-type]
        self.rule = AdaptiveRule(min_delta=md, **kw)  # type: ignore[arg-type]
        n = len(self.rule.calibrate(lambda: m.run(t)))
        self.rule.plan_budget()
        return n

    def decide(self, m: Machine, tb: float, tc: float) -> tuple[bool, int]:
        out = self.rule.decide(lambda: m.run(tb), lambda: m.run(tc))
        return out.keep, out.runs


class Median(Strategy):
    """autoresearch's "Noise: high": n-run median vs the stored best, min_delta relative."""

    def __init__(self, n: int = 5, min_delta: float = 0.01) -> None:
        self.n, self.md = n, min_delta

    def setup(self, m: Machine, t: float) -> int:
        self.best = statistics.median(m.run(t) for _ in range(self.n))
        return self.n

    def decide(self, m: Machine, tb: float, tc: float) -> tuple[bool, int]:
        y = statistics.median(m.run(tc) for _ in range(self.n))
        if (self.best - y) / self.best > self.md:
            self.best = y
            return True, self.n
        return False, self.n


STRATEGIES: dict[str, tuple[str, Callable[[], Strategy]]] = {
    "adaptive": ("gitimprove (defaults)", lambda: Adaptive()),
    "median5": ("autoresearch 5-run median, min_delta 1%", lambda: Median(5, 0.01)),
}


@dataclass
class Result:
    decisions: int = 0
    null: int = 0
    false_keeps: int = 0
    improvements: int = 0
    missed: int = 0
    runs: float = 0.0
    gain_sum: float = 0.0
    climbs: int = 0
    gains: dict[int, float] = field(default_factory=dict)  # each climb's gain, by its index

    @property
    def false_keep_pct(self) -> float:
        return 100.0 * self.false_keeps / max(1, self.null)

    @property
    def runs_per_decision(self) -> float:
        return self.runs / max(1, self.decisions)

    @property
    def gain_pct(self) -> float:
        return self.gain_sum / max(1, self.climbs)

    def add(self, other: Result) -> None:
        for f in fields(self):
            if f.name == "gains":
                self.gains.update(other.gains)
            else:
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def gain_diff(self, other: Result) -> tuple[float, float]:
        """The mean gain over `other`'s on the same climbs (points) and its standard error."""
        diffs = [g - other.gains[c] for c, g in self.gains.items() if c in other.gains]
        if len(diffs) < 2:
            return (diffs[0] if diffs else 0.0), math.inf
        return statistics.fmean(diffs), statistics.stdev(diffs) / math.sqrt(len(diffs))


def simulate(
    scenario: str,
    strategy: str | Callable[[], Strategy],
    climbs: range,
    iters: int = 100,
    seed: str = "2024",
) -> Result:
    sc = SCENARIOS[scenario]
    make = STRATEGIES[strategy][1] if isinstance(strategy, str) else strategy
    name = strategy if isinstance(strategy, str) else "custom"
    acc = Result()
    for climb in climbs:
        erng = random.Random(f"{seed}-effects-{scenario}-{climb}")
        mrng = random.Random(f"{seed}-machine-{scenario}-{name}-{climb}")
        effects = [draw_effect(erng) for _ in range(iters)]
        m = Machine(mrng, sc)
        st = make()
        t = 1.0
        acc.runs += st.setup(m, t)
        for e in effects:
            tc = t * (1.0 - e)
            keep, runs = st.decide(m, t, tc)
            acc.decisions += 1
            acc.runs += runs
            if e <= 0:
                acc.null += 1
                acc.false_keeps += keep
            else:
                acc.improvements += 1
                acc.missed += not keep
            if keep:
                t = tc
        acc.gain_sum += 100.0 * (1.0 - t)
        acc.gains[climb] = 100.0 * (1.0 - t)
        acc.climbs += 1
    return acc


def aa_keeps(
    scenario: str,
    climbs: range,
    iters: int = 100,
    seed: str = "2024",
    make: Callable[[], Strategy] = Adaptive,
) -> list[int]:
    """Keeps by decision index when every candidate is identical to the incumbent (A/A)."""
    keeps = [0] * iters
    for climb in climbs:
        m = Machine(random.Random(f"{seed}-aa-{scenario}-{climb}"), SCENARIOS[scenario])
        st = make()
        st.setup(m, 1.0)
        for i in range(iters):
            k, _ = st.decide(m, 1.0, 1.0)
            keeps[i] += k
    return keeps


def aa_keep_rate(scenario: str, climbs: range, iters: int = 100, seed: str = "2024") -> float:
    """Share of decisions kept when every candidate is identical to the incumbent."""
    keeps = aa_keeps(scenario, climbs, iters, seed)
    return 100.0 * sum(keeps) / max(1, len(climbs) * iters)


# --- the real loop's bench, replayed in process ----------------------------------------------


def loop_effect(seed: int | str, iteration: int) -> float:
    """The true effect of the bench agent's proposal at `iteration` (1, 2, …) for `seed`:
    the draw `bench/decide_loop_bench.py`'s agent makes."""
    return draw_effect(random.Random(f"{seed}-effect-{iteration}"))


class PrintedMachine(Machine):
    """The sealed metric of the real loop's bench prints 9 significant digits."""

    def run(self, true_value: float) -> float:
        return float(f"{super().run(true_value):.9g}")


# the three loops of bench/decide_loop_bench.py
LOOPS: dict[str, Callable[[], Strategy]] = {
    "gitimprove": lambda: Adaptive(),
    "single run": lambda: Median(1, 0.0),
    "median of 5": lambda: Median(5, 0.01),
}


@dataclass
class LoopTally:
    """One loop of `bench/decide_loop_bench.py`: what its table counts."""

    decisions: int = 0
    null: int = 0
    false_keeps: int = 0
    big: int = 0
    big_missed: int = 0
    runs: int = 0
    gain: float = 0.0
    oracle: float = 0.0
    keeps: list[bool] = field(default_factory=list)


def replay_loop(
    scenario: str, strategy: str | Callable[[], Strategy], seed: int | str, rounds: int = 40
) -> LoopTally:
    """`bench/decide_loop_bench.py`'s loop for one seed, in process: the same machine stream
    (`machine.metric_run` continues Random(f"{seed}-machine") from run to run), the same
    proposals, the metric's 9 printed digits, the rule called as `git improve run` calls it
    (calibration, the budget planned, one decision per round). The real loop and this replay
    make the same decisions, so the replay can measure the real loop's figures on many
    seeds (tests/test_noise_loop.py checks they agree)."""
    m = PrintedMachine(random.Random(f"{seed}-machine"), SCENARIOS[scenario])
    make = LOOPS[strategy] if isinstance(strategy, str) else strategy
    st = make()
    out = LoopTally()
    t, oracle = 1.0, 1.0
    st.setup(m, t)
    for it in range(1, rounds + 1):
        e = loop_effect(seed, it)
        tc = float(repr(t * (1.0 - e)))
        keep, _ = st.decide(m, t, tc)
        out.decisions += 1
        out.keeps.append(keep)
        if e <= 0:
            out.null += 1
            out.false_keeps += keep
        else:
            oracle *= 1.0 - e
        if e > 0.02:
            out.big += 1
            out.big_missed += not keep
        if keep:
            t = tc
    out.runs = m.n
    out.gain = 100.0 * (1.0 - t)
    out.oracle = 100.0 * (1.0 - oracle)
    return out
