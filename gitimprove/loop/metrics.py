"""Reading a number out of a metric command's output, and running that command.

`extract` is the one function every caller uses (DESIGN §7 step 4): `METRIC name=value`
lines, a JSON last line (`primary`, `score`, `combined_score` or the metric's name), the
configured `regex:`/`json:`/`line:` rule, else the last number. NaN, infinity and output with
no number are a `MetricError`, never a guess.

The baseline's output fixes the form every later run must print (`extract_pinned`): the kind
of line read, and the lines naming it that the benchmark prints after it (its trailer). Only
the line at that place counts: a line printed earlier never replaces a spoiled one.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Iterator, Mapping
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
# a comma between digits: `3,14` or `1,234`, where the last number would be 14 or 234
_COMMA, _COMMA_BEFORE = re.compile(r",[0-9]"), re.compile(r"[0-9],\Z")
_DIGIT = re.compile("[0-9]")
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


@dataclass(frozen=True)
class Pin:
    """What the baseline's output fixed beyond its form: the shapes of the lines naming the
    metric that follow the line read (its trailer), and how many times a rule's line read
    names it (two in one line are two lines glued: `score: 1 score: 101`)."""

    after: tuple[str, ...] = ()
    times: int = 1  # at most


# Nothing pinned and nothing to learn (a measurement outside a run): no line naming the
# metric may follow the one read, however many times that line names it.
NOTHING_AFTER = Pin(times=sys.maxsize)


def _describe(form: str) -> str:
    base, pin = _unpin(form)
    kind, _, arg = base.partition(":")
    if kind == "metric":
        what = f"a `METRIC {arg}=<number>` line"
    elif kind == "json-last":
        what = f"a JSON last line with the key {arg!r}"
    elif kind == "number":
        what = "a last number (no METRIC line, no JSON last line)"
    else:
        what = base
    if pin.after:
        return f"{what} then {len(pin.after)} line(s) naming it like {list(pin.after)}"
    return what


def _pin(form: str, pin: Pin) -> str:
    """`form` with what the baseline fixed beyond it: a JSON object when there is any (no
    form alone starts with `{`), the form alone otherwise."""
    if pin == Pin():
        return form
    return json.dumps({"form": form, "after": list(pin.after), "times": pin.times})


def _unpin(form: str) -> tuple[str, Pin]:
    """A pinned form as the form and what else the baseline fixed."""
    if not form.startswith("{"):
        return form, Pin()
    obj = reader.loads(form)
    after = obj.get("after") if isinstance(obj, dict) else None
    times = obj.get("times", 1) if isinstance(obj, dict) else None
    if (
        not isinstance(after, list)
        or not all(isinstance(a, str) for a in after)
        or not isinstance(times, int)
        or isinstance(times, bool)
    ):
        raise MetricError(f"the run's pinned extraction {form[:200]!r} is unreadable", "")
    return str(obj.get("form", "")), Pin(tuple(after), times)


def extract_pinned(output: str, form: str, name: str | None = None) -> Extracted:
    """Extract as the run's baseline did (`form`, recorded at calibration), or fail: output in
    another format is a metric error, never a number read some other way."""
    if form in ("", "auto"):
        return extract(output, "auto", name)
    base, pin = _unpin(form)
    kind, _, arg = base.partition(":")
    if kind in ("regex", "json", "line"):
        return extract(output, base, name, pin=pin)
    by_name = kind == "metric" or (kind == "json-last" and arg not in JSON_KEYS)
    got = extract(output, "auto", arg if by_name else name, pin=pin, pinned=kind)
    if _unpin(got.form)[0] != base:
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
    """A JSON value printed by the metric, through the tolerant reader; None if unreadable.
    An object holding a key twice (`{"score": 1, "score": 999}`, which JSON readers take the
    last of) is a metric error: which the benchmark meant cannot be told."""
    value = reader.loads(line.strip(), finite=False)
    if isinstance(value, reader.Unreadable):
        return None
    if isinstance(value, dict | list) and line.count('"') >= 4:
        json.loads(line, object_pairs_hook=lambda pairs: _once(pairs, line))
    return value


def _once(pairs: list[tuple[str, Any]], line: str) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    twice = sorted({key for key in keys if keys.count(key) > 1})
    if twice:
        raise MetricError(f"a JSON line holds the key {twice[0]!r} twice: {line[:200]!r}", line)
    return dict(pairs)


def _last_json(output: str) -> Any:
    for line in lines.lines_from_end(output):
        if line.strip():
            return _json(line)
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | str) and not isinstance(value, bool)


def _spoiled(what: str, line: str, output: str, shape: str | None = None) -> MetricError:
    """The last line naming what is read is not one it reads (measured code printed a better
    line, then something the benchmark's own line followed on), or a line of the benchmark's
    trailer is not in the baseline's `shape`: an earlier line never counts in its place."""
    if shape is not None:
        return MetricError(
            f"a line naming {what} where the baseline printed one like {shape[:200]!r}, "
            f"{line[:200]!r}, is not in that shape (an earlier line never counts in its place)",
            output,
        )
    return MetricError(
        f"the last line naming {what}, {line[:200]!r}, is not one that can be read "
        "(an earlier line never counts in its place)",
        output,
    )


# lines naming the metric after the one read that a run pins, and the characters of each kept
MAX_TRAILER, SHAPE_CHARS = 20, 300


def _shape(line: str) -> str:
    """A line as a format has it: each number `#` (`1,234` too), each run of blanks one space;
    its first `SHAPE_CHARS` characters."""
    text = re.sub(r"[0-9]++", "#", _NUMBER_RE.sub("#", _shown(line[: SHAPE_CHARS * 4])))
    return " ".join(re.sub(r"#(?:[,_']#)++", "#", text).split())[:SHAPE_CHARS]


Row = tuple[str, str]  # a line of the output as printed and as a terminal shows it


def _place(
    output: str,
    names: Callable[[Row], bool],
    reads: Callable[[Row], bool],
    after: tuple[str, ...] | None,
    what: str,
    *,
    numbered: bool = True,
) -> tuple[Row | None, list[str]]:
    """Which line is read, and the shapes of the lines naming `what` that follow it; the
    output is read from its end, as far as needed.

    With `after` None (the baseline) the last line that reads is the one, and the lines
    naming `what` after it are the benchmark's trailer (each must hold a number: a spoiled
    last line is no trailer, unless not `numbered`: lines naming the last number by a digit
    hold none). With `after` (pinned) the last lines naming `what` must be the
    trailer, in its shapes, and the one before them must read: a line printed earlier never
    counts in its place. None when no line names `what`."""
    seen: list[Row] = []  # the lines naming `what`, last first
    count, place = 0, None
    for raw in lines.lines_from_end(output):
        row = (raw, _shown(raw))
        if not (names(row) or reads(row)):
            continue
        if after is None and reads(row):
            place = row
            break
        count += 1
        if count <= MAX_TRAILER + 1:
            seen.append(row)
        if after is not None and count == len(after) + 1:
            break
    if after is None:
        if place is None and seen:
            raise _spoiled(what, seen[0][0], output)
        if place is None:
            return None, []
        for row in reversed(seen):
            if numbered and not _NUMBER_RE.search(row[1]):
                raise _spoiled(what, row[0], output)
        if count > MAX_TRAILER:
            raise MetricError(
                f"{count} lines naming {what} follow the last one read, more than the "
                f"{MAX_TRAILER} a run can pin (from {seen[-1][0][:200]!r}): name the "
                "benchmark's own line alone ([metric] name, or a [metric] extract rule)",
                output,
            )
        return place, [_shape(row[0]) for row in reversed(seen)]
    if not seen:
        return None, []
    for row, shape in zip(seen, reversed(after), strict=False):  # from the end
        if reads(row) or _shape(row[0]) != shape:
            raise _spoiled(what, row[0], output, shape)
    if len(seen) <= len(after):
        raise MetricError(
            f"the output changed format: the baseline printed {len(after)} line(s) naming "
            f"{what} after the one read, this run {len(seen)} in all",
            output,
        )
    if not reads(seen[-1]):
        raise _spoiled(what, seen[-1][0], output)
    return seen[-1], list(after)


_QUANTIFIER = re.compile(r"[*+?]|\{[0-9]*,?[0-9]*\}")


def _token_end(pattern: str, i: int) -> int:
    """Where the token of `pattern` at `i` ends: an escape, a class, a group, a character."""
    c = pattern[i]
    if c == "\\":
        return i + 2
    if c == "[":
        j = i + 1 + pattern.startswith("^", i + 1)
        j += pattern.startswith("]", j)  # a `]` first in a class is itself
        while j < len(pattern) and pattern[j] != "]":
            j += 2 if pattern[j] == "\\" else 1
        return j + 1
    if c == "{" and (m := _QUANTIFIER.match(pattern, i)):
        return m.end()
    if c == "(":
        depth, j = 0, i
        while j < len(pattern):
            if pattern[j] in "\\[":  # an escaped bracket, or one in a class, is no group's
                j = _token_end(pattern, j)
                continue
            depth += {"(": 1, ")": -1}.get(pattern[j], 0)
            j += 1
            if depth == 0:
                break
        return j
    return i + 1


def _literal(pattern: str) -> str:
    """Text every match of the `regex:` rule's `pattern` holds, plain to see: its first run
    of characters standing for themselves, outside any group and unquantified (`^score:
    ([0-9]+)` gives `score: `, `([0-9]+) ms` gives ` ms`). Empty when there is none, or none to
    trust (an alternative `|` anywhere, blanks alone)."""
    if "|" in pattern or re.compile(pattern).flags & re.VERBOSE:  # (?x): blanks are no text
        return ""
    found: list[str] = []
    i = 0
    while i < len(pattern):
        end = min(_token_end(pattern, i), len(pattern))
        token = pattern[i:end]
        if token[0] == "\\":
            char = "" if len(token) < 2 or token[1].isalnum() else token[1]
        else:
            char = "" if len(token) > 1 or token in ".^$*+?{}[]()" else token
        if char and _QUANTIFIER.match(pattern, end) is None:
            found.append(char)
        elif "".join(found).strip():
            break
        else:  # blanks alone tell no line apart
            found = []
        i = end
    return "".join(found).strip() and "".join(found)


def _by_rule(output: str, spec: str, name: str | None, pin: Pin | None) -> Extracted:
    """The number of a `line:` or `regex:` rule: read from the line `_place` chooses among
    the lines naming it (a `line:` rule's `<name>:` or `<name>=`, the text a pattern needs),
    each line as a terminal shows it; with `pin`, a line naming it more times than the
    baseline's did does not read (a forged line and the benchmark's glued; fewer is a unit
    that varies, `sys 8.1 ms` then `sys 812.1 µs`). A pattern matching across lines alone is
    read from the whole output (its last match), with nothing else known."""
    kind, _, arg = spec.partition(":")
    if kind == "line":
        pattern = re.compile(rf"^\s*{re.escape(arg)}\s*[:=]\s*(\S+)")
        anchor: re.Pattern[str] | None = re.compile(rf"{re.escape(arg)}\s*[:=]")
        what, where = f"`{arg}:`", f"line {arg!r}"
        missing = f"no line of the output reads `{arg}: <number>`"
    else:
        pattern = re.compile(arg, re.MULTILINE)
        literal = _literal(arg)
        anchor = re.compile(re.escape(literal), pattern.flags & re.IGNORECASE) if literal else None
        what = repr(literal) if literal else f"the pattern {arg!r}"
        where, missing = f"regex {arg!r}", f"the pattern {arg!r} matched nothing in the output"

    def times(row: Row) -> int:
        return sum(1 for _ in anchor.finditer(row[1])) if anchor is not None else 1

    def reads(row: Row) -> bool:
        matched = pattern.search(row[1]) is not None
        return matched and (pin is None or times(row) <= pin.times)

    def names(row: Row) -> bool:
        if anchor is None:  # no text to know it by: the lines it reads alone
            return False
        return bool(anchor.search(row[0]) or anchor.search(row[1]))

    after = pin.after if pin is not None else None
    try:
        place, trailer = _place(output, names, reads, after, what)
    except MetricError:
        if after or any(pattern.search(_shown(raw)) for raw in lines.lines_from_end(output)):
            raise
        place, trailer = None, []  # it matches no single line: perhaps across lines
    learnt = Pin() if place is None else Pin(tuple(trailer), times(place))
    last = _last(pattern.finditer(_shown(output) if place is None else place[1]))
    if last is None or (place is None and after):  # (a chosen line holds its match)
        raise MetricError(missing, output)
    text = last.group(1) if last.groups() else last.group(0)
    return Extracted(
        _finite(text, where, output), arg if kind == "line" else name, form=_pin(spec, learnt)
    )


def _by_key(output: str, spec: str, pin: Pin | None) -> Extracted:
    """The number of a `json:<key>` rule: read from the JSON line `_place` chooses among the
    lines naming `"<key>"` (its last part) or holding it."""
    arg = spec.partition(":")[2]
    token = f'"{arg.rpartition(".")[2]}"'

    def found(row: Row) -> Any:
        if not row[1].lstrip().startswith(("{", "[")):
            return None
        obj = _json(row[1])
        return None if obj is None else _json_lookup(obj, arg)

    def names(row: Row) -> bool:
        return token in row[0] or token in row[1]

    def reads(row: Row) -> bool:
        return found(row) is not None

    after = pin.after if pin is not None else None
    place, trailer = _place(output, names, reads, after, f"the key {arg!r}")
    if place is None:
        raise MetricError(f"no JSON line of the output has the key {arg!r}", output)
    value = found(place)
    if not _is_number(value):
        raise MetricError(f"JSON key {arg!r} holds {value!r}, not a number", output)
    return Extracted(
        _finite(value, f"JSON key {arg!r}", output), arg, form=_pin(spec, Pin(tuple(trailer)))
    )


def extract(
    output: str,
    spec: str = "auto",
    name: str | None = None,
    *,
    pin: Pin | None = None,
    learn: bool = False,
    pinned: str = "",
) -> Extracted:
    """The metric value in `output` according to `spec` (see the module docstring). With
    `pin` (what the baseline fixed, for forms of the kind `pinned`: `metric`, `number`) the
    line read must be as it says; with `learn` (a run's baseline: the unchanged code), that is
    learnt and given in the form; with neither, no line naming the metric may follow the one
    read (nor in a form of another kind than the pinned one)."""
    if pin is None and not learn:
        pin = NOTHING_AFTER
    if not output.strip():
        raise MetricError("the metric command printed nothing", output)
    kind = spec.partition(":")[0]
    if spec != "auto":
        if kind in ("regex", "line"):
            return _by_rule(output, spec, name, pin)
        if kind == "json":
            return _by_key(output, spec, pin)
        raise MetricError(f"unknown extract rule {spec!r}", output)

    # auto: METRIC lines first.
    metric_lines: dict[str, str] = {}
    for raw in _lines(output):
        if m := _METRIC_LINE.match(_shown(raw)):
            metric_lines[m.group(1)] = m.group(2)
    for chosen in ([name] if name else []) + list(metric_lines)[:1]:
        named = re.compile(rf"METRIC\s*+{re.escape(chosen)}\s*+=", re.IGNORECASE)

        def reads(row: Row, chosen: str = chosen) -> bool:
            m = _METRIC_LINE.match(row[1])
            return m is not None and m.group(1) == chosen

        def names(row: Row, named: re.Pattern[str] = named) -> bool:
            return bool(named.search(row[0]) or named.search(row[1]))

        # another name or kind than the pinned one is another format, said so: none of its
        # lines may follow
        after = None if pin is None else (pin.after if chosen == name else ())
        if pinned not in ("", "metric"):
            after = ()
        place, trailer = _place(output, names, reads, after, f"`METRIC {chosen}`")
        if place is None:
            continue
        secondary = {}
        for key, text in metric_lines.items():
            try:
                secondary[key] = _finite(text, f"METRIC {key}", output)
            except MetricError:
                continue
        m = _METRIC_LINE.match(place[1])
        assert m is not None
        return Extracted(
            _finite(m.group(2), f"METRIC {chosen}", output),
            chosen,
            {k: v for k, v in secondary.items() if k != chosen},
            _pin(f"metric:{chosen}", Pin(tuple(trailer))),
        )

    text = _shown(output)
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

    return _last_number(output, text, name, NOTHING_AFTER if pinned not in ("", "number") else pin)


def _last(matches: Iterator[re.Match[str]]) -> re.Match[str] | None:
    """The last of `matches`, one held at a time: a line of 10 MB of numbers (measured code
    printing `1 1 1 …` with no line end before the benchmark's line) made a list of 5
    million matches, 855 MB in the harness (64 MB, the most kept: 5 GB)."""
    last = None
    for last in matches:  # noqa: B007 (the loop keeps the last)
        pass
    return last


def _last_number(output: str, text: str, name: str | None, pin: Pin | None) -> Extracted:
    """The last number printed: read, as the rules are, from the line `_place` chooses among
    those holding a digit, so a benchmark line spoiled into no number (`x3.5`) is a metric
    error, never the number on an earlier line; the lines holding digits but no number after
    it (`done in v2`) are its trailer."""
    if _NUMBER_RE.search(text) is None:
        raise MetricError("the metric command printed no number", output)

    def digits(row: Row) -> bool:
        return _DIGIT.search(row[1]) is not None

    def reads(row: Row) -> bool:
        return _NUMBER_RE.search(row[1]) is not None

    after = pin.after if pin is not None else None
    place, trailer = _place(output, digits, reads, after, "the number", numbered=False)
    if place is None:
        raise MetricError("the metric command printed no number", output)
    line = place[1]
    last = _last(_NUMBER_RE.finditer(line))
    assert last is not None  # the line was chosen for its number
    if _COMMA.match(line, last.end()) or _COMMA_BEFORE.search(line, 0, last.start()):
        raise MetricError(
            f"the last number printed is next to a comma and digits "
            f"({line[max(0, last.start() - 8) : last.end() + 8]!r}): a decimal comma or a "
            "thousands separator cannot be told apart; print it without one, or set "
            "[metric] extract",
            output,
        )
    return Extracted(
        _finite(last.group(1), "the last number printed", output),
        name,
        form=_pin("number", Pin(tuple(trailer))),
    )


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
    learn: bool = False,
) -> MetricRun:
    """Run the metric command once in `cwd`; its whole process group dies at the timeout.

    With `pinned` (the form the run's baseline printed) the output must keep that form; with
    `learn` (the baseline's first run) its form is learnt, trailer included (`extract`).
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
            "timeout", None, None, result.seconds, tail, f"the metric timed out after {timeout:g}s"
        )
    if result.returncode != 0:
        return MetricRun(
            "crash",
            None,
            result.returncode,
            result.seconds,
            tail,
            f"the metric exited with {result.returncode}",
        )
    if result.over:  # the METRIC line is at the end: a cut output could hide or fake it
        return MetricRun(
            "metric-error", None, 0, result.seconds, tail,
            f"the metric printed too much ({result.over}; [loop] max_output)",
        )  # fmt: skip
    if result.late:  # a process that outlived the benchmark wrote to its output
        return MetricRun(
            "tampered", None, result.returncode, result.seconds, tail,
            f"{result.late:,} bytes reached the metric's output after the benchmark exited, from a "
            "process that outlived it (not counted)",
        )  # fmt: skip
    if b"\0" in result.raw:
        # no benchmark prints NUL bytes; measured code writing over its output does
        return MetricRun(
            "metric-error", None, 0, result.seconds, tail, "the metric's output holds NUL bytes"
        )
    try:
        got = (
            extract_pinned(result.stdout, pinned, name)
            if pinned
            else extract(result.stdout, spec, name, learn=learn)
        )
    except MetricError as exc:
        message = exc.message
        if not result.stdout.strip() and result.stderr.strip():
            message += (
                " (only standard output is read, and the command printed on standard error "
                "alone: add `2>&1` to [metric] command if the number is there)"
            )
        return MetricRun("metric-error", None, 0, result.seconds, tail, message)
    why = needs_above_zero(got.value, relative) if relative else None
    if why:
        return MetricRun("metric-error", None, 0, result.seconds, tail, why)
    return MetricRun(
        "ok", got.value, 0, result.seconds, tail, None, got.secondary, got.name, got.form
    )
