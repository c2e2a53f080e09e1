"""The view caches (`<git-common-dir>/improve/cache`: note rows, log tables, the status tail).

A cache is never the source of truth: `log`, `status` and `show` read it only to skip parsing
notes they already parsed. So whatever untrusted code (an agent, or the code the metric and
the guard run, without the sandbox) may have written there is simply dropped: the harness
takes the folder's listing with every entry's `lstat` before each agent call and measurement
and removes what differs after it (`watched`); `doctor` drops the whole folder (`drop_all`).
The next view rebuilds what it needs from the notes.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["drop_all", "drop_changed", "snapshot", "watched"]

State = tuple[int, int, int, int, int]  # mode, inode, size, mtime_ns, ctime_ns


def _state(path: Path) -> State | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def snapshot(improve_dir: Path) -> dict[str, State | None]:
    """The cache folder's own `lstat` (under "") and every entry's below it, by relative path
    (a file rewritten in place in a sub-folder changes only its own)."""
    folder = improve_dir / "cache"
    out: dict[str, State | None] = {"": _state(folder)}
    if folder.is_symlink():
        return out
    for top, dirs, files in os.walk(folder):  # never follows links
        rel = os.path.relpath(top, folder)
        for name in dirs + files:
            key = name if rel == "." else f"{rel}/{name}"
            out[key] = _state(Path(top) / name)
    return out


def _remove(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink()
    except OSError:
        pass


def drop_changed(improve_dir: Path, before: dict[str, State | None]) -> list[str]:
    """Remove every cache entry that is new or differs from `before`; the names removed."""
    folder = improve_dir / "cache"
    after = snapshot(improve_dir)
    replaced = not (folder.is_dir() and not folder.is_symlink())  # by a link, a file
    if after[""] != before.get("") and after[""] is not None and replaced:
        _remove(folder)
        return ["cache"]
    dropped: list[str] = []
    for name, state in sorted(after.items()):
        gone = any(name.startswith(d[len("cache/") :] + "/") for d in dropped)
        if name and state is not None and before.get(name) != state and not gone:
            _remove(folder / name)
            dropped.append(f"cache/{name}")
    return dropped


@contextmanager
def watched(improve_dir: Path) -> Iterator[list[str]]:
    """Around code that may write the caches: what it changed is dropped on the way out (the
    list yielded is filled with the names dropped)."""
    before = snapshot(improve_dir)
    dropped: list[str] = []
    try:
        yield dropped
    finally:
        dropped += drop_changed(improve_dir, before)


def drop_all(improve_dir: Path) -> int:
    """Remove every cache file (the views rebuild them from the notes); how many there were."""
    folder = improve_dir / "cache"
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        _remove(folder)
        return 1
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        _remove(folder / name)
    return len(names)
