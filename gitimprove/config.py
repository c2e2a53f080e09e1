"""`.gitimprove.toml`: schema, validation, defaults, and the `improve.*` git config overlay.

Reading uses the standard library's tomllib; writing uses tomlkit so that comments survive.
Bad configuration is an error naming the key, the value and what is allowed; nothing falls
back silently (DESIGN §6).
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitimprove.errors import ConfigError

CONFIG_FILE = ".gitimprove.toml"

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_duration(value: object, key: str = "duration") -> float:
    """`90s`, `10m`, `8h` (or a bare number of seconds) -> seconds."""
    if isinstance(value, bool):
        raise ConfigError(f'{key} = {value!r} is not a duration; use e.g. "90s", "10m", "8h"')
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and (m := _DURATION.match(value)):
        seconds = float(m.group(1)) * _UNITS[m.group(2)]
    else:
        raise ConfigError(f'{key} = {value!r} is not a duration; use e.g. "90s", "10m", "8h"')
    if seconds <= 0:
        raise ConfigError(f"{key} = {value!r} must be longer than zero")
    return seconds


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]?b?)\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "b": 1, "k": 1000, "m": 1000**2, "g": 1000**3}


def parse_size(value: object, key: str = "size") -> int:
    """`100MB`, `500kB`, `2GB` (or a bare number of bytes) -> bytes."""
    m = _SIZE.match(value) if isinstance(value, str) else None
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    elif m:
        size = int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower().rstrip("b")])
    else:
        raise ConfigError(f'{key} = {value!r} is not a size; use e.g. "100MB", "500kB", "2GB"')
    if size <= 0:
        raise ConfigError(f"{key} = {value!r} must be larger than zero")
    return size


@dataclass(frozen=True)
class MinDelta:
    """The smallest gain worth keeping: absolute, or relative when given as a percent."""

    value: float = 0.0
    relative: bool = False

    def __str__(self) -> str:
        return f"{self.value * 100:g}%" if self.relative else f"{self.value:g}"


def parse_min_delta(value: object, key: str = "metric.min_delta") -> MinDelta:
    if isinstance(value, bool):
        raise ConfigError(f'{key} = {value!r}: use a number like 0.01 or a percent like "1%"')
    if isinstance(value, int | float):
        number, relative = float(value), False
    elif isinstance(value, str):
        text = value.strip()
        relative = text.endswith("%")
        try:
            number = float(text.rstrip("%").strip())
        except ValueError:
            raise ConfigError(
                f'{key} = {value!r}: use a number like 0.01 or a percent like "1%"'
            ) from None
        if relative:
            number /= 100.0
    else:
        raise ConfigError(f'{key} = {value!r}: use a number like 0.01 or a percent like "1%"')
    if number < 0 or not math.isfinite(number):
        raise ConfigError(f"{key} = {value!r} must be a finite number of zero or more")
    return MinDelta(number, relative)


def check_extract(value: str, key: str = "metric.extract") -> str:
    if value == "auto":
        return value
    kind, sep, arg = value.partition(":")
    if not sep or kind not in ("regex", "json", "line") or not arg:
        raise ConfigError(
            f'{key} = {value!r} is not allowed; use "auto", "regex:<pattern>", '
            '"json:<key>" or "line:<name>"'
        )
    if kind == "regex":
        try:
            re.compile(arg)
        except re.error as exc:
            raise ConfigError(f"{key}: the pattern {arg!r} does not compile ({exc})") from None
    return value


# --- schema -------------------------------------------------------------------------------

Check = Callable[[object, str], object]


def _str(value: object, key: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{key} = {value!r} must be a string")
    return value


def _nonempty_str(value: object, key: str) -> str:
    text = _str(value, key)
    if not text.strip():
        raise ConfigError(f"{key} must not be empty")
    return text


def _choice(*allowed: str) -> Check:
    def check(value: object, key: str) -> str:
        if value not in allowed:
            raise ConfigError(
                f"{key} = {value!r} is not allowed; use one of: " + ", ".join(allowed)
            )
        return str(value)

    return check


def _int(low: int, high: int | None = None) -> Check:
    def check(value: object, key: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key} = {value!r} must be a whole number")
        if value < low or (high is not None and value > high):
            span = f"from {low} to {high}" if high is not None else f"{low} or more"
            raise ConfigError(f"{key} = {value!r} is out of range; use a whole number {span}")
        return value

    return check


def _float(low: float | None = None, high: float | None = None, *, open_low: bool = False) -> Check:
    def check(value: object, key: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{key} = {value!r} must be a number")
        number = float(value)
        bad = not math.isfinite(number)
        if low is not None:
            bad = bad or (number <= low if open_low else number < low)
        if high is not None:
            bad = bad or number > high
        if bad:
            lo = "" if low is None else (f"above {low:g}" if open_low else f"at least {low:g}")
            hi = "" if high is None else f"at most {high:g}"
            span = " and ".join(s for s in (lo, hi) if s)
            raise ConfigError(f"{key} = {value!r} is out of range; use a number {span}")
        return number

    return check


def _globs(value: object, key: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f'{key} = {value!r} must be a list of path patterns like ["src/**"]')
    return list(value)


def _bool(value: object, key: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{key} = {value!r} must be true or false")
    return value


def _duration(value: object, key: str) -> float:
    return parse_duration(value, key)


def _extract(value: object, key: str) -> str:
    return check_extract(_str(value, key), key)


def _min_delta(value: object, key: str) -> MinDelta:
    return parse_min_delta(value, key)


SCHEMA: dict[str, dict[str, tuple[Check, object]]] = {
    "metric": {
        "command": (_nonempty_str, None),
        "name": (_nonempty_str, "metric"),
        "direction": (_choice("lower", "higher"), "lower"),
        "extract": (_extract, "auto"),
        "timeout": (_duration, 600.0),
        "min_delta": (_min_delta, MinDelta()),
        "confidence": (_float(0.5, 0.9999), 0.95),
        "max_runs": (_int(1, 1000), 16),
        "runs": (_int(1, 100), 3),
    },
    "guard": {
        "command": (_str, ""),
        "timeout": (_duration, 600.0),
        "rework": (_int(0, 20), 2),
    },
    "scope": {
        "mutable": (_globs, ["**"]),
        "sealed": (_globs, []),
        "max_file_size": (parse_size, 100_000_000),  # bytes; "100MB" in the file
        "max_tree_size": (parse_size, 1_000_000_000),
    },
    "loop": {
        "iterations": (_int(1), 20),
        "candidates": (_int(1, 64), 1),
        "jobs": (_int(1, 64), 2),
        "stuck_after": (_int(1), 5),
        "plateau_patience": (_int(1), 15),
        "circuit_breaker": (_int(1), 3),
        "target": (_float(), None),
        "max_cost_usd": (_float(0.0, open_low=True), None),
        "max_time": (_duration, 8 * 3600.0),
    },
    "agent": {
        "name": (_choice("claude", "codex", "aider", "command", "scripted"), "claude"),
        "command": (_str, ""),
        "timeout": (_duration, 1800.0),
        "sandbox": (_choice("auto", "bwrap", "none"), "auto"),
    },
    "memory": {
        "max_lines": (_int(20, 100000), 200),
        "signal_ttl_days": (_int(1), 14),
    },
    "capture": {
        "measure_on_commit": (_bool, False),
    },
    "gate": {
        "command": (_str, ""),
        "timeout": (_duration, 600.0),
    },
}

REQUIRED = {("metric", "command")}


@dataclass(frozen=True)
class Config:
    """Validated configuration: `section(key)` values, already converted."""

    values: Mapping[str, Mapping[str, Any]]
    path: Path | None = None
    overrides: Mapping[str, str] = field(default_factory=dict)

    def get(self, section: str, key: str) -> Any:
        return self.values[section][key]

    @property
    def metric_command(self) -> str:
        return str(self.values["metric"]["command"])

    @property
    def direction(self) -> str:
        return str(self.values["metric"]["direction"])

    @property
    def metric_name(self) -> str:
        return str(self.values["metric"]["name"])

    @property
    def guard_command(self) -> str:
        return str(self.values["guard"]["command"])


def validate(data: Mapping[str, object], *, source: str = CONFIG_FILE) -> Config:
    values: dict[str, dict[str, Any]] = {}
    for section, table in data.items():
        if section not in SCHEMA:
            raise ConfigError(
                f"{source}: unknown section [{section}]; allowed sections: " + ", ".join(SCHEMA),
                hint="check the spelling, or remove the section",
            )
        if not isinstance(table, Mapping):
            raise ConfigError(f"{source}: [{section}] must be a table, got {table!r}")
        for key in table:
            if key not in SCHEMA[section]:
                raise ConfigError(
                    f"{source}: unknown key {section}.{key}; allowed keys in [{section}]: "
                    + ", ".join(SCHEMA[section]),
                    hint="check the spelling, or remove the key",
                )
    for section, keys in SCHEMA.items():
        table = data.get(section, {})
        assert isinstance(table, Mapping)
        out: dict[str, Any] = {}
        for key, (check, default) in keys.items():
            if key in table:
                try:
                    out[key] = check(table[key], f"{section}.{key}")
                except ConfigError as exc:
                    raise ConfigError(f"{source}: {exc.message}", exc.hint) from None
            elif (section, key) in REQUIRED:
                raise ConfigError(
                    f"{source}: {section}.{key} is required",
                    hint='set it, e.g. [metric] command = "python bench.py", '
                    "or run `git improve init`",
                )
            else:
                out[key] = default
        values[section] = out
    if values["metric"]["name"] == "metric" and values["metric"]["extract"] != "auto":
        kind, _, arg = str(values["metric"]["extract"]).partition(":")
        if kind in ("json", "line"):
            values["metric"]["name"] = arg
    return Config(values)


def parse_text(text: str, *, source: str = CONFIG_FILE) -> Config:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{source} is not valid TOML: {exc}", hint="fix the syntax at the line named"
        ) from None
    return validate(data, source=source)


def _coerce_override(raw: str) -> object:
    low = raw.strip().lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        return float(raw)
    except ValueError:
        return raw


def apply_overrides(data: dict[str, Any], overrides: Mapping[str, str]) -> dict[str, Any]:
    """Overlay git config `improve.<section>.<key>` (dashes for underscores) onto the file."""
    merged = {k: dict(v) if isinstance(v, Mapping) else v for k, v in data.items()}
    for name, raw in overrides.items():
        parts = name.split(".")
        if len(parts) != 3 or parts[0] != "improve":
            continue
        section, key = parts[1], parts[2].replace("-", "_")
        if section not in SCHEMA or key not in SCHEMA[section]:
            raise ConfigError(
                f"git config {name}: unknown setting; improve.<section>.<key> takes the keys "
                "of .gitimprove.toml, e.g. improve.agent.name",
                hint=f"remove it with `git config --unset {name}`",
            )
        table = merged.setdefault(section, {})
        table[key] = _coerce_override(raw) if key not in ("command", "name") else raw
    return merged


def load(work_tree: Path, overrides: Mapping[str, str] | None = None) -> Config:
    """Read `.gitimprove.toml` at the top of `work_tree`, overlay git config, validate."""
    path = work_tree / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"no {CONFIG_FILE} in {work_tree}",
            hint='run `git improve init --metric "<command that prints a number>"`',
        ) from None
    except UnicodeDecodeError:
        raise ConfigError(f"{CONFIG_FILE} is not UTF-8 text") from None
    return load_text(text, overrides, path=path)


def load_text(
    text: str, overrides: Mapping[str, str] | None = None, *, path: Path | None = None
) -> Config:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{CONFIG_FILE} is not valid TOML: {exc}", hint="fix the syntax at the line named"
        ) from None
    if overrides:
        data = apply_overrides(data, overrides)
    cfg = validate(data)
    return Config(cfg.values, path, dict(overrides or {}))


def render_new(
    *,
    metric: str,
    direction: str = "lower",
    name: str | None = None,
    extract: str = "auto",
    guard: str = "",
    mutable: list[str] | None = None,
    sealed: list[str] | None = None,
    agent: str = "claude",
) -> str:
    """A new, commented `.gitimprove.toml` (tomlkit, so later edits keep the comments)."""
    import tomlkit

    doc = tomlkit.document()
    doc.add(tomlkit.comment("gitimprove project configuration; see `git improve --help`."))
    doc.add(tomlkit.nl())
    m = tomlkit.table()
    m.add("command", metric)
    m["command"].comment("prints the metric: a METRIC name=value line, JSON, or a number")
    if name:
        m.add("name", name)
    m.add("direction", direction)
    m["direction"].comment("lower | higher")
    m.add("extract", extract)
    m["extract"].comment('auto | "regex:<pattern>" | "json:<key>" | "line:<name>"')
    m.add("timeout", "10m")
    m.add("min_delta", "0")
    m["min_delta"].comment('smallest gain worth keeping: a number, or a percent like "1%"')
    m.add("confidence", 0.95)
    doc.add("metric", m)
    g = tomlkit.table()
    g.add("command", guard)
    g["command"].comment("optional; exit 0 = pass")
    g.add("timeout", "10m")
    doc.add("guard", g)
    s = tomlkit.table()
    s.add("mutable", mutable or ["**"])
    s["mutable"].comment("what the agent may change")
    s.add("sealed", sealed or [])
    s["sealed"].comment("pinned at a run's base; .gitimprove.toml is always sealed")
    doc.add("scope", s)
    a = tomlkit.table()
    a.add("name", agent)
    a["name"].comment("claude | codex | aider | command | scripted")
    a.add("sandbox", "auto")
    a["sandbox"].comment("auto | bwrap | none: run agents in bubblewrap (docs/integrity.md)")
    doc.add("agent", a)
    text = tomlkit.dumps(doc)
    validate(tomllib.loads(text))  # what we write must load
    return text
