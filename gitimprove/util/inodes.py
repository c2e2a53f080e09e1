"""What `lstat` does not show about a folder tree: file-system flags (`chattr`), extended
attributes, and mounts stacked on it.

- Flags (`FS_IOC_GETFLAGS` / `FS_IOC_SETFLAGS`, what `lsattr` and `chattr` use): a process
  running as root can make a file or folder immutable (`+i`) or append-only (`+a`); nothing
  under it can then be removed. `clear_flags` takes them off again (root only, as setting them).
- Shared writable mappings (`/proc/<pid>/maps`): a live process that mapped a file
  `MAP_SHARED` and wrote one page (the write fault stamps the times) changes the bytes of every
  page it already wrote again through the mapping without moving the file's mtime or ctime
  until the page is written back: no `lstat` proves such a file unchanged while its writer
  lives. `written_mapped` names the inodes any live process holds so.
- Mounts (`/proc/self/mountinfo`): a root process can `mount --bind` a folder on itself or on
  another; a stacked bind mount of a folder on itself leaves every `lstat` and listing as it
  was. `mounts_under` finds them, `unmount` takes them off (lazily, `MNT_DETACH`).

Linux only; elsewhere there are no flags or mounts to find (the functions find none).
"""

from __future__ import annotations

import array
import contextlib
import errno
import fcntl
import os
import stat

__all__ = [
    "MARKS",
    "FlagsStuck",
    "clear_flags",
    "clear_own_flags",
    "flag_names",
    "has_xattrs",
    "link_marked",
    "marked",
    "mounts_under",
    "open_entry",
    "unmount",
    "written_mapped",
    "xattr_names",
]

FS_IOC_GETFLAGS = 0x80086601
FS_IOC_SETFLAGS = 0x40086602
IMMUTABLE = 0x10
APPEND = 0x20
# flags a fresh file does not have and a run could set (chattr's letters): s u c S i a d A j t
# D T C P m; a folder tree that has any is never kept for a later run
MARKS = (0x1 | 0x2 | 0x4 | 0x8 | IMMUTABLE | APPEND | 0x40 | 0x80 | 0x4000 | 0x8000 | 0x10000) | (
    0x20000 | 0x800000 | 0x20000000 | 0x400
)
_NAMES = {IMMUTABLE: "immutable, chattr +i", APPEND: "append-only, chattr +a"}
# labels the system puts on every new file (never a run's mark on its own: changing one
# moves the ctime)
_SYSTEM_XATTRS = frozenset({"security.selinux"})


class FlagsStuck(OSError):
    """A flag that cannot be cleared (no CAP_LINUX_IMMUTABLE): what it is on, and which."""


def open_entry(path: str, dir_fd: int | None = None) -> int | None:
    """A descriptor of a regular file or folder (never through a link, never blocking)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, dir_fd=dir_fd)
    except OSError:
        return None
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        os.close(fd)
        return None
    return fd


def _get(fd: int) -> int:
    buf = array.array("i", [0, 0])  # the kernel reads and writes an int
    try:
        fcntl.ioctl(fd, FS_IOC_GETFLAGS, buf, True)
    except OSError:  # a file system without flags (ENOTTY, EOPNOTSUPP)
        return 0
    return int(buf[0])


def has_xattrs(fd: int) -> bool:
    """Whether an open file or folder has an extended attribute (an ACL is one) other than
    the labels the system puts on every file."""
    if not hasattr(os, "listxattr"):  # not Linux: none to read here
        return False
    try:
        names = os.listxattr(fd)
    except OSError:  # a file system without them
        return False
    return any(name not in _SYSTEM_XATTRS for name in names)


def marked(path: str, dir_fd: int | None = None) -> bool:
    """Whether a regular file or folder (known to be one) has a flag a fresh one does not
    (`MARKS`) or an extended attribute; True too when it cannot be opened."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, dir_fd=dir_fd)
    except OSError:
        return True
    try:
        return bool(_get(fd) & MARKS) or has_xattrs(fd)
    finally:
        os.close(fd)


def flag_names(path: str | os.PathLike[str]) -> list[str]:
    """The flags of `MARKS` a regular file or folder has (never through a link), each named
    ("immutable, chattr +i"); none where they cannot be read."""
    fd = open_entry(os.fspath(path))
    if fd is None:
        return []
    try:
        flags = _get(fd) & MARKS
    finally:
        os.close(fd)
    names = [v for k, v in _NAMES.items() if flags & k]
    rest = flags & ~(IMMUTABLE | APPEND)
    return names + ([f"flags {rest:#x}, lsattr"] if rest else [])


def clear_own_flags(path: str | os.PathLike[str]) -> None:
    """Take every flag of `MARKS` off one regular file or folder (not what is under it);
    raises `FlagsStuck` when that is refused."""
    where = os.fspath(path)
    fd = open_entry(where)
    if fd is None:
        return
    try:
        flags = _get(fd)
        if flags & MARKS:
            buf = array.array("i", [flags & ~MARKS, 0])
            try:
                fcntl.ioctl(fd, FS_IOC_SETFLAGS, buf, False)
            except OSError as exc:
                raise FlagsStuck(exc.errno or errno.EPERM, str(exc), where) from None
    finally:
        os.close(fd)


