"""The improvement loop, driven by agent executables that follow DESIGN §9."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gitimprove.git import archive
from tests.conftest import TmpRepo, noisy_bench
from tests.loop_helpers import make_project, run_rows

ALL_STATUSES = {
    "1": "set:90",
    "2": "set:95",
    "3": "crash",
    "4": "sleep",
    "5": "noop",
    "6": "text",
    "7": "edit-sealed:50",
    "8": "outside:50",
    "9": "set:95",
    "10": "guard-then-fix:80",
    "11": "guard-fail:70",
}
EXPECTED = [
    "keep",
    "discard",
    "crash",
    "timeout",
    "no-op",
    "metric-error",
    "sealed",
    "out-of-scope",
    "duplicate",
    "keep-reworked",
    "guard-fail",
]


def user_state(repo: TmpRepo) -> tuple[str, str, str, str, str]:
    return (
        repo.git("rev-parse", "HEAD"),
        repo.git("branch", "--show-current"),
        repo.git("status", "--porcelain", "--untracked-files=all"),
        repo.git("stash", "list"),
        (repo.path / "src" / "value.txt").read_text(),
    )


@pytest.mark.slow
def test_one_run_produces_every_status(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, ALL_STATUSES)
    (tmp_repo.path / "scratch.txt").write_text("uncommitted user work\n")
    (tmp_repo.path / "src" / "value.txt").write_text("55\n")  # a user edit in progress
    before = user_state(tmp_repo)
    res = tmp_repo.cli("run", "--run", "r1", "-n", "11", "--json")
    assert res.returncode == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]  # nothing but JSON on stdout
    assert [e["event"] for e in events][:2] == ["start", "noise"]
    attempts = [e for e in events if e["event"] == "attempt"]
    assert [e["status"] for e in attempts] == EXPECTED
    assert events[-1]["event"] == "stop" and "iterations reached" in events[-1]["reason"]

    rows = run_rows(tmp_repo, "r1")
    assert [r["status"] for r in rows] == ["baseline", *EXPECTED]
    by_status = {r["status"]: r for r in rows}
    assert by_status["keep"]["metric"]["value"] == 90
    assert by_status["keep-reworked"]["agent"]["rework"] == 1
    assert by_status["keep-reworked"]["guard"]["history"][0]["status"] == "fail"
    assert "bench.py" in by_status["sealed"]["reason"]
    assert "README.txt" in by_status["out-of-scope"]["reason"]
    assert by_status["crash"]["agent"]["exit_code"] == 1
    assert by_status["timeout"]["agent"]["timed_out"] is True
    for status in ("crash", "timeout", "no-op", "sealed", "out-of-scope", "duplicate"):
        assert "samples" not in (by_status[status].get("metric") or {}), f"{status} was measured"
    # a deterministic metric: compared exactly, no incumbent re-run, one run per decision
    keep = by_status["keep"]
    assert keep["metric"]["incumbent_samples"] == [] and keep["decision"]["runs"] == 1
    assert keep["metric"]["samples"] == [90]
    assert keep["metric"]["incumbent"] == 100 and keep["metric"]["delta"] == -10
    assert by_status["keep"]["harness"]["sealed_tree"]

    kept = tmp_repo.git("rev-list", "--first-parent", "improve/r1", f"^{rows[0]['commit']}").split()
    assert kept == [by_status["keep-reworked"]["commit"], by_status["keep"]["commit"]]
    subjects = tmp_repo.git("log", "--format=%s", "-2", "improve/r1").splitlines()
    assert all(s.startswith("experiment(src): ") for s in subjects)
    archived = set(archive.archived(tmp_repo.open()))
    assert {r["commit"] for r in rows[1:]} <= archived
    tmp_repo.git("fsck", "--no-progress", "--strict")
    assert user_state(tmp_repo) == before
    assert not [p for p in (tmp_repo.path / ".git" / "improve" / "work").iterdir()]
    tsv = tmp_repo.cli("log", "--run", "r1", "--format", "tsv").stdout.splitlines()
    assert tsv[1] == (
        "iteration\ttimestamp\tcommit\tmetric\tdelta\tguard\tguard-metric\tstatus\tdescription"
    )
    assert tsv[3].split("\t")[7] == "keep"
    tsv7 = tmp_repo.cli("log", "--run", "r1", "--format", "tsv7").stdout.splitlines()
    assert tsv7[1] == "iteration\tcommit\tmetric\tdelta\tguard\tstatus\tdescription"
    assert tsv7[3].split("\t")[5] == "keep"


MISBEHAVING = {
    "1": "edit-config:10",
    "2": "symlink-sealed",
    "3": "delete-sealed:10",
    "4": "add-sealed:10",
    "5": "git-games:100",
    "6": "background:101",
}


def test_misbehaving_agents_cannot_win(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, MISBEHAVING, guard=False)
    refs_before = tmp_repo.git("for-each-ref", "--format=%(refname)", "refs/heads/", "refs/tags/")
    res = tmp_repo.cli("run", "--run", "bad", "-n", "6", "--json")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "bad")
    statuses = [r["status"] for r in rows[1:]]
    assert statuses[:4] == ["sealed", "sealed", "sealed", "sealed"]
    assert ".gitimprove.toml" in rows[1]["reason"]
    assert statuses[4] == "no-op"  # the agent's commit, stash and ref games left nothing behind
    assert statuses[5] == "discard"  # 101 vs 100, measured in a checkout the agent never saw,
    assert rows[6]["metric"]["samples"] == [
        101
    ]  # so its background writer (value 1) changed nothing
    assert tmp_repo.git("rev-parse", "improve/bad") == tmp_repo.git(
        "rev-parse", "refs/improve/runs/bad/base"
    )  # nothing kept
    # no trace of the agent's own git commands in the repository
    assert "forged" not in tmp_repo.git("log", "--all", "--format=%s")
    assert tmp_repo.git("stash", "list") == ""
    refs_after = tmp_repo.git("for-each-ref", "--format=%(refname)", "refs/heads/", "refs/tags/")
    assert set(refs_after.split()) - set(refs_before.split()) == {"refs/heads/improve/bad"}
    for row in rows:
        assert row.get("status") != "keep"


@pytest.mark.slow
def test_missing_agent_is_a_clear_error_at_start(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, {})
    res = tmp_repo.cli(
        "run", "-n", "1", "--agent", "codex", "--agent-command", "no-such-codex-binary"
    )
    assert res.returncode == 1
    assert "`no-such-codex-binary` is not on PATH" in res.stderr
    assert tmp_repo.git("notes", "--ref=improve", "list", check=False) == ""


@pytest.mark.slow
def test_uncommitted_config_is_refused(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("code", {"src/value.txt": "1\n"})
    (tmp_repo.path / ".gitimprove.toml").write_text('[metric]\ncommand = "echo 1"\n')
    res = tmp_repo.cli("run", "-n", "1")
    assert res.returncode == 1 and "is not committed" in res.stderr


@pytest.mark.slow
def test_stop_and_status(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, {"default": "set:90", "2": "set:80"}, guard=False)
    assert tmp_repo.cli("run", "--run", "s", "-n", "2").returncode == 0
    status = tmp_repo.cli("status")
    assert status.returncode == 0, status.stderr
    assert "run s: finished" in status.stdout and "best 80" in status.stdout
    assert "escalation level 0" in status.stdout and "agent cost $0.02" in status.stdout
    data = json.loads(tmp_repo.cli("status", "--json").stdout)
    assert data["kept"] == 2 and data["best"] == 80
    res = tmp_repo.cli("run", "--run", "s", "-n", "3")
    assert res.returncode == 1 and "has finished" in res.stderr
    res = tmp_repo.cli("run", "--run", "s", "-n", "2", "--resume")  # two more rounds
    assert res.returncode == 0, res.stderr
    assert [r["iteration"] for r in run_rows(tmp_repo, "s")] == [0, 1, 2, 3, 4]
    assert tmp_repo.cli("stop").returncode == 1  # nothing in progress


@pytest.mark.slow
def test_noisy_metric_keeps_real_gains_only(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    # true effects: -10% (gain), none, +1% (regression), -20% (gain), none
    plan = {"1": "set:90", "2": "set:90.0", "3": "set:90.9", "4": "set:72", "5": "set:72.00"}
    # the metric keeps its seed in a file outside its checkout: a sandboxed metric may not
    # write there (a folder its command names is read-only), so this runs without one
    make_project(tmp_repo, plan, guard=False, extra='sandbox = "none"\n')
    counter = tmp_path / "counter"
    counter.write_text("0")
    config = (tmp_repo.path / ".gitimprove.toml").read_text()
    config = config.replace(' bench.py"', f' bench.py {counter}"', 1)
    bench = noisy_bench("src/value.txt", 0.03)
    tmp_repo.commit("noisy bench", {"bench.py": bench, ".gitimprove.toml": config})
    res = tmp_repo.cli("run", "--run", "noisy", "-n", "5")
    assert res.returncode == 0, res.stderr
    assert "noise ≈ 3" in res.stdout or "noise ≈ 2" in res.stdout or "noise ≈ 4" in res.stdout
    # the run's baseline is calibration's median; each decision's reference is its own runs
    assert re.search(
        r"^baseline \S+ \(median of \d+ calibration runs; each decision compares with "
        r"incumbent runs beside its own\); noise ≈",
        res.stdout,
        re.M,
    ), res.stdout
    rows = run_rows(tmp_repo, "noisy")
    assert [r["status"] for r in rows] == [
        "baseline",
        "keep",
        "discard",
        "discard",
        "keep",
        "discard",
    ]
    for row in rows[1:]:
        metric = row["metric"]
        assert len(metric["samples"]) >= 1 and "incumbent_samples" in metric
        assert row["decision"]["runs"] <= 16
    assert "interval" in rows[1]["reason"] or "deterministic" not in rows[1]["reason"]


@pytest.mark.slow
def test_two_runs_from_one_base_keep_their_own_baselines(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, {"default": "set:99"}, guard=False)
    assert tmp_repo.cli("init", "--yes", "--runs", "1").returncode == 0
    base = tmp_repo.git("rev-parse", "HEAD")
    for run in ("one", "two"):
        res = tmp_repo.cli("run", "--run", run, "-n", "1")
        assert res.returncode == 0, res.stderr
    for run in ("one", "two"):
        rows = run_rows(tmp_repo, run)
        assert [r["status"] for r in rows] == ["baseline", "keep"]
        assert tmp_repo.git("rev-parse", f"{rows[0]['commit']}^") == base
        assert tmp_repo.git("rev-parse", f"{rows[0]['commit']}^{{tree}}") == tmp_repo.git(
            "rev-parse", f"{base}^{{tree}}"
        )
    init_row = [
        json.loads(x)
        for x in tmp_repo.cli("log", "--format", "jsonl").stdout.splitlines()
        if json.loads(x)["commit"] == base
    ]
    assert init_row and init_row[0]["run"] is None and init_row[0]["status"] == "baseline"
