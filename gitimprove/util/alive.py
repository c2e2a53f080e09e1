"""Whether a process id names a live process.

`os.kill(pid, 0)` raises `ProcessLookupError` when no such process exists and `PermissionError`
(EPERM) when it exists but belongs to another user. EPERM therefore means alive: in a
group-shared repository another user's live run must never be taken for a dead one.
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
    return True
