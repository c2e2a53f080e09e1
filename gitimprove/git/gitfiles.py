"""The files of the user's git directory that git and libgit2 read, checked before they do.

libgit2 (in the harness) and git (in its subprocesses) open `HEAD`, `config`, `packed-refs`,
the index, every loose ref, the object alternates, `commondir`/`gitdir` and a linked
worktree's own files with plain blocking reads: a FIFO in one's place would hang them for
ever, a huge (sparse) one exhaust their memory. `problems` names each that is not a regular
file (a link is followed: what git would open) within `MAX_SIZE`, using `lstat`/`stat` only;
the harness checks before it touches the repository (docs/integrity.md, "Files git reads").
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

__all__ = ["MAX_SIZE", "locate", "move_aside", "problems"]

# No git directory file honestly comes near this (a huge monorepo's index: a few hundred MB).
MAX_SIZE = 4 << 30

_NAMED = ("HEAD", "config", "config.worktree", "index", "commondir", "gitdir", "ORIG_HEAD")
_COMMON = ("config", "packed-refs", "shallow", "objects/info/alternates", "info/grafts")


def _problem(path: str | Path) -> str | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None if not os.path.islink(path) else "a link that does not resolve"
    except OSError as exc:
        return None if exc.errno != errno.ELOOP else "a link that does not resolve"
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return f"{st.st_size:,} bytes, over {MAX_SIZE:,}" if st.st_size > MAX_SIZE else None
    if stat.S_ISDIR(mode):
        return None
    kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
    return f"{kind}, not a regular file"


def _refs(root: str, out: list[str]) -> None:
    todo = [(root, ".git/refs")]
    while todo:
        folder, label = todo.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                todo.append((entry.path, f"{label}/{entry.name}"))
            elif not entry.is_file(follow_symlinks=False) or entry.is_symlink():
                why = _problem(entry.path)  # a link, a FIFO...: what it leads to
                if why is not None:
                    out.append(f"{label}/{entry.name} ({why})")
            elif entry.stat(follow_symlinks=False).st_size > MAX_SIZE:
                out.append(f"{label}/{entry.name} ({_problem(entry.path)})")


def problems(git_dir: Path, common: Path, *, refs: bool = True) -> list[str]:
    """What git would block on or choke over in the git directory, each as
    `.git/<path> (why)`; with `refs`, every loose ref too (a walk of `refs/`)."""
    out: list[str] = []
    gd, cd = os.fspath(git_dir), os.fspath(common)
    places = [(f"{gd}/{n}", n) for n in _NAMED]
    if cd != gd:
        places += [(f"{cd}/{n}", n) for n in _NAMED if n not in ("HEAD", "index", "gitdir")]
    places += [(f"{cd}/{n}", n) for n in _COMMON if n != "config" or cd != gd]
    try:
        with os.scandir(f"{cd}/worktrees") as trees:
            for tree in trees:
                if tree.is_dir(follow_symlinks=False):
                    places += [(f"{tree.path}/{n}", f"worktrees/{tree.name}/{n}") for n in _NAMED]
    except OSError:
        pass
    seen: set[str] = set()
    for path, label in places:
        if path in seen:
            continue
        seen.add(path)
        why = _problem(path)
        if why is not None:
            out.append(f".git/{label} ({why})")
    if refs:
        _refs(f"{cd}/refs", out)
        if gd != cd:
            _refs(f"{gd}/refs", out)
    return out


def locate(where: Path) -> tuple[Path, Path] | str | None:
    """(git dir, common dir) of the repository around `where` found with `lstat` and small
    reads only, a reason when a `.git` there is not what git could read, or None."""
    env = os.environ.get("GIT_DIR")
    start = Path(env) if env else None
    folder = where.resolve()
    while start is None:
        dot = folder / ".git"
        try:
            mode = os.stat(dot).st_mode
        except OSError:
            mode = None
        if mode is not None and stat.S_ISDIR(mode):
            start = dot
        elif mode is not None and stat.S_ISREG(mode):
            text = _small(dot)
            if text is None or not text.startswith("gitdir:"):
                return f"{dot} is not a `gitdir:` file"
            found = Path(text[7:].strip())
            start = found if found.is_absolute() else folder / found
        elif mode is not None:
            return f"{dot} ({_problem(dot)})"
        elif folder.parent == folder:
            return None
        else:
            folder = folder.parent
    common = start
    why = _problem(start / "commondir")
    if why is not None:
        return f"{start / 'commondir'} ({why})"
    text = _small(start / "commondir")
    if text:
        found = Path(text.strip())
        common = found if found.is_absolute() else start / found
    return start, common


def _small(path: Path) -> str | None:
    """A small regular file's text (None when it is absent, not regular, or over 64 KB)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as f:
            data = f.read(1 << 16)
    except OSError:
        return None
    return data.decode("utf-8", "replace")


def move_aside(git_dir: Path, common: Path, improve_dir: Path, found: list[str]) -> list[str]:
    """Move each file `problems` named to `<improve>/quarantine/` (never read, never
    followed: a link itself is moved), so nothing that opens the repository next hangs."""
    done = []
    aside = improve_dir / "quarantine"
    for item in found:
        rel = item.split(" (", 1)[0].removeprefix(".git/")
        for base in (git_dir, common):
            path = base / rel
            if not os.path.lexists(path) or _problem(path) is None:
                continue
            try:
                os.makedirs(aside, exist_ok=True)
                os.replace(path, aside / f"{rel.replace('/', '_')}.{os.urandom(3).hex()}")
            except OSError:
                continue
            done.append(f".git/{rel}")
            break
    return done
