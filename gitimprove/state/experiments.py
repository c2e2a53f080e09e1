"""The single writer and reader of experiment records (notes on refs/notes/improve).

`Experiment` is the one typed record of an experiment's folded state (DESIGN §4). Every reader
in the package — the loop, the views, `status`, `show`, `report` — works with its typed
attributes; only `Experiment.parse` reads a note's fields by name. The folded fields themselves
stay in `state`, unknown ones included, so a record survives a round trip through any reader.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gitimprove.git import notes
from gitimprove.git.repo import Repo
from gitimprove.state.records import KEPT, fold, make_line, parse_note

KEEPS = frozenset({"keep", "keep-reworked"})
CRASHES = frozenset({"crash", "timeout"})


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _floats(value: Any) -> tuple[float, ...]:
    if not isinstance(value, list | tuple):
        return ()
    return tuple(float(v) for v in value if isinstance(v, int | float) and not isinstance(v, bool))


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True, slots=True)
class MetricResult:
    """The `metric` block: the primary metric's value and every raw sample behind it."""

    name: str | None = None
    direction: str | None = None
    value: float | None = None
    samples: tuple[float, ...] = ()
    incumbent_samples: tuple[float, ...] = ()
    delta: float | None = None
    delta_pct: float | None = None
    confidence: float | None = None

    @classmethod
    def parse(cls, data: Any) -> MetricResult | None:
        if not isinstance(data, Mapping):
            return None
        direction = data.get("direction")
        return cls(
            name=_str(data.get("name")),
            direction=direction if direction in ("lower", "higher") else None,
            value=_float(data.get("value")),
            samples=_floats(data.get("samples")),
            incumbent_samples=_floats(data.get("incumbent_samples")),
            delta=_float(data.get("delta")),
            delta_pct=_float(data.get("delta_pct")),
            confidence=_float(data.get("confidence")),
        )


@dataclass(frozen=True, slots=True)
class Decision:
    """How the rule decided (the `decision` block of a loop attempt)."""

    runs: int = 0
    rule: str = ""
    window_used: int | None = None
    keep: bool = False
    gain: float | None = None
    rework: int = 0

    @classmethod
    def parse(cls, data: Any) -> Decision | None:
        if not isinstance(data, Mapping):
            return None
        return cls(
            runs=_int(data.get("runs")) or 0,
            rule=_text(data.get("rule")),
            window_used=_int(data.get("window_used")),
            keep=data.get("keep") is True,
            gain=_float(data.get("gain")),
            rework=_int(data.get("rework")) or 0,
        )


@dataclass(frozen=True, slots=True)
class GuardResult:
    status: str | None = None  # pass | fail | skipped
    exit_code: int | None = None
    tail: str | None = None

    @classmethod
    def parse(cls, data: Any) -> GuardResult | None:
        if not isinstance(data, Mapping):
            return None
        return cls(_str(data.get("status")), _int(data.get("exit_code")), _str(data.get("tail")))


@dataclass(frozen=True, slots=True)
class AgentRun:
    name: str | None = None
    exit_code: int | None = None
    seconds: float | None = None
    cost_usd: float | None = None
    rework: int = 0

    @classmethod
    def parse(cls, data: Any) -> AgentRun | None:
        if not isinstance(data, Mapping):
            return None
        return cls(
            _str(data.get("name")),
            _int(data.get("exit_code")),
            _float(data.get("seconds")),
            _float(data.get("cost_usd")),
            _int(data.get("rework")) or 0,
        )


