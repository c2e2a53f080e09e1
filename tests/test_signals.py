"""SIGTERM and SIGHUP behave like Ctrl-C in init, measure, run and demo: every child process
is killed (whole process groups), every workspace is removed, and the exit code is 128 + the
signal. Each case runs the real CLI in a subprocess with a real slow metric or agent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from tests.conftest import PY, TmpRepo, cli_popen, wait_for
from tests.loop_helpers import make_project

SLOW_METRIC = """import os, pathlib, time
pathlib.Path(os.environ["METRIC_PID"]).write_text(str(os.getpid()))
time.sleep(120)
print("METRIC x=1")
"""


def survivors(token: str) -> list[int]:
    """Live processes (zombies are dead) whose environment carries `token`: every process
    the CLI started inherits it."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                if token.encode() not in fh.read():
                    continue
            with open(f"/proc/{entry}/status") as fh:
                state = fh.read().split("State:", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            found.append(int(entry))
    return found


def stop_and_check(
    p: subprocess.Popen[str], sig: signal.Signals, token: str, work: Path
) -> tuple[str, str]:
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 128 + sig, (p.returncode, out, err)
    assert "Traceback" not in err and "internal error" not in err, err
    assert f"interrupted ({sig.name})" in err
    deadline = time.monotonic() + 5
    while survivors(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert survivors(token) == [], "a child process outlived the command"
    left = sorted(p.name for p in work.iterdir()) if work.exists() else []
    assert left == [], f"left in {work}: {left}"
    return out, err


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to find survivors")
def test_sigterm_during_init_kills_the_metric_and_writes_nothing(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    tmp_repo.commit("initial", {"slow.py": SLOW_METRIC})
    token = uuid.uuid4().hex
    pid_file = tmp_path / "metric.pid"
    p = cli_popen(
        tmp_repo.path,
        "init",
        "--metric",
        f"{PY} slow.py",
        "--yes",
        env={"METRIC_PID": str(pid_file), "SIGNAL_TOKEN": token},
    )
    wait_for(pid_file)
    stop_and_check(p, signal.SIGTERM, token, tmp_repo.path / ".git" / "improve" / "work")
    assert not (tmp_repo.path / ".gitimprove.toml").exists()
    assert tmp_repo.git("for-each-ref", "refs/notes/") == ""


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to find survivors")
def test_sighup_during_measure(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    make_project(tmp_repo, {}, guard=False)
    tmp_repo.commit("experiment(value): lower", {"src/value.txt": "90\n"})
    flag = tmp_path / "slow"
    flag.write_text("")
    token = uuid.uuid4().hex
    p = cli_popen(
        tmp_repo.path, "measure", env={"SLOW_METRIC_FLAG": str(flag), "SIGNAL_TOKEN": token}
    )
    wait_for(Path(f"{flag}.running"))
    stop_and_check(p, signal.SIGHUP, token, tmp_repo.path / ".git" / "improve" / "work")
    assert tmp_repo.git("notes", "--ref=improve", "list") == ""  # nothing half-measured


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to find survivors")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_signal_during_a_tournament_stops_every_agent(
    tmp_repo: TmpRepo, tmp_path: Path, sig: signal.Signals
) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    make_project(tmp_repo, {"default": "sleep", "markers": str(markers)}, guard=False)
    tmp_repo.git("config", "improve.agent.timeout", "10m")
    token = uuid.uuid4().hex
    p = cli_popen(
        tmp_repo.path, "run", "--run", "sig", "-n", "3", "-k", "2", env={"SIGNAL_TOKEN": token}
    )
    wait_for(markers / "agent-1.0")
    wait_for(markers / "agent-1.1")
    stop_and_check(p, sig, token, tmp_repo.path / ".git" / "improve" / "work")
    # no attempt was recorded as a crash because its agent was killed under it
    notes = tmp_repo.git("log", "--notes=improve", "--format=%N", "refs/improve/archive")
    statuses = [json.loads(ln).get("status") for ln in notes.splitlines() if ln.strip()]
    assert statuses == ["baseline"]
    assert "stop" not in tmp_repo.git("for-each-ref", "refs/improve/runs/sig/")  # resumable


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to find survivors")
def test_sigterm_during_demo(tmp_path: Path) -> None:
    token = uuid.uuid4().hex
    p = cli_popen(tmp_path, "demo", "d", "-n", "30", env={"SIGNAL_TOKEN": token})
    work = tmp_path / "d" / ".git" / "improve" / "work"
    deadline = time.monotonic() + 60
    while not (work.exists() and any(work.iterdir())):
        assert time.monotonic() < deadline and p.poll() is None, "the demo never started a round"
        time.sleep(0.02)
    stop_and_check(p, signal.SIGTERM, token, work)


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to find survivors")
def test_sigterm_before_the_demo_begins_leaves_no_half_made_folder(tmp_path: Path) -> None:
    token = uuid.uuid4().hex
    p = cli_popen(tmp_path, "demo", "d", "-n", "30", env={"SIGNAL_TOKEN": token})
    wait_for(tmp_path / "d" / ".git" / "improve")  # created, measuring the baseline
    stop_and_check(p, signal.SIGTERM, token, tmp_path / "d" / ".git" / "improve" / "work")
    began = (tmp_path / "d" / ".git" / "refs" / "heads" / "improve" / "demo").exists()
    assert began or not (tmp_path / "d").exists()
    if not began:  # a new demo in the same folder starts, as if the first never was
        p = cli_popen(tmp_path, "demo", "d", "-n", "1", env={})
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err


def test_handlers_come_back_after_main() -> None:
    from gitimprove import cli
    from gitimprove.util import proc

    before = {s: signal.getsignal(s) for s in proc.SIGNALS}
    assert cli.main(["--version"]) == 0
    assert {s: signal.getsignal(s) for s in proc.SIGNALS} == before
    assert proc.stopping() is None


def test_signals_of_one_day_and_host_never_share_an_id() -> None:
    """Signals are told apart by id (`signal list`, events): 10,000 made the same second on
    one host all differ (with 24 random bits, about 3 pairs of them would share one)."""
    from gitimprove.memory import capture

    ids = {
        capture.make_signal(
            type_="failure", content="x", session="s", hook="cli", now="2026-11-24T08:00:00Z"
        )["id"]
        for _ in range(10_000)
    }
    assert len(ids) == 10_000


LAST_STEP = """import os, signal, sys, time
from gitimprove.util import proc

with proc.termination_signals():
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    except KeyboardInterrupt:
        with proc.last_step():
            print(proc.run(["echo", "ran"]).stdout.strip(), flush=True)
            try:
                proc.run(["sleep", "30"])
            except KeyboardInterrupt as exc:
                print(f"cut short by {exc}", flush=True)
        try:
            proc.run(["echo", "after"])
        except KeyboardInterrupt:
            print("unwinding again", flush=True)
"""


def test_a_last_step_of_the_unwinding_runs_commands_until_a_second_signal() -> None:
    """After Ctrl-C nothing starts (`Terminated`), but in a `last_step` (the comparison with
    the watch's snapshot on the way out of an agent call) the harness's own commands run; a
    second Ctrl-C kills the one running and ends the step at once."""
    p = subprocess.Popen(
        [PY, "-c", LAST_STEP], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "ran"
    time.sleep(0.3)  # the sleep has started
    started = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=20)
    assert time.monotonic() - started < 5, "the second Ctrl-C did not end the step at once"
    assert out.splitlines() == ["cut short by signal 2", "unwinding again"], (out, err)
