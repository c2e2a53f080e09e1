"""The autoresearch plugin's results TSV, byte for byte as the plugin writes the same rows.

Every era of the plugin: `tsv` is its current 9-column layout, `tsv8`, `tsv7` and `tsv6` the
older ones (without `timestamp`; without `guard-metric`; without `guard`):

    # metric_direction: lower_is_better
    iteration  timestamp  commit  metric  delta  guard  guard-metric  status  description

Numbers are written as the plugin writes them: never in scientific notation, a float keeps
its decimal point (`89.0`), an integer stays an integer (`48200`); `delta` is the change the
row's decision measured (the note's value minus the incumbent it was compared with), signed
(`+1.9`, `-0.6`), computed in decimal so that 87.1 - 85.2 is `+1.9`, and `0.0` for a baseline. A crash is `0.0 0.0` and a row
with no measurement `- -`, as in the plugin's own examples. Statuses are the plugin's words;
gitimprove's finer status goes in brackets at the start of the description. Rows not yet
measured (`pending`) are left out: the plugin has no such status. The direction line is
written only when the direction is known (a results file that never said and whose kept rows
do not show it stays without one), and an imported row keeps the delta its file gave it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal

from gitimprove.state.exact import exact as _exact
from gitimprove.state.exact import less as _less
from gitimprove.state.exact import signed as signed
from gitimprove.state.exact import signed_exact as _signed_exact
from gitimprove.state.exact import to_decimal as _to_decimal
from gitimprove.util.text import cell

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Row = dict[str, Any]

LAYOUTS = {
    "tsv": (
        "iteration",
        "timestamp",
        "commit",
        "metric",
        "delta",
        "guard",
        "guard-metric",
        "status",
        "description",
    ),
    "tsv8": (
        "iteration",
        "commit",
        "metric",
        "delta",
        "guard",
        "guard-metric",
        "status",
        "description",
    ),
    "tsv7": ("iteration", "commit", "metric", "delta", "guard", "status", "description"),
    "tsv6": ("iteration", "commit", "metric", "delta", "status", "description"),
}

# autoresearch's status words; our finer status goes in brackets in the description.
STATUS_WORD = {
    "baseline": "baseline",
    "keep": "keep",
    "keep-reworked": "keep (reworked)",
    "discard": "discard",
    "crash": "crash",
    "no-op": "no-op",
    "metric-error": "metric-error",
    "guard-fail": "discard",
    "timeout": "crash",
    "sealed": "discard",
    "out-of-scope": "discard",
    "duplicate": "discard",
    "tampered": "discard",
}
_KEPT = frozenset({"baseline", "keep", "keep-reworked"})
_CRASHED = frozenset({"crash", "timeout"})


# Rows come from JSON: plain dicts, so `type(x) is dict` (ABC checks cost ten thousand rows).
def _value(row: Row) -> int | float | None:
    metric = row.get("metric")
    if type(metric) is dict:
        v = metric.get("value")
        if type(v) is float or type(v) is int:
            return v
    return None


def number(value: int | float | Decimal) -> str:
    """A number as the plugin writes it: positional, floats keep a decimal point."""
    if isinstance(value, int):
        return str(value)
    if type(value) is float:
        text = repr(value)
        if "e" not in text and "n" not in text:  # already positional, with its point
            return text
    d = value if isinstance(value, Decimal) else Decimal(repr(float(value)))
    text = format(d, "f")
    if isinstance(value, float) and "." not in text:
        text += ".0"
    return text


def _decimal(value: int | float) -> Decimal:
    return Decimal(value) if isinstance(value, int) else Decimal(repr(float(value)))


def deltas(rows: Sequence[Row], direction: str | None) -> list[Decimal | None]:
    """Each row's delta as its own record states it: a decided attempt's note (candidate −
    the incumbent it was compared with, in decimal from the note's two values), an imported
    row's file. Only a row that records none (an attempt the rule never compared, such as a
    guard failure; a note from before decisions recorded their delta; an imported file
    without a delta column) is measured from the best kept value before it in its run (with
    no known direction, the value kept last), as the plugin does."""
    best: dict[str, Decimal] = {}
    out: list[Decimal | None] = []
    for row in rows:
        group = str(row.get("run") or "")
        value = _value(row)
        prev = best.get(group)
        if value is None:
            out.append(None)
            continue
        v = _decimal(value)
        own = _note_delta(row, v)
        if own is None:
            own = _own_delta(row)
        if own is not None:
            out.append(own)
        elif row.get("status") == "baseline":
            out.append(Decimal(0))
        elif _source_says_none(row):
            out.append(None)  # the imported file compared it with nothing
        else:
            out.append(Decimal(0) if prev is None else v - prev)
        if row.get("status") in _KEPT and (
            prev is None or direction is None or (v < prev if direction == "lower" else v > prev)
        ):
            best[group] = v
    return out


def _note_delta(row: Row, value: Decimal) -> Decimal | None:
    """The delta of a decision's note: value − incumbent, both as the note stores them."""
    metric = row.get("metric")
    if type(metric) is not dict:
        return None
    inc, delta = metric.get("incumbent"), metric.get("delta")
    if type(inc) is float or type(inc) is int:
        return value - _decimal(inc)
    if type(delta) is float or type(delta) is int:
        return _decimal(delta)
    return None


