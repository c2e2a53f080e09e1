"""A tournament's agent cannot spoil a sibling's measurement through its processes
(docs/integrity.md, "4b").

Without the sandbox an agent sees every process of the user in /proc: a sibling candidate's
benchmark, or the incumbent's, measured while it works. One that stopped them (SIGSTOP, 1.5 s
each) had the honest candidate measured at 1 s where it takes none, discarded, nothing
recorded as tampering (a renice, a pinned CPU, a kill do the same). Every measurement of a
tournament without the sandbox now runs while no agent works; in the sandbox no agent sees
another's processes (a pid namespace of its own).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project

AGENT = Path(__file__).parent / "agents" / "stopper_agent.py"
BENCH = """import subprocess, sys, time
started = time.monotonic()
subprocess.run([sys.executable, "src/work.py"], check=True)
print(f"METRIC seconds={int(time.monotonic() - started)}")
"""


@pytest.mark.slow
def test_a_sibling_stopping_the_benchmark_does_not_spoil_its_measurement(
    tmp_repo: TmpRepo,
) -> None:
    value_project(
        tmp_repo,
        f"{sys.executable} {AGENT}",
        BENCH,
        {"src/work.py": "import time\ntime.sleep(1.1)\n"},
        timeouts=True,
    )
    res = tmp_repo.cli("run", "--run", "t", "-n", "1", "-k", "2", "-j", "2")
    assert res.returncode == 0, res.stderr
    rows = {r["description"].split(" (")[0]: r for r in run_rows(tmp_repo, "t")}
    assert rows["baseline"]["metric"]["value"] == 1, rows
    assert rows["honest"]["metric"]["value"] == 0, rows["honest"]
    assert rows["honest"]["status"] == "keep", rows["honest"]
    assert rows["stopper"]["description"] == "stopper (0 stopped)", rows["stopper"]
