"""Reading a number out of a metric command's output, and running that command.

`extract` is the one function every caller uses (DESIGN §7 step 4): `METRIC name=value`
lines, a JSON last line (`primary`, `score`, `combined_score` or the metric's name), the
configured `regex:`/`json:`/`line:` rule, else the last number. NaN, infinity and output with
no number are a `MetricError`, never a guess.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitimprove.errors import MetricError
from gitimprove.util import lines, proc, reader

# Possessive quantifiers (`++`, `*+`, `?+`) never give back what they matched: a line of
# 10 MB of digits ending in `..` is rejected in one pass, where backtracking into `\d+\.?\d*`
# took time quadratic in its length (80 s for 40,000 digits) and held the harness.
# Digits are ASCII (`\d` would read `٣` as 3); a sign may be U+2212, the typographic minus.
_SIGN = "[-+\u2212]?+"
_DIGITS = r"(?:[0-9]++\.?+[0-9]*+|\.[0-9]++)(?:[eE][-+]?+[0-9]++)?"
_SPECIAL = r"(?:nan|inf(?:inity)?)"
_NUMBER = rf"{_SIGN}{_DIGITS}|{_SIGN}{_SPECIAL}"
# a number standing alone in free text: not part of a word, a version or a longer number
_NUMBER_RE = re.compile(
    rf"(?<![\w.])({_SIGN}{_DIGITS}(?![\d.])|{_SIGN}{_SPECIAL}\b)", re.IGNORECASE
)
_METRIC_LINE = re.compile(rf"^\s*+METRIC\s++([\w.\-/]++)\s*+=\s*+({_NUMBER})\s*+$", re.IGNORECASE)
JSON_KEYS = ("primary", "score", "combined_score")
# Terminal escape sequences (colour, cursor moves, titles): the output is read as a terminal
# shows it, so `\x1b[0m` after a number is not the number 0. A title (`\x1b]`) ends at its
# line's end at the latest: one left open by measured code before the benchmark's `METRIC`
# line would otherwise take that line with it, and the earlier, forged line would count.
_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n\r]*(?:\x07|\x1b\\)?|[@-Z\\-_])")


def _shown(output: str) -> str:
    """The output as a terminal shows it: escape sequences left out."""
    return _ESCAPE.sub("", output) if "\x1b" in output else output


def _lines(text: str) -> list[str]:
    """The lines of `text`: a line ends at \\n, \\r or \\r\\n only (util/lines.py), never at the
    other characters `str.splitlines` splits at (\\x0b, \\x85, U+2028…), so measured code that
    prints one of them after the benchmark's `METRIC` line, on that line, cannot start a line
    of its own there."""
    return lines.raw_lines(text)


@dataclass(frozen=True)
class Extracted:
    value: float
    name: str | None
    secondary: Mapping[str, float] = field(default_factory=dict)
    form: str = ""  # how it was found: "metric:<name>", "json-last:<key>", "number", or the rule


def _describe(form: str) -> str:
    kind, _, arg = form.partition(":")
    if kind == "metric":
        return f"a `METRIC {arg}=<number>` line"
    if kind == "json-last":
        return f"a JSON last line with the key {arg!r}"
    if kind == "number":
        return "a last number (no METRIC line, no JSON last line)"
    return form


def extract_pinned(output: str, form: str, name: str | None = None) -> Extracted:
    """Extract as the run's baseline did (`form`, recorded at calibration), or fail: output in
    another format is a metric error, never a number read some other way."""
    if form in ("", "auto"):
        return extract(output, "auto", name)
    kind, _, arg = form.partition(":")
    if kind in ("regex", "json", "line"):
        return extract(output, form, name)
    by_name = kind == "metric" or (kind == "json-last" and arg not in JSON_KEYS)
    got = extract(output, "auto", arg if by_name else name)
    if got.form != form:
        raise MetricError(
            f"the output changed format: the baseline printed {_describe(form)}, "
            f"this run printed {_describe(got.form)}",
            output,
        )
    return got


# a value's square must not overflow (a spread is a sum of squares) nor underflow to nothing
LARGEST, SMALLEST = 1e100, 1e-100


def _finite(text: str | float, where: str, output: str) -> float:
    if isinstance(text, str):
        text = text.replace("\u2212", "-")
        if not text.isascii():  # float() reads `٣` and full-width digits
            raise MetricError(f"{where}: {text!r} is not a number", output)
    try:
        value = float(text)
    except (TypeError, ValueError, OverflowError):
        raise MetricError(f"{where}: {text!r} is not a number", output) from None
    if not math.isfinite(value):
        raise MetricError(f"{where}: the metric is {text!r}, which is not a finite number", output)
    if value and not SMALLEST <= abs(value) <= LARGEST:
        raise MetricError(
            f"{where}: the metric is {text!r}, outside the magnitudes 1e-100 to 1e100 where "
            "averages, spreads and percentages of it stay exact: print it in another unit",
            output,
        )
    return value


def _secondary(value: Any) -> float | None:
    """A JSON value beside the metric as a number the records keep, or None (left out): a
    400-digit integer, a bool or a value outside the magnitudes the metric may have is not
    one."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        return _finite(value, "", "")
    except MetricError:
        return None


