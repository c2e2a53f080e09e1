"""A run's experiments as typed records, read once per round, and the rule's state rebuilt
from them (a resumed run decides exactly as the uninterrupted one would have)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from gitimprove.git.repo import Repo
from gitimprove.loop.decide import AdaptiveRule
from gitimprove.state import experiments
from gitimprove.state.experiments import Experiment


@dataclass(frozen=True)
class History:
    """One run's records in (iteration, candidate) order; the baseline first."""

    run: str
    records: tuple[Experiment, ...] = ()

    @classmethod
    def read(cls, repo: Repo, run: str) -> History:
        return cls(run, tuple(experiments.run_experiments(repo, run)))

    @property
    def baseline(self) -> Experiment | None:
        return next((e for e in self.records if e.is_baseline), None)

    @property
    def attempts(self) -> list[Experiment]:
        return [e for e in self.records if not e.is_baseline]

    def rounds(self) -> list[list[Experiment]]:
        """The attempts grouped by iteration (round), in order."""
        return group_rounds(self.records)

    def in_round(self, iteration: int) -> list[Experiment]:
        return [e for e in self.records if e.iteration == iteration]

    def without_round(self, iteration: int) -> list[Experiment]:
        return [e for e in self.records if e.iteration != iteration]

    def best(self, direction: str) -> float | None:
        values = [e.value for e in self.records if e.kept and e.value is not None]
        if not values:
            return None
        return float(min(values) if direction == "lower" else max(values))

    def next_iteration(self) -> tuple[int, bool]:
        """(iteration, unfinished): the last round again when it was left half-decided."""
        last = max((e.iteration for e in self.records if e.iteration is not None), default=0)
        unfinished = any(e.iteration == last and e.stage == "evaluated" for e in self.records)
        return (last if unfinished else last + 1), unfinished

    def measured_trees(self) -> frozenset[str]:
        return frozenset(e.tree for e in self.records if e.tree)

    def spent(self) -> float:
        return sum(e.cost_usd for e in self.records)

    def rounds_since_keep(self) -> int:
        n = 0
        for rnd in reversed(self.rounds()):
            if any(e.is_keep for e in rnd):
                break
            n += 1
        return n

    def crashed_rounds(self) -> int:
        n = 0
        for rnd in reversed(self.rounds()):
            if not all(e.is_crash for e in rnd):
                break
            n += 1
        return n


def group_rounds(records: Sequence[Experiment]) -> list[list[Experiment]]:
    groups: dict[int, list[Experiment]] = {}
    for e in records:
        if not e.is_baseline and e.iteration is not None:
            groups.setdefault(e.iteration, []).append(e)
    return [groups[k] for k in sorted(groups)]


def rebuild_rule(rule: AdaptiveRule, history: History) -> None:
    """Replay the recorded samples into the rule: its noise estimate and incumbent window."""
    for exp in history.records:
        metric = exp.metric
        raw = metric.samples if metric else ()
        samples = [rule.tx(v) for v in raw if v > 0 or not rule.relative]
        if exp.is_baseline:
            for a, b in itertools.pairwise(samples):
                rule._note_pair(a, b)
            rule.window = samples[-rule.W :] if rule.W else []
            rule.last_base = samples[-1] if samples else None
            continue
        if exp.decision is None:
            continue
        for a, b in itertools.pairwise(samples):
            rule._note_pair(a, b)
        fresh = [rule.tx(v) for v in (metric.incumbent_samples if metric else ())]
        for x in fresh:
            if rule.last_base is not None:
                rule._note_pair(rule.last_base, x)
            rule.last_base = x
        rule.since_refresh = 0 if fresh else rule.since_refresh + 1
        if exp.is_keep:
            rule.window, rule.last_base = [], None
        else:
            used = exp.decision.window_used
            w = rule.window[: len(rule.window) if used is None else used] + fresh
            rule.window = w[-rule.W :] if rule.W else []
