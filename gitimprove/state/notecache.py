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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Row = dict[str, Any]
    # blob id, the loop's own row of the note (None if it has none), its imported rows
    Entry = tuple[str, Row | None, list[Row]]

FORMAT = 1
NAME = "note-rows"


def path(loc: gitdir.Location) -> str:
    return os.path.join(loc.improve_dir, "cache", NAME)


def _header() -> bytes:
    from gitimprove import __version__
    from gitimprove.state import noterows

    py = "{}.{}".format(*sys.version_info[:2])
    version = f"{FORMAT} {noterows.CACHE_VERSION} {__version__} {py}"
    return f"gitimprove-note-rows {version}\n".encode()


def load(loc: gitdir.Location) -> dict[str, Entry]:
    """The cached entries by commit; empty when there is no usable cache."""
    try:
        with open(path(loc), "rb") as fh:
            data = fh.read()
    except OSError:
        return {}
    header = _header()
    if not data.startswith(header):
        return {}
    try:
        entries = marshal.loads(memoryview(data)[len(header) :])
    except (ValueError, EOFError, TypeError, RecursionError):
        return {}
    return entries if type(entries) is dict else {}


def usable(entry: Any, blob: str) -> bool:
    """Whether `entry` (from `load`) holds the rows of the note whose blob is `blob`."""
    return (
        type(entry) is tuple
        and len(entry) == 3
        and entry[0] == blob
        and (entry[1] is None or type(entry[1]) is dict)
        and type(entry[2]) is list
        and all(type(row) is dict for row in entry[2])
    )


def store(loc: gitdir.Location, entries: dict[str, Entry]) -> None:
    """Keep `entries` for the next reader (a cache: a failure to write is no error)."""
    try:
        data = _header() + marshal.dumps(entries)
    except ValueError:  # a value marshal cannot hold: then no cache
        return
    from gitimprove.util.files import atomic_write

    try:
        atomic_write(path(loc), data, durable=False)
    except OSError:
        pass
