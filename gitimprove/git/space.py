"""A full disk, told apart from other failures, and the bytes and entries a workspace holds.

libgit2 reports a blob it could not write for want of space as a `GitError` that says "no
error" (the cause is lost on the way), so a failure while writing to the repository is
checked against the free space of its file system instead of its message.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from gitimprove.errors import GitImproveError, again

__all__ = ["LOW", "NoSpace", "free_bytes", "full_place", "out_of_space", "usage"]

LOW = 16 << 20  # less free space than this: a write that failed did so for want of space
_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
# how the system and git say it (git's own: "write error. Out of diskspace")
_SAID = ("No space left on device", "Disk quota exceeded", "Out of diskspace")


def free_bytes(path: Path) -> int | None:
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


class NoSpace(GitImproveError):
    """A full disk met where the run cannot go on: what to free, and how to go on."""

    def __init__(self, where: Path, doing: str) -> None:
        free = free_bytes(where)
        shown = f"{free:,} bytes free" if free is not None else "free space unknown"
        super().__init__(
            f"no space left on device while {doing} ({where}: {shown})",
            hint="free space on that file system (the records are whole: nothing was "
            f"half-written), then {again()}",
        )


def full_place(exc: BaseException, default: Path) -> Path:
    """The folder of the file a full disk refused, when the error names one (`$TMPDIR`, which
    an agent without the sandbox can fill, is not the repository's file system), else
    `default`."""
    name = getattr(exc, "filename", None)
    if not isinstance(name, (str, bytes)) or not name:
        return default
    place = Path(os.fsdecode(name)).absolute()
    while not place.is_dir() and place != place.parent:
        place = place.parent
    return place


def out_of_space(exc: BaseException, where: Path) -> bool:
    """Whether `exc` (an OSError, or git's own error) came from a full disk or quota."""
    if isinstance(exc, NoSpace):
        return True
    if isinstance(exc, OSError) and exc.errno in _FULL:
        return True
    text = str(exc)
    if any(words in text for words in _SAID):
        return True
    if type(exc).__name__ != "GitError":
        return False
    free = free_bytes(where)
    return free is not None and free < LOW


def usage(root: Path, stop_past: int, max_entries: int | None = None) -> tuple[int, int]:
    """(bytes on disk, entries) under `root`: the allocated blocks of every file (a sparse
    file counts what it holds; an empty one nothing) and the number of files, folders and
    links, links not followed; the walk stops once past `stop_past` bytes or `max_entries`
    entries (100,000 empty files take no block, and hashing them took 40 seconds)."""
    total = count = 0
    todo = [os.fspath(root)]
    while todo:
        try:
            with os.scandir(todo.pop()) as it:  # a folder of a million names is not read whole
                for entry in it:
                    count += 1
                    st = entry.stat(follow_symlinks=False)
                    total += st.st_blocks * 512
                    if stat.S_ISDIR(st.st_mode):
                        todo.append(entry.path)
                    if total > stop_past or (max_entries is not None and count > max_entries):
                        return total, count
        except OSError:  # gone while walked: what is left of it is not counted
            continue
    return total, count
