"""`.gitimprove.toml`: schema, validation, defaults, and the `improve.*` git config overlay.

Reading uses the standard library's tomllib; writing uses tomlkit so that comments survive.
Every value goes through the one validator (config_values.check); bad configuration is an
error naming the key (and where it was set: the file or `git config improve.…`), the value
and what is allowed; nothing falls back silently (DESIGN §6).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitimprove import config_values as cv
from gitimprove.config_values import MinDelta as MinDelta
from gitimprove.config_values import check_extract as check_extract
from gitimprove.config_values import parse_duration as parse_duration
from gitimprove.config_values import parse_min_delta as parse_min_delta
from gitimprove.config_values import parse_size as parse_size
from gitimprove.errors import ConfigError

CONFIG_FILE = ".gitimprove.toml"
Check = cv.Check

# Rounds without a keep: every STUCK_AFTER of them raises the stuck ladder a level (its fifth
# level stops the run with a diagnosis); PLATEAU_PATIENCE stops it in any case. The ladder's
# top comes first (50 < 60), so a stalled search is pushed through every level before it ends.
STUCK_AFTER = 10
PLATEAU_PATIENCE = 60


def _max_runs(value: object, key: str) -> int | None:
    """A whole number of runs, or "auto" (None): chosen from the noise at a run's start."""
    if value == "auto":
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 2 <= value <= 1000:
        raise ConfigError(f'{key} = {cv.shown(value)}: use "auto" or a whole number from 2 to 1000')
    return value


