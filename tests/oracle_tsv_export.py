"""The autoresearch TSV writer as it was before the one-pass `tsv_export.render` (every
cell by its helper, every delta through `Decimal`): the oracle the fast writer is compared
with, byte for byte. Kept verbatim; not used by gitimprove itself."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
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


def signed(delta: Decimal) -> str:
    """`+1.9`, `-0.0001`, `-59` (both values integers), `0.0` for no change."""
    if delta == 0:
        return "0.0"
    text = format(delta.normalize(), "f")
    if delta.as_tuple().exponent != 0 and "." not in text:
        text += ".0"
    return text if text.startswith("-") else "+" + text


def _decimal(value: int | float) -> Decimal:
    return Decimal(value) if isinstance(value, int) else Decimal(repr(float(value)))


def deltas(rows: Sequence[Row], direction: str | None) -> list[Decimal | None]:
    """The deltas as the record states them, in `Decimal` row by row: the writer's own
    reference implementation (`tsv_export.deltas`, which `show` and `status` also use)."""
    from gitimprove.state import tsv_export

    return tsv_export.deltas(rows, direction)


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


def _clean(text: Any) -> str:
    return " ".join(str(text or "").split())


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


def render(rows: Sequence[Row], direction: str | None, layout: str = "tsv") -> str:
    """The rows in `layout`; the direction line only when the direction is known."""
    columns = LAYOUTS[layout]
    rows = [r for r in rows if (r.get("status") or "pending") != "pending"]
    lines = [f"# metric_direction: {direction}_is_better"] if direction else []
    lines.append("\t".join(columns))
    for row, delta in zip(rows, deltas(rows, direction), strict=True):
        value = _value(row)
        crashed = row.get("status") in _CRASHED
        word, description = status_and_description(row)
        guard, guard_metric = _guard(row)
        cells = {
            "iteration": _iteration(row),
            "timestamp": _timestamp(row),
            "commit": _commit(row),
            "metric": number(value) if value is not None else ("0.0" if crashed else "-"),
            "delta": signed(delta) if delta is not None else ("0.0" if crashed else "-"),
            "guard": guard,
            "guard-metric": guard_metric,
            "status": word,
            "description": description,
        }
        lines.append("\t".join(cells[c] for c in columns))
    return "\n".join(lines) + "\n"
