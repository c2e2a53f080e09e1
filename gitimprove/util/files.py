"""Atomic file writes and small file helpers."""

from __future__ import annotations

import contextlib
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def atomic_write(path: str | os.PathLike[str], data: str | bytes, *, durable: bool = True) -> None:
    """Write to a temp file in the same folder (a name no other writer can take), fsync
    (unless not `durable`: a cache), then os.replace: the file is whole or as it was, and the
    temp file never stays. Imports nothing (the hooks and a cold `log` write through it)."""
    target = os.fspath(path)
    folder = os.path.dirname(target) or "."
    os.makedirs(folder, exist_ok=True)
    blob = memoryview(data.encode("utf-8") if isinstance(data, str) else data)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    stem = os.path.join(folder, f".{os.path.basename(target)}.{os.getpid()}.")
    while True:
        tmp = f"{stem}{os.urandom(4).hex()}.tmp"
        try:
            fd = os.open(tmp, flags, 0o600)
            break
        except FileExistsError:  # another writer's name: draw again
            continue
    try:
        try:
            while blob:
                blob = blob[os.write(fd, blob) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def remove_tree(path: Path) -> None:
    """Remove `path` and everything under it, whatever its depth: no recursion, no full path
    longer than a name (one folder open at a time, found again through ".."), never
    following a link. What cannot be removed is left, as `shutil.rmtree(ignore_errors)`."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except NotADirectoryError:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return
    except OSError:
        if os.path.islink(path):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
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