SCHEMA: dict[str, dict[str, tuple[Check, object]]] = {
    "metric": {
        "command": (cv.nonempty_text, None),
        "name": (cv.nonempty_text, "metric"),
        "direction": (cv.choice("lower", "higher"), "lower"),
        "extract": (cv.extract, "auto"),
        "timeout": (cv.duration, 600.0),
        "min_delta": (cv.min_delta, MinDelta()),
        "confidence": (cv.number(0.5, 0.9999), 0.95),
        "max_runs": (_max_runs, None),
        "runs": (cv.whole(1, 100), 3),
        # for benchmarks only: the anchors' rules, to compare the loop with them
        "rule": (cv.choice("adaptive", "single", "median"), "adaptive"),
    },
    "guard": {
        "command": (cv.text, ""),
        "timeout": (cv.duration, 600.0),
        "rework": (cv.whole(0, 20), 2),
    },
    "scope": {
        "mutable": (cv.some_globs, ["**"]),
        "sealed": (cv.globs, []),
        "max_file_size": (cv.parse_size, 100_000_000),  # bytes; "100MB" in the file
        "max_tree_size": (cv.parse_size, 1_000_000_000),
    },
    "loop": {
        "iterations": (cv.whole(1), 20),
        "candidates": (cv.whole(1, 64), 1),
        "jobs": (cv.whole(1, 64), 2),
        "stuck_after": (cv.whole(1), STUCK_AFTER),
        "plateau_patience": (cv.whole(1), PLATEAU_PATIENCE),
        "circuit_breaker": (cv.whole(1), 3),
        # a deterministic metric's keep must repeat exactly on this many runs (0: one run)
        "confirm_deterministic": (cv.whole(0, 100), 0),
        "target": (cv.number(), None),
        "max_cost_usd": (cv.number(0.0, open_low=True), None),
        "max_time": (cv.duration, 8 * 3600.0),
        "max_output": (cv.parse_size, 64_000_000),  # bytes of each stream of a child kept
    },
    "agent": {
        "name": (cv.choice("claude", "codex", "aider", "command", "scripted"), "claude"),
        "command": (cv.text, ""),
        "timeout": (cv.duration, 1800.0),
        "sandbox": (cv.choice("auto", "bwrap", "landlock", "none"), "auto"),
        "tmp_size": (cv.parse_size, 2_000_000_000),  # each private /tmp, /dev/shm in bwrap
        "workspace_size": (cv.parse_size, 4_000_000_000),  # bytes on disk after the agent
        # entries after the agent (or ten times the incumbent's, when more)
        "workspace_files": (cv.whole(1), 50_000),
    },
    "memory": {
        "max_lines": (cv.whole(20, 100000), 200),
        "signal_ttl_days": (cv.whole(1, 36500), 14),
    },
    "capture": {
        "measure_on_commit": (cv.flag, False),
    },
    "gate": {
        "command": (cv.text, ""),
        "timeout": (cv.duration, 600.0),
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


def validate(
    data: Mapping[str, object],
    *,
    source: str = CONFIG_FILE,
    origins: Mapping[tuple[str, str], str] | None = None,
) -> Config:
    """Check every value with the one validator; `origins` names where a value came from
    when not from `source` (a `git config improve.…` setting)."""
    origins = origins or {}
    values: dict[str, dict[str, Any]] = {}
    for section, table in data.items():
        if section not in SCHEMA:
            raise ConfigError(
                f"{source}: unknown section [{cv.name(section)}]; allowed sections: "
                + ", ".join(SCHEMA),
                hint="check the spelling, or remove the section",
            )
        if not isinstance(table, Mapping):
            raise ConfigError(f"{source}: [{section}] must be a table, got {cv.shown(table)}")
        for key in table:
            if key not in SCHEMA[section]:
                raise ConfigError(
                    f"{source}: unknown key {section}.{cv.name(key)}; allowed keys in "
                    f"[{section}]: " + ", ".join(SCHEMA[section]),
                    hint="check the spelling, or remove the key",
                )
    for section, keys in SCHEMA.items():
        table = data.get(section, {})
        assert isinstance(table, Mapping)
        out: dict[str, Any] = {}
        for key, (check, default) in keys.items():
            if key in table:
                where = origins.get((section, key), source)
                try:
                    out[key] = cv.check(table[key], f"{section}.{key}", check)
                except ConfigError as exc:
                    raise ConfigError(f"{where}: {exc.message}", exc.hint) from None
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


_DEEP_LINE = re.compile(r"[\[{]{16}")
_LONG_NUMBER = re.compile(r"\d{4000}")


def _culprit(text: str, pattern: re.Pattern[str]) -> str:
    """`line N (key)` of the first line matching `pattern`: tomllib's own errors for these
    (RecursionError, a ValueError from int()) name no line."""
    for lineno, line in enumerate(text.splitlines(), 1):
        if pattern.search(line):
            key = line.split("=", 1)[0].strip() if "=" in line else ""
            return f"line {lineno} ({cv.name(key, 40)})" if key else f"line {lineno}"
    return "a value"


def _parse_toml(text: str, source: str = CONFIG_FILE) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{source} is not valid TOML: {exc}", hint="fix the syntax at the line named"
        ) from None
    except RecursionError:
        raise ConfigError(
            f"{source}: {_culprit(text, _DEEP_LINE)} nests arrays or tables too deeply to read",
            hint="values nest at most a few levels; fix that line",
        ) from None
    except (ValueError, OverflowError):  # an integer of thousands of digits
        raise ConfigError(
            f"{source}: {_culprit(text, _LONG_NUMBER)} holds a number too large to read",
            hint="fix that value",
        ) from None


def parse_text(text: str, *, source: str = CONFIG_FILE) -> Config:
    return validate(_parse_toml(text, source), source=source)


def decode(data: bytes, source: str = CONFIG_FILE) -> str:
    """The text of a config file; not UTF-8 is an error naming where it goes wrong."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{source} is not UTF-8 text (byte {data[exc.start]:#04x} on line {line})",
            hint="save the file as UTF-8",
        ) from None


def _coerce_override(raw: str) -> object:
    low = raw.strip().lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if not raw.isascii():  # int() and float() read "١٢" and "１２" as 12: no one means that
        return raw
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        return float(raw)
    except ValueError:
        return raw


def _normal(name: str) -> str:
    return name.lower().replace("-", "").replace("_", "")


def apply_overrides(
    data: dict[str, Any], overrides: Mapping[str, str]
) -> tuple[dict[str, Any], dict[tuple[str, str], str]]:
    """Overlay git config `improve.<section>.<key>` onto the file; also returns where each
    overridden value came from. Git allows neither `_` nor case in a key, so
    `improve.loop.plateau-patience`, `improve.loop.plateauPatience` and (from a caller that
    is not git) `improve.loop.plateau_patience` all name `plateau_patience`."""
    merged = {k: dict(v) if isinstance(v, Mapping) else v for k, v in data.items()}
    origins: dict[tuple[str, str], str] = {}
    for name, raw in overrides.items():
        parts = name.split(".")
        if len(parts) != 3 or parts[0].lower() != "improve":
            continue
        section = parts[1].lower()
        key = next((k for k in SCHEMA.get(section, {}) if _normal(k) == _normal(parts[2])), None)
        if key is None:
            raise ConfigError(
                f"git config {cv.name(name)}: unknown setting; improve.<section>.<key> takes "
                "the keys of .gitimprove.toml with dashes for underscores, e.g. "
                "improve.loop.plateau-patience",
                hint=f"remove it with `git config --unset {cv.name(name)}`",
            )
        table = merged.setdefault(section, {})
        if not isinstance(table, dict):
            table = merged[section] = {}
        table[key] = _coerce_override(raw) if key not in ("command", "name") else raw
        origins[(section, key)] = f"git config {cv.name(name)}"
    return merged, origins


def load(work_tree: Path, overrides: Mapping[str, str] | None = None) -> Config:
    """Read `.gitimprove.toml` at the top of `work_tree`, overlay git config, validate."""
    path = work_tree / CONFIG_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(
            f"no {CONFIG_FILE} in {work_tree}",
            hint='run `git improve init --metric "<command that prints a number>"`',
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    return load_text(decode(data), overrides, path=path)


def load_bytes(
    data: bytes, overrides: Mapping[str, str] | None = None, *, path: Path | None = None
) -> Config:
    """A config file's bytes (e.g. the blob committed at a run's base), validated."""
    return load_text(decode(data), overrides, path=path)


def load_text(
    text: str, overrides: Mapping[str, str] | None = None, *, path: Path | None = None
) -> Config:
    data = _parse_toml(text)
    origins: dict[tuple[str, str], str] = {}
    if overrides:
        data, origins = apply_overrides(data, overrides)
    cfg = validate(data, origins=origins)
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
    agent_command: str | None = None,
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
    m.add("max_runs", "auto")
    m["max_runs"].comment(
        'runs per decision at most: "auto" (from the noise, planned at each decision) or a number'
    )
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
    lp = tomlkit.table()
    lp.add("iterations", 20)
    lp.add("stuck_after", STUCK_AFTER)
    lp["stuck_after"].comment(
        "rounds without a keep per stuck-ladder level (level 5 stops with a diagnosis)"
    )
    lp.add("plateau_patience", PLATEAU_PATIENCE)
    lp["plateau_patience"].comment("stop after this many rounds without a keep in any case")
    lp.add("confirm_deterministic", 0)
    lp["confirm_deterministic"].comment(
        "deterministic metric: a keep must repeat exactly on this many runs (0: one run decides)"
    )
    doc.add("loop", lp)
    a = tomlkit.table()
    a.add("name", agent)
    a["name"].comment("claude | codex | aider | command | scripted")
    if agent_command:
        a.add("command", agent_command)
        a["command"].comment("run in the agent's workspace; {prompt_file} and {workdir} filled in")
    a.add("sandbox", "auto")
    a["sandbox"].comment(
        "auto | bwrap | landlock | none: contain agents (bubblewrap, else Landlock; docs/integrity.md)"
    )
    doc.add("agent", a)
    text = tomlkit.dumps(doc)
    validate(_parse_toml(text))  # what we write must load
    return text
