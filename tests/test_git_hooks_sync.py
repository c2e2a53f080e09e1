"""Git hook shims and `git improve sync`, with a real bare remote, real commits and pushes."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitimprove.git import memory, notes
from gitimprove.hooks import install
from gitimprove.state import experiments
from tests.conftest import PY, ROOT, TmpRepo, fast_commits, git

CONFIG = '[metric]\ncommand = "echo 1"\n'


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(bare), str(seed))
    (seed / ".gitimprove.toml").write_text(CONFIG)
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "initial")
    git(seed, "push", "-q", "origin", "HEAD:main")
    git(bare, "symbolic-ref", "HEAD", "refs/heads/main")
    return bare


def clone(remote: Path, path: Path) -> TmpRepo:
    git(remote.parent, "clone", "-q", str(remote), str(path))
    return TmpRepo(path)


def wait_until(check, seconds: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


WRITER = """
import subprocess, sys
from gitimprove.git.repo import open_repo
from gitimprove.git import memory
from gitimprove.git.sync import sync
from gitimprove.state import experiments
repo = open_repo(sys.argv[1])
w = sys.argv[2]
commits = sys.argv[3].split(",")
shared = sys.argv[4]
for i, commit in enumerate(commits):
    experiments.record(repo, commit, {"status": "pending", "description": f"{w}-{i}"})
    memory.add_entries(repo, {memory.entry_name("signals", "json"): '{"w": "%s", "i": %d}' % (w, i)})
    if i == 0:
        experiments.record(repo, shared, {"reason": f"clone {w} was here"}, op="update")
    if i % 10 == 9:
        sync(repo)
