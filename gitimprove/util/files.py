"""Atomic file writes and small file helpers.

Every file of gitimprove's own state (under `<git-common-dir>/improve/` and the files of the
git directory it reads itself) is opened through `open_state` / `read_state`: never through a
symbolic link, never blocking (`O_NONBLOCK`: a FIFO put in its place opens at once), and only
when it is a regular file; anything else is `NotAFile`, naming the path and what it is, never
a hang."""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from gitimprove.util.written import forget, mark

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


class NotAFile(OSError):
    """A state file that is something else: a FIFO, a device, a socket, a folder, a link."""


def kind(mode: int) -> str:
    """What a file of `mode` is, in words."""
    for test, word in (
        (stat.S_ISREG, "regular file"), (stat.S_ISDIR, "folder"), (stat.S_ISLNK, "symbolic link"),
        (stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    ):  # fmt: skip
        if test(mode):
            return word
    return "special file"


def _refuse(path: str, mode: int) -> NotAFile:
    return NotAFile(errno.EINVAL, f"a {kind(mode)}, not a regular file", path)


def open_state(path: str | os.PathLike[str], flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """A descriptor of the regular file `path` (not through a link, never blocking), or
    `NotAFile`; `FileNotFoundError` when there is nothing (and `flags` do not create it)."""
    where = os.fspath(path)
    extra = os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(where, flags | extra, mode)
    except FileNotFoundError:
        raise
    except OSError:  # ELOOP (a link), ENXIO (a FIFO no one reads), EISDIR, ...
        try:
            found = os.lstat(where).st_mode
        except OSError:
            raise
        if stat.S_ISREG(found):
            raise
        raise _refuse(where, found) from None
    found = os.fstat(fd).st_mode
    if not stat.S_ISREG(found):
        os.close(fd)
        raise _refuse(where, found)
    return fd


def read_state(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file `path` (see `open_state`)."""
    with os.fdopen(open_state(path), "rb") as fh:
        return fh.read()


def append_state(path: str | os.PathLike[str], data: bytes) -> None:
    """Append `data` to the regular file `path` in one write (made if absent); a FIFO, folder
    or link in its place is moved aside to `quarantine/` next to it first, never written."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    try:
        fd = open_state(path, flags)
    except NotAFile:
        where = os.fspath(path)
        aside = os.path.join(os.path.dirname(where), "quarantine")
        os.makedirs(aside, exist_ok=True)
        moved = os.path.join(aside, f"{os.path.basename(where)}.{os.urandom(3).hex()}")
        os.replace(where, moved)
        mark(moved)
        fd = open_state(path, flags)
    try:
        at = os.fstat(fd).st_size  # where an append lands unless another lands first
        mark(path, pending=True, data=data, offset=at)
        os.write(fd, data)
    finally:
        os.close(fd)
        mark(path, data=data, offset=at)


def create_whole(path: str | os.PathLike[str], data: bytes, mode: int = 0o600) -> bool:
    """Make the file `path` holding `data`, only if nothing is there: False when something
    is. The file appears whole or not at all (filled without a name, `O_TMPFILE`, or under
    a temporary one, then linked into place), so no reader ever finds it empty or half
    written, and no two writers both make it."""
    target = os.fspath(path)
    folder = os.path.dirname(target) or "."
    mark(target, pending=True, data=data)
    made = False
    try:
        fd = os.open(folder, os.O_TMPFILE | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), mode)
    except (AttributeError, OSError):  # no O_TMPFILE here (the system, the file system)
        fd = -1
    try:
        if fd >= 0:
            _write_all(fd, data)
            os.fchmod(fd, mode)
            try:
                os.link(f"/proc/self/fd/{fd}", target)
                made = True
                return True
            except FileExistsError:
                return False
            except OSError:  # no /proc: fall back to a named temporary file
                pass
        tmp = _temp_name(target)
        mark(tmp, pending=True, data=data)
        tfd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        try:
            try:
                _write_all(tfd, data)
            finally:
                os.close(tfd)
            os.link(tmp, target)
            made = True
            return True
        except FileExistsError:
            return False
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            mark(tmp)
    finally:
        if fd >= 0:
            os.close(fd)
        if made:
            mark(target, data=data)
        else:
            forget(target)


def _temp_name(target: str) -> str:
    """A temporary name beside `target` no other writer takes (`.<name>.<pid>.<8 hex>.tmp`,
    the form git/strays.py knows)."""
    folder, name = os.path.split(target)
    return os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def state_kind(path: str | os.PathLike[str]) -> str | None:
    """None when `path` is a regular file or absent, else what it is ("FIFO", "folder")."""
    try:
        found = os.lstat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(found) else kind(found)


def atomic_write(path: str | os.PathLike[str], data: str | bytes, *, durable: bool = True) -> None:
    """Write to a temp file in the same folder (a name no other writer can take), fsync
    (unless not `durable`: a cache), then os.replace: the file is whole or as it was, and the
    temp file never stays. Imports nothing (the hooks and a cold `log` write through it)."""
    target = os.fspath(path)
    folder = os.path.dirname(target) or "."
    os.makedirs(folder, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = _temp_name(target)
        mark(tmp, pending=True, data=raw)
        try:
            fd = os.open(tmp, flags, 0o600)
            break
        except FileExistsError:  # another writer's name: draw again
            continue
    try:
        try:
            _write_all(fd, raw)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
        mark(target, data=raw)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    finally:
        mark(tmp)


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


def rechoose_tempdir() -> None:
    """Choose the temporary folder again when the one in use takes no file any more: Python
    keeps the folder it chose at its first use for the whole process (`tempfile.tempdir`),
    and an agent without the sandbox can fill `$TMPDIR` or put a file in its place (the run
    stopped with exit 3). Then the next usable one (`$TMPDIR`, `/tmp`, `/var/tmp`…) is taken."""
    import tempfile

    try:
        with tempfile.TemporaryFile() as f:
            f.write(b"gitimprove")
            f.flush()
    except OSError:
        tempfile.tempdir = None
        with contextlib.suppress(FileNotFoundError):  # none usable: each use says why
            tempfile.gettempdir()
