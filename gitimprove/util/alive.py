"""Whether a process id names a live process.

`os.kill(pid, 0)` raises `ProcessLookupError` when no such process exists and `PermissionError`
(EPERM) when it exists but belongs to another user. EPERM therefore means alive: in a
group-shared repository another user's live run must never be taken for a dead one.

A thread's id passes `kill(tid, 0)` too (and `/proc/<tid>` exists): where `/proc` tells, a pid
counts only when it names a process (its `Tgid` is itself), so a `.pid` file naming a thread
of a live process is not taken for a live one.
"""

from __future__ import annotations

import os
import re


def pid_alive(pid: int) -> bool:
    """True when `pid` names a process that exists, whoever owns it."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return _is_process(pid)


def _is_process(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"Tgid:"):
                    return int(line.split()[1]) == pid
    except FileNotFoundError:
        return not os.path.isdir("/proc/self")  # no /proc (macOS): kill(pid, 0) decides
    except (OSError, ValueError):
        return True
    return True


def runs_gitimprove(pid: int) -> bool:
    """Whether the live process `pid` is a gitimprove command (`run`, `measure`, a hook) that
    no attempt started — what may own a `.pid` file or a temporary file in gitimprove's
    folder. A command line naming gitimprove is not enough (`python -c 'sleep()' gitimprove`
    has one): it runs gitimprove itself (`-m gitimprove`, the `git-improve` script, a hook's
    entry) in a Python interpreter, and has no attempt's mark (util/marks.py: what the agent
    and the measured code start carries one, whatever it does to its environment, its
    session or its command line). Where they can be read (a process of this user that did not
    make itself non-dumpable, as a harness does) its program is a Python interpreter and its
    environment carries no attempt's token. True where `/proc` cannot tell (not Linux)."""
    where = f"/proc/{pid}"
    try:
        argv = _read(f"{where}/cmdline").split(b"\0")
    except FileNotFoundError:
        return not os.path.isdir("/proc/self")
    except OSError:
        return False
    if not _INTERPRETER.fullmatch(os.path.basename(argv[0])) or not _runs_entry(argv[1:]):
        return False
    try:
        exe = os.readlink(f"{where}/exe").removesuffix(" (deleted)")
    except OSError:
        exe = None  # non-dumpable, or another user's: its command line and mark decide
    if exe is not None and not _INTERPRETER.fullmatch(os.path.basename(exe).encode()):
        return False
    try:
        environ = _read(f"{where}/environ").split(b"\0")
    except OSError:
        environ = []
    if any(item.startswith(b"GITIMPROVE_TOKEN=") for item in environ):
        return False  # a process of an attempt (the agent's, the metric's, the guard's)
    from gitimprove.util.marks import marked

    return not marked(pid)


_INTERPRETER = re.compile(rb"(python|pypy)[0-9.]*[a-z]?")
_WITH_VALUE = frozenset({b"-X", b"-W", b"-Q"})
_SCRIPTS = frozenset({b"git-improve", b"gitimprove"})
_COVERAGE_MODULES = frozenset({b"coverage", b"coverage.__main__"})
_COVERAGE_SCRIPT = re.compile(rb"coverage(-?[0-9.]+)?")
# `coverage run`'s options that take a value (`--source=src` or `--source src`)
_COVERAGE_WITH_VALUE = frozenset(
    {
        b"--concurrency",
        b"--context",
        b"--data-file",
        b"--debug",
        b"--include",
        b"--omit",
        b"--rcfile",
        b"--save-signal",
        b"--source",
    }
)


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read(1 << 20)


def _runs_entry(args: list[bytes]) -> bool:
    """Whether an interpreter's arguments run gitimprove: `-m gitimprove[.…]`, the
    `git-improve` script, or the hooks' `-c` entry, after interpreter options; or coverage
    running one of these (`python -m coverage run [options] -m gitimprove …`, the `coverage`
    script's `run`), as a test suite measuring its coverage starts it."""
    i = 0
    while i < len(args) and args[i].startswith(b"-") and args[i] != b"-":
        arg = args[i]
        if arg == b"-m":
            module = args[i + 1] if i + 1 < len(args) else b""
            if module in _COVERAGE_MODULES:
                return _coverage_runs(args[i + 2 :])
            return _is_module(module)
        if arg == b"-c":
            from gitimprove.hooks.install import ENTRY

            return i + 1 < len(args) and args[i + 1] == ENTRY.encode()
        i += 2 if arg in _WITH_VALUE else 1
    if i >= len(args):
        return False
    script = args[i].replace(b"\\", b"/")
    if _COVERAGE_SCRIPT.fullmatch(os.path.basename(script)):
        return _coverage_runs(args[i + 1 :])
    return _is_script(script)


def _is_module(module: bytes) -> bool:
    return module == b"gitimprove" or module.startswith(b"gitimprove.")


def _is_script(script: bytes) -> bool:
    return os.path.basename(script) in _SCRIPTS or script.endswith(b"/gitimprove/__main__.py")


def _coverage_runs(args: list[bytes]) -> bool:
    """Whether coverage's arguments (after `-m coverage` or its script) run gitimprove: `run`,
    its options (those that take a value may have it in the next argument), then `-m`
    (`--module`) and gitimprove's module, or gitimprove's script."""
    if not args or args[0] != b"run":
        return False
    i, module = 1, False
    while i < len(args) and args[i].startswith(b"-"):
        arg = args[i]
        if arg == b"--":
            i += 1
            break
        if arg in (b"-m", b"--module"):
            module = True
        elif arg in _COVERAGE_WITH_VALUE:
            i += 1  # `--source src`: the value is the next argument
        i += 1
    if i >= len(args):
        return False
    target = args[i].replace(b"\\", b"/")
    return _is_module(target) if module else _is_script(target)
