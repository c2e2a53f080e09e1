"""What this process wrote under `<git-common-dir>/improve/`, as it left it.

The watch of gitimprove's own folder (git/strays.py) judges what changed there while an
agent worked or the measured code ran; in a tournament the harness's own threads write there
at the same time (pid files, temporary files, locks, records). Every such write is `mark`ed
here as it happens, with the file's `lstat` right after it: a change the watch finds is this
process's own only while the path is still exactly as marked (a later write by anyone else
moves its ctime, which no program can set back). A write under way (a temporary file being
filled, a lock file being made) is marked `pending` until it is done. Imports nothing of
gitimprove: the hooks and a cold `log` write through util/files.py, which marks.
"""

from __future__ import annotations

import os
import stat
import threading

__all__ = ["PENDING", "forget", "mark", "mine", "signature", "state"]

PENDING = "pending"  # a write under way: any regular file there is this process's
_MARKED: dict[str, str | None] = {}  # path -> signature marked, None when removed
_LOCK = threading.Lock()
_LIMIT = 100_000  # a long run marks every temporary file once: the oldest go first


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


def mark(path: str | os.PathLike[str], *, pending: bool = False) -> None:
    """Record that this process has just written (or removed) `path`; `pending` while the
    write is still under way. Paths outside an `improve/` folder are not kept."""
    where = os.path.abspath(os.fspath(path))
    if not _watched(where):
        return
    value = PENDING if pending else signature(where)
    with _LOCK:
        _MARKED.pop(where, None)
        _MARKED[where] = value
        while len(_MARKED) > _LIMIT:
            del _MARKED[next(iter(_MARKED))]


def forget(path: str | os.PathLike[str]) -> None:
    with _LOCK:
        _MARKED.pop(os.path.abspath(os.fspath(path)), None)


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
        try:
            return stat.S_ISREG(os.lstat(path).st_mode)
        except OSError:
            return True
    return value == signature(path)
