"""Survivors that killed their supervisor and the harness, with no token (util/marks.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitimprove.agents.sandbox import supervised
from gitimprove.util import marks, reaper
from tests.conftest import TmpRepo
from tests.test_integrity import (
    assert_sound,
    hostile_project,
    start,
    survivors,
    wait_for,
)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


HIDE = """
import ctypes, os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
        os.execve("/bin/sleep", ["/bin/sleep", "300"], ENV)  # env -i, or a forged token
    os._exit(0)
time.sleep(0.3)
print(os.getpid(), flush=True)
time.sleep(300)
"""


@pytest.mark.slow
@pytest.mark.survivors
@pytest.mark.parametrize(
    "env", [{}, {"GITIMPROVE_TOKEN": "gi1:k:r:1:x"}, {"GITIMPROVE_TOKEN": "gi1:k:r:{me}:x"}]
)
def test_a_supervised_process_and_all_it_starts_carry_the_mark(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """The mark survives fork, setsid, exec with an empty environment (or a token forged to
    name a live process: init, or this test, which runs no gitimprove harness) and a
    non-dumpable process; while the supervisor lives nothing is an orphan; once it is killed
    (-9) the daemon is one, found from /proc alone, and nothing unmarked (this process) is."""
    env = {k: v.replace("{me}", str(os.getpid())) for k, v in env.items()}
    code = f"ENV = {env!r}\n" + HIDE
    argv = supervised([sys.executable, "-c", code], shell=False)
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None
        agent = int(p.stdout.readline())
        table = reaper._all()
        sleepers = [
            q.pid
            for q in table
            if Path(f"/proc/{q.pid}/cmdline").exists()
            and Path(f"/proc/{q.pid}/cmdline").read_bytes() == b"/bin/sleep\x00300\x00"
            and q.started >= reaper._stat(p.pid).started  # type: ignore[union-attr]
        ]
        assert len(sleepers) == 1
        daemon = sleepers[0]
        assert reaper.token_of(daemon) == env.get("GITIMPROVE_TOKEN")  # none, or a forged one
        assert marks.orphans_in(reaper._all()) & {agent, daemon} == set()
        os.kill(p.pid, signal.SIGKILL)  # the supervisor
        p.wait()
        deadline = time.monotonic() + 5
        while {agent, daemon} - set(reaper.marked_orphans()) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert {agent, daemon} <= set(reaper.marked_orphans())
        assert os.getpid() not in reaper.marked_orphans()
        killed = reaper.kill_survivors("no-repository-key")
        assert {agent, daemon} <= set(killed)
        assert not _alive(agent) and not _alive(daemon)
    finally:
        p.kill()
        p.wait()
        if p.stdout is not None:
            p.stdout.close()


@pytest.mark.slow
@pytest.mark.survivors
def test_a_daemon_that_killed_its_supervisor_and_the_harness_dies_on_resume(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """The agent starts a `setsid` + `env -i` daemon that makes itself non-dumpable, kills its
    supervisor, then the harness (-9): nothing kills the daemon then. `run --resume` finds
    it by its mark, reports and kills it before anything else, and the run goes on."""
    pidfile, daemonfile = tmp_path / "agent.pid", tmp_path / "daemon.pid"
    plan = hostile_project(
        tmp_repo,
        {"1": "kill-supervisor:95", "pidfile": str(pidfile), "daemonfile": str(daemonfile)},
        "none",
    )
    p = start(tmp_repo, "--run", "h", "-n", "1", "--json")
    out, err = p.communicate(timeout=120)
    assert p.returncode == -signal.SIGKILL, out + err
    daemon, agent = wait_for(daemonfile), wait_for(pidfile)
    time.sleep(0.3)
    assert _alive(daemon), "the daemon did not outlive the harness (nothing to test)"
    doctor = tmp_repo.cli("doctor")
    assert str(daemon) in doctor.stdout + doctor.stderr
    plan_file = tmp_repo.path.parent / "plan.json"
    plan_file.write_text(json.dumps({**plan, "1": "set:95"}))
    res = tmp_repo.cli("run", "--resume", "--json")
    assert res.returncode == 0, res.stderr
    first = json.loads(res.stdout.splitlines()[0])
    assert first["event"] == "start" and {daemon, agent} <= set(first["killed"])
    assert not _alive(daemon) and not _alive(agent)
    rows = assert_sound(tmp_repo, "h", plan["mark"])
    assert [r["status"] for r in rows] == ["baseline", "keep"]
    assert survivors(plan["mark"], tmp_repo) == []
