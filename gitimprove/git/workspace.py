"""Measurement checkouts: a commit's tree written out under `<git-common-dir>/improve/work/`.

The files are written from the object database directly, so no index, no worktree admin
entry and no ref of the user's repository is involved; the folder goes away when the context
exits, also on error. A `<name>.pid` file beside it lets `doctor` find ones left by a killed
process.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pygit2

from gitimprove.git.repo import Repo

LINK = pygit2.enums.FileMode.LINK
EXEC = pygit2.enums.FileMode.BLOB_EXECUTABLE


def work_root(repo: Repo) -> Path:
    root = repo.improve_dir / "work"
    root.mkdir(parents=True, exist_ok=True)
    return root


def materialize(repo: Repo, tree: pygit2.Tree, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for entry in tree:
        path = dest / (entry.name or "")
        if entry.type_str == "tree":
            sub = repo.raw[entry.id]
            assert isinstance(sub, pygit2.Tree)
            materialize(repo, sub, path)
        elif entry.type_str == "blob":
            blob = repo.raw[entry.id]
            assert isinstance(blob, pygit2.Blob)
            if entry.filemode == LINK:
                os.symlink(blob.data.decode("utf-8", errors="surrogateescape"), path)
            else:
                path.write_bytes(blob.data)
                if entry.filemode == EXEC:
                    path.chmod(0o755)
        else:  # a submodule: an empty folder, as a fresh clone has
            path.mkdir(exist_ok=True)


@contextmanager
def checkout(repo: Repo, commit: str, purpose: str = "measure") -> Iterator[Path]:
    obj = repo.raw[commit]
    assert isinstance(obj, pygit2.Commit)
    root = work_root(repo)
    name = f"{purpose}-{commit[:8]}-{secrets.token_hex(3)}"
    path = root / name
    pid_file = root / f"{name}.pid"
    pid_file.write_text(f"{os.getpid()}\n", encoding="utf-8")
    try:
        materialize(repo, obj.tree, path)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        try:
            pid_file.unlink()
        except FileNotFoundError:
            pass


def stale_workspaces(repo: Repo) -> list[Path]:
    """Workspaces whose owning process is gone."""
    root = repo.common_dir / "improve" / "work"
    if not root.is_dir():
        return []
    stale = []
    for entry in sorted(root.iterdir()):
        if entry.suffix == ".pid" or not entry.is_dir():
            continue
        pid_file = root / f"{entry.name}.pid"
        alive = False
        try:
            pid = int(pid_file.read_text(encoding="utf-8").strip())
            os.kill(pid, 0)
            alive = True
        except (OSError, ValueError):
            alive = False
        if not alive:
            stale.append(entry)
    return stale


def remove_workspace(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    pid_file = path.parent / f"{path.name}.pid"
    try:
        pid_file.unlink()
    except FileNotFoundError:
        pass
