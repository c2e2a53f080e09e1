"""Waiting for a child: exact, and with any number of descriptors open (a long run or a
tournament holds many; `select` cannot watch one numbered 1024 or more)."""

from __future__ import annotations

import os
import resource
import time

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
