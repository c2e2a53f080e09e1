"""Pure-Python repository discovery and ref reading, for the hot paths.

The hook and the warm `log` must not import pygit2 (DESIGN §13); the hook must not even pay
for pathlib, dataclasses or typing. This module finds the git directory, the common
directory and the work tree, reads a ref's object id from loose refs or packed-refs, and
reads a loose commit object, with `os.path` strings only. Anything it cannot answer returns
None, and the caller falls back to the slow, complete path.
"""

from __future__ import annotations

import os
import zlib

from gitimprove.util.files import read_state

CONFIG_FILE = ".gitimprove.toml"


class Location:
    """Where a repository keeps things: all plain string paths."""

    __slots__ = ("common_dir", "git_dir", "work_tree")

    def __init__(self, git_dir: str, common_dir: str, work_tree: str | None) -> None:
        self.git_dir = git_dir
        self.common_dir = common_dir
        self.work_tree = work_tree

    @property
    def improve_dir(self) -> str:
        return os.path.join(self.common_dir, "improve")

    @property
    def config_path(self) -> str | None:
        return os.path.join(self.work_tree, CONFIG_FILE) if self.work_tree else None

    def __repr__(self) -> str:
        return f"Location({self.git_dir!r}, {self.common_dir!r}, {self.work_tree!r})"


_HEX = frozenset("0123456789abcdef")


def lower_hex(text: str) -> bool:
    """Whether `text` holds lower-case hex digits only, as git writes object names and their
    fanout folders."""
    return _HEX.issuperset(text)


def is_object_name(text: str) -> bool:
    """An object's name: 40 (SHA-1) or 64 (SHA-256) lower-case hex digits."""
    return len(text) in (40, 64) and lower_hex(text)


def _read_text(path: str) -> str | None:
    try:
        return read_state(path).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _read_gitfile(path: str) -> str | None:
    text = (_read_text(path) or "").strip()
    if not text.startswith("gitdir:"):
        return None
    target = text[len("gitdir:") :].strip()
    return target if os.path.isabs(target) else os.path.join(os.path.dirname(path), target)


def _common_dir(git_dir: str) -> str:
    rel = _read_text(os.path.join(git_dir, "commondir"))
    if rel is None:
        return git_dir
    rel = rel.strip()
    return os.path.realpath(rel if os.path.isabs(rel) else os.path.join(git_dir, rel))


def _is_git_dir(path: str) -> bool:
    """What git checks before taking a folder as a repository (a bare one, or .git itself):
    a HEAD file, and objects/ and refs/ (or a commondir file naming where they are)."""
    if not os.path.isfile(os.path.join(path, "HEAD")):
        return False
    if os.path.isfile(os.path.join(path, "commondir")):
        return True
    return os.path.isdir(os.path.join(path, "objects")) and os.path.isdir(
        os.path.join(path, "refs")
    )


def discover(start: str | None = None) -> Location | None:
    """Find the repository around `start` (default: $GIT_DIR, else the cwd), as git does:
    at each folder up from it, a `.git` folder or file, else the folder itself when it is a
    bare repository (or a git directory) — then the work tree is None."""
    env_dir = os.environ.get("GIT_DIR")
    if env_dir and start is None:
        git_dir = os.path.realpath(env_dir)
        wt_env = os.environ.get("GIT_WORK_TREE")
        work_tree = os.path.realpath(wt_env) if wt_env else None
        if work_tree is None and os.path.basename(git_dir) == ".git":
            work_tree = os.path.dirname(git_dir)
        if work_tree is None:  # a linked worktree's admin folder names its work tree
            pointer = (_read_text(os.path.join(git_dir, "gitdir")) or "").strip()
            if pointer:
                work_tree = os.path.dirname(os.path.realpath(pointer))
        if work_tree is None:
            cwd = os.path.realpath(os.getcwd())
            if not (cwd + os.sep).startswith(git_dir + os.sep) and os.path.exists(
                os.path.join(cwd, ".git")
            ):
                work_tree = cwd
        return Location(git_dir, _common_dir(git_dir), work_tree)
    folder = os.path.realpath(start or os.getcwd())
    while True:
        dotgit = os.path.join(folder, ".git")
        if os.path.isdir(dotgit):
            return Location(dotgit, _common_dir(dotgit), folder)
        if os.path.isfile(dotgit):
            target = _read_gitfile(dotgit)
            if target is None:
                return None
            target = os.path.realpath(target)
            return Location(target, _common_dir(target), folder)
        if _is_git_dir(folder):
            return Location(folder, _common_dir(folder), None)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def read_ref(loc: Location, name: str, _depth: int = 0) -> str | None:
    """The object id a ref points at, following symbolic refs; None when absent."""
    if _depth > 5:
        return None
    base = loc.git_dir if name == "HEAD" else loc.common_dir
    text = (_read_text(os.path.join(base, name)) or "").strip()
    if text.startswith("ref:"):
        return read_ref(loc, text[4:].strip(), _depth + 1)
    if len(text) >= 40:
        return text[:40]
    return _packed_ref(loc.common_dir, name)


def _packed_ref(common_dir: str, name: str) -> str | None:
    try:
        text = read_state(os.path.join(common_dir, "packed-refs")).decode("utf-8", "replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(("#", "^")):
            continue
        oid, _, ref = line.partition(" ")
        if ref == name:
            return oid
    return None


def read_loose_commit_message(loc: Location, oid: str) -> str | None:
    """The message of a loose commit object, or None (packed, missing, not a commit)."""
    try:
        raw = zlib.decompress(read_state(os.path.join(loc.common_dir, "objects", oid[:2], oid[2:])))
    except (OSError, zlib.error):
        return None
    header, _, body = raw.partition(b"\0")
    if not header.startswith(b"commit "):
        return None
    _, sep, message = body.partition(b"\n\n")
    if not sep:
        return ""
    return message.decode("utf-8", errors="replace")
