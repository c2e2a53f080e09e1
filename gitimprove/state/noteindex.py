"""The TSV view's digests stored with the notes, so that a `log` with no cache at all (a
fresh clone, a removed cache folder) reads one blob per fanout folder instead of parsing
every note (DESIGN §13).

Beside the notes tree's fanout folders (`ab/cdef…`), the folder `gitimprove-digests` holds
one shard per fanout folder, named `<ab>.<id of the folder's tree>.v<format>`: the digests
(`tsvrows.digest`) of exactly the notes of that tree, one JSON line `[own digest or null,
[imported digests]]` per note in name order, after a header line repeating the name. git
keeps such non-note entries through its own notes commands, and they travel with the notes.

A shard is used only when its name names the folder's tree as it is now (so its digests are
those of the notes there); the notes of any other folder (written by `git notes`, an older
gitimprove, a rewrite) are listed, read and parsed. Every notes commit gitimprove writes
makes the shards of the folders whose tree changed again (`git/notes.py` `indexed`), from the
notes themselves: the shards are derived data, and one that cannot be read costs a parse,
never a wrong row (`logview` falls back to the rows).
"""

from __future__ import annotations

import json

from gitimprove.util import gitdir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    Entry = tuple[Any, list[Any]]

FOLDER = "gitimprove-digests"
FORMAT = 1


def version() -> str:
    """What a shard's digests depend on besides the notes: this format and the digest code."""
    from gitimprove import __version__
    from gitimprove.state import noterows

    return f"{FORMAT}.{noterows.CACHE_VERSION}.{__version__}"


def name(folder: str, tree: str, ver: str) -> str:
    """The shard's name for fanout folder `folder` whose tree is `tree`."""
    return f"{folder}.{tree}.v{ver}"


def is_folder(name: str) -> bool:
    return len(name) == 2 and gitdir.lower_hex(name)


# --- writing (git/notes.py `indexed`) ------------------------------------------------------


def shard(folder: str, tree: str, notes: Sequence[tuple[str, bytes]]) -> bytes:
    """The shard of fanout folder `folder` (tree id `tree`) holding `notes` (name within the
    folder, content), each parsed."""
    from gitimprove.state import tsvrows
    from gitimprove.util import reader_bulk

    with reader_bulk.no_gc():
        made = tsvrows.entries_of((folder + n, data) for n, data in sorted(notes))
    lines = [name(folder, tree, version()).encode("ascii") + b"\n"]
    lines += [json.dumps(e, separators=(",", ":")).encode("ascii") + b"\n" for e in made]
    return b"".join(lines)


# --- reading -----------------------------------------------------------------------------------


class Stored:
    """The notes tree's fanout folders in order, each with its entries from its shard (None
    for a folder whose notes must be read: no usable shard)."""

    __slots__ = ("folders",)

    def __init__(self, folders: list[tuple[str, list[Entry] | None]]) -> None:
        self.folders = folders

    @property
    def complete(self) -> list[Entry] | None:
        """Every note's entry in tree order, when every folder has its shard."""
        out: list[Entry] = []
        for _, entries in self.folders:
            if entries is None:
                return None
            out.extend(entries)
        return out

    def missing(self) -> list[str]:
        return [folder for folder, entries in self.folders if entries is None]


def load(loc: gitdir.Location, tip: str) -> Stored | None:
    """The stored digests at notes commit `tip` (two `git cat-file` calls: the top tree and
    the shards' folder, then the shards that are usable); None when git cannot answer, the
    tree holds notes outside the 2/38 fanout, or no shard is usable."""
    from gitimprove.git import catfile

    try:
        with catfile.session(loc) as ask:  # one git process, two rounds
            top, index = ask([f"{tip}^{{tree}}", f"{tip}:{FOLDER}"])
            if top is None or top[0] != b"tree" or index is None or index[0] != b"tree":
                return None
            folders: list[tuple[str, str]] = []
            for mode, entry, oid in _tree_entries(top[1]):
                if mode == b"40000" and is_folder(entry):
                    folders.append((entry, oid))
                elif entry != FOLDER and gitdir.lower_hex(entry) and len(entry) <= 40:
                    return None  # a note (or folder of notes) outside the 2/38 fanout
            shards = {e: oid for mode, e, oid in _tree_entries(index[1]) if mode == b"100644"}
            ver = version()
            wanted = [(f, shards.get(name(f, tree, ver))) for f, tree in folders]
            usable = [(f, oid) for f, oid in wanted if oid is not None]
            if not usable:
                return None
            got = ask([oid for _, oid in usable])
    except catfile.Unanswered:
        return None
    read = {
        folder: _decoded(obj[1]) if obj is not None and obj[0] == b"blob" else None
        for (folder, _), obj in zip(usable, got, strict=True)
    }
    out: list[tuple[str, list[Entry] | None]] = []
    for (folder, tree), (_, shard_id) in zip(folders, wanted, strict=True):
        shard = read.get(folder) if shard_id is not None else None
        out.append((folder, _entries(shard, name(folder, tree, ver)) if shard else None))
    return Stored(out)


def _decoded(data: bytes) -> tuple[bytes, list[Any]] | None:
    first, _, body = data.partition(b"\n")
    body = body.rstrip(b"\n")
    try:  # one array, not a parse per line (a line is one JSON array, newlines escaped)
        items = json.loads(b"[" + body.replace(b"\n", b",") + b"]") if body else []
    except (ValueError, RecursionError):
        return None
    return first, items if type(items) is list else []


def _tree_entries(raw: bytes) -> list[tuple[bytes, str, str]]:
    """(mode, name, object id) of each entry of a tree in git's raw format."""
    out = []
    i, n = 0, len(raw)
    while i < n:
        space = raw.index(b" ", i)
        nul = raw.index(b"\0", space)
        out.append(
            (
                raw[i:space],
                raw[space + 1 : nul].decode("utf-8", "surrogateescape"),
                raw[nul + 1 : nul + 21].hex(),
            )
        )
        i = nul + 21
    return out


def _entries(decoded: Any, expected: str) -> list[Entry] | None:
    """The entries of a decoded shard whose header names `expected`; None for a damaged one."""
    if type(decoded) is not tuple or len(decoded) != 2 or decoded[0] != expected.encode():
        return None
    try:
        return [(_own(own), [_digest(d) for d in imported]) for own, imported in decoded[1]]
    except (ValueError, TypeError):
        return None


def _own(d: Any) -> Any:
    """A note's own digest as stored (a list: `tsvrows` reads it by index and orders it by
    `tuple(d[5])`); imported digests also pass through `latest_versions`, so they are made
    tuples (`_digest`). A damaged one raises here or where it is used (the caller falls
    back to the notes)."""
    if d is not None and (type(d) is not list or len(d) != 9):
        raise ValueError("not a digest")
    return d


def _digest(d: Any) -> Any:
    """A stored digest in the shape `tsvrows.digest` gives (tuples where it is compared or
    hashed); a damaged one raises ValueError or TypeError."""
    if type(d) is not list or len(d) != 9:
        raise ValueError("not a digest")
    d[4] = tuple(d[4])
    d[5] = tuple(d[5])
    if d[7] is not None:
        d[7] = tuple(d[7])
    return tuple(d)
