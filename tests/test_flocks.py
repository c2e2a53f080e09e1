"""Whether a lock file is held, asked without taking it (util/flocks.py)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock

from gitimprove.util import flocks

_HOLD = """
import sys
from filelock import FileLock
with FileLock(sys.argv[1], timeout=10):
    print("held", flush=True)
    sys.stdin.read()
"""

# a run taking its lock with no wait, again and again: a probe that takes the lock for an
# instant makes one of these fail
_TAKER = """
import sys
from filelock import FileLock, Timeout
lost = 0
for _ in range(int(sys.argv[2])):
    try:
        with FileLock(sys.argv[1], timeout=0):
            pass
    except Timeout:
        lost += 1
print(lost)
"""


@contextlib.contextmanager
def held_elsewhere(path: Path) -> Iterator[None]:
    """`path` locked by another process (a run's, a hook's) until the context ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield
    finally:
        holder.communicate("", timeout=30)


def test_a_lock_held_by_another_process_is_held_and_ones_own_is_not_anothers(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run-p.lock"
    path.touch()
    assert not flocks.held([path, tmp_path / "absent.lock"])
    with held_elsewhere(path):
        assert flocks.held([path]) and flocks.held([path], others_only=True)
    assert not flocks.held([path])
    mine = tmp_path / "run-q.lock"
    with FileLock(str(mine), timeout=1):
        assert flocks.held([mine])
        assert not flocks.held([mine], others_only=True)


def test_asking_never_takes_the_lock_from_a_run_starting_then(tmp_path: Path) -> None:
    path = tmp_path / "run-p.lock"
    path.touch()
    taker = subprocess.Popen(
        [sys.executable, "-c", _TAKER, str(path), "3000"], stdout=subprocess.PIPE, text=True
    )
    asked = 0
    while taker.poll() is None:
        flocks.held([path])
        asked += 1
    out, _ = taker.communicate(timeout=60)
    assert asked > 50
    assert out.strip() == "0"  # the taker never found its lock taken
