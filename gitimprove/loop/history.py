"""A run's experiments as typed records, read once per round, and the rule's state rebuilt
from them (a resumed run decides exactly as the uninterrupted one would have)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gitimprove.git.repo import Repo
from gitimprove.loop.decide import Rule
from gitimprove.loop.noise import Noise, NoisePool
from gitimprove.loop.outcome import Outcome
from gitimprove.loop.rule import AdaptiveRule
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
        """The incumbent's value: the last keep's (or the baseline's), as its note records
        it. Not the lowest value ever seen: a noisy run's extreme is not the branch's tip."""
        inc = self.incumbent()
        return inc.value if inc is not None else None

    def incumbent(self) -> Experiment | None:
        """The record of improve/<run>'s tip: the last keep, else the baseline."""
        return next((e for e in reversed(self.records) if e.kept and e.value is not None), None)

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


def outcome_of(exp: Experiment) -> Outcome | None:
    """A decided attempt's outcome as the rule took it in, from its note."""
    d, m = exp.decision, exp.metric
    if d is None or m is None or not m.samples:
        return None
    return Outcome(
        keep=d.keep,
        verdict=d.rule,
        gain=d.gain or 0.0,
        half=d.half or 0.0,
        candidate=list(m.samples),
        incumbent=list(m.incumbent_samples),
        sequence=d.sequence or "B" * len(m.samples) + "A" * len(m.incumbent_samples),
        mode=d.mode or "window",
        window_used=d.window_used or 0,
        window_reset=d.window_reset,
        reference=m.incumbent if m.incumbent is not None else (m.value or 0.0),
        n_ref=d.n_ref,
        n_cand=d.n_cand or len(m.samples),
        sigma=d.sigma or 0.0,
        bound=d.bound or 0.0,
    )


def rebuild_rule(rule: Rule, history: History) -> None:
    """Replay the recorded decisions into a fresh rule: its noise, window and budget become
    what they were when the run stopped, so a resumed run decides as the uninterrupted one
    would have. Attempts of a round not yet decided (stage "evaluated") are left out: the
    round's end takes them in, as it does in a run that never stopped."""
    base = history.baseline
    if base is None or base.metric is None:
        return
    if isinstance(rule, AdaptiveRule):
        rule.restore_budget(base.noise)
    rule.absorb_calibration(list(base.metric.samples))
    for exp in history.attempts:
        if exp.stage == "evaluated":
            continue
        out = outcome_of(exp)
        if out is not None:
            rule.absorb(out, moved=exp.is_keep)


def noise_prior(
    exps: Sequence[Experiment], rule: AdaptiveRule, *, run: str, metric_command: str, host: str
) -> Noise | None:
    """What earlier runs of the same metric command on this host say about its noise: their
    runs of code the harness chose to measure as the reference (baselines' calibrations, each
    decision's incumbent arm), newest first, up to the pool's memory. None when there are
    none. Candidate runs are not taken: an agent writes that code, and a candidate made to
    repeat exactly (or to vary wildly) would teach the next run a noise the metric lacks."""
    pool = NoisePool(rule.k)
    taken = 0
    for exp in sorted(exps, key=lambda e: e.ts, reverse=True):
        if exp.run == run or exp.metric_command != metric_command or exp.host != host:
            continue
        m = exp.metric
        if m is None:
            continue
        for arm in (m.samples,) if exp.is_baseline else (m.incumbent_samples,):
            xs = [rule.tx(v) for v in arm if v > 0 or not rule.relative]
            if len(xs) >= 2:
                pool.add(xs)
                taken += len(xs)
        if taken >= pool.memory:
            break
    got = pool.noise()
    return got if got.df > 0 and got.known else None
