"""Every experiment's view row, read from all the note blobs at once (a cold `log`).

`rows(note_blobs, import_blobs)` gives what `[e.to_row() for e in views._build(…)]` gives, in
the same order: one row per folded record (the loop's own lines of a note, and each import
folded apart), unreadable lines kept as `raw`, imported rows of `imports/` last, the latest
version of an imported row only. Lines are read by the bulk form of the tolerant reader
(`reader_bulk.load_objects`), so ten thousand notes cost one pass of each field's column
rather than ten thousand walks of the schema; rows stay plain dicts (no typed record, no
dataclasses to import). The typed path in `views` stays the reference: a test compares
both on notes of every kind.
"""

from __future__ import annotations

import json
import os

from gitimprove.state import notecache, noteentries, records
from gitimprove.util import gitdir, reader_bulk
from gitimprove.util.files import read_state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from typing import Any, TypeVar

    T = TypeVar("T")

    Row = dict[str, Any]

    Entry = tuple[Row | None, list[Row]]  # a note's own row (None if none), its imported rows

_BOOKKEEPING = ("op", "seq", "v")
CACHE_VERSION = 4


def view_rows(
    loc: gitdir.Location,
    *,
    use_cache: bool = True,
    store: bool = True,
) -> list[Row]:
    """Every experiment's row (notes, then imports), in display order: from the rows cache
    (`<git-common-dir>/improve/cache/log.json`, keyed by the notes and memory tips) when it
    is current, else read; `store` keeps them there for the next reader."""
    from gitimprove.git import refs  # ref names only: imports no pygit2

    notes_tip = gitdir.read_ref(loc, refs.NOTES) or ""
    memory_tip = gitdir.read_ref(loc, refs.MEMORY) or ""
    cache_file = os.path.join(loc.improve_dir, "cache", "log.json")
    if use_cache:
        try:
            cached = json.loads(read_state(cache_file))
            if (
                cached.get("version") == CACHE_VERSION
                and cached.get("notes") == notes_tip
                and cached.get("memory") == memory_tip
                and isinstance(cached.get("rows"), list)
                and all(type(r) is dict for r in cached["rows"])
            ):
                return list(cached["rows"])
        except (OSError, ValueError, AttributeError, KeyError, TypeError, RecursionError):
            pass
    found = load(loc, notes_tip or None, memory_tip or None, use_cache=use_cache)
    if store:
        from gitimprove.util.files import atomic_write

        cache = {"version": CACHE_VERSION, "notes": notes_tip, "memory": memory_tip, "rows": found}
        try:
            atomic_write(cache_file, json.dumps(cache, separators=(",", ":")), durable=False)
        except OSError:
            pass
    return found


def load(
    loc: gitdir.Location,
    notes_tip: str | None,
    memory_tip: str | None,
    *,
    use_cache: bool = True,
) -> list[Row]:
    """Every experiment's row at these tips of the notes and the memory branch; each note's
    rows from the note cache (`notecache`) when `use_cache` and its blob is unchanged."""
    from gitimprove.git import catfile

    imported = _imports_by_git(loc, memory_tip) if memory_tip else []
    if imported is not None:
        try:
            entries = noteentries.entries(loc, notes_tip, use_cache, ROWS) if notes_tip else []
        except catfile.Unanswered:
            pass
        else:
            with reader_bulk.no_gc():
                return _assemble(entries, imported)
    found = _blobs_by_git(loc, notes_tip, memory_tip)
    if found is None:  # git could not answer: read with pygit2
        from gitimprove.git import memory, notes
        from gitimprove.git.repo import open_repo

        repo = open_repo(loc.work_tree or loc.git_dir, need_work_tree=False)
        found = (
            list(notes.iter_notes(repo, notes_tip)) if notes_tip else [],
            [d for _, d in memory.iter_entries(repo, "imports/", tip=memory_tip)]
            if memory_tip
            else [],
        )
    return rows(*found)


