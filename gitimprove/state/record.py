"""The typed record of one experiment's folded state (DESIGN §4).

`Experiment` is the one record every reader in the package works with — the loop, the views,
`status`, `show`, `report` — through its typed attributes; only `Experiment.parse` reads a
note's fields by name. The folded fields themselves stay in `state`, unknown ones included, so a
record survives a round trip through any reader. Pure: no git, so the views' warm path and the
hooks can use it without importing pygit2.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from gitimprove.state.records import KEPT

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


def _pair(value: Any) -> tuple[float, float] | None:
    got = _floats(value)
    return (got[0], got[1]) if len(got) == 2 else None


@dataclass(frozen=True, slots=True)
class MetricResult:
    """The `metric` block: the primary metric's value and every raw sample behind it.

    For a decision, `value` is the candidate's level and `incumbent` the incumbent's level it
    was compared with; `delta` = value − incumbent (signed as the metric), `delta_pct` the
    same in percent of the incumbent, `interval` / `interval_pct` the delta's interval at the
    decision's threshold."""

    name: str | None = None
    direction: str | None = None
    value: float | None = None
    samples: tuple[float, ...] = ()
    incumbent_samples: tuple[float, ...] = ()
    incumbent: float | None = None
    delta: float | None = None
    delta_pct: float | None = None
    interval: tuple[float, float] | None = None
    interval_pct: tuple[float, float] | None = None
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
            incumbent=_float(data.get("incumbent")),
            delta=_float(data.get("delta")),
            delta_pct=_float(data.get("delta_pct")),
            interval=_pair(data.get("interval")),
            interval_pct=_pair(data.get("interval_pct")),
            confidence=_float(data.get("confidence")),
        )


@dataclass(frozen=True, slots=True)
class Decision:
    """How the rule decided (the `decision` block of a loop attempt): enough to replay the
    decision into the rule on resume (see `loop/rule.py` `Outcome`)."""

    runs: int = 0
    rule: str = ""
    window_used: int | None = None
    keep: bool = False
    gain: float | None = None
    rework: int = 0
    sequence: str = ""  # run order: "B" candidate, "A" incumbent
    mode: str = ""  # window | paired | exact | stored
    window_reset: bool = False
    sigma: float | None = None
    bound: float | None = None
    half: float | None = None
    n_ref: int = 0
    n_cand: int = 0

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
            sequence=_text(data.get("sequence")),
            mode=_text(data.get("mode")),
            window_reset=data.get("window_reset") is True,
            sigma=_float(data.get("sigma")),
            bound=_float(data.get("bound")),
            half=_float(data.get("half")),
            n_ref=_int(data.get("n_ref")) or 0,
            n_cand=_int(data.get("n_cand")) or 0,
        )


