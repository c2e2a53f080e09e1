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

from gitimprove.state.record_blocks import (
    AgentRun as AgentRun,
)
from gitimprove.state.record_blocks import (
    Decision as Decision,
)
from gitimprove.state.record_blocks import (
    GuardResult as GuardResult,
)
from gitimprove.state.record_blocks import (
    MetricResult as MetricResult,
)
from gitimprove.state.record_blocks import (
    NoiseRecord as NoiseRecord,
)
from gitimprove.state.record_blocks import (
    _float,
    _floats,
    _int,
    _map,
    _str,
    _text,
)
from gitimprove.state.records import KEPT

KEEPS = frozenset({"keep", "keep-reworked"})
CRASHES = frozenset({"crash", "timeout"})


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
