"""inotify through libc (Linux), for the watches that must not `stat` everything at every look:
the object store's (git/objectstore.py) and the ignored files' (git/ignored.py)."""

from __future__ import annotations

import ctypes
import os
import struct
import sys

__all__ = ["Inotify"]

MODIFY, ATTRIB = 0x2, 0x4
MOVED_FROM, MOVED_TO, CREATE, DELETE, DELETE_SELF, MOVE_SELF = (
    0x40, 0x80, 0x100, 0x200, 0x400, 0x800,
)  # fmt: skip
OVERFLOW, IGNORED = 0x4000, 0x8000  # events lost; the watch is gone (its folder went)
ONLYDIR, DONT_FOLLOW = 0x01000000, 0x02000000


class Inotify:
    """One inotify instance, non-blocking: folders added with a mask, events read."""

    def __init__(self, fd: int, libc: ctypes.CDLL) -> None:
        self.fd, self.libc = fd, libc

    @classmethod
    def start(cls) -> Inotify | None:
        """None where there is none (not Linux, no libc symbol, no descriptor left)."""
        if not sys.platform.startswith("linux"):
            return None
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, AttributeError):
            return None
        return cls(fd, libc) if fd >= 0 else None

    def add(self, path: str | bytes, mask: int) -> int:
        """The watch descriptor, or a negative number when the kernel refused it (the user's
        `fs.inotify.max_user_watches` reached, the folder gone)."""
        return int(self.libc.inotify_add_watch(self.fd, os.fsencode(path), mask))

    def read(self) -> tuple[list[tuple[int, int, bytes]], bool]:
        """Every event queued now as (watch descriptor, mask, name), and whether reading
        failed (then events may be missing)."""
        out: list[tuple[int, int, bytes]] = []
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return out, False
            except OSError:
                return out, True
            at = 0
            while at + 16 <= len(data):
                wd, mask, _cookie, size = struct.unpack_from("iIII", data, at)
                out.append((wd, mask, data[at + 16 : at + 16 + size].rstrip(b"\0")))
                at += 16 + size

    def close(self) -> None:
        os.close(self.fd)
