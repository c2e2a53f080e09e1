"""The autoresearch TSV writer as it was before the one-pass `tsv_export.render`: row by row,
every cell through its helper and every delta through `Decimal` (`tsv_export.deltas`). The
oracle the fast writer is compared with, byte for byte; not used by gitimprove itself. The
tables and cell helpers are the writer's own: what is compared is the one-pass inlining of
them, against calling them for every row."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gitimprove.state.tsv_export import (
    _CRASHED,
    LAYOUTS,
    _commit,
    _guard,
    _iteration,
    _timestamp,
    _value,
    deltas,
    number,
    signed,
    status_and_description,
)

Row = dict[str, Any]


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
