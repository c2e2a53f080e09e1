"""The top-level module names the metric's and the guard's interpreter can import.

A new module of the workspace named like one of them, where the workspace is on `sys.path`
(its root for `python -m …`, a sealed script's folder), is imported in its place: a new
`iniconfig.py` at the root and pytest, a dependency of the sealed guard, collects nothing.
The names are asked once per run of each interpreter (`python -I`, outside the workspace):
its standard library, its built-in modules and everything on its `sys.path`.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from gitimprove.loop import lookup
from gitimprove.util import proc

__all__ = ["importable_names", "interpreters"]

_ASK = (
    "import sys, pkgutil\n"
    "names = set(getattr(sys, 'stdlib_module_names', ())) | set(sys.builtin_module_names)\n"
    "names.update(m.name for m in pkgutil.iter_modules())\n"
    "print('\\n'.join(sorted(names)))\n"
)


def _search() -> str | None:
    """The PATH the metric and the guard run with (loop/lookup.py)."""
    return lookup.measured_env().get("PATH", os.environ.get("PATH"))


def _python_of(word: str, cwd: Path) -> str | None:
    """The interpreter `word` names: itself, or the one a script's `#!` line names."""
    found = shutil.which(word, path=_search()) or (
        str(cwd / word) if (cwd / word).is_file() else None
    )
    if found is None:
        return None
    if Path(found).name.startswith(("python", "pypy")):
        return found
    try:
        with open(found, "rb") as f:
            first = f.readline(200)
    except OSError:
        return None
    if first.startswith(b"#!"):
        words = first[2:].decode("utf-8", "replace").split()
        words = words[1:] if words and Path(words[0]).name == "env" else words
        if words and Path(words[0]).name.startswith(("python", "pypy")):
            return shutil.which(words[0], path=_search()) or words[0]
    return None


def interpreters(commands: Iterable[str], cwd: Path) -> list[str]:
    """The Python interpreters the commands run (each command's first word that is one, or
    whose `#!` names one); `python3` on PATH and this one when none is found."""
    found: list[str] = []
    for command in commands:
        try:
            words = shlex.split(command)
        except ValueError:
            words = command.split()
        for word in words[:3]:  # `env X=1 python …`, `uv run python …`
            python = _python_of(word, cwd) if "=" not in word else None
            if python is not None:
                found.append(python)
                break
    if not found:
        found = [p for p in (shutil.which("python3", path=_search()),) if p is not None]
    return list(dict.fromkeys([*found, sys.executable]))


@lru_cache(maxsize=16)
def _names_of(python: str) -> frozenset[str]:
    res = proc.run([python, "-I", "-c", _ASK], cwd="/", timeout=20)
    if res.returncode != 0:
        return frozenset()
    return frozenset(line.strip() for line in res.stdout.splitlines() if line.strip())


def importable_names(commands: Iterable[str], cwd: Path) -> frozenset[str]:
    """Every top-level module name the commands' interpreters import from outside the
    workspace (this interpreter's standard library at least)."""
    names = set(sys.stdlib_module_names) | set(sys.builtin_module_names)
    for python in interpreters(commands, cwd):
        names |= _names_of(python)
    return frozenset(names)
