"""An agent's workspace comes from the previous attempt's (git/workspace.py, git/renew.py):
moved to a fresh path once every process of the agent is gone, whatever is not as the harness
recorded it thrown away and written anew, `.git` made anew by the harness. Whatever an agent
did to its workspace, the next attempt's holds exactly the incumbent's tree, with a clean
status, no remote and no hook; and a file the harness proves unchanged is not read again when
the tree is hashed."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gitimprove.agents.sandbox import bwrap_usable
from gitimprove.git.checkout import COUNTS, finish_removals
from gitimprove.git.workspace import Workspaces, hash_workspace, made_workspace
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project
from tests.test_integrity_spares import TAMPER, _commit_a, _commit_b, committed, tree_of


def _git_is_fresh(tmp_repo: TmpRepo, path: Path, commit: str) -> None:
    """The harness's `.git`: HEAD at the commit, a clean status, no remote, no hook."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str) -> str:
        res = subprocess.run(["git", *args], cwd=path, capture_output=True, text=True, env=env)
        assert res.returncode == 0, res.stderr
        return res.stdout.strip()

    assert git("rev-parse", "HEAD") == commit
    assert git("status", "--porcelain", "--untracked-files=all") == ""
    assert git("remote") == ""
    assert not (path / ".git" / "hooks").exists()
    assert git("config", "--local", "--list").splitlines() == [
        "core.repositoryformatversion=0",
        "core.filemode=true",
        "core.bare=false",
        "core.logallrefupdates=true",
    ]
    assert git("diff", "HEAD", "--stat") == ""


def _tamper_git(root: Path) -> None:
    """Everything an agent can do to its clone's `.git`."""
    git = root / ".git"
    (git / "hooks").mkdir(exist_ok=True)
    hook = git / "hooks" / "post-checkout"
    hook.write_text("#!/bin/sh\necho hooked\n")
    hook.chmod(0o755)
    with open(git / "config", "a") as f:
        f.write('[remote "origin"]\n\turl = /somewhere/else\n[core]\n\thooksPath = /tmp\n')
    (git / "index").write_bytes(b"garbage")
    (git / "HEAD").write_text("0" * 40 + "\n")
    (git / "objects" / "info" / "alternates").write_text("/elsewhere/objects\n")


def _git_replaced(root: Path) -> None:
    subprocess.run(["rm", "-rf", str(root / ".git")], check=True)
    os.symlink("/tmp", root / ".git")


def _ignored(root: Path) -> None:
    (root / "build").mkdir()
    (root / "build" / "cache.bin").write_bytes(b"left for the next attempt")
    (root / ".env").write_text("LEFT=1\n")


def _everything_gone(root: Path) -> None:
    for entry in os.listdir(root):
        subprocess.run(["rm", "-rf", str(root / entry)], check=True)


def _folder_to_file(root: Path) -> None:
    subprocess.run(["rm", "-rf", str(root / "pkg" / "sub")], check=True)
    (root / "pkg" / "sub").write_text("was a folder\n")


def _unreadable_folder(root: Path) -> None:
    os.chmod(root / "pkg" / "sub", 0)


WORKSPACE_TAMPER: dict[str, Callable[[Path], None]] = {
    **TAMPER,
    "its .git": _tamper_git,
    "its .git replaced by a link": _git_replaced,
    "ignored files": _ignored,
    "everything removed": _everything_gone,
    "a folder turned into a file": _folder_to_file,
    "a folder made unreadable": _unreadable_folder,
}


def test_a_fresh_workspace_holds_the_commit_with_a_clean_git(tmp_repo: TmpRepo) -> None:
    a = _commit_a(tmp_repo)
    repo = tmp_repo.open()
    with made_workspace(repo, a, "w") as made:
        assert tree_of(made.path) == committed(tmp_repo, a, skip_compiled=False)
        _git_is_fresh(tmp_repo, made.path, a)
        assert hash_workspace(repo, made.path, known=made).tree == tmp_repo.git(
            "rev-parse", f"{a}^{{tree}}"
        )
    finish_removals()


@pytest.mark.slow
@pytest.mark.parametrize("how", sorted(WORKSPACE_TAMPER))
@pytest.mark.parametrize("same", [True, False], ids=["same-commit", "other-commit"])
def test_what_an_agent_left_never_reaches_the_next_workspace(
    tmp_repo: TmpRepo, how: str, same: bool
) -> None:
    a = _commit_a(tmp_repo)
    b = _commit_b(tmp_repo)
    repo = tmp_repo.open()
    pool = Workspaces()
    try:
        with made_workspace(repo, a, "w-1-1", pool) as made:
            first = made.path
            WORKSPACE_TAMPER[how](first)
            (tmp_repo.path.parent / "kept-a-link").unlink(missing_ok=True)
        want = a if same else b
        before = COUNTS["renewed"]
        with made_workspace(repo, want, "w-2-1", pool) as made:
            assert made.path != first and not first.exists()
            assert COUNTS["renewed"] == before + 1  # renewed, not written anew
            assert tree_of(made.path) == committed(tmp_repo, want, skip_compiled=False)
            _git_is_fresh(tmp_repo, made.path, want)
            hashed = hash_workspace(repo, made.path, known=made)
            assert hashed.tree == tmp_repo.git("rev-parse", f"{want}^{{tree}}")
    finally:
        pool.close()
        (repo.improve_dir / "work" / "kept-a-link").unlink(missing_ok=True)
    finish_removals()
    assert not [p for p in (repo.improve_dir / "work").iterdir() if not p.name.endswith(".pid")]


