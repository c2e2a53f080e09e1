"""Agent workspaces: a throwaway clone per attempt, and the tree hashed from its files.

The clone borrows the repository's objects (`git clone --shared`) and has no remote, so
whatever the agent's own git does stays in it. Its path has a random suffix: a resumed attempt
never reuses a folder a survivor of the old run might still hold open. `hash_workspace` reads
the files with a git directory of its own, so a deleted `.git`, a corrupt config or a
rewritten index in the clone changes nothing about what is hashed.
"""

from __future__ import annotations

import os
import secrets
import stat
import tempfile
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from gitimprove.errors import GitImproveError
from gitimprove.git.checkout import EXEC, LINK, remove_workspace, work_root
from gitimprove.git.repo import Repo
from gitimprove.util import proc

__all__ = ["Hashed", "agent_workspace", "hash_workspace", "refused_name"]


@contextmanager
def agent_workspace(repo: Repo, commit: str, name: str) -> Iterator[Path]:
    """A throwaway local clone at `commit` with no remote, under `<name>-<random>`."""
    root = work_root(repo)
    path = root / f"{name}-{secrets.token_hex(4)}"
    pid_file = root / f"{path.name}.pid"
    pid_file.write_text(f"{os.getpid()}\n", encoding="utf-8")
    try:
        res = proc.git(
            ["clone", "-q", "--shared", "--no-checkout", "--no-tags", str(repo.git_dir), str(path)],
            isolated=True,
        )
        if not res.ok:
            raise GitImproveError(f"could not create the workspace {path}: {res.stderr.strip()}")
        _forget_origin(path / ".git" / "config")
        res = proc.git(
            ["-c", "advice.detachedHead=false", "checkout", "-q", "--detach", commit],
            cwd=path,
            isolated=True,  # no hook, filter or fsmonitor of ~/.gitconfig runs in the harness
        )
        if not res.ok:
            raise GitImproveError(
                f"could not check out {commit[:10]} in {path}: {res.stderr.strip()}"
            )
        yield path
    finally:
        remove_workspace(path)


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


def _special_files(path: Path) -> list[bytes]:
    """FIFOs, sockets and devices under `path` (not in its `.git`): git lists none of them,
    so without this walk they would be left out of the tree without a word."""
    found: list[bytes] = []
    stack: list[tuple[bytes, int]] = [(b"", 0)]
    root = os.fsencode(path)
    while stack:
        rel, depth = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(root, rel) if rel else root))
        except OSError:
            continue  # a folder that cannot be opened is named by the listing
        for entry in entries:
            name = os.fsencode(entry.name)
            if not rel and name == b".git":
                continue
            sub = rel + b"/" + name if rel else name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth < MAX_DEPTH:
                        stack.append((sub, depth + 1))
                elif not (entry.is_file(follow_symlinks=False) or entry.is_symlink()):
                    found.append(sub)
            except OSError:
                continue
    return found


def _kind(mode: int) -> str:
    return (
        "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
        else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"
    )  # fmt: skip


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _special(path: Path, raw: bytes) -> str:
    try:
        kind = _kind(os.lstat(os.path.join(os.fsencode(path), raw)).st_mode)
    except OSError:
        kind = "not a regular file"
    name = raw.decode("utf-8", "backslashreplace")
    return f"{name} ({kind}: only regular files, folders and links can be committed)"


def _list_files(path: Path) -> tuple[list[bytes], list[str]]:
    """Files that are not ignored, listed with a git directory of our own (never the clone's),
    and what cannot be committed: the folders git could not open (a path past the system's
    limit, no permission) and special files (FIFOs, sockets, devices) that are not ignored."""
    with tempfile.TemporaryDirectory() as tmp:
        gitdir = Path(tmp) / "git"
        for sub in ("objects", "refs"):
            (gitdir / sub).mkdir(parents=True)
        (gitdir / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
        env = proc.clean_env(
            {
                "GIT_DIR": str(gitdir),
                "GIT_WORK_TREE": str(path),
                "GIT_INDEX_FILE": str(Path(tmp) / "index"),
            },
        )
        res = proc.run(
            ["git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
             "ls-files", "-z", "--others", "--exclude-standard"],
            cwd=path,
            env=env,
            timeout=120,
        )  # fmt: skip
        special = _special_files(path)
        names = [s.decode("utf-8") for s in special if _utf8(s)]  # others are refused anyway
        if names and res.ok:  # only those git would not ignore matter
            ignored = proc.run(
                ["git", "-c", "core.fsmonitor=false", "check-ignore", "-z", "--stdin"],
                cwd=path, env=env, timeout=120, input="\0".join(names),
            )  # fmt: skip
            skip = {s.encode("utf-8") for s in ignored.stdout.split("\0") if s}
            special = [s for s in special if s not in skip]
    if not res.ok:
        raise GitImproveError(f"could not list the workspace's files: {res.stderr.strip()}")
    unopened = [_special(path, s) for s in special] + [
        line.split("'", 1)[1].rstrip("'")[:80] + "… (a folder git cannot open)"
        for line in res.stderr.splitlines()
        if line.startswith("warning: could not open directory '")
    ]
    return [p for p in res.raw.split(b"\0") if p], unopened


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
        return f"to {_kind(mode)}"
    return None


def _read_capped(full: Path, cap: int) -> bytes | None:
    """The file's bytes, or None when it holds more than `cap` (never more is read)."""
    with open(full, "rb") as f:
        data = f.read(cap + 1)
    return None if len(data) > cap else data


# Folders a path may nest in (git's own core.maxTreeDepth is 4096; no project comes close to
# this): a deeper file is left out and the attempt is out-of-scope, naming the folder.
MAX_DEPTH = 200


def hash_workspace(
    repo: Repo, path: Path, *, max_file: int = 100_000_000, max_tree: int = 1_000_000_000
) -> Hashed:
    """Hash the workspace's files (not ignored ones) into a tree in the repository.

    Never fails because of what the agent did: a name git refuses, a nested repository, a
    link leaving the workspace, a file over `max_file` bytes or the files past `max_tree`
    bytes in all are left out of the tree and named in the result (no more than the cap of
    a file is ever read)."""
    total = 0
    files: dict[str, pygit2.Oid] = {}
    modes: dict[str, int] = {}
    escaping: list[str] = []
    root = Path(os.path.realpath(path))
    listed, refused = _list_files(path) if path.is_dir() and not path.is_symlink() else ([], [])
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
            if full.is_symlink():
                why = _escapes(root, full)
                if why is not None:
                    escaping.append(f"{rel} -> {os.readlink(full)} ({why})")
                    continue
                files[rel] = repo.raw.create_blob(
                    os.readlink(full).encode("utf-8", errors="surrogateescape")
                )
                modes[rel] = LINK
            elif full.is_file():
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
                files[rel] = repo.raw.create_blob(data)
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
