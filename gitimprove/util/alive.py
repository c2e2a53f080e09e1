"""Whether a process id names a live process.

`os.kill(pid, 0)` raises `ProcessLookupError` when no such process exists and `PermissionError`
(EPERM) when it exists but belongs to another user. EPERM therefore means alive: in a
group-shared repository another user's live run must never be taken for a dead one.

A thread's id passes `kill(tid, 0)` too (and `/proc/<tid>` exists): where `/proc` tells, a pid
counts only when it names a process (its `Tgid` is itself), so a `.pid` file naming a thread
of a live process is not taken for a live one.
"""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """True when `pid` names a process that exists, whoever owns it."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return _is_process(pid)


def _is_process(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"Tgid:"):
                    return int(line.split()[1]) == pid
    except FileNotFoundError:
        return not os.path.isdir("/proc/self")  # no /proc (macOS): kill(pid, 0) decides
    except (OSError, ValueError):
        return True
    return True
