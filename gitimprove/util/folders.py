"""Folders watched by their entries' `lstat`, one level deep: the folders Python and the
runners read code from outside the repository (loop/sites.py), kept through an agent call on
disk too (git/pending.py)."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

__all__ = ["MAX_ENTRIES", "Listing", "changes", "take"]

MAX_ENTRIES = 20_000  # per folder: past it the rest is not listed (a folder of the user's)

Listing = dict[str, tuple[int, int, int, int, int]]


def take(where: Sequence[Path]) -> Listing:
    """Each folder's entries with their mode, size, inode and modification and change times,
    links not followed, and the folder itself (its mode and inode: a folder replaced). A
    `__pycache__` is left out: Python writes one there when it first imports a module of the
    folder, whoever runs it."""
    out: Listing = {}
    for folder in where:
        try:
            st = os.lstat(folder)
            if not stat.S_ISDIR(st.st_mode):  # a file a command names: all of it
                out[str(folder)] = _key(st)
                if stat.S_ISLNK(st.st_mode):
                    out[f"{folder} (its target)"] = _key(os.stat(folder))
                continue
            out[str(folder)] = (st.st_mode, 0, st.st_ino, 0, 0)
            with os.scandir(folder) as it:
                for n, entry in enumerate(it):
                    if n >= MAX_ENTRIES:
                        break
                    if entry.name == "__pycache__":
                        continue
                    try:
                        out[entry.path] = _key(entry.stat(follow_symlinks=False))
                    except OSError:
                        continue
        except OSError:
            continue
    return out


def _key(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_mode, st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


def changes(before: Listing, after: Listing) -> list[str]:
    """The paths added, removed or changed between two listings, named."""
    out = []
    for path in sorted(set(before) | set(after)):
        was, now = before.get(path), after.get(path)
        if was == now:
            continue
        how = "added" if was is None else "removed" if now is None else "changed"
        out.append(f"{path} ({how})")
    return out
