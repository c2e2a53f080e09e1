"""Whether the system clock was set since a moment: what keeps a ctime trustworthy.

A file's ctime is set by the kernel to the current time on every change, and no call sets it
to a chosen value; the checks that a folder is as it was (git/checkout.py) and that a file
under `.git/improve/` is as this process left it (util/written.py) rest on that. A process
holding `CAP_SYS_TIME` (root without the sandbox) can set the system clock back to the ctime
a file had, rewrite the file (and put its mtime back), and set the clock forward again: the
file's whole `lstat` is then as before. `Watch` sees any such step: a Linux timer armed with
`TFD_TIMER_CANCEL_ON_SET` is cancelled by every discontinuous change of the realtime clock
(`clock_settime`, `settimeofday`, `adjtimex` with `ADJ_SETOFFSET`), whoever makes it; a slewed
clock never goes back, so it cannot give a file a past ctime.

Elsewhere (macOS, no `timerfd`) a watch cannot tell (`armed` is False, `was_set` False).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import sys
import threading

__all__ = ["Watch"]

_CLOCK_REALTIME = 0
_TFD_TIMER_ABSTIME = 1
_TFD_TIMER_CANCEL_ON_SET = 2


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


_libc: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL | None:
    global _libc
    if _libc is None and sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            lib.timerfd_create, lib.timerfd_settime  # noqa: B018 (present, or AttributeError)
            _libc = lib
    return _libc


def _arm() -> int:
    """A timer descriptor cancelled by a clock step, or -1 where there is none."""
    lib = _lib()
    if lib is None:
        return -1
    fd = int(lib.timerfd_create(_CLOCK_REALTIME, os.O_CLOEXEC | os.O_NONBLOCK))
    if fd < 0:
        return -1
    # an absolute expiry far in the future: the timer never fires, it can only be cancelled
    spec = _Itimerspec(_Timespec(0, 0), _Timespec(1 << 40, 0))
    flags = _TFD_TIMER_ABSTIME | _TFD_TIMER_CANCEL_ON_SET
    if int(lib.timerfd_settime(fd, flags, ctypes.byref(spec), None)) != 0:
        os.close(fd)
        return -1
    return fd


class Watch:
    """Armed when made; `was_set` tells (and keeps telling) whether the system clock was set
    since. `close` frees the descriptor (a closed watch says the clock was set: it cannot
    vouch for anything any more)."""

    def __init__(self) -> None:
        self._fd = _arm()
        self.armed = self._fd >= 0
        self._set = False
        self._lock = threading.Lock()

    def was_set(self) -> bool:
        with self._lock:
            if self._set or not self.armed:
                return self._set
            if self._fd < 0:
                return True
            try:
                os.read(self._fd, 8)
            except BlockingIOError:
                return False
            except OSError as exc:
                if exc.errno != errno.ECANCELED:
                    return False
            self._set = True  # cancelled (or, impossibly, expired): never trusted again
            return True

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
