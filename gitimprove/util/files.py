"""Atomic file writes and small file helpers."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def atomic_write(path: str | os.PathLike[str], data: str | bytes, *, durable: bool = True) -> None:
    """Write to a temp file in the same folder, fsync (unless not `durable`: a cache), then
    os.replace."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def remove_tree(path: Path) -> None:
    """Remove `path` and everything under it, whatever its depth: no recursion, no full path
    longer than a name (one folder open at a time, found again through ".."), never
    following a link. What cannot be removed is left, as `shutil.rmtree(ignore_errors)`."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except NotADirectoryError:
        Path(path).unlink(missing_ok=True)
        return
    except OSError:
        Path(path).unlink(missing_ok=True) if Path(path).is_symlink() else None
        return
    names: list[str] = []
    try:
        while True:
            sub = None
            with os.scandir(fd) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        sub = entry.name
                        break
                    with contextlib.suppress(OSError):
                        os.unlink(entry.name, dir_fd=fd)
            if sub is not None:
                try:
                    child = os.open(sub, flags, dir_fd=fd)
                except OSError:  # cannot enter it: leave it (as ignore_errors would)
                    break
                os.close(fd)
                fd = child
                names.append(sub)
                continue
            if not names:
                break
            parent = os.open("..", flags, dir_fd=fd)
            os.close(fd)
            fd = parent
            try:
                os.rmdir(names.pop(), dir_fd=fd)
            except OSError:
                break
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.rmdir(path)
