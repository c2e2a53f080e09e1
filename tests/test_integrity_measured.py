"""The measured code is hostile too: the metric and the guard run the candidate's code.

The agent (tests/agents/hostile_code_agent.py) writes code that attacks when the benchmark
runs it. In the sandbox nothing it attempts lands: the user's repository and home folder are
as before, no process of it outlives the measurement, and the forged line never counts.
Without the sandbox a write to the user's repository during a measurement stops the run,
naming what changed.
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import BENCH, MOD, needs_bwrap, survivors, user_state

AGENT = Path(__file__).parent / "agents" / "hostile_code_agent.py"


def code_project(repo: TmpRepo, attacks: str, sandbox: str) -> str:
    mark = f"hostile-{secrets.token_hex(6)}"
    config = f"""[metric]
command = "{sys.executable} bench.py"
timeout = "20s"

[guard]
command = "{sys.executable} -c 'import sys; sys.path.insert(0, \\"src\\"); import mod; mod.score()'"

[scope]
mutable = ["src/**"]
sealed = ["bench.py"]

[agent]
name = "command"
command = "{sys.executable} {AGENT} {attacks} {mark}"
timeout = "8s"
sandbox = "{sandbox}"
"""
    files = {"bench.py": BENCH, "src/mod.py": MOD, "src/value.txt": "100\n"}
    repo.commit("project", {**files, "README.txt": "readme\n", ".gitimprove.toml": config})
    return mark


@pytest.mark.slow
@needs_bwrap
def test_measured_code_in_the_sandbox_reaches_nothing(tmp_repo: TmpRepo) -> None:
    mark = code_project(tmp_repo, "repo,home,daemon", "bwrap")
    before = user_state(tmp_repo)
    res = tmp_repo.cli("run", "--run", "m", "-n", "2")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "left behind" not in res.stdout  # the sandbox probe's exited helper is no survivor
    assert user_state(tmp_repo) == before
    assert mark not in tmp_repo.git("config", "--list")
    home = Path(os.environ["HOME"])  # the tests' private home
    assert [p for p in home.rglob("usercustomize.py") if mark in p.read_text()] == []
    rows = run_rows(tmp_repo, "m")
    assert [r["status"] for r in rows] == ["baseline", "keep", "no-op"]
    assert rows[1]["metric"]["value"] == 90  # never the forged 1
    assert survivors(mark, tmp_repo) == []


@pytest.mark.slow
def test_measured_code_writing_the_repository_stops_the_run(tmp_repo: TmpRepo) -> None:
    mark = code_project(tmp_repo, "repo", "none")
    res = tmp_repo.cli("run", "--run", "m", "-n", "2")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "run m stopped: your repository changed during the metric run" in res.stderr
    for named in ("hooks/post-checkout", f"refs/heads/{mark}", "README.txt"):
        assert named in res.stderr
    rows = run_rows(tmp_repo, "m")
    assert [r["status"] for r in rows] == ["baseline", "tampered"]
    assert tmp_repo.git("rev-parse", "improve/m") == tmp_repo.git(
        "rev-parse", "refs/improve/runs/m/base"
    )


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_a_leftover_of_the_measurement_is_dead_before_its_output_is_read(
    tmp_repo: TmpRepo, sandbox: str
) -> None:
    mark = code_project(tmp_repo, "daemon", sandbox)
    res = tmp_repo.cli("run", "--run", "m", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    assert survivors(mark, tmp_repo) == []
    assert run_rows(tmp_repo, "m")[1]["status"] in ("keep", "metric-error")


@pytest.mark.slow
def test_a_leftover_that_stops_the_harness_never_wins_the_output(tmp_repo: TmpRepo) -> None:
    """Without the sandbox the measured code's daemon stops the harness (SIGSTOP) before the
    benchmark ends, adds a better line to the output it inherited once the benchmark is gone,
    and lets the harness go on: the harness knows it was stopped (SIGCONT), so that output is
    never read as a result; the attempt is `tampered`, never kept."""
    mark = code_project(tmp_repo, "stop", "none")
    seen = []
    for n in range(3):  # on a loaded machine the metric can time out before the daemon acts
        res = tmp_repo.cli("run", "--run", f"m{n}", "-n", "1")
        assert res.returncode == 0, res.stdout + res.stderr
        row = run_rows(tmp_repo, f"m{n}")[1]
        assert (row.get("metric") or {}).get("value") != 1, row
        assert survivors(mark, tmp_repo) == []
        seen.append((row["status"], row["reason"]))
        if row["status"] != "timeout":
            break
    assert seen[-1][0] == "tampered" and "stopped" in seen[-1][1], seen


@pytest.mark.slow
@needs_bwrap
def test_a_grandchild_waiting_for_the_metric_command_never_adds_a_line(
    tmp_repo: TmpRepo,
) -> None:
    """The measured code double-forks a grandchild in its own session that waits (pidfd) for
    the metric command to exit, then writes a better `METRIC` line to the stdout it inherited:
    in the sandbox the command is its pid namespace's init, so the grandchild dies with it
    before its exit is seen; the forged line never counts, in any of several attempts."""
    mark = code_project(tmp_repo, "pidfd", "bwrap")
    res = tmp_repo.cli("run", "--run", "m", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "m")
    assert rows[1]["status"] in ("keep", "tampered"), rows[1]
    assert (rows[1].get("metric") or {}).get("value") != 1, rows[1]
    if rows[1]["status"] == "keep":
        assert rows[1]["metric"]["value"] == 90
    assert survivors(mark, tmp_repo) == []


def test_output_after_the_command_exited_is_not_output(tmp_path: Path) -> None:
    """`proc.run` reads what is in the pipe when the command exits; what a grandchild in its
    own session (waiting for that exit) writes while the harness kills what the run left is
    never read, only counted (`late`), and makes the metric `tampered`."""
    import time

    from gitimprove.loop.metrics import run_metric
    from gitimprove.util import proc

    late = tmp_path / "late.py"
    late.write_text(
        "import os, select, sys, time\n"
        "leader = os.getppid()\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        fd = os.pidfd_open(leader)\n"
        "        p = select.poll(); p.register(fd, select.POLLIN); p.poll()\n"
        "        t = time.monotonic()\n"
        "        while not os.path.exists('go') and time.monotonic() - t < 30: time.sleep(0.01)\n"
        "        os.write(1, b'METRIC score=0\\n' * 50)\n"
        "        open('written', 'w').close()\n"
        "        os._exit(0)\n"
        "    os._exit(0)\n"
        "os.wait()\n"
        "print('METRIC score=7', flush=True)\n"
    )
    command = f"{sys.executable} {late}; sleep 0.05"  # the shell is the command's own process

    def reap() -> None:  # the harness's sweep of what the run left takes a while: here,
        # until the grandchild, told to go only now, has written (a loaded machine may wake
        # the harness late: the grandchild must not write before the pipes were read)
        go, written = tmp_path / "go", tmp_path / "written"
        go.touch()
        deadline = time.monotonic() + 20
        while not written.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        go.unlink()
        written.unlink(missing_ok=True)

    res = proc.run(command, shell=True, cwd=tmp_path, timeout=20, limit=1 << 20,
                   before_read=reap)  # fmt: skip
    assert res.stdout.splitlines() == ["METRIC score=7"], res.stdout
    assert res.late == len("METRIC score=0\n") * 50
    got = run_metric(command, tmp_path, timeout=20, limit=1 << 20, before_read=reap)
    assert (got.status, got.value) == ("tampered", None), got
    assert "after the benchmark exited" in (got.error or "")
    quiet = proc.run(f"{sys.executable} -c 'print(1)'", shell=True, timeout=20, limit=1 << 20)
    assert quiet.late == 0 and quiet.stdout == "1\n"
