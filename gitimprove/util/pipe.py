"""A command's stdout through a pipe, read until the command exits and not after.

A metric's output must be what the benchmark printed. A temporary file can be reopened
through `/proc/<pid>/fd/1` and written at any offset (`pwrite`), so measured code could put
a line after the benchmark's last one; a pipe is a stream: bytes only ever follow. What is
in the pipe when the command's process group has been killed is the output; anything a
process that escaped the group writes later is never read."""

from __future__ import annotations

import fcntl
import os
import select
import termios
import time
from collections.abc import Callable

_CHUNK = 65536


def read_until_exit(
    fd: int, pid: int, done: Callable[[], bool], timeout: float | None, out: bytearray
) -> bool:
    """Read `fd` into `out` until the process `pid` exits (True) or `timeout` passes (False)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        pidfd: int | None = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    watch = [fd] if pidfd is None else [fd, pidfd]
    open_ = True
    try:
        while True:
            if done():
                return True
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            step = 0.05 if pidfd is None or not open_ else left
            ready, _, _ = select.select(watch, [], [], step)
            if fd in ready:
                data = os.read(fd, _CHUNK)
                if data:
                    out += data
                else:  # every writer closed it: wait for the exit alone
                    open_ = False
                    watch = [pidfd] if pidfd is not None else []
    finally:
        if pidfd is not None:
            os.close(pidfd)


def drain(fd: int, out: bytearray) -> None:
    """Add to `out` what is in the pipe now (the writers are dead), never waiting for more."""
    pending = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, pending)
    left = int.from_bytes(pending, "little")
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
