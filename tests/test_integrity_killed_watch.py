"""A run killed (`kill -9`) while its agent works never compares the user's repository with
the snapshot taken before that call: the snapshot is kept on disk (git/pending.py), and the
next `run --resume` and `doctor` compare it with now. Each kind of watched thing the agent
changed before the kill stops the resume, named; `doctor --repair` accepts the change and the
run goes on (docs/integrity.md, "A run killed while its agent works")."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.test_integrity import hostile_project, start, survivors, wait_for

# the agent's change -> what the refusal names
KINDS = [
    ("user-worktree", "work tree: README.txt"),
    ("user-hook", ".git/hooks/pre-commit"),
    ("user-branch", "refs/heads/agent-was-here"),
    ("user-index", ".git/index"),
    ("user-gitconfig", ".gitconfig"),
]


def killed_during_agent(repo: TmpRepo, tmp_path: Path, attack: str) -> dict[str, object]:
    stalled = tmp_path / "stalled"
    plan = hostile_project(repo, {"1": attack, "stall": str(stalled)}, "none")
    p = start(repo, "--run", "k", "-n", "1", "--json")
    wait_for(stalled, 120)
    os.killpg(p.pid, signal.SIGKILL)
    p.communicate(timeout=60)
    assert p.returncode == -9
    return plan


def plan_honest(repo: TmpRepo, plan: dict[str, object]) -> None:
    plan = {k: v for k, v in plan.items() if k not in ("1", "stall")}
    (repo.path.parent / "plan.json").write_text(json.dumps({**plan, "default": "set:90"}))


@pytest.mark.slow
@pytest.mark.parametrize(("attack", "named"), KINDS)
def test_a_change_made_before_a_kill_9_stops_the_resume_until_accepted(
    tmp_repo: TmpRepo, tmp_path: Path, attack: str, named: str
) -> None:
    plan = killed_during_agent(tmp_repo, tmp_path, attack)
    saved = list((tmp_repo.path / ".git" / "improve" / "watch").iterdir())
    assert [p.suffix for p in saved] == [".json"], saved

    shown = tmp_repo.cli("doctor")
    assert named in shown.stdout + shown.stderr, shown.stdout
    assert "Traceback" not in shown.stderr

    plan_honest(tmp_repo, plan)
    refused = tmp_repo.cli("run", "--resume", "--run", "k", "-n", "1", "--json")
    assert refused.returncode == 1, refused.stdout
    assert "Traceback" not in refused.stderr
    assert named in refused.stderr and "doctor --repair" in refused.stderr, refused.stderr
    assert survivors(str(plan["mark"]), tmp_repo) == []
    again = tmp_repo.cli("run", "--resume", "--run", "k", "-n", "1", "--json")
    assert again.returncode == 1 and named in again.stderr, "refused once, then forgotten"

    repaired = tmp_repo.cli("doctor", "--repair")
    assert "Traceback" not in repaired.stderr, repaired.stderr
    assert not list((tmp_repo.path / ".git" / "improve" / "watch").iterdir())
    res = tmp_repo.cli("run", "--resume", "--run", "k", "-n", "1", "--json")
    assert res.returncode == 0, res.stderr
    rows = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    assert rows[-1]["event"] == "stop", rows[-1]


@pytest.mark.slow
def test_a_kill_9_with_nothing_changed_resumes_and_leaves_no_snapshot(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    plan = killed_during_agent(tmp_repo, tmp_path, "set:95")
    plan_honest(tmp_repo, plan)
    res = tmp_repo.cli("run", "--resume", "--run", "k", "-n", "1", "--json")
    assert res.returncode == 0, res.stderr
    assert not list((tmp_repo.path / ".git" / "improve" / "watch").iterdir())
