"""The harness takes your work tree's status after every agent call (git/status.py). Without
the sandbox an agent can configure a filter driver in your repository (or in a submodule's
own configuration) and give every path `filter=<name>` in `info/attributes`: `git status`
would then run its `clean` (or `process`) command for each tracked file whose `lstat`
changed, as the harness, outside any attempt's supervision. Real repositories, real git; the
hostile agent's loop is in tests/test_integrity.py (`user-filter`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitimprove.git.status import work_tree_status
from tests.conftest import git


def _repo(path: Path, files: dict[str, str]) -> Path:
    path.mkdir()
    git(path, "init", "-q")
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    git(path, "add", ".")
    git(path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    return path


def _arm(config: Path, info: Path, ran: Path, key: str) -> None:
    """What the agent writes: a driver whose program leaves `ran`, for every path."""
    command = f"sh -c 'echo {key} >> {ran}; cat'"
    if key == "process":
        command = f"sh -c 'echo {key} >> {ran}; exit 1'"
    subprocess.run(
        ["git", "config", "--file", str(config), f"filter.a.b=c.{key}", command], check=True
    )
    info.mkdir(parents=True, exist_ok=True)
    (info / "attributes").write_text("* filter=a.b=c\n")


def _touch_all(root: Path) -> None:
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in names:
            path = Path(dirpath) / name
            t = path.stat().st_mtime - 1000
            os.utime(path, (t, t))


@pytest.mark.parametrize("key", ["clean", "process"])
def test_the_status_runs_no_filter_your_configuration_names(tmp_path: Path, key: str) -> None:
    repo = _repo(tmp_path / "r", {"a.txt": "a\n", "b.txt": "b\n"})
    ran = tmp_path / "ran"
    _arm(repo / ".git" / "config", repo / ".git" / "info", ran, key)
    _touch_all(repo)
    status, stuck = work_tree_status(repo, repo / ".git")
    assert stuck == [] and status == b""  # same bytes on disk: nothing changed
    assert not ran.exists(), ran.read_text()
    (repo / "a.txt").write_text("changed\n")  # a real change is still seen
    status, _ = work_tree_status(repo, repo / ".git")
    assert b"a.txt" in status and not ran.exists()


def test_nor_one_a_submodule_configuration_names(tmp_path: Path) -> None:
    source = _repo(tmp_path / "s", {"s.txt": "s\n"})
    repo = _repo(tmp_path / "r", {"a.txt": "a\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "sub")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "sub")
    module = repo / ".git" / "modules" / "sub"
    ran = tmp_path / "ran"
    _arm(module / "config", module / "info", ran, "clean")
    _touch_all(repo / "sub")
    status, stuck = work_tree_status(repo, repo / ".git")
    assert stuck == [] and status == b""
    assert not ran.exists(), ran.read_text()
    (repo / "sub" / "s.txt").write_text("changed\n")
    status, _ = work_tree_status(repo, repo / ".git")
    assert b"sub" in status and not ran.exists()


def test_the_status_fetches_nothing_from_a_promisor_remote(tmp_path: Path) -> None:
    """The agent makes your repository a partial clone of a "promisor" remote whose
    `uploadpack` is its program, and removes an object: git would fetch it, running that
    program as the harness. The status allows no transport; the object is missing (the
    status says so), nothing ran."""
    repo = _repo(tmp_path / "r", {"d/a.txt": "a\n"})
    ran = tmp_path / "ran"
    for key, value in (
        ("core.repositoryformatversion", "1"),
        ("extensions.partialClone", "evil"),
        ("remote.evil.url", str(repo)),
        ("remote.evil.promisor", "true"),
        ("remote.evil.uploadpack", f"sh -c 'touch {ran}; exit 1' --"),
    ):
        git(repo, "config", key, value)
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    (repo / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    work_tree_status(repo, repo / ".git")
    assert not ran.exists()


@pytest.mark.parametrize("where", ["config", "included", "submodule"])
def test_a_driver_configured_after_a_status_is_blanked_in_the_next(
    tmp_path: Path, where: str
) -> None:
    """The drivers found are remembered only while the configuration files hold the same
    bytes (and none includes another): one an agent adds between two looks never runs."""
    repo = _repo(tmp_path / "r", {"a.txt": "a\n", "b.txt": "b\n"})
    config = repo / ".git" / "config"
    if where == "included":
        config = tmp_path / "extra.config"
        config.write_text("")
        git(repo, "config", "include.path", str(config))
    elif where == "submodule":
        source = _repo(tmp_path / "s", {"s.txt": "s\n"})
        git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "sub")
        git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "sub")
        config = repo / ".git" / "modules" / "sub" / "config"
    for _ in range(2):  # found, then remembered
        status, stuck = work_tree_status(repo, repo / ".git")
        assert stuck == [] and status == b""
    ran = tmp_path / "ran"
    info = config.parent / "info" if where == "submodule" else repo / ".git" / "info"
    _arm(config, info, ran, "clean")
    _touch_all(repo)
    status, stuck = work_tree_status(repo, repo / ".git")
    assert stuck == [] and status == b""
    assert not ran.exists(), ran.read_text()


def test_nor_when_your_environment_names_a_git_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`GIT_CONFIG` (read by `git config` alone) made the look for drivers read that file in
    place of `.git/config`: the driver planted there was missed, and `git status` ran it."""
    repo = _repo(tmp_path / "r", {"a.txt": "a\n"})
    ran = tmp_path / "ran"
    _arm(repo / ".git" / "config", repo / ".git" / "info", ran, "clean")
    own = tmp_path / "mine.gitconfig"
    own.write_text("[user]\n\tname = me\n")
    monkeypatch.setenv("GIT_CONFIG", str(own))
    _touch_all(repo)
    status, stuck = work_tree_status(repo, repo / ".git")
    assert stuck == [] and status == b""
    assert not ran.exists(), ran.read_text()


