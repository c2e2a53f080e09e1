"""Where the rule's runs go through the replayed real loop, by role (docs/noise.md).

For each seed, `simulate.replay_loop` runs gitimprove's loop (40 rounds by default) and every
decision's outcome is sorted by the proposal's true effect: no gain (e <= 0), small gains
(0 < e < 2%), gains of 2% or more. The table counts, per decision, the calibration, the fresh
incumbent runs, and the candidate runs of each class, of the keeps apart; then the gains of 2%
or more that were not kept, by the number of candidate runs they were discarded after.

Usage: python bench/decide_roles.py [--regimes cv5,t3,spikes] [--seeds 200] [--first 0]
"""

from __future__ import annotations

import argparse
import collections
import sys
from collections.abc import Callable

from common import ROOT

sys.path.insert(0, str(ROOT))

from gitimprove.loop.machine import Machine
from gitimprove.loop.outcome import Outcome
from gitimprove.loop.simulate import Adaptive, Strategy, loop_effect, replay_loop


class Recorded(Adaptive):
    """gitimprove's rule, keeping every decision's outcome."""

    def __init__(self, sink: list[Outcome], **kw: object) -> None:
        super().__init__(**kw)
        self.sink = sink

    def decide(self, m: Machine, tb: float, tc: float) -> tuple[bool, int]:
        out = self.rule.decide(lambda: m.run(tb), lambda: m.run(tc))
        self.sink.append(out)
        return out.keep, out.runs


def roles(
    regime: str, seeds: range, rounds: int, make: Callable[[list[Outcome]], Strategy]
) -> tuple[dict[str, float], collections.Counter[int], int]:
    tot: collections.Counter[str] = collections.Counter()
    lost: collections.Counter[int] = collections.Counter()
    decisions = 0
    for seed in seeds:
        outs: list[Outcome] = []
        r = replay_loop(regime, lambda outs=outs: make(outs), seed, rounds)
        decisions += r.decisions
        tot["calibration"] += r.runs - sum(o.runs for o in outs)
        for it, o in enumerate(outs, 1):
            e = loop_effect(seed, it)
            nb, na = o.sequence.count("B"), o.sequence.count("A")
            cls = "no gain" if e <= 0 else "gain < 2%" if e < 0.02 else "gain >= 2%"
            tot["fresh incumbent"] += na
            tot[f"fresh incumbent, mode {o.mode}"] += na
            tot[f"candidate, mode {o.mode}"] += nb
            tot[f"decisions, mode {o.mode}"] += 1
            if it == 1:
                tot["all runs, first decision"] += o.runs
            tot[f"fresh incumbent, {cls}"] += na
            tot[f"candidate, {cls}"] += nb
            tot[f"decisions, {cls}"] += 1
            if o.keep:
                tot["candidate, keeps"] += nb
                tot["fresh incumbent, keeps"] += na
                tot["decisions, keeps"] += 1
            if e >= 0.02 and not o.keep:
                lost[nb] += 1
    return {k: v / decisions for k, v in tot.items()}, lost, decisions


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--regimes", default="cv5,t3,spikes")
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=40)
    a = ap.parse_args()
    seeds = range(a.first, a.first + a.seeds)
    for regime in a.regimes.split(","):
        per, lost, n = roles(regime, seeds, a.rounds, lambda s: Recorded(s))
        print(f"# {regime}, seeds {seeds.start}-{seeds.stop - 1}, {n} decisions")
        for k in sorted(per):
            print(f"  {k:40s} {per[k]:.3f} per decision")
        print("  gains >= 2% lost, by candidate runs:", dict(sorted(lost.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
