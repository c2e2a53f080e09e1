"""A setting of the rule against the rule's defaults, paired seed by seed (docs/noise.md).

`--set name=value` (repeatable) passes a keyword to `AdaptiveRule`; the defaults and the
variant see the same machine streams and proposals, so their difference is paired:

* `replay`: `bench/decide_loop_bench.py --replay`'s loop (40 rounds by default) per seed;
* `climbs`: `bench/decide_bench.py`'s hill-climbs (100 decisions) per climb: its proposals,
  the machine's draws of its own (the two rules share them; `decide_bench.py`'s rule has
  others, so its figures differ from the defaults' here by the luck of the draws);
* `aa`: every candidate identical to its incumbent, 30 decisions; the share kept by index.

Printed per regime: the variant's gain minus the defaults' (points, ± its standard error),
its runs and false keeps as multiples of the defaults', and both against the 5-run median.

Usage: python bench/decide_paired.py --set huber_k=1.0 [--mode replay] [--regimes cv5,t3]
       [--seeds 60] [--first 0] [--seed 2024] [--jobs 2]
"""

from __future__ import annotations

import argparse
import ast
import functools
import inspect
import math
import statistics
import sys
from collections.abc import Callable
from multiprocessing import Pool

from common import ROOT

sys.path.insert(0, str(ROOT))

from gitimprove.loop.rule import AdaptiveRule
from gitimprove.loop.simulate import Adaptive, Median, Strategy, aa_keeps, replay_loop, simulate

Row = tuple[float, int, int, int]  # gain, runs, false keeps, decisions with no gain


def _make(kw: dict[str, object]) -> Callable[[], Strategy]:
    return functools.partial(Adaptive, **kw)


def _one(job: tuple[str, str, dict[str, object], int, int, str]) -> tuple[str, int, Row]:
    mode, regime, kw, unit, rounds, seed = job
    make: Callable[[], Strategy] = (
        functools.partial(Median, 5, 0.01) if kw.get("median") else _make(kw)
    )
    if mode == "replay":
        t = replay_loop(regime, make, unit, rounds)
        return regime, unit, (t.gain, t.runs, t.false_keeps, t.null)
    name = "median5" if kw.get("median") else make
    r = simulate(regime, name, range(unit, unit + 1), seed=seed)
    return regime, unit, (r.gain_sum, int(r.runs), r.false_keeps, r.null)


def _aa(job: tuple[str, dict[str, object], int, str]) -> tuple[str, list[int]]:
    regime, kw, climb, seed = job
    return regime, aa_keeps(regime, range(climb, climb + 1), 30, seed, _make(kw))


def _tot(t: dict[int, Row], i: int) -> float:
    return sum(row[i] for row in t.values())


def _paired(t: dict[int, Row], other: dict[int, Row]) -> tuple[float, float]:
    """The mean gain difference over the same seeds (points), and its standard error."""
    d = [t[u][0] - other[u][0] for u in t]
    return statistics.fmean(d), statistics.stdev(d) / math.sqrt(len(d)) if len(d) > 1 else math.inf


def _vs_median(t: dict[int, Row], med: dict[int, Row]) -> str:
    """False keeps and runs as multiples of the median's, and the gain difference."""
    fk = (_tot(t, 2) / max(1, _tot(t, 3))) / max(1e-9, _tot(med, 2) / max(1, _tot(med, 3)))
    gain, se = _paired(t, med)
    return f"{fk:.2f}x / {_tot(t, 1) / _tot(med, 1):.3f}x / {gain:+.2f} ± {se:.2f}"


def _value(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", action="append", default=[], help="name=value for AdaptiveRule")
    ap.add_argument("--mode", choices=("replay", "climbs", "aa"), default="replay")
    ap.add_argument("--regimes", default="cv5,t3,spikes")
    ap.add_argument("--seeds", type=int, default=60, help="seeds (replay) or climbs")
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--seed", default="2024", help="the climbs' seed (climbs, aa)")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    if any("=" not in s for s in a.set):
        raise SystemExit("--set takes name=value")
    variant = {k: _value(v) for k, v in (s.split("=", 1) for s in a.set)}
    known = {"md", *inspect.signature(AdaptiveRule).parameters}  # md: a relative min_delta
    if unknown := sorted(set(variant) - known):
        raise SystemExit(f"not a setting of the rule: {', '.join(unknown)}")
    regimes = a.regimes.split(",")
    units = range(a.first, a.first + a.seeds)
    print(f"# {a.mode}, {variant}, {a.seeds} from {a.first}, regimes {a.regimes}")
    with Pool(a.jobs) as pool:
        if a.mode == "aa":
            rules = ({}, variant)
            jobs = [(r, rules[i], u, a.seed) for r in regimes for i in (0, 1) for u in units]
            got = pool.map(_aa, jobs)
            for r in regimes:
                for i, name in enumerate(("defaults", "variant")):
                    rows = [
                        k
                        for j, (_, k) in zip(jobs, got, strict=True)
                        if j[0] == r and j[1] is rules[i]
                    ]
                    keeps = [sum(col) for col in zip(*rows, strict=True)]
                    pct = ", ".join(f"{100.0 * k / len(rows):.1f}" for k in keeps[:8])
                    late = 100.0 * sum(keeps[8:]) / (len(rows) * (len(keeps) - 8))
                    print(f"{r:8} {name:8} 1-8: {pct}; 9-30: {late:.1f}")
            return 0
        arms = {"defaults": {}, "variant": variant, "median": {"median": True}}
        jobs2 = [
            (a.mode, r, kw, u, a.rounds, a.seed)
            for r in regimes
            for kw in arms.values()
            for u in units
        ]
        res = pool.map(_one, jobs2)
    table: dict[tuple[str, str], dict[int, Row]] = {}
    for (_, r, kw, u, _, _), (_, _, row) in zip(jobs2, res, strict=True):
        name = next(n for n, v in arms.items() if v is kw)
        table.setdefault((r, name), {})[u] = row
    for r in regimes:
        base, var, med = (table[(r, n)] for n in arms)
        diff, se = _paired(var, base)
        print(
            f"{r:8} variant-defaults {diff:+.2f} ± {se:.2f} points,"
            f" runs x{_tot(var, 1) / _tot(base, 1):.3f}, false keeps {_tot(var, 2)} vs"
            f" {_tot(base, 2)} | vs median: defaults {_vs_median(base, med)};"
            f" variant {_vs_median(var, med)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