def test_a_file_changed_with_its_times_put_back_is_hashed_from_disk(tmp_repo: TmpRepo) -> None:
    """The proof is the whole `lstat` (the change time moves), never the size and mtime."""
    a = _commit_a(tmp_repo)
    repo = tmp_repo.open()
    with made_workspace(repo, a, "w") as made:
        path = made.path / "pkg" / "a.py"
        st = os.lstat(path)
        path.write_text("A = 7\n")  # the same size
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        hashed = hash_workspace(repo, made.path, known=made)
        blob = tmp_repo.git("rev-parse", f"{hashed.tree}:pkg/a.py")
        assert tmp_repo.git("cat-file", "blob", blob) == "A = 7"
    finish_removals()


AGENT = r"""
import hashlib, json, os, pathlib, stat, subprocess, sys
log = pathlib.Path(sys.argv[1])
n = int(os.environ["GITIMPROVE_ITERATION"])
root = pathlib.Path.cwd()
view = {}
for top, dirs, files in os.walk(root):
    rel_top = os.path.relpath(top, root)
    if rel_top == ".git" or rel_top.startswith(".git/"):
        continue
    for name in dirs + files:
        rel = name if rel_top == "." else rel_top + "/" + name
        if rel == ".git":
            continue
        full = os.path.join(top, name)
        st = os.lstat(full)
        if stat.S_ISLNK(st.st_mode):
            view[rel] = ["link", os.readlink(full)]
        elif stat.S_ISDIR(st.st_mode):
            view[rel] = ["dir", ""]
        else:
            kind = "exec" if st.st_mode & 0o111 else "file"
            view[rel] = [kind, pathlib.Path(full).read_bytes().decode("utf-8", "replace")]
env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, env=env).stdout.strip()
seen = {
    "view": view, "head": git("rev-parse", "HEAD"),
    "status": git("status", "--porcelain", "--untracked-files=all"), "remote": git("remote"),
    "hooks": sorted(os.listdir(".git/hooks")) if os.path.isdir(".git/hooks") else [],
}
digest = hashlib.sha256(json.dumps(seen, sort_keys=True).encode()).hexdigest()[:12]
try:  # the whole view, where the agent may write outside its workspace (no sandbox)
    (log / f"{n}.json").write_text(json.dumps({"cwd": str(root), **seen}))
except OSError:
    pass
# what a hostile agent leaves for the next attempt, every time
pathlib.Path("build").mkdir(exist_ok=True)
pathlib.Path("build/carry.txt").write_text(f"from attempt {n}\n")  # ignored
pathlib.Path("empty").mkdir(exist_ok=True)
os.makedirs(".git/hooks", exist_ok=True)
pathlib.Path(".git/hooks/pre-commit").write_text("#!/bin/sh\nexit 0\n")
with open(".git/config", "a") as f:
    f.write('[remote "origin"]\n\turl = /elsewhere\n')
os.chmod("src/other.txt", 0o755)
st = os.lstat("src/keep.txt")
pathlib.Path("src/keep.txt").write_text("KEEP\n")  # the same size, times put back
os.utime("src/keep.txt", ns=(st.st_atime_ns, st.st_mtime_ns))
os.unlink("src/gone.txt")
os.symlink("keep.txt", "src/gone.txt")
if n % 2:  # an honest improvement on top (kept: out of scope it is not)
    value = float(pathlib.Path("src/value.txt").read_text())
    pathlib.Path("src/value.txt").write_text(f"{value - 1:g}\n")
else:  # and a change outside the mutable files (out-of-scope: never kept)
    pathlib.Path("README.txt").write_text("changed\n")
print(json.dumps({"description": f"saw {digest} in {root.name}"}))
"""


