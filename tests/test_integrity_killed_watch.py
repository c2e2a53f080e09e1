"""A run killed (`kill -9`) while its agent works never compares the user's repository with
the snapshot taken before that call: the snapshot is kept on disk (git/pending.py), and the
next `run --resume` and `doctor` compare it with now. Each kind of watched thing the agent
changed before the kill stops the resume, named; `doctor --repair` accepts the change and the
run goes on (docs/integrity.md, "A run killed while its agent works")."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from gitimprove.git import pending
from gitimprove.git.watch import RepoState
from tests.conftest import TmpRepo
from tests.test_integrity import hostile_project, needs_bwrap, start, survivors, wait_for

# the agent's change -> what the refusal names
KINDS = [
    ("user-worktree", "work tree: README.txt"),
    ("user-hook", ".git/hooks/pre-commit"),
    ("user-branch", "refs/heads/agent-was-here"),
    ("user-index", ".git/index"),
    ("user-gitconfig", ".gitconfig"),
    ("user-pth", "work tree (ignored files): under .venv"),  # hidden by your ignore rules
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


def test_a_saved_snapshot_names_what_changed_since_and_goes_when_accepted(
    tmp_repo: TmpRepo,
) -> None:
    tmp_repo.commit("one", {"a.txt": "a\n"})
    repo = tmp_repo.open()
    saved = pending.save(repo, "k", "k-1-0.0", RepoState.take(repo), reachable=True)
    assert [s.changes for s in pending.outstanding(repo)] == [[]]
    hook = tmp_repo.path / ".git" / "hooks" / "post-checkout"
    hook.write_text("#!/bin/sh\n")
    (tmp_repo.path / "a.txt").write_text("b\n")
    found = pending.outstanding(repo)
    assert found[0].run == "k"
    assert ".git/hooks/post-checkout" in found[0].changes
    assert "work tree: a.txt" in found[0].changes, found
    with pytest.raises(pending.Outstanding, match="post-checkout"):
        pending.check_at_start(repo, "other")
    pending.accept(found)
    assert not saved.exists()
    pending.check_at_start(repo, "other")  # nothing left to compare


def test_in_the_sandbox_only_what_the_harness_reads_stops(tmp_repo: TmpRepo) -> None:
    """The agent could not reach the repository: your own edits meanwhile stop nothing, an
    `improve.*` setting (which the run would take) still does."""
    tmp_repo.commit("one", {"a.txt": "a\n"})
    repo = tmp_repo.open()
    pending.save(repo, "k", "k-1-0.0", RepoState.take(repo), reachable=False)
    (tmp_repo.path / "a.txt").write_text("b\n")
    assert [s.changes for s in pending.outstanding(repo)] == [[]]
    tmp_repo.git("config", "improve.metric.command", "echo METRIC score=1")
    changes = pending.outstanding(repo)[0].changes
    assert changes == [".git/config", "git config improve.metric.command"], changes


def test_a_snapshot_gitimprove_did_not_write_is_named(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("one", {"a.txt": "a\n"})
    repo = tmp_repo.open()
    folder = tmp_repo.path / ".git" / "improve" / pending.FOLDER
    saved = pending.save(repo, "k", "k-1-0.0", RepoState.take(repo), reachable=True)
    record = json.loads(saved.read_text())
    record["refs"] = {}  # the agent's branch made to look as if it were there before
    saved.write_text(json.dumps(record))
    (folder / "x.json").write_text("{}")
    found = pending.outstanding(repo)
    named = [c for s in found for c in s.changes]
    assert named == [
        f".git/improve/watch/{saved.name} (not written by gitimprove)",
        ".git/improve/watch/x.json (not written by gitimprove)",
    ], named
    res = tmp_repo.cli("doctor")
    assert "x.json (not written by gitimprove)" in res.stdout, res.stdout


@pytest.mark.slow
def test_an_interrupted_agent_call_names_what_it_changed_and_keeps_its_snapshot(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """Ctrl-C during the agent call: on its way out, once the agent's processes are dead, the
    run compares your repository with the snapshot and names the change; the snapshot stays,
    so the next run refuses naming it too, as after a kill -9."""
    stalled = tmp_path / "stalled"
    plan = hostile_project(tmp_repo, {"1": "user-hook", "stall": str(stalled)}, "none")
    p = start(tmp_repo, "--run", "k", "-n", "1")
    wait_for(stalled, 120)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130 and "Traceback" not in err, err
    assert "while the interrupted agent worked: .git/hooks/pre-commit" in err, err
    assert "doctor --repair" in err, err
    assert len(list((tmp_repo.path / ".git" / "improve" / "watch").iterdir())) == 1
    plan_honest(tmp_repo, plan)
    refused = tmp_repo.cli("run", "--resume", "--run", "k", "-n", "1", "--json")
    assert refused.returncode == 1 and ".git/hooks/pre-commit" in refused.stderr, refused.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_your_own_edits_after_an_interrupted_agent_call_stop_nothing(
    tmp_repo: TmpRepo, tmp_path: Path, sig: int, code: int
) -> None:
    """Ctrl-C (or SIGTERM) while an agent that changed nothing works: the run compares on its
    way out and removes the snapshot, so your edits afterwards (a file, a hook) are yours and
    `run --resume` goes on, with no `doctor --repair`."""
    stalled = tmp_path / "stalled"
    plan = hostile_project(tmp_repo, {"1": "set:95", "stall": str(stalled)}, "none")
    p = start(tmp_repo, "--run", "k", "-n", "1", "--json")
    wait_for(stalled, 120)
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    assert p.returncode == code and "Traceback" not in err, err
    assert "changed while" not in out + err, out + err
    assert not list((tmp_repo.path / ".git" / "improve" / "watch").iterdir())
    assert survivors(str(plan["mark"]), tmp_repo) == []
    (tmp_repo.path / "README.txt").write_text("my own edit\n")
    (tmp_repo.path / ".git" / "hooks" / "post-merge").write_text("#!/bin/sh\n")
    plan_honest(tmp_repo, plan)
    res = tmp_repo.cli("run", "--resume", "--run", "k", "-n", "1", "--json")
    assert res.returncode == 0, res.stderr
    rows = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    assert rows[-1]["event"] == "stop", rows[-1]


@pytest.mark.slow
@needs_bwrap
def test_in_the_sandbox_your_own_edits_after_a_kill_9_stop_nothing(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """The agent could not reach the repository: an edit of yours between the kill and the
    resume is yours, and the run goes on; an `improve.*` setting it would take still stops it."""
    plan = hostile_project(tmp_repo, {"1": "user-hook", "stall": "WS:stalled"}, "bwrap")
    p = start(tmp_repo, "--run", "k", "-n", "1", "--json")
    work = tmp_repo.path / ".git" / "improve" / "work"
    deadline = time.monotonic() + 120
    while not list(work.glob("k-1-0-*/stalled")):
        assert time.monotonic() < deadline, "the agent never stalled"
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGKILL)
    p.communicate(timeout=60)
    assert not (tmp_repo.path / ".git" / "hooks" / "pre-commit").exists()  # the write failed
    assert len(list((tmp_repo.path / ".git" / "improve" / "watch").iterdir())) == 1
    (tmp_repo.path / "README.txt").write_text("my own edit\n")
    (tmp_repo.path / ".git" / "hooks" / "post-merge").write_text("#!/bin/sh\n")
    plan_honest(tmp_repo, plan)
    res = tmp_repo.cli("run", "--resume", "--run", "k", "-n", "1", "--json")
    assert res.returncode == 0, res.stderr


def test_a_pth_planted_outside_the_repository_is_named_too(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """The folders Python reads code from outside the repository (a virtualenv's
    site-packages: loop/sites.py) are kept in the snapshot with the paths they were taken of."""
    from gitimprove.util import folders

    tmp_repo.commit("one", {"a.txt": "a\n"})
    site = tmp_path / "venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "ok.pth").write_text("/opt\n")
    repo = tmp_repo.open()
    listing = folders.take([site])
    pending.save(
        repo, "k", "k-1-0.0", RepoState.take(repo), reachable=True,
        outside={"python": ([site], listing)},
    )  # fmt: skip
    assert [s.changes for s in pending.outstanding(repo)] == [[]]
    (site / "evil.pth").write_text("import os\n")
    assert pending.outstanding(repo)[0].changes == [f"{site / 'evil.pth'} (added)"]
