"""A run's life through the CLI: it exists only once it has started for real, resumes by start
time, refuses what it cannot honour, and `doctor --repair` removes phantoms of older versions."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import AGENT, make_project, run_rows


def improve_refs(repo: TmpRepo) -> list[str]:
    out = repo.git("for-each-ref", "--format=%(refname)", "refs/improve/runs", "refs/heads/improve")
    return out.split()


def test_run_before_the_config_is_committed_leaves_nothing(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("code", {"bench.py": "print(1)\n"})
    (tmp_repo.path / ".gitimprove.toml").write_text(
        f'[metric]\ncommand = "{sys.executable} bench.py"\n[agent]\nname = "scripted"\n'
    )
    res = tmp_repo.cli("run", "-n", "1")
    assert res.returncode == 1 and "is not committed" in res.stderr
    assert improve_refs(tmp_repo) == []
    assert "runs: no phantom runs" in tmp_repo.cli("doctor").stdout
    tmp_repo.git("add", ".gitimprove.toml")
    tmp_repo.git("commit", "-qm", "config")
    res = tmp_repo.cli("run", "-n", "1")
    assert res.returncode == 0, res.stderr
    assert "starting run" in res.stdout  # a new run, not a resumed phantom


@pytest.mark.slow
@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("{AGENT}", "no-such-agent-xyz", "not on PATH"),
        ("{AGENT}", "/no/such/dir/agent-xyz {prompt_file}", "agent-xyz` does not exist"),
        ("{AGENT}", "{CFG} {prompt_file}", ".gitimprove.toml` is not executable"),
        ("[metric]\n", '[metric]\ndirection = "sideways"\n', "metric.direction"),
        ('[guard]\ncommand = ""', '[guard]\ncommand = "no-such-guard-xyz"', "no-such-guard-xyz"),
        ('timeout = "20s"', 'timeout = "nan"', "metric.timeout"),
    ],
)
def test_a_run_that_cannot_start_writes_no_ref(
    tmp_repo: TmpRepo, old: str, new: str, message: str
) -> None:
    make_project(tmp_repo, {"default": "set:90"}, guard=False)
    cfg = tmp_repo.path / ".gitimprove.toml"
    old = old.replace("{AGENT}", f"{sys.executable} {AGENT}")
    new = new.replace("{CFG}", str(cfg))
    assert old in cfg.read_text()
    cfg.write_text(cfg.read_text().replace(old, new, 1))
    tmp_repo.git("commit", "-qam", "broken config")
    res = tmp_repo.cli("run", "-n", "2")
    assert res.returncode == 1, res.stdout + res.stderr
    assert message in res.stderr and "Traceback" not in res.stderr
    assert improve_refs(tmp_repo) == []
    assert not list((tmp_repo.path / ".git" / "improve").glob("locks/run-*.lock"))
    if "starting run" in res.stdout:  # a run named at start says it never began
        assert "was not started" in res.stderr
    assert tmp_repo.git("notes", "--ref=improve", "list", check=False) == ""
    assert not list((tmp_repo.path / ".git" / "improve" / "work").glob("*"))
    # and a plain run after the fix starts a new run instead of resuming a phantom
    cfg.write_text(cfg.read_text().replace(new, old, 1))
    tmp_repo.git("commit", "-qam", "fixed config")
    res = tmp_repo.cli("run", "-n", "1")
    assert res.returncode == 0, res.stderr
    assert "starting run" in res.stdout


def test_a_missing_guard_fails_before_any_agent_call(tmp_repo: TmpRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    markers = tmp_path / "markers"
    markers.mkdir()
    make_project(tmp_repo, {"default": "set:90", "markers": str(markers)})
    cfg = tmp_repo.path / ".gitimprove.toml"
    cfg.write_text(cfg.read_text().replace(f"{sys.executable} guard.py", "no-such-guard-xyz -q"))
    tmp_repo.git("commit", "-qam", "guard that does not exist")
    res = tmp_repo.cli("run", "-n", "2")
    assert res.returncode == 1 and "no-such-guard-xyz" in res.stderr
    assert "fails on the run's base" in res.stderr and "127" in res.stderr
    assert not (markers / "calls.log").exists()  # no agent was called
    assert improve_refs(tmp_repo) == []
    # init runs it on the baseline too, and writes nothing when it fails
    res = tmp_repo.cli("init", "--yes")
    assert res.returncode == 1 and "no-such-guard-xyz" in res.stderr
    assert tmp_repo.git("notes", "--ref=improve", "list", check=False) == ""


def test_the_guard_runs_once_on_the_baseline_and_is_shown(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, {"default": "set:90"})
    res = tmp_repo.cli("run", "-n", "1")
    assert res.returncode == 0, res.stderr
    assert "guard passes on the baseline (exit 0)" in res.stdout
    baseline = run_rows(tmp_repo, next(iter(_runs(tmp_repo))))[0]
    assert baseline["status"] == "baseline" and baseline["guard"]["status"] == "pass"
    res = tmp_repo.cli("init", "--yes")
    assert res.returncode == 0, res.stderr
    assert "guard passes on the baseline" in res.stdout


def _runs(repo: TmpRepo) -> list[str]:
    refs = repo.git("for-each-ref", "--format=%(refname)", "refs/improve/runs").split()
    return sorted({r.split("/")[3] for r in refs})


@pytest.mark.slow
def test_latest_unfinished_run_is_by_start_time_not_name(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, {"default": "set:90"}, guard=False)
    env = {"GITIMPROVE_FAILPOINT": "after-log:1"}  # dies right after round 1: unfinished
    for name in ("zzz", "aaa"):
        res = tmp_repo.cli("run", "--run", name, "-n", "3", env=env)
        assert res.returncode == 137
    res = tmp_repo.cli("run", "-n", "1")
    assert res.returncode == 0, res.stderr
    assert "resuming the unfinished run aaa" in res.stdout
    assert [r["iteration"] for r in run_rows(tmp_repo, "aaa")] == [0, 1, 2]
    assert [r["iteration"] for r in run_rows(tmp_repo, "zzz")] == [0, 1]


@pytest.mark.slow
def test_resume_refuses_an_unknown_run_and_a_silent_new_goal(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, {"default": "set:90"}, guard=False)
    res = tmp_repo.cli("run", "--resume", "--run", "no-such-run", "-n", "1")
    assert res.returncode == 1 and "no run 'no-such-run' to resume" in res.stderr
    assert improve_refs(tmp_repo) == []
    env = {"GITIMPROVE_FAILPOINT": "after-log:1"}
    assert (
        tmp_repo.cli("run", "--run", "g", "-n", "3", "--goal", "speed", env=env).returncode == 137
    )
    res = tmp_repo.cli("run", "-n", "1", "--goal", "memory")
    assert res.returncode == 1 and "'speed'" in res.stderr and "--resume" in res.stderr
    assert [r["iteration"] for r in run_rows(tmp_repo, "g")] == [0, 1]
    res = tmp_repo.cli("run", "-n", "1", "--goal", "memory", "--resume")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "g")
    assert [r["iteration"] for r in rows] == [0, 1, 2]
    assert rows[0]["options"]["goal"] == "memory"  # kept for the next resume


@pytest.mark.slow
def test_more_rounds_on_resume_are_kept_for_the_next_resume(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, {"default": "set:90"}, guard=False)
    env = {"GITIMPROVE_FAILPOINT": "after-log:2"}
    assert tmp_repo.cli("run", "--run", "m", "-n", "3", env=env).returncode == 137
    res = tmp_repo.cli("run", "--resume", "-n", "4", env={"GITIMPROVE_FAILPOINT": "after-log:4"})
    assert res.returncode == 137
    res = tmp_repo.cli("run", "--resume")  # goes on to 2 + 4 = 6 rounds
    assert res.returncode == 0, res.stderr
    assert [r["iteration"] for r in run_rows(tmp_repo, "m")] == list(range(7))


@pytest.mark.slow
def test_a_new_run_in_the_same_second_gets_its_own_name(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, {"default": "set:90"}, guard=False)
    env = {"GITIMPROVE_FAKE_NOW": "2026-11-22T10:00:00.000000Z"}
    assert tmp_repo.cli("run", "-n", "1", env=env).returncode == 0
    assert tmp_repo.cli("run", "-n", "1", env=env).returncode == 0
    assert _runs(tmp_repo) == ["run-20261122-100000", "run-20261122-100000-2"]


@pytest.mark.slow
def test_doctor_repair_removes_phantom_runs(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, {"default": "set:90"}, guard=False)
    head = tmp_repo.git("rev-parse", "HEAD")
    # what older versions left when a run failed before its first record
    tmp_repo.git("update-ref", "refs/improve/runs/ghost/base", head)
    tmp_repo.git("update-ref", "refs/heads/improve/ghost", head)
    assert tmp_repo.cli("run", "-n", "1", "--run", "real").returncode == 0
    res = tmp_repo.cli("doctor")
    assert res.returncode == 1 and "ghost" in res.stdout and "real" not in res.stdout
    res = tmp_repo.cli("doctor", "--repair")
    assert "[fixed] runs" in res.stdout, res.stdout
    assert _runs(tmp_repo) == ["real"]
    assert tmp_repo.git("rev-parse", "--verify", "-q", "improve/ghost", check=False) == ""
    assert "[ok ] runs: no phantom runs" in tmp_repo.cli("doctor").stdout


WAITING_BENCH = """import os, pathlib, time
flag = os.environ.get("SLOW_METRIC_FLAG")
if flag and pathlib.Path(flag).exists():
    pathlib.Path(flag + ".running").write_text(str(os.getpid()))
