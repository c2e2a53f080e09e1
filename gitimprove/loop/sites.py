"""The folders the metric's and the guard's Python reads code from outside the repository.

Python runs, at every start, `sitecustomize.py` and the code lines of every `*.pth` file of its
site folders, and imports a top-level module from the first folder of `sys.path` that has it.
Without the sandbox those folders (a virtualenv's `site-packages`, a pyenv or uv-managed
interpreter's standard library) are the user's, writable to the agent and to the measured
code: a `.pth` there that prints a better `METRIC` line at exit, or a module shadowing one the
benchmark imports, would hold for every later measurement, the incumbent's too, and for later
runs. Around each agent call and each metric and guard run the harness lists each such folder
(its entries, not their contents: a `*.pth`, `sitecustomize.py` or a new top-level module is
an entry) and compares the listings; a difference stops the run naming the paths (the harness
does not remove what it did not write there). In the sandbox the folders are read-only.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import sys
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

from gitimprove.loop import lookup
from gitimprove.util import proc
from gitimprove.util.folders import Listing, changes, take

__all__ = [
    "Listing", "changes", "command_paths", "existing_outside", "folders", "runner_files", "take",
]  # fmt: skip

_ASK = "import sys\nprint('\\n'.join(p for p in sys.path if p))\n"

HINT = (
    "remove what you did not put there (or reinstall the environment), then `git improve run "
    '--resume`; a sandbox ([agent] sandbox = "bwrap" or "landlock") keeps agents and measured '
    "code out of it"
)

NAMED_HINT = (
    "put back what the command names as it was (the run reads it as the baseline did), then "
    "`git improve run --resume`; keep the benchmark in the repository and seal it, or use a "
    'sandbox ([agent] sandbox = "bwrap" or "landlock"), where nothing outside the workspace is '
    "writable"
)


@lru_cache(maxsize=16)
def _path_of(python: str) -> tuple[str, ...]:
    """`sys.path` of `python` as the metric's run sees it (`-I`: no user site, no PYTHONPATH,
    no current folder); this interpreter's own when `python` cannot be asked."""
    res = proc.run([python, "-I", "-c", _ASK], cwd="/", timeout=20)
    if res.returncode != 0:
        return ()
    return tuple(line for line in res.stdout.splitlines() if line.strip())


def folders(pythons: Iterable[str], inside: Sequence[Path]) -> list[Path]:
    """The existing folders of the interpreters' `sys.path` (the harness's own too) that this
    user can write (the agent runs as this user: a system interpreter's folders are out of its
    reach), none under `inside` (the git directory: watched otherwise). A virtualenv in the
    work tree counts: it is ignored, so the work tree's status never shows a `.pth` planted
    in its `site-packages`."""
    out: dict[Path, None] = {}
    for python in dict.fromkeys([*pythons, sys.executable]):
        for entry in _path_of(python):
            path = Path(os.path.abspath(entry))
            if not path.is_dir() or any(path.is_relative_to(p) for p in inside):
                continue
            if not os.access(path, os.W_OK):
                continue
            out[path] = None
    return list(out)


_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# options naming where a command writes, not what it reads
_OUTPUT = re.compile(
    r"^-(o|-?(out|output|log|report|result|junit|cache|tmp|save|dump)[-\w]*)$", re.I
)


def command_paths(commands: Iterable[str], inside: Sequence[Path]) -> list[Path]:
    """The files and folders outside the repository that the metric and guard commands name
    by path — a word (or the value of an `--option=`) that is absolute or starts with `~` or
    `$HOME`, and the program the command's first word finds on `PATH` (`pytest`: a
    virtualenv's script) — which this user can write: a benchmark kept there (`python3 ~/bench/bench.py`,
    `--data /srv/data.bin`) is as much the measurement as a sealed file, and an agent without
    the sandbox can rewrite it. A folder that is sticky and writable by everyone (`/tmp`
    itself) is left out: other users' files come and go there; so is the value of an option
    naming where the command writes (`-o`, `--out`, `--log-file`, `--junitxml`): an agent that
    runs the benchmark itself writes it too."""
    out: dict[Path, None] = {}
    for command in commands:
        try:
            words = shlex.split(command or "")
        except ValueError:
            continue
        program = next((w for w in words if not _ASSIGN.match(w)), None)
        if program and "/" not in program:  # `python3`, `pytest`: the file PATH finds
            search = lookup.measured_env().get("PATH", os.environ.get("PATH", ""))
            found = shutil.which(program, path=search)
            words = [found or program, *words[words.index(program) + 1 :]]
        for i, word in enumerate(words):
            option, _, value = word.partition("=") if word.startswith("-") else ("", "", word)
            if _OUTPUT.search(option) or (i and _OUTPUT.search(words[i - 1]) and not option):
                continue  # where the benchmark writes (`-o`, `--out`, `--log-file`): not read
            value = os.path.expanduser(os.path.expandvars(value))
            if not value.startswith("/"):
                continue
            out.update(dict.fromkeys(existing_outside([Path(os.path.abspath(value))], inside)))
    return list(out)


