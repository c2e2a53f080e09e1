"""Each note's view rows, kept by the id of the note's blob (`<git-common-dir>/improve/cache`).

A note's rows depend on nothing but its commit and its content, and a blob id names the
content: an entry whose blob id is not the note's blob now is simply not used, so the cache
can never be stale. The first `log` after a new experiment then reads and parses the one
changed note rather than ten thousand (DESIGN §13); removing the cache folder gives the cold
case back. The file is `marshal` data (no module to import, and it loads many times faster
than JSON) after a header naming the format, the gitimprove and Python versions; a file that
does not match, cannot be read, or holds an entry of the wrong shape costs a re-parse of
those notes, never a wrong row. It is written whole and atomically (a temp file, then a
rename), so processes writing it at once each leave a complete file.
"""

from __future__ import annotations

import marshal
import os
import sys

from gitimprove.util import gitdir
from gitimprove.util.files import read_state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Row = dict[str, Any]
    # blob id, the loop's own row of the note (None if it has none), its imported rows (the
    # TSV view's digests cache keeps the same shape with digests for rows: `tsvrows`)
    Entry = tuple[str, Any, list[Any]]

FORMAT = 1
NAME = "note-rows"


def path(loc: gitdir.Location, shard: int = 0, name: str = NAME) -> str:
    """The cache file; a cold `log` parsing on several cores writes one shard per process."""
    file = name if not shard else f"{name}.{shard}"
    return os.path.join(loc.improve_dir, "cache", file)


def _shards(loc: gitdir.Location, name: str) -> list[int]:
    try:
        names = os.listdir(os.path.join(loc.improve_dir, "cache"))
    except OSError:
        return []
    prefix = name + "."
    return sorted(
        int(name[len(prefix) :])
        for name in names
        if name.startswith(prefix) and name[len(prefix) :].isdigit() and name[-1:] != "0"
    )


def _header(name: str) -> bytes:
    from gitimprove import __version__
    from gitimprove.state import noterows

    py = "{}.{}".format(*sys.version_info[:2])
    version = f"{FORMAT} {noterows.CACHE_VERSION} {__version__} {py}"
    return f"gitimprove-{name} {version}\n".encode()


def load(loc: gitdir.Location, name: str = NAME) -> dict[str, Entry]:
    """The cached entries by note path, from every shard; empty when there is no usable
    cache (a shard that cannot be used is left out: its notes are parsed again)."""
    header = _header(name)
    entries = _load(path(loc, 0, name), header)
    for shard in _shards(loc, name):
        entries.update(_load(path(loc, shard, name), header))
    return entries


def _load(file: str, header: bytes) -> dict[str, Entry]:
    try:
        data = read_state(file)
    except OSError:
        return {}
    if not data.startswith(header):
        return {}
    try:
        entries = marshal.loads(memoryview(data)[len(header) :])
    except (ValueError, EOFError, TypeError, RecursionError):
        return {}
    return entries if type(entries) is dict else {}


def usable(entry: Any, blob: str, kind: type = dict) -> bool:
    """Whether `entry` (from `load`) holds the rows (`kind` dict; the TSV view's digests:
    tuple) of the note whose blob is `blob`."""
    return (
        type(entry) is tuple
        and len(entry) == 3
        and entry[0] == blob
        and (entry[1] is None or type(entry[1]) is kind)
        and type(entry[2]) is list
        and all(type(row) is kind for row in entry[2])
    )


def store(
    loc: gitdir.Location,
    entries: dict[str, Entry],
    shard: int = 0,
    shards: int = 1,
    name: str = NAME,
) -> None:
    """Keep `entries` for the next reader (a cache: a failure to write is no error), as
    shard `shard` of `shards` (the first removes the shards a larger split left)."""
    try:
        data = _header(name) + marshal.dumps(entries)
    except ValueError:  # a value marshal cannot hold: then no cache
        return
    from gitimprove.util.files import atomic_write

    try:
        atomic_write(path(loc, shard, name), data, durable=False)
        if shard == 0:
            for old in _shards(loc, name):
                if old >= shards:
                    os.unlink(path(loc, old, name))
    except OSError:
        pass
