"""What this process wrote under `<git-common-dir>/improve/`, as it left it.

The watch of gitimprove's own folder (git/strays.py) judges what changed there while an
agent worked or the measured code ran; in a tournament the harness's own threads write there
at the same time (pid files, temporary files, locks, records). Every such write is `mark`ed
here as it happens, with the file's `lstat` right after it: a change the watch finds is this
process's own only while the path is still exactly as marked (a later write by anyone else
moves its ctime, which no program can set back). A write under way (a temporary file being
filled, a lock file being made) is marked `pending` until it is done. Imports nothing of
gitimprove: the hooks and a cold `log` write through util/files.py, which marks.

A write of known bytes is marked with them (`data`, and `offset` for an append): between the
write and its mark another process could write the file over, and the `lstat` the mark takes
would then be of that write. So the mark reads the file back through one descriptor (never a
link) and keeps its identity only when it holds exactly the bytes written (an append: those
bytes where it wrote them, at the end) and the path still names that same file; otherwise the
path is forgotten, and the watch judges what is there as anyone's. While such a write is
pending, what is there is this process's only while it holds a beginning of those bytes.
"""

from __future__ import annotations

import os
import stat
import threading

__all__ = ["PENDING", "forget", "mark", "mine", "signature", "state"]

PENDING = "pending"  # a write under way: any regular file there is this process's
_MARKED: dict[str, str | None] = {}  # path -> signature marked, None when removed
_LOCK = threading.Lock()
_EXPECTED: dict[str, tuple[int | None, bytes]] = {}  # a pending write's offset and bytes
_LIMIT = 100_000  # a long run marks every temporary file once: the oldest go first
_CHECK = 8 << 20  # bytes a mark reads back at most (a larger write is marked by its `lstat`)
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def signature(path: str | os.PathLike[str]) -> str | None:
    """The identity of what is at `path` now (never following a link), None when absent:
    type and mode, size, inode, link count, times to the nanosecond."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (
        f"{st.st_mode:o}:{st.st_size}:{st.st_ino}:{st.st_nlink}:{st.st_mtime_ns}:{st.st_ctime_ns}"
    )


def _watched(where: str) -> bool:
    return f"{os.sep}improve{os.sep}" in where


def mark(
    path: str | os.PathLike[str],
    *,
    pending: bool = False,
    data: bytes | None = None,
    offset: int | None = None,
) -> None:
    """Record that this process has just written (or removed) `path`; `pending` while the
    write is still under way. With `data`, the bytes the write puts there (the whole file,
    or from `offset` on for an append): the mark holds only when the file holds them.
    Paths outside an `improve/` folder are not kept."""
    where = os.path.abspath(os.fspath(path))
    if not _watched(where):
        return
    if pending:
        value: str | None = PENDING
    elif data is not None and len(data) <= _CHECK:
        value = _as_written(where, data, offset)
        if value is None:  # written over before this mark: anyone's
            forget(where)
            return
    else:
        value = signature(where)
    with _LOCK:
        _MARKED.pop(where, None)
        _MARKED[where] = value
        _EXPECTED.pop(where, None)
        if pending and data is not None and len(data) <= _CHECK:
            _EXPECTED[where] = (offset, bytes(data))
        while len(_MARKED) > _LIMIT:
            _EXPECTED.pop(next(iter(_MARKED)), None)
            del _MARKED[next(iter(_MARKED))]


def _as_written(where: str, data: bytes, offset: int | None) -> str | None:
    """The signature of the file at `where` when it holds `data` as written (None when it
    does not, or is no longer the file read)."""
    try:
        fd = os.open(where, _READ)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        start = 0 if offset is None else offset
        if not stat.S_ISREG(st.st_mode) or st.st_size != start + len(data):
            return None
        if os.pread(fd, len(data) + 1, start) != data:
            return None
    finally:
        os.close(fd)
    now = signature(where)
    if now is None or now.split(":")[2] != str(st.st_ino):
        return None
    return now


def _beginning(where: str, offset: int | None, data: bytes) -> bool:
    """Whether the file at `where` holds a beginning of `data` from `offset` (a write of this
    process under way there), nothing else."""
    try:
        fd = os.open(where, _READ)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        start = 0 if offset is None else offset
        if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1 or st.st_size < start:
            return False
        got = os.pread(fd, len(data) + 1, start)
        return data.startswith(got)
    finally:
        os.close(fd)


def forget(path: str | os.PathLike[str]) -> None:
    where = os.path.abspath(os.fspath(path))
    with _LOCK:
        _MARKED.pop(where, None)
        _EXPECTED.pop(where, None)


def state(path: str | os.PathLike[str]) -> tuple[bool, str | None]:
    """(marked, what was marked): whether this process marked `path`, and the signature it
    marked (`PENDING`, or None for a removal)."""
    where = os.path.abspath(os.fspath(path))
    with _LOCK:
        if where not in _MARKED:
            return False, None
        return True, _MARKED[where]


def mine(path: str | os.PathLike[str]) -> bool:
    """Whether what is at `path` now is exactly what this process left there (or a write of
    its own is still under way there)."""
    marked, value = state(path)
    if not marked:
        return False
    if value == PENDING:
        where = os.path.abspath(os.fspath(path))
        with _LOCK:
            expected = _EXPECTED.get(where)
        if expected is not None:
            return _beginning(where, *expected)
        try:
            return stat.S_ISREG(os.lstat(path).st_mode)
        except OSError:
            return True
    return value == signature(path)
