"""kill -9 at any moment, then `run --resume`: same kept history, no gap, no duplicate."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import TmpRepo, cli_popen, git, wait_for
from tests.loop_helpers import make_project, run_rows

PLAN = {"1": "set:90", "2": "slow-set:85", "3": "set:95", "4": "set:80", "5": "set:80.5", "slow": 2}


def history(repo: TmpRepo, run: str) -> tuple[list[tuple[int, str, float | None]], list[str]]:
    rows = run_rows(repo, run)
    kept = repo.git("log", "--format=%s", f"improve/{run}").splitlines()
    return [(r["iteration"], r["status"], (r.get("metric") or {}).get("value")) for r in rows], kept


def start_run(repo: TmpRepo, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return cli_popen(repo.path, "run", "--run", "k", "-n", "5", "--json", env=env)


def kill9(p: subprocess.Popen[str]) -> None:
    os.killpg(p.pid, signal.SIGKILL)
    p.communicate()


@pytest.fixture
def reference(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[list[tuple[int, str, float | None]], list[str]]:
    path = tmp_path_factory.mktemp("ref") / "repo"
    path.mkdir()
    git(path, "init", "-q")
    repo = TmpRepo(path)
    make_project(repo, {**PLAN, "slow": 0}, guard=False)
    res = repo.cli("run", "--run", "k", "-n", "5")
    assert res.returncode == 0, res.stderr
    return history(repo, "k")


def resume_and_compare(
    repo: TmpRepo, reference: tuple[list[tuple[int, str, float | None]], list[str]]
) -> None:
    res = repo.cli("run", "--resume", "--json")
    assert res.returncode == 0, res.stderr
    got = history(repo, "k")
    assert got == reference
    iterations = [i for i, _, _ in got[0]]
    assert iterations == sorted(set(iterations)) == list(range(6))  # no gap, no duplicate
    work = repo.path / ".git" / "improve" / "work"
    assert not [p for p in work.iterdir() if p.is_dir()], "a workspace was left behind"
    repo.git("fsck", "--no-progress")


@pytest.mark.slow
def test_kill_during_agent(tmp_repo: TmpRepo, tmp_path: Path, reference) -> None:  # type: ignore[no-untyped-def]
    markers = tmp_path / "markers"
    markers.mkdir()
    make_project(tmp_repo, {**PLAN, "markers": str(markers)}, guard=False)
    p = start_run(tmp_repo)
    wait_for(markers / "agent-2.0")
    kill9(p)
    assert [r["iteration"] for r in run_rows(tmp_repo, "k")] == [0, 1]
    assert any(d.is_dir() for d in (tmp_repo.path / ".git" / "improve" / "work").iterdir())
    resume_and_compare(tmp_repo, reference)


@pytest.mark.slow
def test_kill_during_metric(tmp_repo: TmpRepo, tmp_path: Path, reference) -> None:  # type: ignore[no-untyped-def]
    flag = tmp_path / "slow-metric"
    # the metric signals through a file outside its checkout: no sandbox for the measurement
    make_project(tmp_repo, {**PLAN, "slow": 0}, guard=False, extra='sandbox = "none"\n')
    p = start_run(tmp_repo, {"SLOW_METRIC_FLAG": str(flag)})
    # let the baseline and iteration 1 finish, then make the next metric run hang
    deadline = time.monotonic() + 60
    while len(run_rows(tmp_repo, "k")) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    flag.write_text("hang")
    wait_for(Path(str(flag) + ".running"))
    kill9(p)
    flag.unlink()
    resume_and_compare(tmp_repo, reference)


@pytest.mark.slow
def test_kill_right_after_the_note(tmp_repo: TmpRepo, reference) -> None:  # type: ignore[no-untyped-def]
    make_project(tmp_repo, {**PLAN, "slow": 0}, guard=False)
    p = start_run(tmp_repo, {"GITIMPROVE_FAILPOINT": "after-log:3"})
    p.communicate(timeout=120)
    assert p.returncode == 137
    assert [r["iteration"] for r in run_rows(tmp_repo, "k")] == [0, 1, 2, 3]
    resume_and_compare(tmp_repo, reference)


@pytest.mark.slow
def test_resume_reruns_an_attempt_without_note(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    # the agent signals through a folder outside its workspace: no sandbox (it is read-only)
    make_project(
        tmp_repo, {**PLAN, "slow": 30, "markers": str(markers)}, guard=False,
        extra='sandbox = "none"\n',
    )  # fmt: skip
    p = start_run(tmp_repo)
    wait_for(markers / "agent-2.0")
    kill9(p)
    shutil.rmtree(markers)
    markers.mkdir()
    res = tmp_repo.cli("run", "--resume", "-n", "1")  # one more round: the unfinished one
    assert res.returncode == 0, res.stderr
    assert [r["iteration"] for r in run_rows(tmp_repo, "k")] == [0, 1, 2]
