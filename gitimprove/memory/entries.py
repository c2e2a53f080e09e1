"""Reading memory entries: every entry goes through the one tolerant reader (util/reader.py).

Signals, sessions, ideas and events are JSON objects checked against the schemas below;
imported rows are note lines (state/records.py); learnings and proposals are Markdown with
`key = <json>` front matter. An entry that cannot be read (corrupt, too large, nested too
deep, of a newer version, a known field of the wrong type such as `"ended": 7`) is skipped
and returned as a `BadEntry` for the caller to show raw; unknown fields are kept.

`doctor --repair` quarantines bad entries: it records their paths in an `events/` entry
(status `quarantined`), since nothing on the branch is edited in place; quarantined entries
are still skipped, but no longer reported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from gitimprove.git import memory
from gitimprove.git.repo import Repo
from gitimprove.util import reader
from gitimprove.util.clock import utc_now

QUARANTINED = "quarantined"

SIGNAL: reader.Schema = {
    "id": "str",
    "ts": "str?",
    "session": "str?",
    "type": "str?",
    "status": "str?",
    "confidence": "int?",
    "source": "dict?",
    "content": "str?",
    "context": "str?",
    "category": "str?",
    "tags": ["str"],
    "related": "list?",
    "path": "str?",
    "promoted_to": "str?",
}
SESSION: reader.Schema = {
    "sid": "str?",
    "started": "str?",
    "ended": "str?",
    "start_commit": "str?",
    "end_commit": "str?",
    "commits": ["str"],
    "commit_types": "dict?",
    "files_most_modified": ["str"],
    "stop_reason": "str?",
    "tools_failed": "int?",
    "agent": "dict?",
}
IDEA: reader.Schema = {"id": "str?", "ts": "str?", "text": "str?", "status": "str?"}
EVENT: reader.Schema = {"ts": "str?", "targets": ["str"], "status": "str?", "to": "str?"}
FORMAT: reader.Schema = {"layout": "int?", "min_reader": "int?"}
SCHEMAS: dict[str, reader.Schema] = {
    "signals": SIGNAL,
    "sessions": SESSION,
    "ideas": IDEA,
    "events": EVENT,
}


@dataclass(frozen=True)
class BadEntry:
    """An entry (or one line of an imports/ entry: `path:line`) that cannot be read."""

    path: str
    reason: str
    preview: str

    def __str__(self) -> str:
        return f"{self.path} ({self.reason}): {self.preview}"


def kind_of(path: str) -> str:
    return path.split("/", 1)[0]


def parse(path: str, data: bytes) -> dict[str, Any] | reader.Unreadable:
    """One JSON entry (signals, sessions, ideas, events, FORMAT) through the reader."""
    schema = FORMAT if path == "FORMAT" else SCHEMAS.get(kind_of(path))
    return reader.load_object(data, schema, version=None if path == "FORMAT" else 1)


def read(
    repo: Repo,
    kind: str,
    *,
    tip: str | None = None,
    extra: Iterable[tuple[str, bytes]] = (),
    bad: list[BadEntry] | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """(path, object) of every readable JSON entry of `kind` (plus `extra` ones, e.g. from
    the spool), in path order; unreadable ones go to `bad`."""
    out = []
    for path, data in [*memory.iter_entries(repo, f"{kind}/", tip=tip), *extra]:
        obj = parse(path, data)
        if isinstance(obj, reader.Unreadable):
            if bad is not None:
                bad.append(BadEntry(path, obj.reason, obj.preview))
            continue
        out.append((path, obj))
    return out


def imported_lines(
    repo: Repo, *, tip: str | None = None, bad: list[BadEntry] | None = None
) -> Iterator[dict[str, Any]]:
    """Every readable row of the imports/ entries (note lines of commits that are gone)."""
    from gitimprove.state.records import read_line

    for path, data in memory.iter_entries(repo, "imports/", tip=tip):
        for lineno, line in enumerate(data.splitlines(), 1):
            if not line.strip():
                continue
            obj = read_line(line)
            if isinstance(obj, reader.Unreadable):
                if bad is not None:
                    bad.append(BadEntry(f"{path}:{lineno}", obj.reason, obj.preview))
                continue
            yield obj


def front_matter(path: str, data: bytes) -> dict[str, Any] | reader.Unreadable:
    """A Markdown entry (learnings, proposals): `+++` front matter of `key = <json>` lines,
    then the body (as `body`). Values that are not JSON are kept as text."""
    if len(data) > reader.MAX_BYTES:
        return reader.Unreadable(f"{len(data)} bytes, over the limit of one entry", data)
    text = reader.scrub(data.decode("utf-8", errors="replace"))
    meta: dict[str, Any] = {"path": path}
    body = text
    if text.startswith("+++"):
        head, _, body = text[3:].partition("+++")
        for line in head.splitlines():
            key, sep, value = line.partition("=")
            if not sep or not key.strip():
                continue
            parsed = reader.loads(value.strip(), max_bytes=reader.MAX_BYTES)
            meta[key.strip()] = (
                value.strip().strip('"') if isinstance(parsed, reader.Unreadable) else parsed
            )
    meta["body"] = body.strip()
    return meta


def markdown(repo: Repo, kind: str, *, bad: list[BadEntry] | None = None) -> list[dict[str, Any]]:
    out = []
    for path, data in memory.iter_entries(repo, f"{kind}/"):
        meta = front_matter(path, data)
        if isinstance(meta, reader.Unreadable):
            if bad is not None:
                bad.append(BadEntry(path, meta.reason, meta.preview))
            continue
        out.append(meta)
    return out


def ideas(repo: Repo, *, bad: list[BadEntry] | None = None) -> list[dict[str, Any]]:
    """Ideas in path (time) order, each with its `text` as a string."""
    out = []
    for _, idea in read(repo, "ideas", bad=bad):
        if isinstance(idea.get("text"), str) and idea["text"].strip():
            out.append(idea)
    return out


def every_bad_entry(repo: Repo, *, tip: str | None = None) -> list[BadEntry]:
    """Every entry of the memory branch that cannot be read, quarantined or not."""
    bad: list[BadEntry] = []
    for path, data in memory.iter_entries(repo, tip=tip):
        kind = kind_of(path)
        if path == "FORMAT" or kind in SCHEMAS:
            obj = parse(path, data)
            if isinstance(obj, reader.Unreadable):
                bad.append(BadEntry(path, obj.reason, obj.preview))
        elif kind in ("learnings", "proposals"):
            meta = front_matter(path, data)
            if isinstance(meta, reader.Unreadable):
                bad.append(BadEntry(path, meta.reason, meta.preview))
    list(imported_lines(repo, tip=tip, bad=bad))
    return bad


def quarantined(repo: Repo) -> set[str]:
    """Paths (or `path:line`s) that a quarantine event names."""
    out: set[str] = set()
    for _, event in read(repo, "events"):
        if event.get("status") == QUARANTINED:
            out.update(event.get("targets") or [])
    return out


def not_quarantined(repo: Repo, bad: list[BadEntry]) -> list[BadEntry]:
    if not bad:
        return []
    done = quarantined(repo)
    return [b for b in bad if b.path not in done]


def quarantine(repo: Repo, bad: list[BadEntry]) -> int:
    """Record bad entries as quarantined (one events/ entry); returns how many."""
    if not bad:
        return 0
    ts = utc_now()
    event = {
        "v": 1,
        "ts": ts,
        "status": QUARANTINED,
        "targets": [b.path for b in bad],
        "reasons": {b.path: b.reason for b in bad},
    }
    memory.add_entries(
        repo,
        {memory.entry_name("events", "json", now=ts): json.dumps(event, sort_keys=True) + "\n"},
        message=f"gitimprove: quarantine {len(bad)} unreadable memory entries",
    )
    return len(bad)
