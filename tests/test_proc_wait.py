"""Waiting for a child: exact, and with any number of descriptors open (a long run or a
tournament holds many; `select` cannot watch one numbered 1024 or more)."""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path

import pytest

from gitimprove.util import proc


def test_waits_and_times_out_with_descriptors_past_1024() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip("cannot open 1,100 descriptors here")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    fds = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        assert max(fds) >= 1024
        start = time.monotonic()
        done = proc.run(["sleep", "0.05"], timeout=20)
        assert done.returncode == 0 and not done.timed_out
        assert time.monotonic() - start < 10
        late = proc.run(["sleep", "5"], timeout=0.3)
        assert late.timed_out
    finally:
        for fd in fds:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_detached_child_runs_in_its_own_session_and_is_reaped(tmp_path: Path) -> None:
    import subprocess
    import sys

    log = tmp_path / "child.log"
    code = "import os; print(os.getsid(0) == os.getpid(), os.getcwd())"
    # started and not waited for: no ResourceWarning (an error under this suite's filters)
    proc.spawn_detached([sys.executable, "-c", code], cwd=tmp_path, log_path=log)
    deadline = time.monotonic() + 20
    while not log.read_text().strip() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert log.read_text().split() == ["True", str(tmp_path)]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        subprocess.run(["true"])  # a child's start reaps the ones that ended
        if all(p.args[0] != sys.executable for p in subprocess._active):  # type: ignore[attr-defined]
            break
        time.sleep(0.02)
    assert all(p.args[0] != sys.executable for p in subprocess._active)  # type: ignore[attr-defined]
