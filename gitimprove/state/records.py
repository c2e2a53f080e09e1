"""Experiment note lines (DESIGN §4): one compact JSON object per line; state is the fold.

Pure functions, no git: `make_line` formats, `parse_note` splits a note into readable lines
and raw ones, and `fold` merges lines sorted by (ts, host, seq) with later fields winning.
Lines are read by the one tolerant reader (util/reader.py) against `LINE_SCHEMA`: a line
that is corrupt, too large, nested too deep, of a newer version, or whose known fields have
the wrong type (`"iteration": "x"`, a `metric` that is a list) is kept raw — shown, counted
by `doctor`, never folded and never rewritten. Unknown fields are kept.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping

from gitimprove.state import fit
from gitimprove.util import reader, reader_bulk
from gitimprove.util.clock import host_id, utc_now
from gitimprove.util.lines import record_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gitimprove.state import signing

    # (commit, own lines, imported lines by import_id, unreadable lines shown)
    Split = tuple[str, list[dict[str, Any]], dict[str, list[dict[str, Any]]], list[str]]

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


def make_line(
    op: str, fields: Mapping[str, Any], *, ts: str | None = None, key: signing.Key | None = None
) -> str:
    """One record line; with `key` (the harness's records) it carries an integrity tag."""
    from gitimprove.state import signing  # writers only: the cold `log` never signs

    if op not in ("create", "update"):
        raise ValueError(f"unknown op {op!r}")
    record = dict(fit.cleaned(dict(fields)))
    record.pop(signing.FIELD, None)
    record.update(
        {"v": VERSION, "op": op, "ts": ts or utc_now(), "host": host_id(), "seq": _next_seq()}
    )
    record = fit.fitted(record)
    if read_line(fit.dump(record)) != record:  # a known field of the wrong type
        why = read_line(fit.dump(record))
        record = fit.fitted({**_typed(record), "unstored": str(why)[:2000]})
    if key is not None:
        record[signing.FIELD] = signing.tag(record, key)
    return fit.dump(record)


def _typed(record: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of `record` the reader takes, each alone (a writer's field of the wrong type
    is left out rather than making the whole line unreadable)."""
    return {
        k: v
        for k, v in record.items()
        if not isinstance(read_line(fit.dump({k: v})), reader.Unreadable)
    }


_SAMPLES = ["num"]
# The fields readers rely on, with their types; every one may be absent or null.
LINE_SCHEMA: reader.Schema = {
    "op": "str?",
    "ts": "str?",
    "host": "str?",
    "seq": "int?",
    "integrity": "str?",
    "run": "str?",
    "iteration": "int?",
    "candidate": "int?",
    "parent": "str?",
    "status": "str?",
    "reason": "str?",
    "description": "str?",
    "hypothesis": "str?",
    "approach": "str?",
    "scope": "str?",
    "family": "str?",
    "metric": {
        "name": "str?",
        "direction": "str?",
        "value": "num?",
        "samples": _SAMPLES,
        "incumbent_samples": _SAMPLES,
        "delta": "num?",
        "delta_pct": "num?",
        "confidence": "num?",
    },
    "metrics": "dict?",
    "guard": {"status": "str?", "exit_code": "int?", "tail": "str?"},
    "agent": {
        "name": "str?",
        "exit_code": "int?",
        "seconds": "num?",
        "cost_usd": "num?",
        "tokens": "dict?",
        "turns": "int?",
        "rework": "int?",
    },
    "harness": "dict?",
    "decision": {"window_used": "int?"},
    "options": {
        "iterations": "int?",
        "goal": "str?",
        "seed": "int?",
        "target": "num?",
        "max_cost": "num?",
        "explore": "bool?",
        "strict_ab": "bool?",
        "agent": "str?",
        "agent_command": "str?",
        "candidates": "int?",
        "jobs": "int?",
        "measure_jobs": "int?",
    },
    "escalation": "int?",
    "started": "str?",
    "finished": "str?",
    "tree": "str?",
    "round": "int?",
    "rank": "int?",
    "winner": "str?",
    "stage": "str?",
    "import_id": "str?",
    "segment": "int?",
    # names the views give a row: a line may not claim them
    "commit": "str?",
    "raw": ["str"],
    "gone": "bool?",
}


class ParsedNote:
    """A note's readable lines, and the previews of those that cannot be read (with why)."""

    __slots__ = ("lines", "problems", "raw")

    def __init__(self) -> None:  # no dataclass: the cold `log` does not import dataclasses
        self.lines: list[dict[str, Any]] = []
        self.raw: list[str] = []  # previews of the lines that cannot be read
        self.problems: list[str] = []  # why, one per raw line

    def shown_raw(self) -> list[str]:
        """Each unreadable line as it is shown: `<why>: <preview>`."""
        return [f"{why}: {line}" for line, why in zip(self.raw, self.problems, strict=False)]


def read_line(line: str | bytes) -> dict[str, Any] | reader.Unreadable:
    """One note line (or imported row) through the tolerant reader."""
    return reader.load_object(line, LINE_SCHEMA, version=VERSION)


def parse_note(text: str) -> ParsedNote:
    out = ParsedNote()
    lines = record_lines(text)
    for obj in reader_bulk.load_objects(lines, LINE_SCHEMA, version=VERSION):
        if isinstance(obj, reader.Unreadable):
            out.raw.append(obj.preview)
            out.problems.append(obj.reason)
            continue
        out.lines.append(obj)
    return out


def split_note(
    data: bytes,
) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]], list[str]]:
    """A note's lines: the loop's own record, imported rows by `import_id`, and the lines
    that cannot be read (each shown as `<why>: <preview>`).

    Imported rows are records of their own even when they share a commit (pi logs every
    discard on the commit it started from), so they are never folded into one another."""
    _, own, imported, raw = split_notes([("", data)])[0]
    return own, imported, raw