# an agent without the sandbox: a driver in the user's `.git/config` (written with `--file`:
# its own `git config` would write the file GIT_CONFIG names), `filter=` for every path, and
# the tracked files' times moved, so that the harness's status hashes them again
LOOP_AGENT = """import os, pathlib, subprocess, sys
pathlib.Path("src/value.txt").write_text(str(90 - int(os.environ["GITIMPROVE_ITERATION"])))
if os.environ["GITIMPROVE_ITERATION"] == "2":
    repo = next(p.parent for p in pathlib.Path.cwd().parents if p.name == ".git")
    command = f"sh -c 'echo ran >> {sys.argv[1]}; cat'"
    config = repo / ".git" / "config"
    subprocess.run(["git", "config", "--file", str(config), "filter.evil.clean", command])
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* filter=evil\\n")
    for f in repo.iterdir():
        if f.is_file():
            t = f.stat().st_mtime - 100
            os.utime(f, (t, t))
"""


@pytest.mark.slow
def test_a_run_with_git_config_set_runs_no_driver_the_agent_plants(tmp_path: Path) -> None:
    from tests.conftest import TmpRepo
    from tests.loop_helpers import run_rows, value_project

    repo = TmpRepo(_repo(tmp_path / "r", {"README.txt": "r\n"}))
    agent, ran = tmp_path / "agent.py", tmp_path / "ran"
    agent.write_text(LOOP_AGENT)
    value_project(repo, f"{sys.executable} {agent} {ran}")
    own = tmp_path / "mine.gitconfig"
    own.write_text("[user]\n\tname = me\n")
    res = repo.cli("run", "--run", "h", "-n", "3", env={"GIT_CONFIG": str(own)})
    assert res.returncode == 1 and ".git/config" in res.stderr, res.stderr
    assert not ran.exists(), "the harness ran the agent's filter: " + ran.read_text()
    assert [r["status"] for r in run_rows(repo, "h")] == ["baseline", "keep", "tampered"]
