"""Whether a process holds a lock file, without taking it.

Trying the lock (`flock(LOCK_EX | LOCK_NB)`, released at once) is a probe another process can
lose: a run that takes its lock with no wait (`timeout=0`) just then is told its run is
already under way. `/proc/locks` lists every `flock` held, by inode and holder, and reading it
disturbs nothing; the probe is the fallback where there is no `/proc`."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterable
from pathlib import Path


def held(paths: Iterable[Path], *, others_only: bool = False) -> bool:
    """Whether a process holds any of the lock files `paths` now; `others_only`: a process
    other than this one (its own run's lock is not another run's)."""
    inodes: dict[int, Path] = {}
    for path in paths:
        try:
            inodes[os.lstat(path).st_ino] = path
        except OSError:
            continue
    if not inodes:
        return False
    try:
        with open("/proc/locks", "rb") as fh:
            table = fh.read().decode("ascii", "replace")
    except OSError:
        return any(_probe(p) for p in inodes.values())
    me = str(os.getpid())
    for line in table.splitlines():
        # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:5678 0 EOF" ("1: -> FLOCK ..." waits for it)
        fields = line.split()
        if len(fields) < 6 or fields[1] != "FLOCK" or (others_only and fields[4] == me):
            continue
        try:
            if int(fields[5].rsplit(":", 1)[-1]) in inodes:
                return True
        except ValueError:
            continue
    return False


def run_held(improve_dir: Path, *, others_only: bool = False) -> bool:
    """Whether a run of the repository whose gitimprove folder is `improve_dir` holds its
    lock (`locks/run-<name>.lock`) now; `others_only` as for `held`."""
    return held((improve_dir / "locks").glob("run-*.lock"), others_only=others_only)


def _probe(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # releases the lock if it was taken
    return False