def relative_of(min_delta: object) -> str | None:
    """A relative min_delta as written ("1%"), or None for an absolute one."""
    return str(min_delta) if getattr(min_delta, "relative", False) else None


def needs_above_zero(value: float, min_delta: str) -> str | None:
    """Why `value` cannot be compared by a relative `min_delta` (a percentage of it), or None."""
    if value > 0:
        return None
    return (
        f"the metric is {value:g}, but the relative min_delta ({min_delta}) compares metrics as "
        "ratios, which needs every value above zero: set an absolute [metric] min_delta "
        "(a number, not a percent), or make the metric print a positive quantity"
    )


def _json_lookup(obj: Any, key: str) -> Any:
    for part in key.split("."):
        if isinstance(obj, Mapping) and part in obj:
            obj = obj[part]
        else:
            return None
    return obj


def _json(line: str) -> Any:
    """A JSON value printed by the metric, through the tolerant reader; None if unreadable."""
    value = reader.loads(line.strip(), finite=False)
    return None if isinstance(value, reader.Unreadable) else value


def _last_json(output: str) -> Any:
    for line in reversed(_lines(output)):
        if line.strip():
            return _json(line)
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | str) and not isinstance(value, bool)


def _spoiled(what: str, line: str, output: str) -> MetricError:
    """The last line naming what is read is not one it reads (measured code printed a better
    line, then something the benchmark's own line followed on): an earlier line never counts
    in its place."""
    return MetricError(
        f"the last line naming {what}, {line[:200]!r}, is not one that can be read "
        "(an earlier line never counts in its place)",
        output,
    )


def extract(output: str, spec: str = "auto", name: str | None = None) -> Extracted:
    """The metric value in `output` according to `spec` (see the module docstring)."""
    if not output.strip():
        raise MetricError("the metric command printed nothing", output)
    kind, _, arg = spec.partition(":")
    text = _shown(output)
    if spec != "auto":
        if kind == "regex":
            matches = list(re.finditer(arg, text, re.MULTILINE))
            if not matches:
                raise MetricError(f"the pattern {arg!r} matched nothing in the output", output)
            last = matches[-1]
            text = last.group(1) if last.groups() else last.group(0)
            return Extracted(_finite(text, f"regex {arg!r}", output), name, form=spec)
        if kind == "json":
            token = f'"{arg.rpartition(".")[2]}"'
            for raw in reversed(_lines(output)):
                line = _shown(raw)
                obj = _json(line)
                found = None if obj is None else _json_lookup(obj, arg)
                if found is None and (token in raw or token in line):
                    raise _spoiled(f"the key {arg!r}", raw, output)
                if found is not None:
                    if not _is_number(found):
                        raise MetricError(f"JSON key {arg!r} holds {found!r}, not a number", output)
                    return Extracted(_finite(found, f"JSON key {arg!r}", output), arg, form=spec)
            raise MetricError(f"no JSON line of the output has the key {arg!r}", output)
        if kind == "line":
            pattern = re.compile(rf"^\s*{re.escape(arg)}\s*[:=]\s*(\S+)", re.MULTILINE)
            found_lines = pattern.findall(text)
            if not found_lines:
                raise MetricError(f"no line of the output reads `{arg}: <number>`", output)
            return Extracted(_finite(found_lines[-1], f"line {arg!r}", output), arg, form=spec)
        raise MetricError(f"unknown extract rule {spec!r}", output)

    # auto: METRIC lines first.
    metric_lines: dict[str, str] = {}
    named = re.compile(rf"METRIC\s*+{re.escape(name)}\s*+=", re.IGNORECASE) if name else None
    last_named = None  # the last line naming the metric, as printed and as shown
    for raw in _lines(output):
        line = _shown(raw)
        m = _METRIC_LINE.match(line)
        if m:
            metric_lines[m.group(1)] = m.group(2)
        if named is not None and (named.search(raw) or named.search(line)):
            last_named = m if m and m.group(1) == name else raw
    if isinstance(last_named, str):
        raise _spoiled(f"`METRIC {name}`", last_named, output)
    if metric_lines:
        secondary = {}
        for key, text in metric_lines.items():
            try:
                secondary[key] = _finite(text, f"METRIC {key}", output)
            except MetricError:
                continue
        chosen = name if name and name in metric_lines else next(iter(metric_lines))
        value = _finite(metric_lines[chosen], f"METRIC {chosen}", output)
        return Extracted(
            value,
            chosen,
            {k: v for k, v in secondary.items() if k != chosen},
            f"metric:{chosen}",
        )

    obj = _last_json(text)
    if isinstance(obj, Mapping):
        keys = ([name] if name else []) + list(JSON_KEYS)
        for key in keys:
            if key in obj and _is_number(obj[key]):
                secondary = {
                    str(k): got
                    for k, v in obj.items()
                    if k != key and (got := _secondary(v)) is not None
                }
                return Extracted(
                    _finite(obj[key], f"JSON key {key!r}", output),
                    key if key != "primary" else name,
                    secondary,
                    f"json-last:{key}",
                )
    elif _is_number(obj):
        assert isinstance(obj, int | float | str)
        return Extracted(_finite(obj, "the JSON last line", output), name, form="number")

    numbers = _NUMBER_RE.findall(text)
    if not numbers:
        raise MetricError("the metric command printed no number", output)
    return Extracted(_finite(numbers[-1], "the last number printed", output), name, form="number")