while flag and pathlib.Path(flag).exists():
    time.sleep(0.05)
print("METRIC score=" + pathlib.Path("src/value.txt").read_text().strip())
"""


def _slow_calibration(repo: TmpRepo, flag: Path, plan: dict[str, str] | None = None) -> None:
    """The metric waits while `flag` exists, so the run is caught measuring its baseline,
    before it has any ref. The flag lives in /tmp, which a sandboxed metric does not share."""
    make_project(repo, plan or {"default": "set:90"}, guard=False, extra='sandbox = "none"\n')
    repo.commit("a metric that waits for a flag", {"bench.py": WAITING_BENCH})
    flag.write_text("hang")


def _start(repo: TmpRepo, *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "gitimprove", "run", *args],
        cwd=repo.path,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait(path: Path) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


@pytest.mark.slow
def test_stop_and_a_second_run_reach_a_run_measuring_its_baseline(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    flag = tmp_path / "hang"
    _slow_calibration(tmp_repo, flag)
    env = {"SLOW_METRIC_FLAG": str(flag)}
    p = _start(tmp_repo, "--run", "busy", "-n", "3", env=env)
    try:
        _wait(Path(str(flag) + ".running"))
        assert improve_refs(tmp_repo) == []  # not a run yet: nothing recorded
        # the same run again is refused with a message, not a crash
        again = tmp_repo.cli("run", "--run", "busy", "-n", "1")
        assert again.returncode == 1 and "already running" in again.stderr
        # a plain run does not collide with it either: it is not resumable (no record yet)
        # and a new name would be made; `stop` reaches the calibrating run
        res = tmp_repo.cli("stop")
        assert res.returncode == 0, res.stderr
        assert "run busy will stop" in res.stdout
        flag.unlink()
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err
    assert "stop requested" in out
    assert [r["status"] for r in run_rows(tmp_repo, "busy")] == ["baseline"]


@pytest.mark.slow
def test_stop_prefers_the_live_run_over_a_phantom(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    flag = tmp_path / "hang"
    _slow_calibration(tmp_repo, flag, {"1": "set:90", "default": "set:80"})
    flag.unlink()
    assert tmp_repo.cli("run", "--run", "real", "-n", "1").returncode == 0
    head = tmp_repo.git("rev-parse", "HEAD")
    tmp_repo.git("update-ref", "refs/improve/runs/ghost/base", head)
    tmp_repo.git("update-ref", "refs/heads/improve/ghost", head)
    flag.write_text("hang")
    p = _start(
        tmp_repo, "--run", "real", "--resume", "-n", "2", env={"SLOW_METRIC_FLAG": str(flag)}
    )
    try:
        _wait(Path(str(flag) + ".running"))
        res = tmp_repo.cli("stop")
        assert res.returncode == 0 and "run real will stop" in res.stdout, res.stdout
        flag.unlink()
        p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    # and a plain run ignores the phantom: it starts a run of its own
    res = tmp_repo.cli("run", "-n", "1")
    assert res.returncode == 0 and "starting run" in res.stdout, res.stdout + res.stderr


@pytest.mark.slow
def test_resume_keeps_option_keys_it_does_not_know(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, {"default": "set:90"}, guard=False)
    assert tmp_repo.cli("run", "--run", "h", "-n", "1").returncode == 0
    base = run_rows(tmp_repo, "h")[0]
    from gitimprove.state import experiments

    options = {**base["options"], "zz_future": "keep"}
    experiments.record(tmp_repo.open(), base["commit"], {"options": options}, op="update")
    assert tmp_repo.cli("run", "--resume", "--run", "h", "-n", "1").returncode == 0
    kept = run_rows(tmp_repo, "h")[0]["options"]
    assert kept["zz_future"] == "keep" and kept["iterations"] == 2


def test_a_branch_named_improve_is_refused_before_measuring(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    markers = tmp_path / "m"
    markers.mkdir()
    make_project(tmp_repo, {"default": "set:90", "markers": str(markers)}, guard=False)
    tmp_repo.git("branch", "improve")
    res = tmp_repo.cli("run", "-n", "1")
    assert res.returncode == 1 and "a branch named `improve` exists" in res.stderr
    assert tmp_repo.git("notes", "--ref=improve", "list", check=False) == ""
    tmp_repo.git("branch", "-D", "improve")
    tmp_repo.git("branch", "improve/mine")
    res = tmp_repo.cli("run", "--run", "mine", "-n", "1")
    assert res.returncode == 1 and "improve/mine already exists" in res.stderr
    assert not (markers / "calls.log").exists()


def test_an_uncommitted_config_change_is_named(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, {"default": "set:90"}, guard=False)
    cfg = tmp_repo.path / ".gitimprove.toml"
    cfg.write_text(cfg.read_text().replace("iterations = 20", "iterations = 2"))
    res = tmp_repo.cli("run", "-n", "1")
    assert res.returncode == 0, res.stderr
    assert "differs from the one committed" in res.stderr