def _own_delta(row: Row) -> Decimal | None:
    """The delta an imported file wrote for this row (`+1.9`), when it is a number."""
    source = row.get("source")
    text = source.get("delta") if isinstance(source, Mapping) else None
    if not isinstance(text, str):
        return None
    try:
        d = Decimal(text.strip())
    except ArithmeticError:
        return None
    return d if d.is_finite() else None


def _source_says_none(row: Row) -> bool:
    source = row.get("source")
    text = source.get("delta") if isinstance(source, Mapping) else None
    return isinstance(text, str) and text.strip() == "-"


def _clean(text: Any) -> str:
    return cell(str(text or ""))  # no control character reaches a cell (util/text.py)


def _timestamp(row: Row) -> str:
    stamp = row.get("timestamp")
    if isinstance(stamp, str) and stamp.strip():
        return _clean(stamp)
    # an imported row without a time of its own has none (`ts` is when it was imported)
    for key in ("started",) if "source" in row else ("started", "ts"):
        t = row.get(key)
        if isinstance(t, str) and _ISO.match(t):
            return t[:19] + "Z"
    return "-"


_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")


def _commit(row: Row) -> str:
    commit = str(row.get("commit") or "")
    if commit:
        return commit[:7]
    source = row.get("source")
    if isinstance(source, Mapping) and isinstance(source.get("commit"), str):
        return _clean(source["commit"]) or "-"
    return "-"


def _iteration(row: Row) -> str:
    it = row.get("iteration")
    if isinstance(it, int) and not isinstance(it, bool):
        return str(it)
    label = _clean(row.get("label"))
    return label or "-"


def _guard(row: Row) -> tuple[str, str]:
    guard = row.get("guard")
    if type(guard) is not dict:
        return "-", "-"
    word = {"pass": "pass", "fail": "fail"}.get(str(guard.get("status")), "-")
    gm = guard.get("metric")
    shown = number(gm) if isinstance(gm, int | float) and not isinstance(gm, bool) else "-"
    return word, shown


def status_and_description(row: Row) -> tuple[str, str]:
    status = str(row.get("status") or "pending")
    word = STATUS_WORD.get(status, _clean(status))
    text = _clean(row.get("description"))
    if status in STATUS_WORD and status not in (word, "keep-reworked"):
        text = f"[{status}] {text}".rstrip()
    return word, text


# What `render` needs of a row that does not depend on the rows before it (None: a pending
# row, not shown): the cells before the delta, the delta when the row's own record gives it
# (None: measured from the best kept value before it), the cells after it, the value as exact
# digits (None: left to `Decimal`), the value, whether the row is a kept one, and its run.
# Plain tuples of strings and numbers, so the note cache keeps them beside the rows.
Piece = tuple[
    tuple[str, str, str, str],
    str | None,
    tuple[str, str, str, str],
    tuple[int, int] | None,
    int | float | None,
    bool,
    str,
]