def _named(blobs: Iterable[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
    """(commit, note) for each blob whose path, any fanout, names a commit."""
    for path, data in blobs:
        commit = noteentries.commit_of(path)
        if commit:
            yield commit, data


def _blobs_by_git(
    loc: gitdir.Location, notes_tip: str | None, memory_tip: str | None
) -> tuple[list[tuple[str, bytes]], list[bytes]] | None:
    """(commit, note) pairs and imports/ entries read by two git processes (no pygit2 to
    import: a cold `log`), or None when git cannot answer."""
    from gitimprove.git import catfile

    notes = catfile.tree_blobs(loc, notes_tip) if notes_tip else []
    imported = catfile.tree_blobs(loc, memory_tip, "imports/") if memory_tip else []
    if notes is None or imported is None:
        return None
    named = [(c, oid) for c, oid in _named(notes)]
    data = catfile.read_blobs(loc, [oid for _, oid in named] + [oid for _, oid in imported])
    if data is None:
        return None
    return [(c, d) for (c, _), d in zip(named, data, strict=False)], data[len(named) :]


def _imports_by_git(loc: gitdir.Location, memory_tip: str) -> list[bytes] | None:
    from gitimprove.git import catfile

    entries = catfile.tree_blobs(loc, memory_tip, "imports/")
    return None if entries is None else catfile.read_blobs(loc, [oid for _, oid in entries])


def rows(note_blobs: Iterable[tuple[str, bytes]], import_blobs: Sequence[bytes]) -> list[Row]:
    """Every experiment as a view row (`{"commit": …, **state}`), in display order."""
    with reader_bulk.no_gc():
        return _rows(note_blobs, import_blobs)


def _rows(note_blobs: Iterable[tuple[str, bytes]], import_blobs: Sequence[bytes]) -> list[Row]:
    return _assemble(_entries(note_blobs), import_blobs)


def _entries(note_blobs: Iterable[tuple[str, bytes]]) -> list[Entry]:
    """Each note's (own row or None, imported rows), in order."""
    return [
        (
            _row(commit, own, raw) if own or raw else None,
            [_row(commit, lines, ()) for lines in on_commit.values()],
        )
        for commit, own, on_commit, raw in records.split_notes(note_blobs)
    ]


def _assemble(entries: Iterable[Entry], import_blobs: Sequence[bytes]) -> list[Row]:
    """The rows of every note and of the imports/ entries, in display order."""
    return assemble(entries, import_blobs, lambda row: row, _version_of, order)


def assemble(
    entries: Iterable[tuple[T | None, list[T]]],
    import_blobs: Sequence[bytes],
    make: Callable[[Row], T],
    version: Callable[[T], tuple[tuple[str, int] | None, str]],
    arrange: Callable[[list[T]], list[T]],
) -> list[T]:
    """Every note's own item, then the latest version of each imported one (those of the
    notes, then those of the imports/ entries, `make` of their rows), `arrange`d."""
    out: list[T] = []
    imported: list[T] = []
    for own, on_commit in entries:
        if own is not None:
            out.append(own)
        imported.extend(on_commit)
    imported.extend(make(_from_row(r)) for r in records.imported_rows_of(import_blobs))
    out.extend(latest_versions(imported, version))
    return arrange(out)


def _row(commit: str, lines: list[dict[str, Any]], raw: Sequence[str]) -> Row:
    """`Experiment(commit, records.fold(lines), raw).to_row()`, with one copy of the usual
    note of one line (no sort)."""
    if len(lines) == 1:
        line = lines[0]
        row = dict(line)
        for key in _BOOKKEEPING:
            row.pop(key, None)
        row["ts"] = row["updated"] = line.get("ts")
    else:
        row = records.fold(lines)
    row["commit"] = commit
    row.pop("raw", None)
    if raw:
        row["raw"] = list(raw)
    return row


def _state_row(commit: str, state: dict[str, Any], raw: Sequence[str]) -> Row:
    """`Experiment(commit, state, raw).to_row()`."""
    row = {**state, "commit": commit}
    row.pop("raw", None)
    if raw:
        row["raw"] = list(raw)
    return row


def _from_row(row: Row) -> Row:
    """`Experiment.from_row(row).to_row()`."""
    state = {k: v for k, v in row.items() if k not in ("commit", "raw")}
    raw = row.get("raw")
    lines = [str(x) for x in raw] if isinstance(raw, list | tuple) else []
    return _state_row(str(row.get("commit") or ""), state, lines)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _run(row: Row) -> str:
    run = row.get("run")
    return run if isinstance(run, str) else ""


def _version_of(row: Row) -> tuple[tuple[str, int] | None, str]:
    source = row.get("source")
    place = source.get("row") if isinstance(source, dict) else None
    run = _run(row)
    return ((run, place) if isinstance(place, int) and run else None), _text(row.get("ts"))


def latest_versions(
    found: list[T], version: Callable[[T], tuple[tuple[str, int] | None, str]]
) -> list[T]:
    """The items that are no imported row's version (`version` gives None), then the latest
    version (by time, the later of equals) of each (run, row of the file)."""
    best: dict[tuple[str, int], tuple[str, T]] = {}
    out: list[T] = []
    for item in found:
        key, ts = version(item)
        if key is None:
            out.append(item)
        elif key not in best or ts >= best[key][0]:
            best[key] = (ts, item)
    return out + [item for _, item in best.values()]


def order(found: Iterable[Row]) -> list[Row]:
    """`views.order` over rows: runs in the order they started; within a run, by iteration
    and candidate (an imported row: by its place in the file)."""
    rows = list(found)
    return in_order(rows, [place(row) for row in rows])


Place = tuple[str, tuple[int, int, int, str], str]


def place(row: Row) -> Place:
    """Where `order` puts a row: its run, its key within the run, its time."""
    run = row.get("run")
    run = run if type(run) is str else ""
    ts = row.get("ts")
    ts = ts if type(ts) is str else _text(ts)
    source = row.get("source")
    if source is not None and type(source) is dict and isinstance(source.get("row"), int):
        return run, (0, source["row"], 0, ""), ts
    it = row.get("iteration")
    cand = row.get("candidate")
    cand = cand if type(cand) is int else 0
    return run, ((1, 0, cand, ts) if type(it) is not int else (0, it, cand, ts)), ts


def in_order(items: Sequence[T], places: Sequence[Place]) -> list[T]:
    """`items` (each at its place) with the runs in the order they started (their earliest
    time) and each run's items by key, the first given first among equals."""
    groups: dict[str, list[tuple[tuple[int, int, int, str], int, T]]] = {}
    starts: dict[str, str] = {}
    for n, ((run, key, ts), item) in enumerate(zip(places, items, strict=True)):
        members = groups.get(run)
        if members is None:
            groups[run] = [(key, n, item)]
            starts[run] = ts
        else:
            members.append((key, n, item))
            if ts < starts[run]:
                starts[run] = ts
    ordered: list[T] = []
    for run in sorted(groups, key=starts.__getitem__):
        ordered.extend(item for _, _, item in sorted(groups[run]))  # n is unique: items
    return ordered  # are never compared


ROWS = noteentries.Kind(notecache.NAME, _entries, notecache.usable)
