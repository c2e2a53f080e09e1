"""Stop conditions and the stuck ladder; each stop says why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitimprove.git import memory
from tests.conftest import TmpRepo
from tests.loop_helpers import make_project, run_rows


def stop_reason(res: subprocess.CompletedProcess[str]) -> str:
    assert res.returncode == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    assert events[-1]["event"] == "stop"
    return str(events[-1]["reason"])


@pytest.mark.slow
def test_target_stops_the_run(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, {"1": "set:90", "default": "set:85"}, guard=False)
    reason = stop_reason(tmp_repo.cli("run", "--json", "--target", "92"))
    assert reason == "target reached (90)"
    assert len(run_rows(tmp_repo, run_rows_name(tmp_repo))) == 2


def run_rows_name(repo: TmpRepo) -> str:
    return repo.git("for-each-ref", "--format=%(refname:lstrip=3)", "refs/improve/runs/").split(
        "/"
    )[0]


@pytest.mark.slow
def test_circuit_breaker_counts_crashing_rounds(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, {"default": "crash"}, guard=False)
    reason = stop_reason(tmp_repo.cli("run", "--run", "c", "--json"))
    assert reason == "circuit breaker: 3 rounds in a row crashed"
    assert [r["status"] for r in run_rows(tmp_repo, "c")][1:] == ["crash"] * 3


@pytest.mark.slow
def test_cost_cap(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, {"default": "set:99", "cost": 0.5}, guard=False)
    reason = stop_reason(tmp_repo.cli("run", "--run", "m", "--json", "--max-cost", "1.2"))
    assert reason.startswith("cost cap reached ($1.50 of $1.20)")
    assert len(run_rows(tmp_repo, "m")) == 4


@pytest.mark.slow
@pytest.mark.parametrize("key", ["improve.loop.plateau-patience", "improve.loop.plateauPatience"])
def test_plateau_from_git_config_override(tmp_repo: TmpRepo, key: str) -> None:
    make_project(tmp_repo, {"default": "set:101"}, guard=False)
    tmp_repo.git("config", key, "2")
    reason = stop_reason(tmp_repo.cli("run", "--run", "p", "--json"))
    assert reason.startswith("plateau: no keep in 2 rounds")
    proposals = list(memory.iter_entries(tmp_repo.open(), "proposals/"))
    assert len(proposals) == 1 and b"Run p is stuck" in proposals[0][1]


@pytest.mark.slow
def test_an_underscore_key_git_cannot_read_is_a_clear_error(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, {"default": "set:101"}, guard=False)
    # git itself refuses the name; written by hand it breaks every git command
    assert tmp_repo.git("config", "improve.loop.plateau_patience", "2", check=False) == ""
    with open(tmp_repo.path / ".git" / "config", "a") as f:
        f.write('[improve "loop"]\n\tplateau_patience = 2\n')
    res = tmp_repo.cli("run", "--run", "u", "--json")
    assert res.returncode == 1, res.stderr
    assert "improve.loop.plateau-patience" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.slow
def test_stuck_ladder_escalates_then_stops_with_a_diagnosis(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, {"default": "set:101"}, guard=False)
    tmp_repo.git("config", "improve.loop.stuck-after", "1")
    res = tmp_repo.cli("run", "--run", "st", "--json")
    reason = stop_reason(res)
    assert reason.startswith("stuck: escalation level 5")
    rows = run_rows(tmp_repo, "st")
    assert [r.get("escalation") for r in rows[1:]] == [0, 1, 2, 3, 4]
    proposals = list(memory.iter_entries(tmp_repo.open(), "proposals/"))
    assert len(proposals) == 1 and b"Run st is stuck" in proposals[0][1]


@pytest.mark.slow
def test_git_improve_stop_ends_a_running_loop(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    make_project(
        tmp_repo, {"default": "slow-set:99", "slow": 1, "markers": str(markers)}, guard=False
    )
    p = subprocess.Popen(
        [sys.executable, "-m", "gitimprove", "run", "--run", "s", "--json"],
        cwd=tmp_repo.path,
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (markers / "agent-1.0").exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    res = tmp_repo.cli("stop")
    assert res.returncode == 0 and "run s will stop" in res.stdout
    out, _err = p.communicate(timeout=120)
    events = [json.loads(line) for line in out.splitlines()]
    assert events[-1]["reason"] == "stop requested (git improve stop)"
    assert len([e for e in events if e["event"] == "attempt"]) == 1