@dataclass(frozen=True, slots=True)
class NoiseRecord:
    """A run's baseline `noise` block: what calibration learned, and the budget it chose."""

    sigma: float | None = None  # per run, in the rule's scale
    df: float | None = None
    prior_sigma: float | None = None  # from earlier runs' notes of the same metric
    prior_df: float | None = None
    max_runs: int | None = None
    floor: float | None = None

    @classmethod
    def parse(cls, data: Any) -> NoiseRecord | None:
        if not isinstance(data, Mapping):
            return None
        return cls(
            sigma=_float(data.get("sigma")),
            df=_float(data.get("df")),
            prior_sigma=_float(data.get("prior_sigma")),
            prior_df=_float(data.get("prior_df")),
            max_runs=_int(data.get("max_runs")),
            floor=_float(data.get("floor")),
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


@dataclass(frozen=True, slots=True, eq=False)
class Experiment:
    """One experiment's folded state, typed and immutable. `state` holds every folded field
    as stored (read-only), unknown ones included.

    Construction is cheap (views build ten thousand of these per `log`); each typed attribute
    is parsed from `state` when it is read, so a field that is absent or of the wrong type
    reads as its default rather than raising.
    """

    commit: str
    state: Mapping[str, Any] = field(default_factory=dict)
    raw: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.state, MappingProxyType):
            object.__setattr__(self, "state", MappingProxyType(self.state))
        if not isinstance(self.raw, tuple):
            object.__setattr__(self, "raw", tuple(self.raw))

    def __repr__(self) -> str:
        return f"Experiment({self.commit[:10]}, {self.status}, iteration {self.iteration})"

    @classmethod
    def parse(cls, commit: str, state: Mapping[str, Any], raw: Iterable[str] = ()) -> Experiment:
        return cls(commit, state, tuple(raw))

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Experiment:
        """From a view row (`{"commit": …, **state}`, plus `raw` when a line was unreadable)."""
        state = {k: v for k, v in row.items() if k not in ("commit", "raw")}
        raw = row.get("raw")
        lines = tuple(str(x) for x in raw) if isinstance(raw, list | tuple) else ()
        return cls(str(row.get("commit") or ""), state, lines)

    def to_row(self) -> dict[str, Any]:
        """Every stored field, unknown ones included: what `log --format jsonl` prints."""
        row: dict[str, Any] = {**self.state, "commit": self.commit}  # a line cannot claim these
        row.pop("raw", None)
        if self.raw:
            row["raw"] = list(self.raw)
        return row

    # --- identity and place in the run -------------------------------------------------------

    @property
    def run(self) -> str | None:
        return _str(self.state.get("run"))

    @property
    def iteration(self) -> int | None:
        return _int(self.state.get("iteration"))

    @property
    def candidate(self) -> int:
        return _int(self.state.get("candidate")) or 0

    @property
    def parent(self) -> str | None:
        return _str(self.state.get("parent"))

    @property
    def tree(self) -> str | None:
        return _str(self.state.get("tree")) or None

    @property
    def ts(self) -> str:
        return _text(self.state.get("ts"))

    # --- outcome ----------------------------------------------------------------------------

    @property
    def status(self) -> str | None:
        return _str(self.state.get("status"))

    @property
    def reason(self) -> str:
        return _text(self.state.get("reason"))

    @property
    def description(self) -> str:
        return _text(self.state.get("description"))

    @property
    def hypothesis(self) -> str:
        return _text(self.state.get("hypothesis"))

    @property
    def approach(self) -> str | None:
        return _str(self.state.get("approach")) or None

    @property
    def scope(self) -> str | None:
        return _str(self.state.get("scope"))

    @property
    def import_id(self) -> str | None:
        """Set on records made by `git improve import`: which file row they came from."""
        return _str(self.state.get("import_id"))

    @property
    def escalation(self) -> int:
        return _int(self.state.get("escalation")) or 0

    @property
    def options(self) -> Mapping[str, Any] | None:
        value = self.state.get("options")
        return value if isinstance(value, Mapping) else None

    @property
    def metric(self) -> MetricResult | None:
        return MetricResult.parse(self.state.get("metric"))

    @property
    def value(self) -> float | None:
        metric = self.state.get("metric")
        return _float(metric.get("value")) if isinstance(metric, Mapping) else None

    @property
    def samples(self) -> tuple[float, ...]:
        metric = self.state.get("metric")
        return _floats(metric.get("samples")) if isinstance(metric, Mapping) else ()

    @property
    def metric_name(self) -> str | None:
        metric = self.state.get("metric")
        return _str(metric.get("name")) if isinstance(metric, Mapping) else None

    @property
    def direction(self) -> str | None:
        metric = self.state.get("metric")
        if isinstance(metric, Mapping) and metric.get("direction") in ("lower", "higher"):
            return str(metric["direction"])
        return None

    @property
    def metrics(self) -> dict[str, float]:
        """Secondary metrics (`{name: value}`), numbers only."""
        return {
            str(k): float(v)
            for k, v in _map(self.state.get("metrics")).items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        }

    @property
    def decision(self) -> Decision | None:
        return Decision.parse(self.state.get("decision"))

    @property
    def noise(self) -> NoiseRecord | None:
        """On a run's baseline: the noise it learned and the run budget it chose."""
        return NoiseRecord.parse(self.state.get("noise"))

    @property
    def delta(self) -> float | None:
        """The note's delta (candidate − incumbent, metric units), if it has one."""
        metric = self.state.get("metric")
        return _float(metric.get("delta")) if isinstance(metric, Mapping) else None

    @property
    def host(self) -> str | None:
        return _str(self.state.get("host"))

    @property
    def metric_command(self) -> str | None:
        harness = self.state.get("harness")
        return _str(harness.get("metric_command")) if isinstance(harness, Mapping) else None

    @property
    def guard(self) -> GuardResult | None:
        return GuardResult.parse(self.state.get("guard"))

    @property
    def agent(self) -> AgentRun | None:
        return AgentRun.parse(self.state.get("agent"))

    @property
    def cost_usd(self) -> float:
        agent = self.state.get("agent")
        return (_float(agent.get("cost_usd")) or 0.0) if isinstance(agent, Mapping) else 0.0

    # --- tournaments ------------------------------------------------------------------------

    @property
    def family(self) -> str | None:
        return _str(self.state.get("family")) or None

    @property
    def family_or_approach(self) -> str | None:
        return self.family or self.approach

    @property
    def family_ignored(self) -> bool:
        return self.state.get("family_ignored") is True

    @property
    def stage(self) -> str | None:
        """ "evaluated" until the round decides, then "final"."""
        return _str(self.state.get("stage"))

    @property
    def round(self) -> int | None:
        return _int(self.state.get("round"))

    @property
    def rank(self) -> int | None:
        return _int(self.state.get("rank"))

    @property
    def winner(self) -> str | None:
        return _str(self.state.get("winner"))

    # --- shorthands -------------------------------------------------------------------------

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