def existing_outside(
    paths: Iterable[Path], inside: Sequence[Path], known: Iterable[Path] = ()
) -> list[Path]:
    """Of `paths` (absolute), those that exist outside `inside` and this user can write (or
    replace), not `/` nor a sticky folder writable by everyone (`/tmp`), nor one of `known`."""
    out: dict[Path, None] = {}
    seen = set(known)
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        if path in seen or any(path.is_relative_to(p) for p in inside) or path == Path("/"):
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX:
            continue
        if os.access(path, os.W_OK) or os.access(path.parent, os.W_OK):
            out[path] = None
    return list(out)


RUNNER_HINT = (
    "put back (or remove) what you did not write there, then `git improve run --resume`; a "
    'sandbox ([agent] sandbox = "bwrap" or "landlock") keeps agents and measured code out of '
    "your home and the folders above the repository"
)
# what runners and toolchains read from every folder above the one they run in (a checkout
# is under `.git/improve/work/`, inside your work tree): cargo's config, Node's modules (and
# `node_modules/.bin`, which `npm run` puts on PATH from every folder up: a `node` there runs
# in place of yours), the
# version files of pyenv, rustup, nvm, asdf and mise, yarn's config, go's workspace, MSBuild's
# imports, uv's config; files ignored by git in the work tree itself included (no status
# shows them)
_ABOVE = (
    ".cargo/config.toml", ".cargo/config", "node_modules", "node_modules/.bin", ".yarnrc",
    ".yarnrc.yml",
    ".python-version", ".tool-versions", "mise.toml", ".mise.toml", ".config/mise.toml",
    "rust-toolchain", "rust-toolchain.toml", ".nvmrc", ".node-version", "go.work",
    "uv.toml", "Directory.Build.props", "Directory.Build.targets", "Directory.Build.rsp",
    "global.json", ".bazelrc",
)  # fmt: skip
# what they read from your home whatever folder they run in (with the variables that move it)
_HOME = (
    ".npmrc", ".yarnrc", ".yarnrc.yml", ".bunfig.toml", ".node_modules", ".node_libraries",
    ".cargo/config.toml", ".cargo/config", ".pip/pip.conf", ".pydistutils.cfg",
    ".Rprofile", ".Renviron", ".gradle/gradle.properties", ".gradle/init.d",
    ".gradle/init.gradle", ".m2/settings.xml", ".mavenrc", ".tool-versions",
    ".pyenv/version", ".bazelrc", ".python-version", ".config/pip/pip.conf",
    ".config/uv/uv.toml", ".config/mise/config.toml", ".config/.bunfig.toml",
)  # fmt: skip
_MOVED = {  # a variable that names the file or folder in place of the home's
    "NPM_CONFIG_USERCONFIG": "", "CARGO_HOME": "config.toml", "PIP_CONFIG_FILE": "",
    "PYENV_ROOT": "version", "GRADLE_USER_HOME": "gradle.properties", "R_PROFILE_USER": "",
    "R_ENVIRON_USER": "", "UV_CONFIG_FILE": "", "MISE_GLOBAL_CONFIG_FILE": "",
}  # fmt: skip


def runner_files(work_tree: Path | None, git_dir: Path | None = None) -> list[Path]:
    """The files and folders outside the repository's tracked files that a metric's or
    guard's runner or toolchain reads without being named — in your home (`~/.npmrc`'s
    `node-options`, `~/.cargo/config.toml`'s `runner`, `~/.node_modules`, pip's and uv's
    config, `~/.Rprofile`, Gradle's init scripts...) and in the work tree and every folder
    above it (`node_modules/`, `.cargo/config.toml`, `.python-version`, `rust-toolchain.toml`,
    `go.work`...: a checkout is below them all), and in the git directory holding the
    checkouts and the folders above it (`.git/node_modules/`; its `improve/` folder is
    watched on its own, git/strays.py) — which exist now or may be made: without the
    sandbox an agent (or the measured code) that plants one changes every later measurement,
    the incumbent's too, and no status shows it. Watched as the site folders are (`take`)."""
    home = Path(os.environ.get("HOME") or os.path.expanduser("~"))
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    out: dict[Path, None] = {}
    for rel in _HOME:
        base = xdg if rel.startswith(".config/") else home
        out[base / rel.removeprefix(".config/")] = None
    for variable, rel in _MOVED.items():
        value = os.environ.get(variable)
        if value and os.path.isabs(value):
            out[Path(value) / rel if rel else Path(value)] = None
    for where in (git_dir, work_tree):
        if where is not None:
            folder = Path(os.path.abspath(where))
            for level in [folder, *folder.parents]:
                for rel in _ABOVE:
                    out[level / rel] = None
    return [p for p in out if p.is_absolute()]
