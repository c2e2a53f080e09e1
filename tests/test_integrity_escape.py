"""Escapes the first defences missed, tried by hostile agent executables (docs/integrity.md).

- A daemon with a scrubbed environment (`env -i`, double fork, `setsid`) survives a `kill -9`
  of the harness unless something that outlives the harness holds it: the per-attempt
  supervisor (no sandbox) or bubblewrap's pid namespace (sandbox).
"""

from __future__ import annotations

import json
import secrets
import signal
import sys
import time
from pathlib import Path

import pytest

from gitimprove.agents.sandbox import supervised
from gitimprove.util import proc
from tests.conftest import TmpRepo
from tests.test_integrity import (
    assert_sound,
    hostile_project,
    needs_bwrap,
    start,
    survivors,
    wait_for,
)


@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_a_scrubbed_daemon_dies_with_a_killed_harness(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    """kill -9 of the harness during the agent call: the daemon (no token, not in the agent's
    group or session, reparented away from the agent) is gone without any help from a later
    command, and never writes into the resumed attempt's workspace."""
    pidfile = tmp_repo.path.parent / "agent.pid"
    daemonfile = tmp_repo.path.parent / "daemon.pid"
    plan = hostile_project(
        tmp_repo,
        {"1": "orphan-daemon:95", "pidfile": str(pidfile), "daemonfile": str(daemonfile)},
        sandbox,
    )
    p = start(tmp_repo, "--run", "h", "-n", "1", "--json")
    wait_for(pidfile)
    wait_for(daemonfile)
    assert survivors(plan["mark"], tmp_repo), "the daemon did not start"
    p.send_signal(signal.SIGKILL)
    p.communicate()
    deadline = time.monotonic() + 10
    while survivors(plan["mark"], tmp_repo) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert survivors(plan["mark"], tmp_repo) == [], "the daemon outlived the harness"
    plan_file = tmp_repo.path.parent / "plan.json"
    plan_file.write_text(json.dumps({**plan, "1": "set:95"}))
    res = tmp_repo.cli("run", "--resume", "--json")
    assert res.returncode == 0, res.stderr
    rows = assert_sound(tmp_repo, "h", plan["mark"])
    assert [r["status"] for r in rows] == ["baseline", "keep"]
    assert rows[1]["metric"]["value"] == 95  # the daemon's 1 never reached the workspace


DAEMON = """import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execve(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)", "{mark}"],
                  {{"PATH": "/usr/bin:/bin"}})
    os._exit(0)
time.sleep(0.2)
sys.exit({code})
"""


def _alive(mark: str) -> list[int]:
    found = []
    for pid in Path("/proc").iterdir():
        try:
            cmd = (pid / "cmdline").read_bytes()
            state = (pid / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if mark.encode() in cmd and state != "Z":
            found.append(int(pid.name))
    return found


@pytest.mark.parametrize("code", [0, 3])
def test_the_supervisor_kills_the_tree_when_the_agent_exits(tmp_path: Path, code: int) -> None:
    """The agent's exit status comes through; its scrubbed daemon is dead when it returns."""
    mark = f"supervised-{secrets.token_hex(6)}"
    script = tmp_path / "agent.py"
    script.write_text(DAEMON.format(mark=mark, code=code))
    res = proc.run(supervised([sys.executable, str(script)], shell=False), timeout=30)
    assert res.returncode == code, res.stderr
    assert _alive(mark) == []


def test_the_supervisor_passes_a_signal_death_and_a_missing_command_through(
    tmp_path: Path,
) -> None:
    res = proc.run(supervised("kill -TERM $$", shell=True), timeout=30)
    assert res.returncode == -signal.SIGTERM
    res = proc.run(supervised([str(tmp_path / "missing")], shell=False), timeout=30)
    assert res.returncode == 127 and "cannot run" in res.stderr