@dataclass(frozen=True, eq=False)
class Experiment:
    """One experiment's folded state, typed. `state` holds every folded field as stored."""

    commit: str
    state: Mapping[str, Any] = field(default_factory=dict)
    raw: tuple[str, ...] = ()
    run: str | None = None
    iteration: int | None = None
    candidate: int = 0
    parent: str | None = None
    status: str | None = None
    reason: str = ""
    description: str = ""
    hypothesis: str = ""
    approach: str | None = None
    family: str | None = None
    family_ignored: bool = False
    scope: str | None = None
    tree: str | None = None
    stage: str | None = None  # tournaments: "evaluated" until the round decides, then "final"
    round: int | None = None
    rank: int | None = None
    winner: str | None = None
    escalation: int = 0
    ts: str = ""
    metric: MetricResult | None = None
    metrics: Mapping[str, float] = field(default_factory=dict)
    decision: Decision | None = None
    guard: GuardResult | None = None
    agent: AgentRun | None = None
    options: Mapping[str, Any] | None = None

    @classmethod
    def parse(cls, commit: str, state: Mapping[str, Any], raw: Iterable[str] = ()) -> Experiment:
        """The record's parser: the only place a note's fields are read by name."""
        g = state.get
        options = g("options")
        return cls(
            commit=commit,
            state=state,
            raw=tuple(raw),
            run=_str(g("run")),
            iteration=_int(g("iteration")),
            candidate=_int(g("candidate")) or 0,
            parent=_str(g("parent")),
            status=_str(g("status")),
            reason=_text(g("reason")),
            description=_text(g("description")),
            hypothesis=_text(g("hypothesis")),
            approach=_str(g("approach")) or None,
            family=_str(g("family")) or None,
            family_ignored=g("family_ignored") is True,
            scope=_str(g("scope")),
            tree=_str(g("tree")),
            stage=_str(g("stage")),
            round=_int(g("round")),
            rank=_int(g("rank")),
            winner=_str(g("winner")),
            escalation=_int(g("escalation")) or 0,
            ts=_text(g("ts")),
            metric=MetricResult.parse(g("metric")),
            metrics={
                str(k): float(v)
                for k, v in _map(g("metrics")).items()
                if isinstance(v, int | float) and not isinstance(v, bool)
            },
            decision=Decision.parse(g("decision")),
            guard=GuardResult.parse(g("guard")),
            agent=AgentRun.parse(g("agent")),
            options=options if isinstance(options, Mapping) else None,
        )

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Experiment:
        """From a view row (`{"commit": …, **state}`, plus `raw` when a line was unreadable)."""
        state = {k: v for k, v in row.items() if k not in ("commit", "raw")}
        raw = row.get("raw")
        return cls.parse(
            str(row.get("commit") or ""), state, raw if isinstance(raw, list | tuple) else ()
        )

    def to_row(self) -> dict[str, Any]:
        """Every stored field, unknown ones included: what `log --format jsonl` prints."""
        row: dict[str, Any] = {"commit": self.commit, **self.state}
        if self.raw:
            row["raw"] = list(self.raw)
        return row

    @property
    def value(self) -> float | None:
        return self.metric.value if self.metric else None

    @property
    def samples(self) -> tuple[float, ...]:
        return self.metric.samples if self.metric else ()

    @property
    def kept(self) -> bool:
        """A keep, or the baseline: a point on the run's kept line."""
        return self.status in KEPT

    @property
    def is_keep(self) -> bool:
        return self.status in KEEPS

    @property
    def is_crash(self) -> bool:
        return self.status in CRASHES

    @property
    def is_baseline(self) -> bool:
        return self.status == "baseline"

    @property
    def cost_usd(self) -> float:
        return (self.agent.cost_usd or 0.0) if self.agent else 0.0

    @property
    def family_or_approach(self) -> str | None:
        return self.family or self.approach


def record(repo: Repo, commit: str, fields: Mapping[str, Any], *, op: str = "create") -> None:
    notes.append_lines(
        repo, {commit: [make_line(op, fields)]}, message=f"gitimprove: {op} {commit[:10]}"
    )


def record_many(
    repo: Repo, entries: Iterable[tuple[str, str, Mapping[str, Any]]], *, skip_present: bool = False
) -> int:
    """Append (commit, op, fields) records in one notes commit; returns lines written."""
    batch: dict[str, list[str]] = {}
    for commit, op, fields in entries:
        batch.setdefault(commit, []).append(make_line(op, fields))
    return notes.append_lines(
        repo, batch, message="gitimprove: record experiments", skip_present=skip_present
    )


def from_note(commit: str, data: bytes) -> Experiment:
    parsed = parse_note(data.decode("utf-8", errors="replace"))
    return Experiment.parse(commit, fold(parsed.lines), parsed.raw)


def get(repo: Repo, commit: str) -> Experiment | None:
    data = notes.read_note(repo, commit)
    if not data:
        return None
    return from_note(commit, data)


def all_experiments(repo: Repo, tip: str | None = None) -> list[Experiment]:
    return [from_note(commit, data) for commit, data in notes.iter_notes(repo, tip)]


def run_experiments(repo: Repo, run: str) -> list[Experiment]:
    """One run's experiments in (iteration, candidate) order; the baseline first."""
    out = [e for e in all_experiments(repo) if e.run == run]
    out.sort(key=lambda e: (e.iteration if e.iteration is not None else -1, e.candidate))
    return out
