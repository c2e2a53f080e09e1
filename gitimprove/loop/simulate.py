"""Simulated hill-climbs for checking the decision rule (NOISE.md), standard library only.

A metric run of code with true value T returns T * exp(drift + eps). Each iteration the agent
proposes a change of true relative effect e (45% none, 25% slight regressions, 20% gains of
1-3%, 10% gains of 3-10%); the strategy decides, and a keep makes the candidate the
incumbent. Used by `bench/decide_bench.py` and the decision tests.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from gitimprove.config import MinDelta
from gitimprove.loop.decide import AdaptiveRule

SCENARIOS: dict[str, dict[str, float | str]] = {
    "cv1": {"kind": "gauss", "cv": 0.01},
    "cv5": {"kind": "gauss", "cv": 0.05},
    "cv10": {"kind": "gauss", "cv": 0.10},
    "t3": {"kind": "t3", "cv": 0.05},
    "spikes": {"kind": "spikes", "cv": 0.02, "p": 0.10, "lo": 0.10, "hi": 0.50},
    "drift": {"kind": "gauss", "cv": 0.02, "drift_sd": 0.03, "phi": 0.99},
}


class Machine:
    def __init__(self, rng: random.Random, sc: dict[str, float | str]) -> None:
        self.rng, self.sc = rng, sc
        self.drift_sd = float(sc.get("drift_sd", 0.0))
        self.phi = float(sc.get("phi", 0.0))
        self.level = rng.gauss(0, self.drift_sd) if self.drift_sd else 0.0
        self.innov = self.drift_sd * math.sqrt(1 - self.phi**2) if self.drift_sd else 0.0

    def run(self, true_value: float) -> float:
        rng, sc = self.rng, self.sc
        if self.drift_sd:
            self.level = self.phi * self.level + rng.gauss(0, self.innov)
        cv = float(sc["cv"])
        if sc["kind"] == "t3":
            chi = sum(rng.gauss(0, 1) ** 2 for _ in range(3))
            e = cv * (rng.gauss(0, 1) / math.sqrt(chi / 3.0)) / math.sqrt(3.0)
        else:
            e = rng.gauss(0, cv)
            if sc["kind"] == "spikes" and rng.random() < float(sc["p"]):
                e += math.log1p(rng.uniform(float(sc["lo"]), float(sc["hi"])))
        return true_value * math.exp(self.level + e)


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
        self.rule = AdaptiveRule(min_delta=MinDelta(0.0, True), **self.kw)  # type: ignore[arg-type]
        return len(self.rule.calibrate(lambda: m.run(t)))

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
    "adaptive": ("gitimprove adaptive keep (confidence 0.95, max 16)", lambda: Adaptive()),
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
        for name in (
            "decisions",
            "null",
            "false_keeps",
            "improvements",
            "missed",
            "runs",
            "gain_sum",
            "climbs",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def simulate(
    scenario: str, strategy: str, climbs: range, iters: int = 100, seed: str = "2024"
) -> Result:
    sc = SCENARIOS[scenario]
    acc = Result()
    for climb in climbs:
        erng = random.Random(f"{seed}-effects-{scenario}-{climb}")
        mrng = random.Random(f"{seed}-machine-{scenario}-{strategy}-{climb}")
        effects = [draw_effect(erng) for _ in range(iters)]
        m = Machine(mrng, sc)
        st = STRATEGIES[strategy][1]()
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
        acc.climbs += 1
    return acc


def aa_keep_rate(scenario: str, climbs: range, iters: int = 100, seed: str = "2024") -> float:
    """Share of decisions kept when every candidate is identical to the incumbent."""
    keeps = dec = 0
    for climb in climbs:
        m = Machine(random.Random(f"{seed}-aa-{scenario}-{climb}"), SCENARIOS[scenario])
        st = Adaptive()
        st.setup(m, 1.0)
        for _ in range(iters):
            k, _ = st.decide(m, 1.0, 1.0)
            keeps += k
            dec += 1
    return 100.0 * keeps / max(1, dec)
