"""Experiment note lines (DESIGN §4): one compact JSON object per line; state is the fold.

Pure functions, no git: `make_line` formats, `parse_note` splits a note into readable lines
and raw ones (corrupt, or of a newer version), and `fold` merges lines sorted by
(ts, host, seq) with later fields winning.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gitimprove.util.clock import host_id, utc_now

VERSION = 1

STATUSES = (
    "baseline",
    "keep",
    "keep-reworked",
    "discard",
    "guard-fail",
    "crash",
    "timeout",
    "no-op",
    "metric-error",
    "sealed",
    "out-of-scope",
    "duplicate",
    "tampered",
    "pending",
)
KEPT = frozenset({"baseline", "keep", "keep-reworked"})

_last_seq = 0


def _next_seq() -> int:
    """Per-host ordering within one time stamp: nanoseconds, strictly increasing per process."""
    global _last_seq
    seq = max(time.time_ns(), _last_seq + 1)
    _last_seq = seq
    return seq


def _clean(value: Any) -> Any:
    """JSON cannot hold NaN or infinity; a record never stores them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def make_line(op: str, fields: Mapping[str, Any], *, ts: str | None = None) -> str:
    if op not in ("create", "update"):
        raise ValueError(f"unknown op {op!r}")
    record = dict(_clean(dict(fields)))
    record.update(
        {"v": VERSION, "op": op, "ts": ts or utc_now(), "host": host_id(), "seq": _next_seq()}
    )
    return json.dumps(
        record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


@dataclass
class ParsedNote:
    lines: list[dict[str, Any]] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)  # corrupt, or newer than we understand


def parse_note(text: str) -> ParsedNote:
    out = ParsedNote()
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        try:
            obj = json.loads(stripped)
        except ValueError:
            out.raw.append(stripped)
            continue
        if not isinstance(obj, dict):
            out.raw.append(stripped)
            continue
        version = obj.get("v", 1)
        if not isinstance(version, int) or version > VERSION:
            out.raw.append(stripped)
            continue
        out.lines.append(obj)
    return out


def _order(line: Mapping[str, Any]) -> tuple[str, str, int]:
    seq = line.get("seq", 0)
    return (str(line.get("ts", "")), str(line.get("host", "")), seq if isinstance(seq, int) else 0)


_BOOKKEEPING = frozenset({"op", "seq", "v"})


def fold(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """The state of one experiment: every line in (ts, host, seq) order, later fields win.

    `ts` of the result is the first line's (when it was recorded); `updated` the last's."""
    state: dict[str, Any] = {}
    ordered = sorted(lines, key=_order)
    for line in ordered:
        for key, value in line.items():
            if key not in _BOOKKEEPING:
                state[key] = value
    if ordered:
        state["ts"] = ordered[0].get("ts")
        state["updated"] = ordered[-1].get("ts")
    return state