def split_notes(notes: Iterable[tuple[str, bytes]]) -> list[Split]:
    """`split_note` over many notes at once, as (commit, own, imported, raw): every line
    through the bulk reader (ten thousand notes read as one batch); `notes` is consumed as
    it comes, so a caller can read them while git still writes."""
    with reader_bulk.no_gc():
        return _split_notes(notes)


def _split_notes(notes: Iterable[tuple[str, bytes]]) -> list[Split]:
    batch = reader_bulk.Batch(LINE_SCHEMA, version=VERSION)
    add = batch.add
    commits: list[str] = []
    counts: list[int] = []  # lines of each note
    for commit, data in notes:
        lines = record_lines(data.decode("utf-8", errors="replace"))
        for line in lines:
            add(line)
        n = len(lines)
        commits.append(commit)
        counts.append(n)
    read = batch.results()
    out: list[Split] = []
    k = 0
    unreadable = reader.Unreadable
    for commit, n in zip(commits, counts, strict=True):
        if n == 1:
            obj = read[k]
            k += 1
            if type(obj) is dict and type(obj.get("import_id")) is not str:
                out.append((commit, [obj], {}, []))
                continue
            k -= 1
        own: list[dict[str, Any]] = []
        imported: dict[str, list[dict[str, Any]]] = {}
        raw: list[str] = []
        for obj in read[k : k + n]:
            if isinstance(obj, unreadable):
                raw.append(f"{obj.reason}: {obj.preview}")
                continue
            iid = obj.get("import_id")
            if isinstance(iid, str):
                imported.setdefault(iid, []).append(obj)
            else:
                own.append(obj)
        k += n
        out.append((commit, own, imported, raw))
    return out


def imported_rows_of(blobs: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    """The readable rows of the memory branch's imports/ entries (rows that name no commit, or
    whose commit is gone), each once; rows that cannot be read are left to `doctor`."""
    seen: set[str] = set()  # two imports racing may both have kept a row: show it once
    for data in blobs:
        for line in data.splitlines():
            if not line.strip():
                continue
            obj = read_line(line)
            if isinstance(obj, reader.Unreadable):
                continue
            iid = obj.get("import_id")
            if isinstance(iid, str):
                if iid in seen:
                    continue
                seen.add(iid)
            obj.pop("v", None)
            if obj.get("commit"):
                obj["gone"] = True
            yield obj


def _order(line: Mapping[str, Any]) -> tuple[str, str, int]:
    seq = line.get("seq")
    return (
        str(line.get("ts") or ""),
        str(line.get("host") or ""),
        seq if isinstance(seq, int) else 0,
    )


_BOOKKEEPING = frozenset({"op", "seq", "v"})


def fold(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """The state of one experiment: every line in (ts, host, seq) order, later fields win.

    `ts` of the result is the first line's (when it was recorded); `updated` the last's."""
    if not lines:
        return {}
    ordered = sorted(lines, key=_order) if len(lines) > 1 else lines
    state: dict[str, Any] = {}
    for line in ordered:
        state.update(line)
    for key in _BOOKKEEPING:
        state.pop(key, None)
    stamps = [line["ts"] for line in ordered if isinstance(line.get("ts"), str) and line["ts"]]
    # a line without a stamp (hand-written, another tool's) moves neither end
    state["ts"] = stamps[0] if stamps else None
    state["updated"] = stamps[-1] if stamps else None
    return state
