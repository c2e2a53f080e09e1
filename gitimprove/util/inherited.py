"""What every process the harness starts inherits from it, pinned for the run
(docs/integrity.md).

Another process of the user can change it from outside without a trace (`prlimit`, `taskset
-p`, `renice`, `chrt -p`, `ionice -p`, a write of its pid into another cgroup's
`cgroup.procs`), and the harness's pid is in every attempt's token: a candidate's code that
pins the harness to one CPU, or moves it into a cgroup with a tight `cpu.max`, is measured
unhindered, the incumbent it measures next slowed; a lowered `RLIMIT_NOFILE` stopped the run
with the attempt unrecorded. `settle` sets it back
the moment an untrusted command (an agent, a metric or guard run) has exited, before the
harness opens anything (util/proc.py), and keeps what it found for the attempt's checks
(`changes`). util/proc.py calls it: it imports nothing that imports that.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gitimprove.errors import GitImproveError
from gitimprove.util import inodes

_LIMITS = tuple(
    {
        getattr(resource, n): n
        for n in sorted(dir(resource), reverse=True)
        if n.startswith("RLIMIT_")
    }.values()
)  # one name each: RLIMIT_NOFILE, not its alias RLIMIT_OFILE


@dataclass(frozen=True)
class Inherited:
    """The harness's resource limits and cgroups, and each thread's CPU affinity, priority,
    scheduling policy and I/O priority."""

    limits: tuple[tuple[str, tuple[int, int]], ...]
    affinity: frozenset[int] | None
    nice: int | None
    io: int | None
    policy: int | None
    cgroups: tuple[tuple[str, str], ...] = ()


_pinned: Inherited | None = None
HINT = (
    "the harness could not set them back (a lowered hard limit or a raised niceness needs "
    "privileges): `git improve run --resume` starts a process of its own"
)


class Stuck(GitImproveError):
    """What the harness's processes inherit changed and cannot be set back: the run stops
    (exit 1) naming it, before anything else is opened (no record could be written)."""

    def __init__(self, changed: list[str], who: str) -> None:
        super().__init__(
            f"{who} changed what the harness's processes inherit and the harness cannot set it "
            f"back: {'; '.join(changed)}; the attempt is not recorded",
            hint=HINT + " (and runs that attempt again: use the sandbox)",
        )


def _limits() -> tuple[tuple[str, tuple[int, int]], ...]:
    out = []
    for name in _LIMITS:
        with contextlib.suppress(OSError, ValueError):
            out.append((name, resource.getrlimit(getattr(resource, name))))
    return tuple(out)


def _cgroups() -> tuple[tuple[str, str], ...]:
    """The harness's cgroup in each hierarchy (`/proc/self/cgroup`), as (hierarchy, path):
    `0:` is cgroup v2's, `<id>:<controllers>` a v1 hierarchy's."""
    try:
        with open("/proc/self/cgroup", "rb") as fh:
            text = fh.read(1 << 16).decode("utf-8", "surrogateescape")
    except OSError:
        return ()
    out = []
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            out.append((f"{parts[0]}:{parts[1]}", parts[2]))
    return tuple(out)


def _cgroup_procs(hierarchy: str, path: str) -> str | None:
    """The `cgroup.procs` file of the cgroup at `path` in `hierarchy`, where a mount of that
    hierarchy shows it (`/proc/self/mountinfo`: cgroup2 for `0:`, else the cgroup mount whose
    options name the controllers); None when none does."""
    controllers = set(filter(None, hierarchy.split(":", 1)[1].split(",")))
    try:
        with open("/proc/self/mountinfo", "rb") as fh:
            text = fh.read().decode("utf-8", "surrogateescape")
    except OSError:
        return None
    for line in text.splitlines():
        mount, _, fs = line.partition(" - ")
        fields, kind = mount.split(" "), fs.split(" ")
        if len(fields) < 5 or len(kind) < 3:
            continue
        if controllers:
            if kind[0] != "cgroup" or not controllers <= set(kind[2].split(",")):
                continue
        elif kind[0] != "cgroup2":
            continue
        root, point = inodes.unescape(fields[3]), inodes.unescape(fields[4])
        rel = os.path.relpath(path, root)
        if rel == ".." or rel.startswith("../"):
            continue  # this mount shows another part of the hierarchy
        return os.path.normpath(os.path.join(point, rel, "cgroup.procs"))
    return None


def _move_back(hierarchy: str, path: str) -> bool:
    """Write the harness's pid into the `cgroup.procs` of the cgroup it was pinned in; False
    when that file is gone or not writable (the run then stops naming it)."""
    procs = _cgroup_procs(hierarchy, path)
    if procs is None or not os.access(procs, os.W_OK):
        return False
    try:
        fd = os.open(procs, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        os.write(fd, str(os.getpid()).encode())
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def _threads() -> list[int]:
    try:
        return [int(t) for t in os.listdir("/proc/self/task")]
    except (OSError, ValueError):
        return [threading.get_native_id()]


def _affinity(tid: int) -> frozenset[int] | None:
    try:
        return frozenset(os.sched_getaffinity(tid))
    except (OSError, AttributeError):
        return None


def _nice(tid: int) -> int | None:
    try:
        return os.getpriority(os.PRIO_PROCESS, tid)
    except (OSError, AttributeError):
        return None


# ioprio_get and ioprio_set (`ionice -p`), which Python does not wrap: (get, set) per machine
_IOPRIO = {"x86_64": (252, 251), "aarch64": (31, 30), "arm64": (31, 30)}.get(os.uname().machine)
_WHO_PROCESS = 1  # IOPRIO_WHO_PROCESS: the thread of that id


@functools.lru_cache(maxsize=1)
def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _syscall(number: int, *args: int) -> int:
    return int(_libc().syscall(number, *args))


def _io(tid: int) -> int | None:
    if _IOPRIO is None:
        return None
    try:
        got = _syscall(_IOPRIO[0], _WHO_PROCESS, tid)
    except (OSError, AttributeError):
        return None
    return None if got < 0 else got


def _set_io(tid: int, value: int) -> bool:
    return _IOPRIO is not None and _syscall(_IOPRIO[1], _WHO_PROCESS, tid, value) == 0


def _set_policy(tid: int, policy: int) -> bool:
    return _tried(os.sched_setscheduler, tid, policy, os.sched_param(0))


def _policy(tid: int) -> int | None:
    try:
        return os.sched_getscheduler(tid)
    except (OSError, AttributeError):
        return None


def _tried(call: Callable[..., object], *args: Any) -> bool:
    """Whether `call(*args)` set a value back (an `OSError` is a lack of privilege)."""
    try:
        call(*args)
    except OSError:
        return False
    return True


def pin() -> None:
    """Take what the harness's processes inherit (see `Inherited`) as the run's own."""
    global _pinned
    tid = threading.get_native_id()
    _pinned = Inherited(_limits(), _affinity(tid), _nice(tid), _io(tid), _policy(tid), _cgroups())


def restore() -> tuple[list[str], bool]:
    """What another process changed of the pinned `Inherited` (each named as it was and is),
    set back where the harness may (a soft limit up to the hard one, the affinity, a cgroup
    whose `cgroup.procs` it may write; a lowered hard limit or a raised niceness needs
    privileges, a cgroup removed is gone), and whether everything was set back.
    The limits come first: a lowered `RLIMIT_NOFILE` would refuse the listing of the threads."""
    if _pinned is None:
        return [], True
    changed, restored = [], True
    now = dict(_limits())
    for name, was in _pinned.limits:
        got = now.get(name)
        if got is None or got == was:
            continue
        changed.append(f"{name} of the harness: {_limit_text(got)} (was {_limit_text(was)})")
        try:
            resource.setrlimit(getattr(resource, name), was)
        except (OSError, ValueError):
            restored = False
    cgroups = dict(_cgroups())
    for hierarchy, was_path in _pinned.cgroups:
        got_path = cgroups.get(hierarchy)
        if got_path is None or got_path == was_path:
            continue
        kind = "v2" if hierarchy.startswith("0:") else hierarchy.split(":", 1)[1]
        changed.append(f"cgroup ({kind}) of the harness: {got_path} (was {was_path})")
        restored = _move_back(hierarchy, was_path) and restored
    for tid in _threads():
        for label, field, read, show, set_back in _PER_THREAD:
            was, got = getattr(_pinned, field), read(tid)
            if was is None or got in (None, was):
                continue
            changed.append(f"{label} of the harness's thread {tid}: {show(got)} (was {show(was)})")
            restored = set_back(tid, was) and restored
    return changed, restored


def _policy_text(policy: int) -> str:
    names = {getattr(os, n): n for n in dir(os) if n.startswith("SCHED_") and n[6:].isupper()}
    return names.get(policy, str(policy))


def _io_text(value: int) -> str:
    """`idle`, `best-effort 7` (`ionice`'s words for class and level)."""
    kind = ("none", "realtime", "best-effort", "idle")[(value >> 13) & 3]
    return kind if kind in ("none", "idle") else f"{kind} {value & 7}"


def _limit_text(pair: tuple[int, int]) -> str:
    return "/".join("unlimited" if v == resource.RLIM_INFINITY else str(v) for v in pair)


def _cpus(cpus: frozenset[int] | None) -> str:
    return ",".join(map(str, sorted(cpus or ()))) or "none"


# what each thread has of `Inherited`: (its name, the field, read, shown, set back)
_PER_THREAD: tuple[
    tuple[str, str, Callable[[int], Any], Callable[[Any], str], Callable[[int, Any], bool]], ...
] = (
    ("CPU affinity", "affinity", _affinity, _cpus, functools.partial(_tried, os.sched_setaffinity)),
    ("niceness", "nice", _nice, str, functools.partial(_tried, os.setpriority, os.PRIO_PROCESS)),
    ("I/O priority", "io", _io, _io_text, _set_io),
    # SCHED_IDLE or SCHED_BATCH back to the default needs no privilege
    ("scheduling policy", "policy", _policy, _policy_text, _set_policy),
)


def unpin() -> None:
    global _pinned
    _pinned = None
    changes()


_LOCK = threading.Lock()
_found: dict[str, None] = {}  # what `settle` found since the last `changes`, in order
_unrestored = False


def settle() -> None:
    """`restore`, what it found kept for `changes` (cheap: a few system calls)."""
    global _unrestored
    changed, restored = restore()
    if changed:
        with _LOCK:
            _found.update(dict.fromkeys(changed))
            _unrestored |= not restored


def changes() -> tuple[list[str], bool]:
    """What changed since the last call (each named as it was and is), set back now, and
    whether everything could be set back (a lowered hard limit or a raised niceness needs
    privileges)."""
    global _unrestored
    settle()
    with _LOCK:
        out = (list(_found), not _unrestored)
        _found.clear()
        _unrestored = False
    return out