def _digest(seen: dict[str, object]) -> str:
    return hashlib.sha256(json.dumps(seen, sort_keys=True).encode()).hexdigest()[:12]


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_every_attempt_starts_from_exactly_the_incumbents_tree(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    """A hostile agent tampers with its workspace in every attempt (an ignored file, an empty
    folder, a hook, a remote, chmod +x, content with its times put back, a file turned into a
    link); each attempt's agent still finds exactly the incumbent's tree, at a path of its
    own, with a clean status."""
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    log = tmp_path / "log"
    log.mkdir()
    value_project(
        tmp_repo,
        f"{sys.executable} {agent} {log}",
        files={
            ".gitignore": "build/\n",
            "README.txt": "readme\n",
            "src/other.txt": "other\n",
            "src/keep.txt": "keep\n",
            "src/gone.txt": "gone\n",
        },
        sandbox=sandbox,
    )
    if sandbox == "bwrap" and not bwrap_usable():
        pytest.skip("bubblewrap is not installed or cannot create its namespaces here")
    res = tmp_repo.cli("run", "--run", "w", "-n", "6", "--json")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "w")[1:]
    assert len(rows) == 6, rows
    paths = set()
    for row in rows:
        incumbent = tmp_repo.git("rev-parse", f"{row['commit']}^")
        want = committed(tmp_repo, incumbent, skip_compiled=False)
        view = {k: list(v) for k, v in want.items()}
        seen = {"view": view, "head": incumbent, "status": "", "remote": "", "hooks": []}
        if sandbox == "none":  # the whole view, for a readable failure
            got = json.loads((log / f"{row['iteration']}.json").read_text())
            assert got["view"] == view, row["iteration"]
            assert got["head"] == incumbent and got["status"] == "" and got["remote"] == ""
            assert got["hooks"] == []
        words = row["description"].split()
        assert words[:2] == ["saw", _digest(seen)], (row["iteration"], row["description"])
        assert words[3] not in paths  # a fresh path every attempt
        paths.add(words[3])
    # the odd attempts changed only mutable files (kept), the even ones README.txt too
    assert [r["status"] for r in rows] == ["keep", "out-of-scope"] * 3, rows
    stop = [json.loads(line) for line in res.stdout.splitlines() if '"stop"' in line][-1]
    assert stop["checkouts"]["renewed"] == 5, stop


@pytest.mark.slow
@pytest.mark.parametrize("how", sorted(WORKSPACE_TAMPER))
def test_the_tree_hashed_with_the_proof_is_the_tree_hashed_from_every_file(
    tmp_repo: TmpRepo, how: str
) -> None:
    """Files and folders proved unchanged are taken as written (their blobs, the incumbent's
    subtrees): the tree is the one hashing every file gives, whatever the agent did."""
    a = _commit_a(tmp_repo)
    repo = tmp_repo.open()
    with made_workspace(repo, a, "w") as made:
        WORKSPACE_TAMPER[how](made.path)
        (made.path / "new").mkdir(exist_ok=True)
        (made.path / "new" / "file.txt").write_text("added\n")
        if (made.path / "pkg" / "sub").is_dir():
            os.chmod(made.path / "pkg" / "sub", 0o755)  # readable again: both hash it
        fast = hash_workspace(repo, made.path, known=made)
        slow = hash_workspace(repo, made.path)
        assert fast == slow
        assert fast.tree != tmp_repo.git("rev-parse", f"{a}^{{tree}}")
    (tmp_repo.path.parent / "kept-a-link").unlink(missing_ok=True)
    (repo.improve_dir / "work" / "kept-a-link").unlink(missing_ok=True)
    finish_removals()


def test_a_folder_holding_a_submodule_is_hashed_from_its_files(tmp_repo: TmpRepo) -> None:
    """The incumbent's subtree is taken for a folder only when it holds files and folders
    alone: a folder with a submodule (an empty folder in the workspace, which the listing does
    not name) is built from its files, and the incumbent's submodule is kept in it, as `git
    add -A` keeps one; with no incumbent to go by, hashing every file leaves it out."""
    tmp_repo.gen({"vendor/x.py": "X = 1\n", "top.txt": "top\n"})
    tmp_repo.git("add", "-A")
    sub = tmp_repo.git("hash-object", "-w", "--stdin")  # any object id will do for a gitlink
    tmp_repo.git("update-index", "--add", "--cacheinfo", f"160000,{sub},vendor/lib")
    tmp_repo.git("commit", "-qm", "with a submodule")
    head = tmp_repo.git("rev-parse", "HEAD")
    repo = tmp_repo.open()
    with made_workspace(repo, head, "w") as made:
        assert (made.path / "vendor" / "lib").is_dir()
        _git_is_fresh(tmp_repo, made.path, head)  # the submodule in the index: a clean status
        fast = hash_workspace(repo, made.path, known=made)
        assert fast.tree == tmp_repo.git("rev-parse", "HEAD^{tree}")
        assert tmp_repo.git("ls-tree", "-r", "--name-only", fast.tree).split() == [
            "top.txt",
            "vendor/lib",
            "vendor/x.py",
        ]
        unknown = hash_workspace(repo, made.path)
        assert tmp_repo.git("ls-tree", "-r", "--name-only", unknown.tree).split() == [
            "top.txt",
            "vendor/x.py",
        ]
    finish_removals()
