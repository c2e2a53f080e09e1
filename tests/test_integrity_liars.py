"""The user's index lies to `git status` (tests/agents/liar_agent.py): an agent without the
sandbox that marks the sealed benchmark `skip-worktree` or `assume-unchanged`, or writes the
index again with the rewritten file's `lstat` beside the old blob, then rewrites the file. The
status says nothing of it; the index's entries, compared around the agent call
(git/status.py `index_state`, `index_lies`), do: the run stops naming `.git/index` and the path.
Your own `git status`, which writes the index again after a file was touched, stops nothing.
A file planted beside a `.gitignore` that ignores itself (`*`) is hidden from the status too:
such a rule file is kept in the status, and the run stops naming it.
Every work tree of the repository is watched so (a linked worktree, the main one when the run
starts in a linked one), and a submodule's own index too. What the agent does to its own clone
(a `.git` file pointing at your git directory, `core.worktree`, alternates) or a hard link to
your file changes nothing the harness hashes; a repository with a submodule keeps it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitimprove.agents.sandbox import bwrap_usable
from gitimprove.git.status import TOOL_CACHES, index_lies, index_state, work_tree_status
from tests.conftest import TmpRepo, cli, git
from tests.loop_helpers import run_rows, value_project

AGENT = Path(__file__).parent / "agents" / "liar_agent.py"
BENCH = "print(f\"METRIC score={float(open('src/value.txt').read()):g}\")\n"


def _run(
    tmp_repo: TmpRepo, how: str, sandbox: str = "none", *, linked: bool = False
) -> tuple[int, str, list[str]]:
    value_project(tmp_repo, f"{sys.executable} {AGENT} {how}", sandbox=sandbox, timeouts=True)
    if linked:
        tmp_repo.git("worktree", "add", "-q", str(tmp_repo.path.parent / "linked"), "-b", "side")
    res = tmp_repo.cli("run", "--run", "r", "-n", "1")
    out = res.stdout + res.stderr
    assert "Traceback" not in out, out
    rows = run_rows(tmp_repo, "r")
    return res.returncode, out, [f"{r['status']}: {r.get('reason', '')}" for r in rows]


@pytest.mark.parametrize(
    ("how", "what"),
    [
        ("skip-worktree", "skip-worktree set"),  # the sealed benchmark rewritten, unseen
        pytest.param("assume-unchanged", "assume-unchanged set", marks=pytest.mark.slow),
        ("index-forged", "recorded as unchanged, but it is not"),
        ("self-ignored", None),  # a conftest.py planted beside a `*` .gitignore
    ],
)
def test_an_index_that_hides_a_changed_file_stops_the_run(
    tmp_repo: TmpRepo, how: str, what: str
) -> None:
    code, out, rows = _run(tmp_repo, how)
    assert code == 1, out
    named = "work tree: tests/.gitignore" if what is None else f".git/index: bench.py ({what})"
    assert named in out, out
    assert [r.split(":")[0] for r in rows] == ["baseline", "tampered"], rows
    assert named in rows[1]


@pytest.mark.slow
def test_your_pytest_making_its_cache_in_your_work_tree_stops_nothing(tmp_repo: TmpRepo) -> None:
    code, out, rows = _run(tmp_repo, "pytest-cache")
    assert (tmp_repo.path / ".pytest_cache" / ".gitignore").is_file()  # pytest did make it
    assert code == 0, out
    assert [r.split(":")[0] for r in rows] == ["baseline", "keep"], rows


@pytest.mark.slow
@pytest.mark.parametrize(
    ("how", "named"),
    [("tool-named", "tests/.gitignore"), ("venv", ".venv/.gitignore")],
)
def test_a_self_ignoring_folder_not_a_tools_cache_stops_the_run_saying_how_to_go_on(
    tmp_repo: TmpRepo, how: str, named: str
) -> None:
    """pytest's own rule file in a folder not named as its cache, and a new virtualenv (whose
    python `uv run` would run), stop the run: the message says a tool of yours makes such a
    folder, and that `run --resume` goes on when you did."""
    code, out, rows = _run(tmp_repo, how)
    assert code == 1, out
    assert f"work tree: {named}" in out, out
    assert "git improve run --resume" in out and "python -m venv" in out, out
    assert [r.split(":")[0] for r in rows] == ["baseline", "tampered"], rows
    if how == "venv":  # the folder stays: the resumed run takes it as yours and goes on
        resumed = tmp_repo.cli("run", "--resume", "--run", "r", "-n", "1")
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr


def test_which_self_ignoring_folders_the_status_keeps(tmp_repo: TmpRepo) -> None:
    """A known tool's cache, its rule file as the tool writes it, is left out of the status;
    the same bytes under another name, another rule file in a cache's place, or a link there
    are seen (each hides what lies beside it)."""
    tmp_repo.commit("base", {"a.txt": "a\n"})
    before, problems = work_tree_status(tmp_repo.path)
    assert problems == []
    for folder, data in TOOL_CACHES.items():
        where = tmp_repo.path / os.fsdecode(folder)
        where.mkdir()
        (where / ".gitignore").write_bytes(data)
        (where / "conftest.py").write_text("planted\n")
    assert work_tree_status(tmp_repo.path) == (before, [])
    kept = {
        "tests/.gitignore": TOOL_CACHES[b".pytest_cache"],  # pytest's bytes, not its folder
        "sub/.mypy_cache/.gitignore": TOOL_CACHES[b".mypy_cache"] + b"!x\n",
        ".venv/.gitignore": b"# created by virtualenv automatically\n*\n",
    }
    for rel, data in kept.items():
        (tmp_repo.path / rel).parent.mkdir(parents=True)
        (tmp_repo.path / rel).write_bytes(data)
    link = tmp_repo.path / "lib" / ".ruff_cache"
    link.mkdir(parents=True)
    (tmp_repo.path / "rules").write_bytes(TOOL_CACHES[b".ruff_cache"])
    (link / ".gitignore").symlink_to(tmp_repo.path / "rules")
    status, _ = work_tree_status(tmp_repo.path)
    items = status.split(b"\0")
    assert {item[3:].decode() for item in items if item.startswith(b"!! ")} == set(kept), status
    assert b"?? lib/.ruff_cache/.gitignore" in items, status  # git reads no linked rule file


@pytest.mark.slow
def test_your_own_status_refreshing_the_index_stops_nothing(tmp_repo: TmpRepo) -> None:
    code, out, rows = _run(tmp_repo, "refresh", linked=True)  # a linked worktree watched too
    assert code == 0, out
    assert [r.split(":")[0] for r in rows] == ["baseline", "keep"], rows


@pytest.mark.slow
@pytest.mark.parametrize("how", ["gitfile", "clone-config", "clone-alternates", "hardlink"])
def test_what_the_agent_does_to_its_clone_changes_nothing_hashed(
    tmp_repo: TmpRepo, how: str
) -> None:
    code, out, rows = _run(tmp_repo, how)
    assert code == 0, out
    kept = "no-op" if how == "hardlink" else "keep"  # the link holds your file's 100
    assert [r.split(":")[0] for r in rows] == ["baseline", kept], rows
    assert tmp_repo.git("status", "--porcelain") == ""
    assert tmp_repo.path.joinpath("src/value.txt").read_text() == "100\n"


@pytest.mark.slow
@pytest.mark.skipif(not bwrap_usable(), reason="bubblewrap is not usable here")
@pytest.mark.parametrize("how", ["skip-worktree", "index-forged"])
def test_in_the_sandbox_the_index_is_out_of_reach(tmp_repo: TmpRepo, how: str) -> None:
    code, out, rows = _run(tmp_repo, how, sandbox="bwrap")
    assert code == 0, out
    assert [r.split(":")[0] for r in rows] == ["baseline", "crash"], rows  # its write failed
    assert tmp_repo.path.joinpath("bench.py").read_text() == BENCH
    assert tmp_repo.git("ls-files", "-v") == "H .gitimprove.toml\nH bench.py\nH src/value.txt"


def test_index_lies_names_a_forged_lstat_and_passes_a_refresh(tmp_repo: TmpRepo) -> None:
    """The check itself on a real index: `git update-index --refresh` after a touch passes;
    the same entry recorded for a file whose bytes changed is named; a flag set is named."""
    tmp_repo.commit("c", {"a.txt": "one\n", "b.txt": "two\n"})
    index = tmp_repo.path / ".git" / "index"
    before = index_state(tmp_repo.path, index, tmp_repo.path / ".git")
    assert set(before.entries) == {b"a.txt", b"b.txt"}
    subprocess.run(["touch", "-d", "2001-01-01", str(tmp_repo.path / "a.txt")], check=True)
    tmp_repo.git("update-index", "--refresh")
    refreshed = index_state(tmp_repo.path, index, tmp_repo.path / ".git")
    assert refreshed.stats[b"a.txt"] != before.stats[b"a.txt"]
    assert before.changed(refreshed) == []
    assert index_lies(before, refreshed, tmp_repo.path, tmp_repo.path / ".git") == []
    # the same record, the file's bytes changed and its times put back: the record lies
    tmp_repo.path.joinpath("a.txt").write_text("ONE\n")
    subprocess.run(["touch", "-d", "2001-01-01", str(tmp_repo.path / "a.txt")], check=True)
    lies = index_lies(before, refreshed, tmp_repo.path, tmp_repo.path / ".git")
    assert lies == ["a.txt (recorded as unchanged, but it is not)"]
    tmp_repo.git("update-index", "--skip-worktree", "b.txt")
    flagged = index_state(tmp_repo.path, index, tmp_repo.path / ".git")
    assert refreshed.changed(flagged) == ["b.txt (skip-worktree set)"]


@pytest.mark.parametrize("where", ["linked", "main"])
def test_a_file_of_another_worktree_changed_stops_the_run(tmp_repo: TmpRepo, where: str) -> None:
    """Your work in another worktree of the repository (`git worktree add`) is yours too: the
    agent's write there stops the run, named by the worktree's folder — whether the run was
    started in the main work tree or in the linked one."""
    value_project(tmp_repo, f"{sys.executable} {AGENT} other-worktree", timeouts=True)
    linked = tmp_repo.path.parent / "linked"
    tmp_repo.git("worktree", "add", "-q", str(linked), "-b", "side")
    start, other = (tmp_repo.path, linked) if where == "linked" else (linked, tmp_repo.path)
    if where == "main":  # the agent rewrites the main work tree's file through the pointer
        agent = f"{sys.executable} {AGENT} main-worktree"
        tmp_repo.git("-C", str(linked), "config", "improve.agent.command", agent)
    res = cli(start, "run", "--run", "r", "-n", "1")
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert f"work tree: {other}: bench.py" in out, out
    assert [r["status"] for r in run_rows(tmp_repo, "r")] == ["baseline", "tampered"]


@pytest.mark.slow
@pytest.mark.skipif(not bwrap_usable(), reason="bubblewrap is not usable here")
def test_in_the_sandbox_another_worktree_is_out_of_reach(tmp_repo: TmpRepo) -> None:
    code, out, rows = _run(tmp_repo, "other-worktree", sandbox="bwrap", linked=True)
    assert code == 0, out
    assert [r.split(":")[0] for r in rows] == ["baseline", "keep"], rows  # its honest gain
    assert tmp_repo.path.parent.joinpath("linked", "bench.py").read_text() == BENCH


def _with_submodule(tmp_repo: TmpRepo, how: str) -> None:
    lib = tmp_repo.path.parent / "lib"
    lib.mkdir()
    lib.joinpath("f.txt").write_text("one\n")
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "lib"]):
        git(lib, *args)
    value_project(tmp_repo, f"{sys.executable} {AGENT} {how}", timeouts=True)
    tmp_repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    tmp_repo.git("commit", "-qm", "lib")


def test_a_submodules_index_that_hides_a_changed_file_stops_the_run(tmp_repo: TmpRepo) -> None:
    """`git status` sees a submodule's files through the submodule's own index: a flag set
    there hides a rewritten file from it as well."""
    _with_submodule(tmp_repo, "submodule-skip")
    res = tmp_repo.cli("run", "--run", "r", "-n", "1")
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert f".git/index of {tmp_repo.path / 'lib'}: f.txt (skip-worktree set)" in out, out


def test_a_repository_with_a_submodule_keeps_it_in_every_commit(tmp_repo: TmpRepo) -> None:
    """The workspace holds an empty folder where the submodule is; the tree hashed from its
    files keeps the incumbent's submodule (it stopped the run with an internal error, then
    made every attempt `out-of-scope`: "changed files outside scope.mutable: lib")."""
    _with_submodule(tmp_repo, "clone-config")  # an honest gain
    link = tmp_repo.git("ls-tree", "HEAD", "lib")
    res = tmp_repo.cli("run", "--run", "r", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    assert [r["status"] for r in run_rows(tmp_repo, "r")] == ["baseline", "keep"]
    assert tmp_repo.git("ls-tree", "improve/r", "lib") == link


def test_a_file_rewritten_with_its_times_put_back_is_seen_whatever_the_config(
    tmp_repo: TmpRepo,
) -> None:
    """Your repository compares no ctime (`core.trustctime = false`, common on some file
    systems) and keeps an untracked cache: the harness's status compares it all the same."""
    value_project(tmp_repo, f"{sys.executable} {AGENT} same-stat", timeouts=True)
    tmp_repo.git("config", "core.trustctime", "false")
    tmp_repo.git("config", "core.untrackedCache", "true")
    time.sleep(1.1)  # the index newer than the file: its entry is not racily clean
    tmp_repo.git("update-index", "--refresh")
    res = tmp_repo.cli("run", "--run", "r", "-n", "1")
    out = res.stdout + res.stderr
    assert tmp_repo.git("status", "--porcelain") == ""  # your own git sees nothing
    assert tmp_repo.path.joinpath("bench.py").read_text() != BENCH
    assert res.returncode == 1, out
    assert "work tree: bench.py" in out, out
