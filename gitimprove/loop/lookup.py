"""Entries of the environment's search lists that would name the candidate's files.

The metric and the guard run in a checkout of the candidate's commit. A search list of the
user's environment with an entry that is not absolute — `PATH=bin:…`, an empty entry (a
leading, trailing or doubled `:`, which the shell and `execvp` take for the current folder),
`.` — then names a folder of that checkout: a candidate that adds `bin/python3` runs in place
of the interpreter `python3 bench.py` names (a sealed `./bench.py` whose `#!/usr/bin/env
python3` looks it up too), and prints any number. Likewise for shared libraries
(`LD_LIBRARY_PATH`, a relative `LD_PRELOAD`) and the file a non-interactive shell sources
first (`BASH_ENV`, `ENV`). So the metric and the guard run with those entries left out (a
`PATH` left empty is the system's default), and the run says so at its start.

A relative `PYTHONPATH` entry is kept (a benchmark may import its project through
`PYTHONPATH=src`): the folder it names is one where Python finds modules without naming
them, so a new module there, or one shadowing the standard library's, is judged as at the
checkout's root (loop/implicit.py).
"""

from __future__ import annotations

import os
import posixpath
import stat
import sys
from collections.abc import Iterable, Mapping

__all__ = ["measured_env", "python_folders", "relative_entries"]

# lists of folders (or files) that choose what runs, found from the current folder when relative
_LISTS = ("PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "DYLD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES")
# one file a shell sources before the command
_FILES = ("BASH_ENV", "ENV")
_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


def _entries(name: str, value: str) -> list[str]:
    if name == "LD_PRELOAD":  # separated by spaces or colons
        return value.replace(" ", ":").split(":")
    return value.split(":")


def _relative(name: str, entry: str) -> bool:
    if name == "LD_PRELOAD":  # a bare name is searched in the library folders, not here
        return "/" in entry and not entry.startswith("/")
    return not entry.startswith("/")  # an empty entry too: the current folder


def relative_entries(environ: Mapping[str, str] | None = None) -> dict[str, list[str]]:
    """Each variable with entries that are not absolute, and those entries ("" for an
    empty one)."""
    env = os.environ if environ is None else environ
    out: dict[str, list[str]] = {}
    for name in _LISTS:
        value = env.get(name)
        if value is None or (not value and name != "PATH"):  # only an empty PATH names "."
            continue
        bad = [e for e in _entries(name, value) if _relative(name, e)]
        if bad:
            out[name] = bad
    for name in _FILES:
        value = env.get(name)
        if value and not value.startswith("/"):
            out[name] = [value]
    return out


def measured_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The values the metric's and guard's environment takes instead of the user's: each
    variable of `relative_entries` without those entries."""
    env = os.environ if environ is None else environ
    out: dict[str, str] = {}
    for name in relative_entries(env):
        if name in _FILES:
            out[name] = ""
            continue
        kept = [e for e in _entries(name, env[name]) if e and not _relative(name, e)]
        out[name] = ":".join(kept) or (_DEFAULT_PATH if name == "PATH" else "")
    return out


# Build caches a compiler trusts by key (the hash of a step's inputs), each variable naming
# where one is kept, and its folder in a fresh cache: an entry written under the key of the
# committed sources, pointing at what other sources compiled to, makes a later build link
# that other code. `go run -trimpath` (its keys hold no path) ran a package whose source
# returned 100 and printed 1 from a cache entry an agent without the sandbox had written.
BUILD_CACHES = {"GOCACHE": "go-build", "CCACHE_DIR": "ccache", "SCCACHE_DIR": "sccache"}


def fresh_caches(folder: str) -> dict[str, str]:
    """The environment giving one metric or guard run its own, empty build caches under
    `folder` (made for that run after every agent process is gone, removed after it): what
    an agent or an earlier measurement wrote in the user's caches is never read."""
    return {name: f"{folder}/{sub}" for name, sub in BUILD_CACHES.items()}


def go_workspace(paths: Iterable[str]) -> dict[str, str]:
    """`GOWORK=off` for a commit that holds no `go.work` (its paths: `paths`): `go` looks for
    one in every folder above the one it runs in, and the measurement's checkout lies inside
    your repository's git directory — an ignored `go.work` of your work tree (`use .`), or
    one an agent left above it, was the measurement's workspace, and `go run` found no
    package. A commit that holds one uses it as it is."""
    if any(p == "go.work" or p.endswith("/go.work") for p in paths):
        return {}
    return {"GOWORK": "off"}


def go_env_path(environ: Mapping[str, str] | None = None) -> str | None:
    """The Go env file `go env -w` writes and every `go` command reads (`$GOENV`, else
    `go/env` in the user's config folder); None when `GOENV=off`."""
    env = os.environ if environ is None else environ
    named = env.get("GOENV")
    if named is not None:
        return None if named in ("off", "") else named
    if sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Application Support")
    else:
        base = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or "~", ".config")
    return os.path.join(os.path.expanduser(base), "go", "env")


def read_go_env(environ: Mapping[str, str] | None = None) -> bytes | None:
    """The Go env file as it is now (at the run's start), read without blocking or following
    a FIFO (at most 1 MB); None when there is none or it is not a regular file."""
    path = go_env_path(environ)
    if path is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, 1 << 20)
    except OSError:
        return None
    finally:
        os.close(fd)


def python_folders(environ: Mapping[str, str] | None = None) -> set[str]:
    """The folders of the checkout (relative to its root, "" for the root) that relative
    `PYTHONPATH` entries put on `sys.path`."""
    env = os.environ if environ is None else environ
    out: set[str] = set()
    for entry in env.get("PYTHONPATH", "").split(os.pathsep):
        if entry.startswith("/"):
            continue
        folder = posixpath.normpath(entry or ".")
        if folder == ".":
            out.add("")
        elif not (folder == ".." or folder.startswith("../")):
            out.add(folder)
    return out
