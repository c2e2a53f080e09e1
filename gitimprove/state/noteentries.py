"""Each note's entries, in the notes tree's order: its own record and its imported rows, as
view rows (`noterows`) or as the TSV view's digests (`tsvrows`) — the same reading for both.

With a note cache (by blob id: `notecache`), only the notes whose blob changed are read and
parsed; without one (a cold `log`), the tree is listed and its notes read and parsed in parts
on every core (`noteread`), each part kept as a shard of the cache. Raises
`catfile.Unanswered` when git cannot answer (the caller reads another way).
"""

from __future__ import annotations

import os

from gitimprove.util import gitdir, reader_bulk

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from typing import Any

    from gitimprove.state import noteindex

    # a note's own entry (None if none) and its imported ones
    Entry = tuple[Any, list[Any]]
    Cached = tuple[str, Any, list[Any]]  # the same, after the note's blob id


class Kind:
    """What is made of each note: the parser (notes as (commit, content) → entries), the
    cache's name, and the check that a cached entry has the shape the parser gives."""

    __slots__ = ("name", "parse", "stored", "usable")

    def __init__(
        self,
        name: str,
        parse: Callable[[Iterable[tuple[str, bytes]]], list[Entry]],
        usable: Callable[[Any, str], bool],
        *,
        stored: bool = False,
    ) -> None:
        self.name, self.parse, self.usable = name, parse, usable
        self.stored = stored  # its entries are stored with the notes too (`noteindex`)


_REWRITE = 64  # changed notes re-parsed on each `log` before the note cache is written again


def entries(loc: gitdir.Location, tip: str, use_cache: bool, kind: Kind) -> list[Entry]:
    """Each note's entries at notes tip `tip`, in the tree's order."""
    from gitimprove.git import catfile
    from gitimprove.state import notecache, noteindex, noteread

    stored = noteindex.load(loc, tip) if kind.stored else None
    if stored is not None:
        complete = stored.complete
        if complete is not None:
            return complete  # every folder has the shard of its notes
    if use_cache and os.path.exists(notecache.path(loc, 0, kind.name)):
        with catfile.tree_listing(loc, tip) as listing:  # git lists the tree as the cache loads
            cached = notecache.load(loc, kind.name)
            if cached:
                return _changed(loc, listing(), cached, kind)
    if stored is not None:
        return _with_stored(loc, tip, stored, kind)
    # the cold case: the tree listed, its notes read and parsed in parts, on every core
    tree = catfile.tree_blobs(loc, tip)
    if tree is None:
        raise catfile.Unanswered("git ls-tree failed")
    notes = [(path, blob) for path, blob in tree if commit_of(path)]
    parsed: dict[str, Cached] = {}
    parts = noteread.parse_all(
        notes, lambda part, k, n: _parse_part(loc, part, k, n, kind), kind.usable
    )
    for part in parts:
        parsed.update(part)
    empty: Entry = (None, [])
    return [parsed[path][1:] if path in parsed else empty for path, _ in notes]


def _with_stored(
    loc: gitdir.Location, tip: str, stored: noteindex.Stored, kind: Kind
) -> list[Entry]:
    """`entries` from the shards of the folders that have theirs; the notes of the other
    folders listed, read and parsed."""
    from gitimprove.git import catfile

    missing = stored.missing()
    listed = catfile.tree_blobs(loc, tip, *[f + "/" for f in missing])
    if listed is None:
        raise catfile.Unanswered("git ls-tree failed")
    notes = [(path, blob) for path, blob in listed if commit_of(path)]
    data = catfile.read_blobs(loc, [blob for _, blob in notes])
    if data is None:
        raise catfile.Unanswered("git cat-file failed")
    with reader_bulk.no_gc():
        parsed = kind.parse(zip([commit_of(p) for p, _ in notes], data, strict=True))
    by_folder: dict[str, list[Entry]] = {}
    for (path, _), entry in zip(notes, parsed, strict=True):
        by_folder.setdefault(path[:2], []).append(entry)
    out: list[Entry] = []
    for folder, entries in stored.folders:
        out.extend(entries if entries is not None else by_folder.get(folder, []))
    return out


def _parse_part(
    loc: gitdir.Location, part: Sequence[tuple[str, str]], k: int, n: int, kind: Kind
) -> dict[str, Cached]:
    """The cache entries of the notes in `part` (those with content), read by one `git
    cat-file` and kept as shard `k` of `n` of the cache."""
    from gitimprove.git import catfile
    from gitimprove.state import notecache

    had: list[bool] = []

    def named() -> Iterator[tuple[str, bytes]]:
        for data, (path, _) in zip(
            catfile.stream_blobs(loc, [b for _, b in part]), part, strict=True
        ):
            had.append(bool(data))
            yield path.replace("/", ""), data

    with reader_bulk.no_gc():
        made = kind.parse(named())
    found = {
        path: (blob, *entry)
        for (path, blob), entry, content in zip(part, made, had, strict=True)
        if content
    }
    notecache.store(loc, found, k, n, kind.name)
    return found


def _changed(
    loc: gitdir.Location, listing: list[tuple[str, str]], cached: dict[str, Cached], kind: Kind
) -> list[Entry]:
    """`entries` with a note cache: only the notes whose blob is not the cached one are read
    and parsed. The cache is written again only once many notes changed (writing it costs
    more than parsing a few notes again on the next `log`)."""
    from gitimprove.git import catfile
    from gitimprove.state import notecache

    notes = [(path, blob) for path, blob in listing if commit_of(path)]
    usable = kind.usable
    missing = [(path, blob) for path, blob in notes if not usable(cached.get(path), blob)]
    if missing:
        data = catfile.read_blobs(loc, [blob for _, blob in missing])
        if data is None:
            raise catfile.Unanswered("git cat-file failed")
        with reader_bulk.no_gc():
            parsed = kind.parse(zip([commit_of(p) for p, _ in missing], data, strict=True))
        for (path, blob), content, entry in zip(missing, data, parsed, strict=True):
            if content:  # b"" may be a missing object: never kept under its id
                cached[path] = (blob, *entry)
            else:
                cached.pop(path, None)
    fresh = dict(zip([p for p, _ in missing], parsed, strict=True)) if missing else {}
    found = [fresh[path] if path in fresh else cached[path][1:] for path, _ in notes]
    if len(missing) > _REWRITE or len(cached) > len(notes) + _REWRITE:
        kept = {path: cached[path] for path, _ in notes if path in cached}
        notecache.store(loc, kept, name=kind.name)
    return found


def commit_of(path: str) -> str:
    """The commit a notes tree path names (any fanout), or "" for another path."""
    commit = path.replace("/", "")
    return commit if len(commit) == 40 and gitdir.lower_hex(commit) else ""