def xattr_names(path: str | os.PathLike[str]) -> list[str]:
    """The extended attributes of a path (a link's own, never followed) other than the labels
    the system puts on every file (SELinux's): none where they cannot be read."""
    if not hasattr(os, "listxattr"):
        return []
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:
        return []
    return [name for name in names if name not in _SYSTEM_XATTRS]


def link_marked(path: str | os.PathLike[str]) -> bool:
    """Whether a path (a symbolic link's own, never followed) has an extended attribute
    other than the system's labels."""
    return bool(xattr_names(path))


def clear_flags(root: str | os.PathLike[str]) -> list[str]:
    """Take the immutable and append-only flags off every file and folder under `root` (its
    own too), links never followed. Returns the relative paths that had one ("." for the
    root), each with which; raises `FlagsStuck` naming the path when one cannot be cleared."""
    base = os.fspath(root)
    found: list[str] = []
    todo = [""]
    while todo:
        rel = todo.pop()
        where = os.path.join(base, rel) if rel else base
        fd = open_entry(where)
        if fd is None:
            continue
        try:
            flags = _get(fd)
            if flags & (IMMUTABLE | APPEND):
                names = " and ".join(v for k, v in _NAMES.items() if flags & k)
                found.append(f"{rel or '.'} ({names})")
                buf = array.array("i", [flags & ~(IMMUTABLE | APPEND), 0])
                try:
                    fcntl.ioctl(fd, FS_IOC_SETFLAGS, buf, False)
                except OSError as exc:
                    raise FlagsStuck(exc.errno or errno.EPERM, f"{names}: {exc}", where) from None
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                with contextlib.suppress(OSError), os.scandir(fd) as entries:
                    todo.extend(
                        os.path.join(rel, e.name)
                        for e in entries
                        if e.is_dir(follow_symlinks=False) or e.is_file(follow_symlinks=False)
                    )
        finally:
            os.close(fd)
    return sorted(found)


def unescape(field: str) -> str:
    """A mountinfo path: space, tab, newline and backslash are written as `\\ooo`."""
    if "\\" not in field:
        return field
    out = bytearray()
    raw = field.encode("utf-8", "surrogateescape")
    i = 0
    while i < len(raw):
        if raw[i] == 0x5C and i + 4 <= len(raw) and raw[i + 1 : i + 4].isdigit():
            out.append(int(raw[i + 1 : i + 4], 8))
            i += 4
        else:
            out.append(raw[i])
            i += 1
    return out.decode("utf-8", "surrogateescape")


def mounts_under(root: str | os.PathLike[str]) -> list[str]:
    """The mount points at or under `root` (its real path), deepest first."""
    top = os.path.realpath(root)
    try:
        with open("/proc/self/mountinfo", "rb") as fh:
            text = fh.read().decode("utf-8", "surrogateescape")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        fields = line.split(" ")
        if len(fields) < 5:
            continue
        point = unescape(fields[4])
        if point == top or point.startswith(top.rstrip("/") + "/"):
            found.append(point)
    return sorted(found, key=lambda p: (-p.count("/"), p))


def unmount(point: str) -> bool:
    """Detach the mount at `point` (`umount -l`); False when that is refused."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        umount2 = libc.umount2
    except (OSError, AttributeError):
        return False
    return int(umount2(os.fsencode(point), 2)) == 0  # MNT_DETACH


def _descendants() -> list[int]:
    """The live descendants of this process (every agent's and measured run's process: the
    harness is their subreaper), from each thread's `children` list; every process of the
    system where the kernel gives no such list."""
    me = os.getpid()
    if not os.path.exists(f"/proc/{me}/task/{me}/children"):
        try:
            return [int(n) for n in os.listdir("/proc") if n.isdigit() and int(n) != me]
        except OSError:
            return []
    out: list[int] = []
    todo = [me]
    seen = {me}
    while todo:
        pid = todo.pop()
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                    kids = [int(k) for k in fh.read().split()]
            except (OSError, ValueError):
                continue
            for kid in kids:
                if kid not in seen:
                    seen.add(kid)
                    out.append(kid)
                    todo.append(kid)
    return out


def written_mapped() -> set[tuple[int, int]]:
    """(device, inode) of every file a live descendant of this process (`_descendants`) has
    mapped shared and writable (`/proc/<pid>/maps`, perms `rw?s`); what cannot be read is
    skipped (a process that ended meanwhile)."""
    found: set[tuple[int, int]] = set()
    for pid in _descendants():
        try:
            with open(f"/proc/{pid}/maps", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if b"s " not in data:
            continue
        for line in data.splitlines():
            fields = line.split(None, 5)
            if len(fields) < 5 or not fields[1].startswith(b"rw") or fields[1][3:4] != b"s":
                continue
            ino = int(fields[4])
            if ino == 0:
                continue
            major, _, minor = fields[3].partition(b":")
            with contextlib.suppress(ValueError):
                found.add((os.makedev(int(major, 16), int(minor, 16)), ino))
    return found
