"""The typed blocks of a note — `metric`, `decision`, a baseline's `noise`, `guard`, `agent` —
and the tolerant readers of single fields that `record.Experiment` is built from. Pure, like
`record.py`: no git."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


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