def piece(row: Row) -> Piece | None:
    """The row's cells and numbers that `render` takes as they are (see `Piece`)."""
    status = row.get("status")
    if (status or "pending") == "pending":
        return None
    metric = row.get("metric")
    value = metric.get("value") if type(metric) is dict else None
    if type(value) is not float and type(value) is not int:
        value = None
    crashed = status in _CRASHED
    text = str(status)
    word = STATUS_WORD.get(text)
    description = row.get("description")
    description = " ".join(str(description or "").split())
    if word is None:
        word = " ".join(text.split())
    elif text != word and text != "keep-reworked":
        description = f"[{text}] {description}".rstrip()
    guard = row.get("guard")
    if type(guard) is not dict:
        guard_word = guard_metric = "-"
    elif "metric" in guard:
        guard_word, guard_metric = _guard(row)
    else:
        said = guard.get("status")
        guard_word, guard_metric = (said if said == "pass" or said == "fail" else "-"), "-"
    exact: tuple[int, int] | None = None
    own: str | None
    if value is None:
        metric_text = own = "0.0" if crashed else "-"
    else:
        if type(value) is int:
            metric_text, exact = str(value), (value, 0)
        else:
            metric_text = repr(value)  # shortest repr: positional unless "e" (or inf, nan)
            point = metric_text.find(".")
            if point < 0 or "e" in metric_text:
                metric_text = number(value)
            else:
                exact = (
                    int(metric_text[:point] + metric_text[point + 1 :]),
                    len(metric_text) - point - 1,
                )
        # as `deltas` says: the note's own delta first, then an imported file's, and only a
        # row that records none is measured from the best kept value before it
        assert type(metric) is dict
        inc = metric.get("incumbent")
        if type(inc) is float or type(inc) is int:
            inc_exact = _exact(inc)
            if exact is not None and inc_exact is not None:
                own = _signed_exact(exact, inc_exact)
            else:
                mine = _decimal(value) if exact is None else _to_decimal(exact)
                own = signed(mine - _decimal(inc))
        elif type(metric.get("delta")) is float or type(metric.get("delta")) is int:
            own = signed(_decimal(metric["delta"]))
        elif "source" in row and (said_delta := _own_delta(row)) is not None:
            own = signed(said_delta)
        elif status == "baseline":
            own = "0.0"
        elif "source" in row and _source_says_none(row):
            own = "0.0" if crashed else "-"  # the imported file compared it with nothing
        else:
            own = None
    if "timestamp" in row or "started" in row or "source" in row:
        stamp = _timestamp(row)
    else:  # the loop's own record: when it was recorded
        ts = row.get("ts")
        stamp = ts[:19] + "Z" if type(ts) is str and _ISO.match(ts) else "-"
    commit = row.get("commit")
    commit = str(commit)[:7] if commit else _commit(row)
    it = row.get("iteration")
    iteration = str(it) if type(it) is int else _iteration(row)
    run = row.get("run")
    return (
        (iteration, stamp, commit, metric_text),
        own,
        (guard_word, guard_metric, word, description),
        exact,
        value,
        status in _KEPT,
        str(run or ""),
    )


def render(rows: Sequence[Row], direction: str | None, layout: str = "tsv") -> str:
    """The rows in `layout`; the direction line only when the direction is known."""
    return render_pieces([piece(row) for row in rows], direction, layout)


def render_pieces(
    pieces: Sequence[Piece | None], direction: str | None, layout: str = "tsv"
) -> str:
    """`render` of the rows whose `piece`s these are (the TSV view keeps them by note).

    One pass, ten thousand rows in a cold `log` (DESIGN §13): each row's cells as its piece
    holds them, and the delta of a row whose record gives none from the best kept value before
    it in its run, in exact decimal arithmetic on the values' shortest reprs (integers scaled
    by a power of ten: the same digits `Decimal` gives, without building one per row).
    """
    columns = LAYOUTS[layout]
    lines = [f"# metric_direction: {direction}_is_better"] if direction else []
    lines.append("\t".join(columns))
    picks = [_CELLS.index(c) for c in columns]
    every = columns == _CELLS
    best: dict[str, tuple[int, int] | Decimal] = {}
    lower = direction == "lower"
    for p in pieces:
        if p is None:
            continue
        head, delta_text, tail, exact, value, kept, group = p
        if value is not None:
            prev = best.get(group)
            mine: tuple[int, int] | Decimal = _decimal(value) if exact is None else exact
            if delta_text is not None:
                pass
            elif prev is None:
                delta_text = "0.0"
            elif exact is not None and type(prev) is not Decimal:
                delta_text = _signed_exact(exact, prev)
            else:
                delta_text = signed(_to_decimal(mine) - _to_decimal(prev))
            if kept and (
                prev is None
                or direction is None
                or (_less(mine, prev) if lower else _less(prev, mine))
            ):
                best[group] = mine
        cells = (*head, "-" if delta_text is None else delta_text, *tail)  # None: not reached
        lines.append("\t".join(cells if every else [cells[i] for i in picks]))
    return "\n".join(lines) + "\n"


_CELLS = LAYOUTS["tsv"]
