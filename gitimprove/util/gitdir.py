"""Pure-Python repository discovery and ref reading, for the hot paths.

The hook and the warm `log` must not import pygit2 (DESIGN §13). This module finds the
git directory, the common directory and the work tree, reads a ref's object id from loose
refs or packed-refs, and reads a loose commit object. Anything it cannot answer returns
None, and the caller falls back to the slow, complete path.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass
from pathlib import Path

CONFIG_FILE = ".gitimprove.toml"


@dataclass(frozen=True)
class Location:
    git_dir: Path
    common_dir: Path
    work_tree: Path | None

    @property
    def improve_dir(self) -> Path:
        return self.common_dir / "improve"

    @property
    def config_path(self) -> Path | None:
        return self.work_tree / CONFIG_FILE if self.work_tree else None


def _read_gitfile(path: Path) -> Path | None:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:") :].strip())
    return target if target.is_absolute() else (path.parent / target)


def _common_dir(git_dir: Path) -> Path:
    try:
        rel = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return git_dir
    p = Path(rel)
    return (p if p.is_absolute() else git_dir / p).resolve()


def discover(start: str | os.PathLike[str] | None = None) -> Location | None:
    """Find the repository around `start` (default: $GIT_DIR, else the cwd)."""
    env_dir = os.environ.get("GIT_DIR")
    if env_dir and start is None:
        git_dir = Path(env_dir).resolve()
        wt_env = os.environ.get("GIT_WORK_TREE")
        work_tree = Path(wt_env).resolve() if wt_env else None
        if work_tree is None and git_dir.name == ".git":
            work_tree = git_dir.parent
        return Location(git_dir, _common_dir(git_dir), work_tree)
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        dotgit = folder / ".git"
        if dotgit.is_dir():
            return Location(dotgit, _common_dir(dotgit), folder)
        if dotgit.is_file():
            target = _read_gitfile(dotgit)
            if target is None:
                return None
            target = target.resolve()
            return Location(target, _common_dir(target), folder)
    return None


def read_ref(loc: Location, name: str, _depth: int = 0) -> str | None:
    """The object id a ref points at, following symbolic refs; None when absent."""
    if _depth > 5:
        return None
    base = loc.git_dir if name == "HEAD" else loc.common_dir
    try:
        text = (base / name).read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        text = ""
    except OSError:
        return None
    if text.startswith("ref:"):
        return read_ref(loc, text[4:].strip(), _depth + 1)
    if len(text) >= 40:
        return text[:40]
    return _packed_ref(loc.common_dir, name)


def _packed_ref(common_dir: Path, name: str) -> str | None:
    try:
        with open(common_dir / "packed-refs", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(("#", "^")):
                    continue
                oid, _, ref = line.rstrip("\n").partition(" ")
                if ref == name:
                    return oid
    except OSError:
        return None
    return None


def read_loose_commit_message(loc: Location, oid: str) -> str | None:
    """The message of a loose commit object, or None (packed, missing, not a commit)."""
    path = loc.common_dir / "objects" / oid[:2] / oid[2:]
    try:
        raw = zlib.decompress(path.read_bytes())
    except (OSError, zlib.error):
        return None
    header, _, body = raw.partition(b"\0")
    if not header.startswith(b"commit "):
        return None
    _, sep, message = body.partition(b"\n\n")
    if not sep:
        return ""
    return message.decode("utf-8", errors="replace")
