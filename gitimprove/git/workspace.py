"""Agent workspaces: a throwaway clone per attempt, and the tree hashed from its files.

The clone borrows the repository's objects (`git clone --shared`) and has no remote, so
whatever the agent's own git does stays in it. Its path has a random suffix: a resumed attempt
never reuses a folder a survivor of the old run might still hold open. `hash_workspace` reads
the files with a git directory of its own, so a deleted `.git`, a corrupt config or a
rewritten index in the clone changes nothing about what is hashed.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from gitimprove.errors import GitImproveError
from gitimprove.git import gitfiles, space
from gitimprove.git.checkout import EXEC, LINK, discard, work_root, write_pid
from gitimprove.git.listing import MAX_DEPTH, Listing, kind, list_files
from gitimprove.git.repo import GIT_TIMEOUT, Repo
from gitimprove.util import proc

__all__ = ["Hashed", "agent_workspace", "hash_workspace", "refused_name"]


@contextmanager
def agent_workspace(repo: Repo, commit: str, name: str) -> Iterator[Path]:
    """A throwaway local clone at `commit` with no remote, under `<name>-<random>`."""
    root = work_root(repo)
    path = root / f"{name}-{secrets.token_hex(4)}"
    pid_file = root / f"{path.name}.pid"
    write_pid(pid_file)
    try:
        # no template: no sample hooks or info/ to write and remove in every attempt
        clone = ["clone", "-q", "--template=", "--shared", "--no-checkout", "--no-tags"]
        res = proc.git(
            [*clone, str(repo.git_dir), str(path)],
            isolated=True,
            timeout=GIT_TIMEOUT,
        )
        if res.timed_out:
            raise GitImproveError(
                gitfiles.hung(repo.git_dir, repo.common_dir, "clone", GIT_TIMEOUT),
                hint="put a regular file back in its place (`git improve doctor` names it)",
            )
        if not res.ok:
            _refused(repo, "creating the agent's workspace", res.stderr)
            raise GitImproveError(f"could not create the workspace {path}: {res.stderr.strip()}")
        _forget_origin(path / ".git" / "config")
        res = proc.git(
            ["-c", "advice.detachedHead=false", "checkout", "-q", "--detach", commit],
            cwd=path,
            isolated=True,  # no hook, filter or fsmonitor of ~/.gitconfig runs in the harness
        )
        if not res.ok:
            _refused(repo, "creating the agent's workspace", res.stderr)
            raise GitImproveError(
                f"could not check out {commit[:10]} in {path}: {res.stderr.strip()}"
            )
        yield path
    finally:
        discard(path)


def _refused(repo: Repo, doing: str, stderr: str) -> None:
    """A full disk said as such, with what to free (never git's own words about a ref): git
    says it in words of its own, or in none (a file it could not write), so less free space
    than `space.LOW` counts too."""
    free = space.free_bytes(repo.common_dir)
    low = free is not None and free < space.LOW
    if low or space.out_of_space(OSError(stderr), repo.common_dir):
        raise space.NoSpace(repo.common_dir, doing)


def _forget_origin(config: Path) -> None:
    """Drop the clone's remote (and the branch that tracks it): no way back to the repository.

    The file is the one `git clone` just wrote, so removing its sections by hand is safe."""
    kept, skip = [], False
    for line in config.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.lstrip().startswith("["):
            skip = line.lstrip().startswith(('[remote "', '[branch "'))
        if not skip:
            kept.append(line)
    config.write_text("".join(kept), encoding="utf-8")


# Code points HFS+ ignores in names (git's is_hfs_dotgit), so ".g\u200cit" is ".git" there.
_HFS_IGNORED = {
    0x200C,
    0x200D,
    0x200E,
    0x200F,
    0xFEFF,
    *range(0x202A, 0x202F),
    *range(0x206A, 0x2070),
}


def refused_name(component: str) -> bool:
    """True for a path component git refuses to commit: `.git` in any case or disguise
    (HFS ignorable characters, NTFS short name `GIT~1`, trailing dots or spaces, a stream
    suffix), or a backslash."""
    if "\\" in component:
        return True
    name = "".join(c for c in component if ord(c) not in _HFS_IGNORED)
    name = unicodedata.normalize("NFC", name).casefold().split(":", 1)[0].rstrip(" .")
    return name in (".git", "git~1")


@dataclass(frozen=True)
class Hashed:
    """The workspace's tree, and what had to be left out of it (with why)."""

    tree: str
    refused: list[str] = field(default_factory=list)  # names git refuses, nested repositories
    escaping: list[str] = field(default_factory=list)  # "link -> target" leaving the workspace


def _escapes(root: Path, full: Path) -> str | None:
    """Why the link at `full` does not resolve to a regular file or a folder inside the
    workspace, or None when it does."""
    target = os.readlink(full)
    if os.path.isabs(target):
        return "an absolute path"
    try:
        mode = os.stat(full).st_mode
    except OSError as exc:  # a loop (ELOOP), a dangling link (ENOENT)
        return f"it does not resolve: {exc.strerror}"
    real = Path(os.path.realpath(full))
    if real != root and root not in real.parents:
        return "outside the workspace"
    if (root / ".git") == real or (root / ".git") in real.parents:
        return "into the workspace's .git"
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return f"to {kind(mode)}"
    return None


def _read_capped(full: Path, cap: int) -> bytes | None:
    """The file's bytes, or None when it holds more than `cap` (never more is read)."""
    with open(full, "rb") as f:
        data = f.read(cap + 1)
    return None if len(data) > cap else data


_GONE = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def _blob(repo: Repo, data: bytes) -> pygit2.Oid:
    """The blob of `data`, written only when the repository lacks it: hashing in memory
    costs far less than a write that finds the object already there (most of a tree)."""
    oid = pygit2.hash(data)
    return oid if repo.raw.odb.exists(oid) else repo.raw.create_blob(data)


def hash_workspace(
    repo: Repo, path: Path, *, max_file: int = 100_000_000, max_tree: int = 1_000_000_000
) -> Hashed:
    """Hash the workspace's files (not ignored ones) into a tree in the repository.

    Never fails because of what the agent did: a name git refuses, a nested repository, a
    link leaving the workspace, a file over `max_file` bytes or the files past `max_tree`
    bytes in all are left out of the tree and named in the result (no more than the cap of
    a file is ever read); so is a file git reads itself (a `.gitignore`...) that is not a
    regular file within `max_file`, removed before git lists the workspace (git/listing.py)."""
    total = 0
    files: dict[str, pygit2.Oid] = {}
    modes: dict[str, int] = {}
    escaping: list[str] = []
    root = Path(os.path.realpath(path))
    listing = (
        list_files(path, max_file)
        if path.is_dir() and not path.is_symlink()
        else Listing([], [], None)
    )
    listed, refused = listing.paths, listing.refused
    if listing.failed is not None:
        refused.append(f"(the workspace's files: {listing.failed})")
    if path.is_symlink():  # the workspace itself replaced by a link to somewhere else
        refused.append(f"{path.name} (the workspace folder was replaced by a link)")
    for raw in listed:
        if raw.endswith(b"/"):
            refused.append(f"{raw.decode('utf-8', 'replace')} (a nested repository)")
            continue
        try:
            rel = raw.decode("utf-8")
        except UnicodeDecodeError:
            refused.append(f"{raw.decode('utf-8', 'backslashreplace')} (not UTF-8)")
            continue
        parts = rel.split("/")
        if len(parts) > MAX_DEPTH:  # every later walk of the tree stays shallow
            refused.append(f"{'/'.join(parts[:3])}/… (nested deeper than {MAX_DEPTH} folders)")
            continue
        if any(refused_name(part) for part in parts):
            refused.append(rel)
            continue
        full = path / rel
        try:
            try:  # one call, never following a link
                mode = os.lstat(full).st_mode
            except OSError as exc:
                if exc.errno in _GONE:  # listed, then removed (a deleted file): not in the tree
                    continue
                raise
            if stat.S_ISLNK(mode):
                why = _escapes(root, full)
                if why is not None:
                    escaping.append(f"{rel} -> {os.readlink(full)} ({why})")
                    continue
                files[rel] = _blob(
                    repo, os.readlink(full).encode("utf-8", errors="surrogateescape")
                )
                modes[rel] = LINK
            elif stat.S_ISREG(mode):
                data = _read_capped(full, max_file)
                over = (
                    "scope.max_file_size"
                    if data is None
                    else "scope.max_tree_size"
                    if total + len(data) > max_tree
                    else None
                )
                if data is None or over is not None:
                    refused.append(f"{rel} (too large: over {over})")
                    continue
                total += len(data)
                files[rel] = _blob(repo, data)
                modes[rel] = EXEC if os.access(full, os.X_OK) else pygit2.enums.FileMode.BLOB
        except OSError as exc:
            refused.append(f"{rel} (unreadable: {exc.strerror})")
    return Hashed(str(_build_tree(repo, files, modes, refused)), refused, escaping)


def _build_tree(
    repo: Repo,
    files: dict[str, pygit2.Oid],
    modes: dict[str, int],
    refused: list[str],
    at: str = "",
) -> pygit2.Oid:
    nested: dict[str, dict[str, pygit2.Oid]] = {}
    nested_modes: dict[str, dict[str, int]] = {}
    builder = repo.raw.TreeBuilder()
    for rel, oid in files.items():
        head, sep, rest = rel.partition("/")
        if sep:
            nested.setdefault(head, {})[rest] = oid
            nested_modes.setdefault(head, {})[rest] = modes[rel]
            continue
        try:
            builder.insert(head, oid, modes[rel])
        except (ValueError, pygit2.GitError):
            refused.append(at + head)
    for name, sub in nested.items():
        try:
            builder.insert(
                name, _build_tree(repo, sub, nested_modes[name], refused, f"{at}{name}/"),
                pygit2.enums.FileMode.TREE,
            )  # fmt: skip
        except (ValueError, pygit2.GitError):
            refused.append(at + name + "/")
    return builder.write()
