"""The decision rule's table next to autoresearch's 5-run median, in one run (NOISE.md).

Usage: python bench/decide_bench.py [--climbs 200] [--jobs 2]
Columns: false keeps (share of no-gain changes kept), runs per decision, cumulative true gain.
"""

from __future__ import annotations

import argparse
import sys
import time
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gitimprove.loop.simulate import SCENARIOS, STRATEGIES, Result, simulate


def _task(args: tuple[str, str, int, int]) -> tuple[str, str, Result]:
    sc, st, c0, c1 = args
    return sc, st, simulate(sc, st, range(c0, c1))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--climbs", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    tasks = [
        (sc, st, c0, min(a.climbs, c0 + 50))
        for sc in SCENARIOS
        for st in STRATEGIES
        for c0 in range(0, a.climbs, 50)
    ]
    t0 = time.time()
    total: dict[tuple[str, str], Result] = {}
    with Pool(a.jobs) as pool:
        for sc, st, res in pool.imap_unordered(_task, tasks):
            total.setdefault((sc, st), Result()).add(res)
    print(f"# {a.climbs} climbs x 100 iterations per cell, {time.time() - t0:.0f}s")
    print(f"| {'scenario':8} | {'rule':52} | FK% | runs | gain% |")
    print(f"|{'-' * 10}|{'-' * 54}|----:|-----:|------:|")
    for sc in SCENARIOS:
        for st, (label, _) in STRATEGIES.items():
            r = total[(sc, st)]
            print(
                f"| {sc:8} | {label:52} | {r.false_keep_pct:3.1f} | {r.runs_per_decision:4.2f} | {r.gain_pct:5.1f} |"
            )
        ours, med = total[(sc, "adaptive")], total[(sc, "median5")]
        print(
            f"| {sc:8} | {'ratio adaptive / median':52} | {ours.false_keep_pct / max(med.false_keep_pct, 1e-9):3.2f} "
            f"| {ours.runs_per_decision / med.runs_per_decision:4.2f} | {ours.gain_pct - med.gain_pct:+5.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
