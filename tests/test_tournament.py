"""Tournaments: several candidates per round in parallel workspaces."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitimprove.git import archive
from tests.conftest import TmpRepo
from tests.loop_helpers import make_project, run_rows

KNOWN = {"1.0": "set:95", "1.1": "set:99", "1.2": "set:105", "1.3": "crash", "approach": "as-asked"}


@pytest.mark.slow
def test_best_candidate_wins_and_others_are_archived_with_reasons(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    markers = tmp_path / "m"
    markers.mkdir()
    make_project(tmp_repo, {**KNOWN, "markers": str(markers)}, guard=False)
    res = tmp_repo.cli("run", "--run", "t", "-n", "1", "--candidates", "4", "--jobs", "2", "--json")
    assert res.returncode == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    rnd = next(e for e in events if e["event"] == "round")
    assert rnd["winner_candidate"] == 0
    rows = run_rows(tmp_repo, "t")[1:]
    by_cand = {r["candidate"]: r for r in rows}
    assert [by_cand[c]["status"] for c in range(4)] == ["keep", "discard", "discard", "crash"]
    winner = by_cand[0]["commit"]
    assert all(r["round"] == 1 and r["winner"] == winner and r["stage"] == "final" for r in rows)
    assert by_cand[0]["rank"] == 1 and by_cand[1]["rank"] == 2 and by_cand[2]["rank"] == 3
    assert by_cand[3]["rank"] is None
    assert by_cand[0]["confirmation"]["keep"] is True
    assert "won round 1" in by_cand[0]["reason"] and "confirmed" in by_cand[0]["reason"]
    assert "beaten by candidate 0" in by_cand[1]["reason"]
    # no candidate but the winner is said to be kept: the round decides
    for c in (1, 2, 3):
        assert "kept" not in by_cand[c]["reason"], by_cand[c]["reason"]
    assert by_cand[0]["reason"].count("kept") == 0, by_cand[0]["reason"]
    pending = [e for e in events if e.get("status") == "pending"]
    assert pending and all(e["reason"].startswith("beats the incumbent: ") for e in pending)
    assert "rank 3 of 3" in by_cand[2]["reason"]
    assert "crash" in by_cand[3]["reason"]
    # the branch holds only the winner; every candidate is in the archive
    base = run_rows(tmp_repo, "t")[0]["commit"]
    assert tmp_repo.git("rev-list", "improve/t", f"^{base}").split() == [winner]
    assert {r["commit"] for r in rows} <= set(archive.archived(tmp_repo.open()))
    # no two candidates shared an approach family, in their programs or their notes
    asked = [
        re.search(
            r"Approach family for this attempt: \*\*(\w+)\*\*",
            (markers / f"prompt-1.{c}.md").read_text(),
        )
        for c in range(4)
    ]
    families = [m.group(1) for m in asked if m]
    assert len(families) == 4 and len(set(families)) == 4
    assert [by_cand[c]["family"] for c in range(4)] == families
    # the TSV gives one row per candidate, the iteration shared
    tsv = tmp_repo.cli("log", "--run", "t", "--format", "tsv").stdout.splitlines()[3:]
    assert [line.split("\t")[0] for line in tsv] == ["1", "1", "1", "1"]
    report = tmp_repo.cli("log", "--run", "t", "--round", "1")
    assert "round 1: candidate 0" in report.stdout and "wins" in report.stdout
    shown = tmp_repo.cli("show", by_cand[1]["commit"])
    assert "round 1" in shown.stdout and "beaten by candidate 0" in shown.stdout


@pytest.mark.slow
def test_a_candidate_that_ignores_its_family_is_measured_and_noted(tmp_repo: TmpRepo) -> None:
    make_project(
        tmp_repo, {"1.0": "set:95", "1.1": "set:97", "approach": "optimization"}, guard=False
    )
    res = tmp_repo.cli("run", "--run", "f", "-n", "1", "--candidates", "2")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "f")[1:]
    ignored = [r for r in rows if r.get("family_ignored")]
    assert ignored and all("samples" in r["metric"] for r in ignored)
    assert all("the agent reported optimization" in r["reason"] for r in ignored)


def test_families_never_repeat_a_three_time_winner(tmp_repo: TmpRepo) -> None:
    from gitimprove.loop.tournament import families
    from gitimprove.state.experiments import Experiment

    rows = [
        {"iteration": i, "candidate": 0, "status": "keep", "family": "config"} for i in (1, 2, 3)
    ]
    fams = families([Experiment.from_row(r) for r in rows], 4, candidates=7)
    assert "config" not in fams and len(set(fams)) == 7
    rows[1]["family"] = "data"
    assert "config" in families([Experiment.from_row(r) for r in rows], 4, candidates=7)


@pytest.mark.slow
def test_cost_cap_stops_launching_candidates(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, {"default": "set:99", "cost": 1.0}, guard=False)
    res = tmp_repo.cli(
        "run",
        "--run",
        "c",
        "-n",
        "5",
        "--candidates",
        "4",
        "--jobs",
        "1",
        "--max-cost",
        "2.5",
        "--json",
    )
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "c")[1:]
    spent = sum(r["agent"]["cost_usd"] for r in rows)
    assert spent <= 2.5
    events = [json.loads(line) for line in res.stdout.splitlines()]
    assert (
        "cannot cover another candidate" in events[-1]["reason"]
        or "cost cap" in events[-1]["reason"]
    )


@pytest.mark.slow
def test_kill_mid_round_reruns_only_unfinished_candidates(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    markers = tmp_path / "m"
    markers.mkdir()
    plan = {
        "1.0": "set:95",
        "1.1": "set:99",
        "1.2": "slow-set:90",
        "slow": 2.5,
        "markers": str(markers),
    }
    make_project(tmp_repo, plan, guard=False)
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gitimprove",
            "run",
            "--run",
            "r",
            "-n",
            "1",
            "--candidates",
            "3",
            "--jobs",
            "3",
        ],
        cwd=tmp_repo.path,
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while len([r for r in run_rows(tmp_repo, "r") if r.get("iteration") == 1]) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert (markers / "agent-1.2").exists()
    os.killpg(p.pid, signal.SIGKILL)
    p.communicate()
    res = tmp_repo.cli("run", "--resume")
    assert res.returncode == 0, res.stderr
    calls = (markers / "calls.log").read_text().split()
    assert sorted(calls) == ["1.0", "1.1", "1.2", "1.2"]
    rows = run_rows(tmp_repo, "r")[1:]
    assert sorted((r["candidate"], r["status"]) for r in rows) == [
        (0, "discard"),
        (1, "discard"),
        (2, "keep"),
    ]