# Bytes of output kept from each stream of the agent, the metric and the guard ([loop]
# max_output); more is an error of that run, and never costs more memory than this.
MAX_OUTPUT = 64_000_000


@dataclass(frozen=True)
class MetricRun:
    status: str  # ok | crash | timeout | metric-error | tampered
    value: float | None
    exit_code: int | None
    seconds: float
    tail: str
    error: str | None = None
    secondary: Mapping[str, float] = field(default_factory=dict)
    name: str | None = None
    form: str = ""


def run_metric(
    command: str | tuple[list[str] | str, bool],
    cwd: Path,
    *,
    timeout: float,
    spec: str = "auto",
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    pinned: str | None = None,
    before_read: Callable[[], object] | None = None,
    limit: int = MAX_OUTPUT,
    relative: str | None = None,
) -> MetricRun:
    """Run the metric command once in `cwd`; its whole process group dies at the timeout.

    With `pinned` (the form the run's baseline printed) the output must keep that form.
    `command` may come wrapped (argv, shell) for the sandbox; `before_read` runs once the
    command is done and before its output is read. With `relative` (a relative min_delta,
    as written) a value not above zero is a metric error."""
    argv, shell = (command, True) if isinstance(command, str) else command
    result = proc.run(
        argv,
        cwd=cwd,
        timeout=timeout,
        shell=shell,
        env=proc.clean_env(env),
        before_read=before_read,
        limit=limit,
    )
    tail = result.tail(2000)
    if result.timed_out:
        return MetricRun(
            "timeout", None, None, result.seconds, tail, f"timed out after {timeout:g}s"
        )
    if result.returncode != 0:
        return MetricRun(
            "crash",
            None,
            result.returncode,
            result.seconds,
            tail,
            f"exited with {result.returncode}",
        )
    if result.over:  # the METRIC line is at the end: a cut output could hide or fake it
        return MetricRun(
            "metric-error", None, 0, result.seconds, tail,
            f"printed too much ({result.over}; [loop] max_output)",
        )  # fmt: skip
    if result.late:  # a process that outlived the benchmark wrote to its output
        return MetricRun(
            "tampered", None, result.returncode, result.seconds, tail,
            f"{result.late:,} bytes reached its output after the benchmark exited, from a "
            "process that outlived it (not counted)",
        )  # fmt: skip
    if b"\0" in result.raw:
        # no benchmark prints NUL bytes; measured code writing over its output does
        return MetricRun(
            "metric-error", None, 0, result.seconds, tail, "its output holds NUL bytes"
        )
    try:
        got = (
            extract_pinned(result.stdout, pinned, name)
            if pinned
            else extract(result.stdout, spec, name)
        )
    except MetricError as exc:
        return MetricRun("metric-error", None, 0, result.seconds, tail, exc.message)
    why = needs_above_zero(got.value, relative) if relative else None
    if why:
        return MetricRun("metric-error", None, 0, result.seconds, tail, why)
    return MetricRun(
        "ok", got.value, 0, result.seconds, tail, None, got.secondary, got.name, got.form
    )
