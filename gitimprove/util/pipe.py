"""A command's stdout through a stream, read until the command exits and not after.

A metric's output must be what the benchmark printed. A temporary file can be reopened
through `/proc/<pid>/fd/1` and written at any offset (`pwrite`), so measured code could put
a line after the benchmark's last one; a stream has no offsets: bytes only ever follow. What
is in it the moment the command exits is the output; anything a process that outlived it
writes later (a double-forked grandchild waiting for the exit) is never read, and is counted
(`Result.late`): the metric is then `tampered`.

The stream is one end of a unix socket pair (`stream()`), not a pipe: a pipe can be opened
again through `/proc/<pid>/fd/1` by any process of the same user, so code the benchmark runs
could write a line into the benchmark's own stdout while the benchmark still runs (after its
last line, before its exit); a socket cannot be opened through `/proc` at all (ENXIO), so
only a process that was handed the descriptor can write to it."""

from __future__ import annotations

import fcntl
import os
import select
import socket
import termios
import time
from collections.abc import Callable

_CHUNK = 65536
KEEP = 1 << 20  # of an output over its limit: this much of its start and of its end


class Capped:
    """A stream's bytes up to `limit`; past it only the first and last `KEEP` bytes are kept,
    and every byte is counted (a benchmark printing 3 GB costs no memory)."""

    def __init__(self, limit: int) -> None:
        self.limit, self.total = limit, 0
        self.head, self.tail = bytearray(), bytearray()

    def __iadd__(self, data: bytes) -> Capped:
        room = self.limit - self.total  # the head is every byte up to the limit
        self.total += len(data)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * KEEP:
                del self.tail[:-KEEP]
        if self.over and len(self.head) > KEEP:
            del self.head[KEEP:]
        return self

    @property
    def over(self) -> bool:
        return self.total > self.limit

    def value(self) -> bytes:
        if not self.over:
            return bytes(self.head)
        left_out = self.total - len(self.head) - min(len(self.tail), KEEP)
        return b"%s\n[... %d bytes left out ...]\n%s" % (self.head, left_out, self.tail[-KEEP:])


def read_until_exit(
    fds: dict[int, Capped], pid: int, done: Callable[[], bool], timeout: float | None
) -> bool:
    """Read each of `fds` into its buffer until the process `pid` exits (True) or `timeout`
    passes (False). At the exit the caller drains what the pipes hold at once; bytes written
    after that are never read."""
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        pidfd: int | None = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    open_ = set(fds)
    try:
        while True:
            if done():
                return True
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            step = 0.05 if pidfd is None or not open_ else left
            watch = [*open_] + ([] if pidfd is None else [pidfd])
            ready, _, _ = select.select(watch, [], [], step)
            for fd in open_ & set(ready):
                data = os.read(fd, _CHUNK)
                if data:
                    fds[fd] += data
                else:  # every writer closed it: wait for the exit (and the others) alone
                    open_.discard(fd)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def stream() -> tuple[int, int]:
    """(read end, write end) of a one-way stream for a command's output: a unix socket pair,
    which no process can open again through `/proc/<pid>/fd` (a pipe could be)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.shutdown(socket.SHUT_WR)
    theirs.shutdown(socket.SHUT_RD)
    return ours.detach(), theirs.detach()


def pending(fd: int) -> int:
    """How many bytes wait in the stream `fd` now."""
    count = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, count)
    return int.from_bytes(count, "little")


def drain(fd: int, out: Capped) -> None:
    """Add to `out` what is in the stream now, never waiting for more."""
    left = pending(fd)
    os.set_blocking(fd, False)
    while left > 0:
        try:
            data = os.read(fd, min(left, _CHUNK))
        except BlockingIOError:
            break
        if not data:
            break
        out += data
        left -= len(data)
