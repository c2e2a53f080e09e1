"""A simulated machine: noisy metric runs for the decision rule's simulations and tests.

A run of code with true value T returns T * exp(level + eps): `level` is the machine's state
(slow drift, a burst of load over a few consecutive runs, a busy start), `eps` the run's own
noise. `python -m gitimprove.loop.machine` prints one such run for a real loop, keeping the
machine's state in a file between processes. Standard library only, so it starts fast.
"""

from __future__ import annotations

import json
import math
import os
import random
from pathlib import Path

Scenario = dict[str, float | str]

# The six regimes of the reference table, then two of shared machines, then three kinds of
# noise the rule was not tuned on (machine states, periodic load, rare huge outliers).
SCENARIOS: dict[str, Scenario] = {
    "cv1": {"kind": "gauss", "cv": 0.01},
    "cv5": {"kind": "gauss", "cv": 0.05},
    "cv10": {"kind": "gauss", "cv": 0.10},
    "t3": {"kind": "t3", "cv": 0.05},
    "spikes": {"kind": "spikes", "cv": 0.02, "p": 0.10, "lo": 0.10, "hi": 0.50},
    "drift": {"kind": "gauss", "cv": 0.02, "drift_sd": 0.03, "phi": 0.99},
    # load bursts: 4% of runs start a burst of +30% covering 2 or 3 consecutive runs
    "bursts": {"kind": "gauss", "cv": 0.02, "burst_p": 0.04, "burst": 0.30},
    # the first 5 runs (the calibration) on a busy machine: each +10..50% with probability 0.6
    "busycal": {
        "kind": "gauss",
        "cv": 0.02,
        "busy_first": 5,
        "busy_p": 0.6,
        "lo": 0.10,
        "hi": 0.50,
    },
    # two machine states (e.g. a CPU clocked down): +15% for stretches of about 20 runs,
    # entered with probability 0.02 per run
    "states": {"kind": "gauss", "cv": 0.02, "state_on": 0.02, "state_off": 0.05, "state": 0.15},
    # load that comes and goes: +-6% in a wave of 30 runs, with a random phase
    "periodic": {"kind": "gauss", "cv": 0.02, "period": 30, "amp": 0.06},
    # one run in 50 takes ten times as long (a cold cache, a swap storm)
    "outliers": {"kind": "gauss", "cv": 0.02, "outlier_p": 0.02, "outlier": 10.0},
}
SIX = ("cv1", "cv5", "cv10", "t3", "spikes", "drift")
LABELS = {
    "cv1": "Gaussian 1%",
    "cv5": "Gaussian 5%",
    "cv10": "Gaussian 10%",
    "t3": "Student-t(3), sd 5%",
    "spikes": "2% + 10% of runs +10..50%",
    "drift": "2% + slow drift (sd 3%)",
    "bursts": "2% + bursts of +30% over 2-3 runs",
    "busycal": "2%, calibration on a busy machine",
    "states": "2% + a +15% state over ~20 runs",
    "periodic": "2% + a wave of +-6% over 30 runs",
    "outliers": "2% + one run in 50 ten times slower",
}


class Machine:
    def __init__(self, rng: random.Random, sc: Scenario) -> None:
        self.rng, self.sc = rng, sc
        self.drift_sd = float(sc.get("drift_sd", 0.0))
        self.phi = float(sc.get("phi", 0.0))
        self.level = rng.gauss(0, self.drift_sd) if self.drift_sd else 0.0
        self.innov = self.drift_sd * math.sqrt(1 - self.phi**2) if self.drift_sd else 0.0
        self.burst_left = 0
        self.n = 0  # runs so far
        self.slow = False  # in the slow state ("states")
        self.phase = rng.uniform(0.0, 2.0 * math.pi) if "period" in sc else 0.0

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
        if "burst_p" in sc:
            if self.burst_left == 0 and rng.random() < float(sc["burst_p"]):
                self.burst_left = rng.choice((2, 3))
            if self.burst_left:
                self.burst_left -= 1
                e += math.log1p(float(sc["burst"]))
        if self.n < int(sc.get("busy_first", 0)) and rng.random() < float(sc["busy_p"]):
            e += math.log1p(rng.uniform(float(sc["lo"]), float(sc["hi"])))
        if "state" in sc:
            flip = float(sc["state_off"] if self.slow else sc["state_on"])
            self.slow = self.slow != (rng.random() < flip)
            e += math.log1p(float(sc["state"])) if self.slow else 0.0
        if "period" in sc:
            wave = 2.0 * math.pi * self.n / float(sc["period"]) + self.phase
            e += float(sc["amp"]) * math.sin(wave)
        if "outlier_p" in sc and rng.random() < float(sc["outlier_p"]):
            e += math.log(float(sc["outlier"]))
        self.n += 1
        return true_value * math.exp(self.level + e)


# --- a sealed metric for real loops ----------------------------------------------------------


def metric_run(scenario: Scenario, seed: str, state_file: Path, true_value: float) -> float:
    """One run of a simulated machine whose state (its random stream, load, run count) lives in
    `state_file`, so successive metric processes continue one machine: the tests and
    `bench/decide_loop_bench.py` run the real loop against it."""
    m = Machine(random.Random(f"{seed}-machine"), scenario)
    try:
        saved = json.loads(state_file.read_text())
        version, internal, gauss_next = saved["rng"]
        m.rng.setstate((version, tuple(internal), gauss_next))
        m.level, m.burst_left, m.n = saved["level"], saved["burst_left"], saved["n"]
        m.slow, m.phase = saved.get("slow", False), saved.get("phase", m.phase)
    except FileNotFoundError:
        pass
    value = m.run(true_value)
    state = {
        "rng": m.rng.getstate(),
        "level": m.level,
        "burst_left": m.burst_left,
        "n": m.n,
        "slow": m.slow,
        "phase": m.phase,
    }
    tmp = state_file.with_suffix(".tmp")
    tmp.write_text(json.dumps(state))
    os.replace(tmp, state_file)
    return value


def main(argv: list[str] | None = None) -> int:
    """`python -m gitimprove.loop.machine --state FILE [--scenario NAME | --params JSON |
    --params-file FILE] [--seed S] [--value FILE] [--name NAME]`: print one noisy reading of the number in
    `--value` (a file in the measured checkout) as `METRIC <name>=<value>`."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m gitimprove.loop.machine")
    ap.add_argument("--state", required=True, type=Path)
    ap.add_argument("--scenario", default="cv1", choices=sorted(SCENARIOS))
    ap.add_argument("--params", help="a scenario as JSON, instead of --scenario")
    ap.add_argument("--params-file", type=Path, help="the same, from a file")
    ap.add_argument("--seed", default="0")
    ap.add_argument("--value", default="value.txt", type=Path)
    ap.add_argument("--name", default="score")
    a = ap.parse_args(argv)
    if a.params_file:
        scenario = json.loads(a.params_file.read_text())
    else:
        scenario = json.loads(a.params) if a.params else SCENARIOS[a.scenario]
    true_value = float(a.value.read_text().split()[0])
    print(f"METRIC {a.name}={metric_run(scenario, a.seed, a.state, true_value):.9g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
