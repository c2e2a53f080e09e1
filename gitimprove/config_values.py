"""The one validator of configuration values (`.gitimprove.toml` and `improve.*` git config).

Every value goes through `check(value, key, kind)`: first the checks every value needs —
nesting of at most a few levels, whole numbers that fit in 64 bits, finite numbers, text
that encodes as UTF-8 with no NUL and no more than MAX_TEXT characters — then the check of
its kind (duration, min_delta, choice, range, …). Any failure is a ConfigError naming the
key, the value (shortened) and what is allowed; nothing falls back silently (DESIGN §6).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from gitimprove.errors import ConfigError

Check = Callable[[object, str], object]

MAX_DEPTH = 4  # a table of lists of strings is as deep as the schema goes
MAX_TEXT = 100_000
MAX_INT = 1 << 63
MAX_WHOLE = 1_000_000_000  # a count larger than this is a mistake, not a setting
MAX_SECONDS = 366 * 86400.0
MIN_SECONDS = 0.001

# ASCII digits only: `\d` alone also takes "٣" or "１２", which no one means as a number here
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$", re.ASCII)
_DECIMAL = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(%?)\s*$", re.ASCII)
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def shown(value: object, limit: int = 60) -> str:
    """A value as the message shows it: repr, cut to `limit` characters, never recursing."""
    if isinstance(value, dict | list | tuple) and _depth(value) > MAX_DEPTH:
        return f"<a {type(value).__name__} nested {_depth(value)} levels deep>"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= MAX_INT:
        return f"<a {len(str(abs(value))) if abs(value) < 10**4000 else 'huge'}-digit number>"
    try:
        text = repr(value)
    except ValueError:  # an integer with more digits than Python prints
        return f"<a {type(value).__name__} holding a huge number>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def name(key: object, limit: int = 60) -> str:
    """A key or section name as a message shows it: as written, printable, cut short."""
    text = "".join(c if c.isprintable() else "?" for c in str(key)[:limit])
    return text + ("…" if len(str(key)) > limit else "")


def _depth(value: object) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > 1000:
            break
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list | tuple):
            stack.extend((v, level + 1) for v in item)
    return deepest


def sane(value: object, key: str) -> None:
    """The checks every configuration value needs, whatever its kind."""
    if isinstance(value, dict | list | tuple) and _depth(value) > MAX_DEPTH:
        raise ConfigError(f"{key} = {shown(value)}: values do not nest that deep")
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
            stack.extend(item.keys())
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif isinstance(item, bool):
            continue
        elif isinstance(item, int) and abs(item) >= MAX_INT:
            raise ConfigError(f"{key} = {shown(value)} is too large a number")
        elif isinstance(item, float) and not math.isfinite(item):
            raise ConfigError(f"{key} = {shown(value)} is not a finite number")
        elif isinstance(item, str):
            if len(item) > MAX_TEXT:
                raise ConfigError(f"{key} is {len(item)} characters long; at most {MAX_TEXT}")
            if "\0" in item:
                raise ConfigError(f"{key} = {shown(value)} holds a NUL character")
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise ConfigError(f"{key} = {shown(value)} is not valid UTF-8 text") from None


def check(value: object, key: str, kind: Check) -> object:
    """`value` converted by `kind`, after `sane`; a ConfigError names `key` otherwise."""
    sane(value, key)
    try:
        return kind(value, key)
    except (ValueError, OverflowError, TypeError, RecursionError):
        raise ConfigError(f"{key} = {shown(value)} is not a value this setting takes") from None


def parse_duration(value: object, key: str = "duration") -> float:
    """`90s`, `10m`, `8h` (or a bare number of seconds) -> seconds."""
    sane(value, key)
    if isinstance(value, bool):
        raise ConfigError(f'{key} = {shown(value)} is not a duration; use e.g. "90s", "10m", "8h"')
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and (m := _DURATION.match(value)):
        seconds = float(m.group(1)) * _UNITS[m.group(2)]
    else:
        raise ConfigError(f'{key} = {shown(value)} is not a duration; use e.g. "90s", "10m", "8h"')
    if not math.isfinite(seconds) or not MIN_SECONDS <= seconds <= MAX_SECONDS:
        raise ConfigError(
            f"{key} = {shown(value)} is out of range; use a duration from 1ms to 366d"
            if seconds > 0
            else f"{key} = {shown(value)} must be longer than zero"
        )
    return seconds


@dataclass(frozen=True)
class MinDelta:
    """The smallest gain worth keeping: absolute, or relative when given as a percent."""

    value: float = 0.0
    relative: bool = False

    def __str__(self) -> str:
        return f"{self.value * 100:g}%" if self.relative else f"{self.value:g}"


def parse_min_delta(value: object, key: str = "metric.min_delta") -> MinDelta:
    sane(value, key)
    usage = f'{key} = {shown(value)}: use a number like 0.01 or a percent like "1%"'
    if isinstance(value, bool):
        raise ConfigError(usage)
    if isinstance(value, int | float):
        number, relative = float(value), False
    elif isinstance(value, str) and (m := _DECIMAL.match(value)):
        number, relative = float(m.group(1)), bool(m.group(2))
        if number == 0 and any(c in "123456789" for c in m.group(1).split("e")[0].split("E")[0]):
            raise ConfigError(f"{key} = {shown(value)} is too small to tell from zero")
        if relative:
            number /= 100.0
    else:
        raise ConfigError(usage)
    if not math.isfinite(number) or number < 0 or number > 1e300:
        raise ConfigError(f"{key} = {shown(value)} must be a finite number of zero or more")
    if relative and number >= 1.0:
        raise ConfigError(
            f"{key} = {shown(value)}: a relative min_delta must be below 100%",
            hint='a gain of the whole incumbent cannot be required; use e.g. "1%" or "5%"',
        )
    return MinDelta(number, relative)


def check_extract(value: str, key: str = "metric.extract") -> str:
    sane(value, key)
    if value == "auto":
        return value
    kind, sep, arg = value.partition(":")
    if not sep or kind not in ("regex", "json", "line") or not arg:
        raise ConfigError(
            f'{key} = {shown(value)} is not allowed; use "auto", "regex:<pattern>", '
            '"json:<key>" or "line:<name>"'
        )
    if kind == "regex":
        try:
            re.compile(arg)
        except (re.error, RecursionError, OverflowError) as exc:
            raise ConfigError(
                f"{key}: the pattern {shown(arg)} does not compile ({str(exc)[:80]})"
            ) from None
    return value


# --- kinds ----------------------------------------------------------------------------------


def text(value: object, key: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{key} = {shown(value)} must be a string")
    return value


def nonempty_text(value: object, key: str) -> str:
    result = text(value, key)
    if not result.strip():
        raise ConfigError(f"{key} must not be empty")
    return result


def choice(*allowed: str) -> Check:
    def check_choice(value: object, key: str) -> str:
        if value not in allowed:
            raise ConfigError(
                f"{key} = {shown(value)} is not allowed; use one of: " + ", ".join(allowed)
            )
        return str(value)

    return check_choice


def whole(low: int, high: int = MAX_WHOLE) -> Check:
    def check_whole(value: object, key: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key} = {shown(value)} must be a whole number")
        if value < low or value > high:
            span = f"from {low} to {high}"
            raise ConfigError(f"{key} = {shown(value)} is out of range; use a whole number {span}")
        return value

    return check_whole


def number(low: float | None = None, high: float | None = None, *, open_low: bool = False) -> Check:
    def check_number(value: object, key: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{key} = {shown(value)} must be a number")
        result = float(value)
        bad = not math.isfinite(result) or abs(result) > 1e300
        if low is not None:
            bad = bad or (result <= low if open_low else result < low)
        if high is not None:
            bad = bad or result > high
        if bad:
            lo = "" if low is None else (f"above {low:g}" if open_low else f"at least {low:g}")
            hi = "" if high is None else f"at most {high:g}"
            span = " and ".join(s for s in (lo, hi) if s) or "that is finite"
            raise ConfigError(f"{key} = {shown(value)} is out of range; use a number {span}")
        return result

    return check_number


def globs(value: object, key: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f'{key} = {shown(value)} must be a list of path patterns like ["src/**"]')
    return list(value)


def some_globs(value: object, key: str) -> list[str]:
    patterns = globs(value, key)
    if not patterns:
        raise ConfigError(
            f"{key} = []: nothing would be changeable",
            hint='list what the agent may change, e.g. ["src/**"], or leave it out for everything',
        )
    return patterns


def flag(value: object, key: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{key} = {shown(value)} must be true or false")
    return value


def duration(value: object, key: str) -> float:
    return parse_duration(value, key)


def extract(value: object, key: str) -> str:
    return check_extract(text(value, key), key)


def min_delta(value: object, key: str) -> MinDelta:
    return parse_min_delta(value, key)


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]?b?)\s*$", re.IGNORECASE | re.ASCII)
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
