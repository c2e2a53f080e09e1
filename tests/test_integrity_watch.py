"""The .git watch (git/watch.py `WATCH`): the user's own git in the background never stops a
run; what an agent could use to hurt the user (a forged upstream included), or what the
harness reads, does."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from gitimprove.git import watch
from gitimprove.git.watch import RepoState
from tests.conftest import TmpRepo, git
from tests.loop_helpers import run_rows
from tests.test_integrity import assert_sound, hostile_project, needs_bwrap

DOCS = Path(__file__).resolve().parent.parent / "docs" / "integrity.md"


def with_origin(tmp_repo: TmpRepo) -> Path:
    """An `origin` the user fetches from, with a new commit and a new branch to fetch."""
    upstream = tmp_repo.path.parent / "upstream"
    git(tmp_repo.path.parent, "clone", "-q", str(tmp_repo.path), str(upstream))
    tmp_repo.git("remote", "add", "origin", str(upstream))
    tmp_repo.git("fetch", "-q", "origin")
    (upstream / "up.txt").write_text("1\n")
    git(upstream, "add", "up.txt")
    git(upstream, "commit", "-qm", "upstream")
    git(upstream, "branch", "feature")
    return upstream


def test_the_table_is_documented_and_complete() -> None:
    docs = DOCS.read_text()
    kinds = {kind for _, kind, _ in watch.WATCH}
    assert kinds == {watch.READ, watch.USER, watch.LOG, watch.BACKGROUND}
    for pattern, _kind, why in watch.WATCH:
        assert why and f"`{pattern}`" in docs, pattern
    assert watch.WATCH[-1][0] == "*" and watch.WATCH[-1][1] == watch.USER  # unknown: guarded


def test_the_users_own_git_in_the_background_is_tolerated(tmp_repo: TmpRepo) -> None:
    """pack-refs, gc, a commit's COMMIT_EDITMSG: nothing to name; fetch (FETCH_HEAD,
    remote-tracking refs) and reset (ORIG_HEAD) are named without the sandbox only. A commit on the user's
    branch is named when the agent could reach the repository, not in the sandbox; the
    config, a hook, info/, a tag, a replace ref or a truncated reflog always are where the
    agent could have written them, and the config even in the sandbox (the harness reads it)."""
    tmp_repo.commit("c", {"a.txt": "1\n"})
    with_origin(tmp_repo)
    repo = tmp_repo.open()
    before = RepoState.take(repo)
    tmp_repo.git("fetch", "-q", "origin")
    tmp_repo.git("pack-refs", "--all")
    tmp_repo.git("reset", "-q", "--soft", "HEAD")
    tmp_repo.git("gc", "-q", "--auto")
    (tmp_repo.path / ".git" / "gc.log").write_text("warning: too many loose objects\n")
    after = RepoState.take(tmp_repo.open())
    assert "refs/remotes/origin/feature" in set(after.refs) - set(before.refs)
    assert ".git/ORIG_HEAD" in set(after.files) - set(before.files)
    assert before.files[".git/FETCH_HEAD"] != after.files[".git/FETCH_HEAD"]
    assert before.changes(after, reachable=False) == []  # in the sandbox: yours
    # without it an agent could have written them: what your next pull or reset would take
    named = set(before.changes(after))
    assert {"refs/remotes/origin/feature", ".git/FETCH_HEAD", ".git/ORIG_HEAD"} <= named, named
    assert not {n for n in named if "gc" in n or "COMMIT_EDITMSG" in n or "packed" in n}

    (tmp_repo.path / "a.txt").write_text("2\n")  # the user's own commit in their work tree
    tmp_repo.git("commit", "-qam", "mine")
    committed = RepoState.take(tmp_repo.open())
    assert after.changes(committed, reachable=False) == []
    named = after.changes(committed)
    assert any(n.startswith("refs/heads/") for n in named)

    for act in (
        lambda: tmp_repo.git("tag", "t"),
        lambda: (tmp_repo.path / ".git" / "hooks" / "pre-push").write_text("#!/bin/sh\n"),
        lambda: (tmp_repo.path / ".git" / "info" / "exclude").write_text("*\n"),
        lambda: (tmp_repo.path / ".git" / "logs" / "HEAD").write_text(""),
        lambda: tmp_repo.git("branch", "agent"),
        lambda: tmp_repo.git("symbolic-ref", "HEAD", "refs/heads/agent"),
    ):
        base = RepoState.take(tmp_repo.open())
        act()
        moved = RepoState.take(tmp_repo.open())
        assert moved and base.changes(moved), act
        assert base.changes(moved, reachable=False) == []
    for act in (
        lambda: tmp_repo.git("config", "improve.metric.command", "echo 0"),
        lambda: tmp_repo.git("replace", "HEAD", "HEAD~1"),
        lambda: (tmp_repo.path / ".git" / "shallow").write_text("0" * 40 + "\n"),
    ):
        base = RepoState.take(tmp_repo.open())
        act()
        moved = RepoState.take(tmp_repo.open())
        boxed = base.changes(moved, reachable=False)
        assert boxed and set(boxed) <= set(base.changes(moved)), act


def _user_at_work(tmp_repo: TmpRepo, commit: bool, done: list[str]) -> None:
    """When the agent is working (its marker appears), the user fetches — and commits in their
    work tree — then lets the agent go on."""
    work = tmp_repo.path / ".git" / "improve" / "work"
    for _ in range(1200):
        ready = [p for p in work.glob("*/.user-ready")] if work.is_dir() else []
        if ready:
            tmp_repo.git("fetch", "-q", "origin")
            if commit:
                (tmp_repo.path / "README.txt").write_text("the user's edit\n")
                tmp_repo.git("commit", "-qam", "the user's commit")
            (ready[0].parent / ".user-go").write_text("1")
            done.append("yes")
            return
        threading.Event().wait(0.02)


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_a_users_fetch_during_an_agent_call(tmp_repo: TmpRepo, sandbox: str) -> None:
    """The user runs `git fetch` (and, in the sandbox, where only they can touch the
    repository, commits in their work tree) while the agent works: in the sandbox the run goes
    on and keeps the agent's change; without it the fetch cannot be told from an agent's
    forged upstream, so the run stops naming the refs (the documented trade-off)."""
    plan = hostile_project(
        tmp_repo, {"1": "wait-user:99", "2": "user-fetch:98", "3": "set:97"}, sandbox
    )
    with_origin(tmp_repo)
    done: list[str] = []
    user = threading.Thread(target=_user_at_work, args=(tmp_repo, sandbox == "bwrap", done))
    user.start()
    res = tmp_repo.cli("run", "--run", "h", "-n", "3", "--json")
    user.join(timeout=60)
    assert done == ["yes"]
    if sandbox == "none":
        assert res.returncode == 1 and "stopped" in res.stderr, res.stderr
        assert "refs/remotes/origin/" in res.stderr and "Traceback" not in res.stderr
        return
    assert res.returncode == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    assert events[-1]["event"] == "stop" and "iterations reached" in events[-1]["reason"]
    rows = run_rows(tmp_repo, "h")
    assert [r["status"] for r in rows] == ["baseline", "keep", "keep", "keep"], rows
    assert_sound(tmp_repo, "h", plan["mark"])
    assert tmp_repo.git("rev-parse", "--verify", "-q", "refs/remotes/origin/feature")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("attack", "named"),
    [
        ("forge-remote", "refs/remotes/origin/main"),
        ("forge-fetch-head", ".git/FETCH_HEAD"),
        ("forge-orig-head", ".git/ORIG_HEAD"),
        ("forge-prefetch", "refs/prefetch/remotes/origin/main"),
    ],
)
def test_a_forged_upstream_stops_a_run_without_the_sandbox(
    tmp_repo: TmpRepo, attack: str, named: str
) -> None:
    """Without the sandbox the agent writes a commit into the user's objects and makes it the
    upstream the user's next pull, rebase or reset takes: the run stops naming the path, the
    attempt is `tampered`, and `doctor` reports it."""
    tmp_repo.commit("c", {"a.txt": "1\n"})
    with_origin(tmp_repo)
    hostile_project(tmp_repo, {"1": "set:99", "2": f"{attack}:98"}, "none")
    res = tmp_repo.cli("run", "--run", "h", "-n", "3", "--json")
    assert res.returncode == 1, res.stderr
    assert "stopped" in res.stderr and named in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    rows = run_rows(tmp_repo, "h")
    assert [r["status"] for r in rows] == ["baseline", "keep", "tampered"], rows
    assert named in rows[2]["reason"]
    doctor = tmp_repo.cli("doctor")
    assert named in doctor.stdout + doctor.stderr, doctor.stdout + doctor.stderr