"""


@pytest.mark.slow
def test_four_clones_syncing_concurrently_end_with_the_union(remote: Path, tmp_path: Path) -> None:
    clones = [clone(remote, tmp_path / f"c{w}") for w in range(4)]
    shared = clones[0].git("rev-parse", "HEAD")
    procs = []
    for w, c in enumerate(clones):
        commits = fast_commits(c, 50, f"w{w}")
        procs.append(
            subprocess.Popen([PY, "-c", WRITER, str(c.path), str(w), ",".join(commits), shared])
        )
    assert [p.wait(timeout=600) for p in procs] == [0] * 4
    for _ in range(2):
        for c in clones:
            assert c.cli("sync").returncode == 0
    remote_notes = set(git(remote, "notes", "--ref=improve", "list").split())
    assert (
        len(git(remote, "notes", "--ref=improve", "list").splitlines()) == 201
    )  # 200 + the shared commit
    entries = git(remote, "ls-tree", "-r", "--name-only", "refs/heads/improve/memory").splitlines()
    assert len([e for e in entries if e.startswith("signals/")]) == 200
    for c in clones:
        repo = c.open()
        assert len(dict(notes.iter_notes(repo))) == 201
        assert len(list(memory.iter_entries(repo, "signals/"))) == 200
        exp = experiments.get(repo, shared)
        assert exp is not None
        lines = [
            json.loads(ln)
            for ln in notes.read_note(repo, shared).decode().splitlines()
            if ln.strip()
        ]
        assert {ln.get("reason") for ln in lines} == {f"clone {w} was here" for w in range(4)}
        assert exp.state["reason"].startswith("clone ")
    assert remote_notes
    git(remote, "fsck", "--no-progress")


@pytest.mark.slow
def test_two_clones_same_note_keeps_both_sides(remote: Path, tmp_path: Path) -> None:
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    head = a.git("rev-parse", "HEAD")
    experiments.record(a.open(), head, {"status": "pending", "description": "from a"})
    experiments.record(b.open(), head, {"reason": "from b"}, op="update")
    memory.add_entries(a.open(), {"ideas/2026/11/a.json": "{}"})
    memory.add_entries(b.open(), {"ideas/2026/11/b.json": "{}"})
    for c in (a, b, a):
        res = c.cli("sync", "--json")
        assert res.returncode == 0, res.stderr
    for c in (a, b):
        c.cli("sync")
        exp = experiments.get(c.open(), head)
        assert (
            exp is not None
            and exp.state["description"] == "from a"
            and exp.state["reason"] == "from b"
        )
        assert sorted(p for p, _ in memory.iter_entries(c.open(), "ideas/")) == [
            "ideas/2026/11/a.json",
            "ideas/2026/11/b.json",
        ]
    # what came in shows in the views
    assert "from a" in b.cli("log").stdout


def test_unreachable_remote_is_a_clear_error_and_changes_nothing(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    tmp_repo.commit("initial", {".gitimprove.toml": CONFIG})
    tmp_repo.git("remote", "add", "origin", str(tmp_path / "nowhere.git"))
    memory.add_entries(tmp_repo.open(), {"ideas/x.json": "{}"})
    before = tmp_repo.git("for-each-ref")
    res = tmp_repo.cli("sync")
    assert (
        res.returncode == 1
        and "cannot reach the remote 'origin'" in res.stderr
        and "nothing was changed" in res.stderr
    )
    assert tmp_repo.git("for-each-ref") == before
    assert tmp_repo.cli("sync", "nosuchremote").returncode == 1


def test_commit_and_push_through_the_shims(remote: Path, tmp_path: Path) -> None:
    repo = clone(remote, tmp_path / "work")
    res = repo.cli("hooks", "install", "--git")
    assert res.returncode == 0, res.stderr
    hooks = repo.path / ".git" / "hooks"
    for event in install.GIT_HOOKS:
        assert (hooks / event).read_text() == install.shim_text(event)
        assert os.access(hooks / event, os.X_OK)
    sha = repo.commit("experiment(core): try a faster loop", {"x.txt": "1"})
    exp = experiments.get(repo.open(), sha)
    assert exp is not None and exp.status == "pending" and exp.state["scope"] == "core"
    memory.add_entries(repo.open(), {"ideas/2026/11/i.json": "{}"})
    push = subprocess.run(
        ["git", "push", "origin", "HEAD:main"], cwd=repo.path, capture_output=True, text=True
    )
    assert push.returncode == 0, push.stderr
    assert git(remote, "rev-parse", "main") == sha  # the user's branch, exactly
    wait_until(
        lambda: (
            git(
                remote,
                "for-each-ref",
                "--format=%(refname)",
                "refs/notes/improve",
                "refs/heads/improve/memory",
            ).count("\n")
            == 1
        )
    )
    assert git(remote, "notes", "--ref=improve", "show", sha)
    assert "ideas/2026/11/i.json" in git(
        remote, "ls-tree", "-r", "--name-only", "refs/heads/improve/memory"
    )


def test_existing_hook_keeps_running_and_comes_back_byte_for_byte(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    tmp_repo.commit("initial", {".gitimprove.toml": CONFIG})
    hooks = tmp_repo.path / ".git" / "hooks"
    marker = tmp_path / "legacy-ran"
    original = f"#!/bin/sh\n# my own hook\necho ran >> {marker}\n".encode()
    (hooks / "post-commit").write_bytes(original)
    (hooks / "post-commit").chmod(0o750)
    assert tmp_repo.cli("hooks", "install", "--git").returncode == 0
    assert (hooks / "post-commit.legacy").read_bytes() == original
    again = tmp_repo.cli("hooks", "install", "--git")
    assert "already installed" in again.stdout
    sha = tmp_repo.commit("experiment(x): chained")
    assert marker.read_text() == "ran\n"
    assert experiments.get(tmp_repo.open(), sha) is not None
    assert "chaining post-commit.legacy" in tmp_repo.cli("hooks", "status").stdout
    assert tmp_repo.cli("hooks", "uninstall", "--git").returncode == 0
    assert (hooks / "post-commit").read_bytes() == original
    assert stat.S_IMODE((hooks / "post-commit").stat().st_mode) == 0o750
    assert not (hooks / "post-commit.legacy").exists() and not (hooks / "pre-push").exists()


def test_broken_install_warns_once_and_lets_commit_and_push_through(
    remote: Path, tmp_path: Path
) -> None:
    bare_env = tmp_path / "bare-python"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare_env)], check=True)
    repo = clone(remote, tmp_path / "work")
    install.install_git(repo.path, python=str(bare_env / "bin" / "python"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = "/usr/bin:/bin"
    (repo.path / "y.txt").write_text("y")
    subprocess.run(["git", "add", "-A"], cwd=repo.path, check=True, env=env)
    res = subprocess.run(
        ["git", "commit", "-q", "-m", "experiment(x): y"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert res.returncode == 0
    assert res.stderr.count("gitimprove: post-commit hook skipped") == 1
    res = subprocess.run(
        ["git", "push", "-q", "origin", "HEAD:main"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert res.returncode == 0
    assert res.stderr.count("gitimprove: pre-push hook skipped") == 1
    assert git(remote, "rev-parse", "main") == repo.git("rev-parse", "HEAD")


def test_hooks_path_elsewhere_is_refused_politely(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("initial", {".gitimprove.toml": CONFIG})
    tmp_repo.git("config", "core.hooksPath", ".githooks")
    res = tmp_repo.cli("hooks", "install", "--git")
    assert res.returncode == 1
    assert "core.hooksPath points to .githooks" in res.stderr
    assert "-m gitimprove hook post-commit" in res.stderr and ".pre-commit-hooks.yaml" in res.stderr
    assert not (tmp_repo.path / ".githooks").exists()


def test_linked_worktree_and_submodule(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    tmp_repo.commit("initial", {".gitimprove.toml": CONFIG})
    wt = tmp_path / "wt"
    tmp_repo.git("worktree", "add", "-q", "-b", "side", str(wt))
    assert TmpRepo(wt).cli("hooks", "install", "--git").returncode == 0
    assert (tmp_repo.path / ".git" / "hooks" / "post-commit").exists()
    sha = TmpRepo(wt).commit("experiment(wt): from a worktree", {"w.txt": "w"})
    assert experiments.get(tmp_repo.open(), sha) is not None
    sub_src = tmp_path / "subsrc"
    sub_src.mkdir()
    git(sub_src, "init", "-q")
    TmpRepo(sub_src).commit("sub", {".gitimprove.toml": CONFIG})
    tmp_repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub_src), "sub")
    sub = TmpRepo(tmp_repo.path / "sub")
    assert sub.cli("hooks", "install", "--git").returncode == 0
    assert (tmp_repo.path / ".git" / "modules" / "sub" / "hooks" / "post-commit").exists()
    sha = sub.commit("experiment(sub): in a submodule", {"s.txt": "s"})
    assert experiments.get(sub.open(), sha) is not None


def test_shipped_shims_are_the_checked_in_ones() -> None:
    for event in install.GIT_HOOKS:
        source = (ROOT / "githooks" / event).read_text()
        assert install.shim_template(event) == source
        assert "@PYTHON@" in source and "gitimprove-shim v1" in source
        assert os.access(ROOT / "githooks" / event, os.X_OK)
    spec = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "id: gitimprove-post-commit" in spec and "stages: [pre-push]" in spec
