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


# --- agent workspaces -------------------------------------------------------------------------


@contextmanager
def agent_workspace(repo: Repo, commit: str, name: str) -> Iterator[Path]:
    """A throwaway local clone at `commit` that borrows the repository's objects.

    Whatever the agent runs there (commit, stash, reset, notes, gc) stays in the clone."""
    from gitimprove.errors import GitImproveError
    from gitimprove.util import proc

    root = work_root(repo)
    path = root / name
    pid_file = root / f"{name}.pid"
    if path.exists():
        remove_workspace(path)
    pid_file.write_text(f"{os.getpid()}\n", encoding="utf-8")
    try:
        res = proc.git(
            ["clone", "-q", "--shared", "--no-checkout", "--no-tags", str(repo.git_dir), str(path)]
        )
        if not res.ok:
            raise GitImproveError(f"could not create the workspace {path}: {res.stderr.strip()}")
        res = proc.git(
            ["-c", "advice.detachedHead=false", "checkout", "-q", "--detach", commit], cwd=path
        )
        if not res.ok:
            raise GitImproveError(
                f"could not check out {commit[:10]} in {path}: {res.stderr.strip()}"
            )
        yield path
    finally:
        remove_workspace(path)


def hash_workspace(repo: Repo, path: Path) -> str:
    """Hash the workspace's files (not ignored ones) into a tree in the repository.

    The clone's index and refs are never read: the file list comes from a fresh, empty
    index, and every blob is written from disk into the main object database."""
    import tempfile

    from gitimprove.errors import GitImproveError
    from gitimprove.util import proc

    with tempfile.TemporaryDirectory() as tmp:
        env = proc.clean_env({"GIT_INDEX_FILE": os.path.join(tmp, "index")})
        res = proc.run(
            [
                "git",
                "-c",
                "core.fsmonitor=false",
                "-c",
                "core.hooksPath=/dev/null",
                "ls-files",
                "-z",
                "--others",
                "--exclude-standard",
            ],
            cwd=path,
            env=env,
            timeout=120,
        )
    if not res.ok:
        raise GitImproveError(f"could not list the workspace's files: {res.stderr.strip()}")
    files: dict[str, pygit2.Oid | None] = {}
    modes: dict[str, int] = {}
    for rel in res.stdout.split("\0"):
        if not rel or rel.endswith("/"):
            continue
        full = path / rel
        if full.is_symlink():
            files[rel] = repo.raw.create_blob(
                os.readlink(full).encode("utf-8", errors="surrogateescape")
            )
            modes[rel] = LINK
        elif full.is_file():
            files[rel] = repo.raw.create_blob_fromdisk(str(full))
            modes[rel] = EXEC if os.access(full, os.X_OK) else pygit2.enums.FileMode.BLOB
    return str(_build_tree(repo, files, modes))


def _build_tree(
    repo: Repo, files: dict[str, pygit2.Oid | None], modes: dict[str, int]
) -> pygit2.Oid:
    nested: dict[str, dict[str, pygit2.Oid | None]] = {}
    nested_modes: dict[str, dict[str, int]] = {}
    builder = repo.raw.TreeBuilder()
    for rel, oid in files.items():
        head, sep, rest = rel.partition("/")
        if sep:
            nested.setdefault(head, {})[rest] = oid
            nested_modes.setdefault(head, {})[rest] = modes[rel]
        elif oid is not None:
            builder.insert(head, oid, modes[rel])
    for name, sub in nested.items():
        builder.insert(name, _build_tree(repo, sub, nested_modes[name]), pygit2.enums.FileMode.TREE)
    return builder.write()
