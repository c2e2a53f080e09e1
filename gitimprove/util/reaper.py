"""Every process an agent starts is found and killed (DESIGN §2, docs/integrity.md).

Three nets, each catching what the others miss:

- **Tokens.** Every process the loop starts for an attempt (the agent, the metric, the guard)
  carries `GITIMPROVE_TOKEN=<token>` in its environment, and children inherit it. `sweep`
  kills every process whose environment holds the token, wherever it was reparented; a
  resumed run and `doctor --repair` kill the survivors of a `kill -9` the same way.
- **Subreaper.** The harness makes itself a child subreaper (Linux `prctl`), so a descendant
  that double-forks or calls `setsid` (and scrubs its environment) is reparented to the harness
  instead of init. `sweep` kills every such orphan: a child of the harness that no `proc.run`
  call is waiting for.
- **Descendants.** Whatever is below a killed process dies with it.
- **Marks.** Without the sandbox every attempt's process carries its supervisor's mark
  (util/supervise.py: `no_new_privs` and stacked seccomp filters, which nothing can shed —
  not `env -i`, not `setsid`). After a `kill -9` of the supervisor and of the harness, a
  daemon that scrubbed its token is a marked process with no supervisor above it
  (util/marks.py): `run --resume` and `doctor --repair` kill those too.

Only the pids killed here are reaped (`waitpid(pid)`, never `waitpid(-1)`): the threads of a
tournament own their own children. On systems without `/proc` (macOS) the first two nets
are unavailable; the process-group kill of `proc.run` and the sandbox remain (see
docs/integrity.md).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import hashlib
import os
import secrets
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from gitimprove.util import inherited, marks, proc
from gitimprove.util.alive import pid_alive, runs_gitimprove

TOKEN_VAR = "GITIMPROVE_TOKEN"
_PREFIX = "gi1"
_PROC = Path("/proc")
_PR_SET_CHILD_SUBREAPER = 36

_subreaper = False


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants; False where unsupported."""
    global _subreaper
    if _subreaper:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        _subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        _subreaper = False
    return _subreaper


_PR_SET_DUMPABLE = 4
_continued = 0


def _count_continue(signum: int, frame: object) -> None:
    global _continued
    _continued += 1


def harden() -> Callable[[], None]:
    """Against processes of the user's own id (no sandbox): make the harness non-dumpable
    (no `ptrace`, no `/proc/<harness>/fd` or `mem` for them), and count every SIGCONT — a
    stopped harness is only ever continued by one, so a measurement during which the count
    moved was not watched throughout (`continued`), and pin what its processes inherit
    (util/inherited.py). Returns what undoes the signal handler and the pin."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    inherited.pin()
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.signal(signal.SIGCONT, _count_continue)

    def undo() -> None:
        signal.signal(signal.SIGCONT, previous)
        inherited.unpin()

    return undo


def continued() -> int:
    """How many times the harness was continued after a stop (see `harden`)."""
    return _continued


def available() -> bool:
    """Whether processes can be found by token here (a readable /proc)."""
    return (_PROC / "self" / "environ").exists()


def repo_key(common_dir: Path) -> str:
    return hashlib.sha1(str(common_dir).encode("utf-8", "surrogateescape")).hexdigest()[:12]


@dataclass(frozen=True)
class Token:
    """`gi1:<repo key>:<run>:<harness pid>:<random>`: whose process this is, unguessable."""

    value: str
    created: float = 0.0  # seconds since boot: no process with it started before

    @classmethod
    def new(cls, key: str, run: str) -> Token:
        value = f"{_PREFIX}:{key}:{run}:{os.getpid()}:{secrets.token_hex(8)}"
        return cls(value, uptime() - 1.0)

    @property
    def harness_pid(self) -> int | None:
        parts = self.value.split(":")
        try:
            return int(parts[-2]) if len(parts) >= 5 and parts[0] == _PREFIX else None
        except ValueError:
            return None

    def env(self) -> dict[str, str]:
        return {TOKEN_VAR: self.value}


def run_prefix(key: str, run: str | None = None) -> str:
    return f"{_PREFIX}:{key}:" + (f"{run}:" if run is not None else "")


# --- /proc --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProcInfo:
    pid: int
    ppid: int
    state: str
    started: float  # seconds since boot


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def uptime() -> float:
    """Seconds since boot, the clock of a process's start time in /proc."""
    try:
        return float((_PROC / "uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0


def _stat(pid: int) -> ProcInfo | None:
    try:
        raw = (_PROC / str(pid) / "stat").read_bytes().decode("ascii", "replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()
    if len(fields) < 20:
        return None
    try:
        return ProcInfo(pid, int(fields[1]), fields[0], int(fields[19]) / _TICKS)
    except ValueError:
        return None


def ancestors(pid: int, limit: int = 256) -> list[int]:
    """The parent of `pid`, its parent, … up to (not including) pid 0: whom a descendant that
    double-forked or called `setsid` is reparented to stays in the chain (a subreaper)."""
    out: list[int] = []
    info = _stat(pid)
    while info is not None and info.ppid > 0 and len(out) < limit:
        out.append(info.ppid)
        info = _stat(info.ppid)
    return out


def _all() -> list[ProcInfo]:
    out = []
    try:
        names = os.listdir(_PROC)
    except OSError:
        return []
    for name in names:
        if name.isdigit():
            info = _stat(int(name))
            if info is not None:
                out.append(info)
    return out


def _subtree(me: int) -> list[ProcInfo] | None:
    """Our descendants, from the kernel's `children` lists; None where it has none.

    With the harness a subreaper, every process an attempt left behind is in this subtree
    (an orphan is reparented to us), so a sweep need not read every process of the system."""
    out: list[ProcInfo] = []
    todo, seen = [me], {me}
    while todo:
        pid = todo.pop()
        try:
            tids = os.listdir(_PROC / str(pid) / "task")
        except OSError:
            if pid == me:
                return None
            continue
        for tid in tids:
            try:
                kids = (_PROC / str(pid) / "task" / tid / "children").read_text().split()
            except FileNotFoundError:
                if pid == me:
                    return None
                continue
            except OSError:
                continue
            for kid in map(int, kids):
                info = _stat(kid)
                if info is not None and kid not in seen:
                    seen.add(kid)
                    out.append(info)
                    todo.append(kid)
    return out


def token_of(pid: int) -> str | None:
    """The GITIMPROVE_TOKEN in a process's environment, or None (gone, unreadable, none)."""
    try:
        data = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return None
    key = TOKEN_VAR.encode() + b"="
    for item in data.split(b"\0"):
        if item.startswith(key):
            return item[len(key) :].decode("utf-8", "replace")
    return None


def _descendants(roots: Iterable[int], table: list[ProcInfo]) -> set[int]:
    children: dict[int, list[int]] = {}
    for p in table:
        children.setdefault(p.ppid, []).append(p.pid)
    found: set[int] = set()
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid in found:
            continue
        found.add(pid)
        todo.extend(children.get(pid, ()))
    return found


def _kill(pids: set[int]) -> None:
    # Stop first, so nothing in the set can fork a replacement between the kills.
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)


def _reap(pids: Iterable[int]) -> None:
    """Wait for the killed pids that are our children; no other child is touched."""
    me = os.getpid()
    for pid in pids:
        info = _stat(pid)
        if info is None or info.ppid != me:
            continue
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, 0)


def kill_matching(
    match: Callable[[str], bool],
    *,
    orphans: Callable[[str | None], bool],
    since: float = 0.0,
    mine_only: bool = False,
    extra: Callable[[list[ProcInfo]], set[int]] | None = None,
) -> list[int]:
    """Kill (with their descendants) the processes whose token matches, and the harness's
    orphans for which `orphans(token)` is true; repeat until none is left. Returns the pids.

    Only processes started after `since` (seconds since boot) can carry a token made then,
    so the environment of older ones is not read. With `mine_only` (and the harness a
    subreaper) only the harness's own descendants are looked at."""
    if not available():
        return []
    me = os.getpid()
    killed: set[int] = set()
    for _ in range(50):
        with proc.registry_lock():
            live = proc.live_children()
            table = _subtree(me) if mine_only and _subreaper else None
            if table is None:
                table = _all()
            roots, zombies = set(), set()
            for p in table:
                if p.pid == me or p.pid in live:
                    continue
                if p.ppid != me and p.started < since:
                    continue
                token = token_of(p.pid)
                if token is not None and match(token):
                    roots.add(p.pid)
                elif p.ppid == me and p.state == "Z":
                    zombies.add(p.pid)  # dead already (e.g. the sandbox probe's helper)
                elif p.ppid == me and orphans(token):
                    roots.add(p.pid)  # an orphan reparented to us: nobody waits for it
            if extra is not None:
                roots |= extra(table)
            targets = _descendants(roots, table) - {me} - live
            _reap(zombies - live)  # reaped, never reported as killed
            if not targets:
                break
            _kill(targets)
            _reap(targets)
            killed |= targets
        time.sleep(0.005)
    return sorted(killed)


def sweep(token: Token) -> list[int]:
    """After an attempt's process ends (or is interrupted): kill everything carrying its
    token, and every orphan of the harness, whatever token it carries (`_orphan`)."""
    return kill_matching(
        lambda t: t == token.value, orphans=_orphan, since=token.created, mine_only=True
    )


def _orphan(token: str | None) -> bool:
    """Whether a process reparented to the harness dies in a sweep: always. Every process of
    an attempt runs under its supervisor (or bubblewrap), a child subreaper: its descendants
    are reparented to that, never to the harness, unless it was killed. An orphan of the
    harness is what a killed supervisor left, even one carrying the token of another attempt
    still at work (a hostile sibling of a tournament reads it from that agent's environment,
    same user, to live on into another candidate's measurement)."""
    return True


def outlived(token: Token) -> list[int]:
    """After `sweep`: every process of the system that still carries the token (one that
    left the harness's tree), and every orphan of the harness (`_orphan`), killed.
    Anything found here escaped the sweep; the caller does not trust the attempt."""
    return kill_matching(lambda t: t == token.value, orphans=_orphan, since=token.created)


def sweep_harness(key: str, run: str) -> list[int]:
    """At the end of a run: everything this harness started for the run, and every orphan."""
    prefix = f"{run_prefix(key, run)}{os.getpid()}:"
    return kill_matching(lambda t: t.startswith(prefix), orphans=lambda t: True)


def kill_survivors(key: str, run: str | None = None) -> list[int]:
    """Processes of this repository (and run) whose harness is gone: a `kill -9` left them.

    A harness that is still alive keeps its processes; a resumed run holds the run's lock, so
    any other harness of that run is gone."""
    prefix = run_prefix(key, run)
    me = os.getpid()

    def dead_harness(t: str) -> bool:
        if not t.startswith(prefix):
            return False
        pid = Token(t).harness_pid
        if pid is None or pid == me:
            return pid is None
        return run is not None or not (pid_alive(pid) and runs_gitimprove(pid))

    killed = kill_matching(dead_harness, orphans=lambda t: False, extra=marks.orphans_in)
    return sorted(set(killed) | hunt_marked())


def hunt_marked(
    quiet: float = 0.02, limit: float = 3.0, *, looks: int = 10, kill: bool = True
) -> set[int]:
    """Marked orphans that change pid faster than a look through /proc: one that forks and
    exits at every step (its pid lives a millisecond) is gone by the time a table of every
    process is read and judged. Here each pid is judged the moment it is listed and stopped on
    sight (a stopped process cannot fork), then killed; after a first look at every process,
    the hunt goes on until no new one has appeared for `quiet` seconds and `looks` more
    looks (a look is slow on a busy machine), or for `limit`: a daemon that hopped while
    the first look judged it has a new pid the next look lists, and one whose pid lives
    longer than the hunt's quiet time is judged alive. Without `kill` (`doctor`'s report)
    each is only named."""
    if not available():
        return set()
    seen: set[int] = set()
    caught: set[int] = set()
    start = time.monotonic()
    last: float | None = None
    after = 0  # looks since the last that found one
    while last is None or (
        (after < looks or time.monotonic() - last < quiet) and time.monotonic() - start < limit
    ):
        after += 1
        try:
            names = os.listdir(_PROC)
        except OSError:
            break
        found: set[int] = set()
        for name in names:
            if not name.isdigit() or int(name) in seen:
                continue
            pid = int(name)
            judged = marks.orphan(pid)
            if judged:
                if kill:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGSTOP)
                found.add(pid)
            if judged is not None:
                seen.add(pid)
        if found:
            if kill:
                _kill(found)
            caught |= found
        if found or last is None:
            last, after = time.monotonic(), 0
    return caught


def marked_orphans() -> list[int]:
    """Processes an attempt's supervisor marked with no supervisor above them any more (what
    an agent leaves after killing its supervisor and the harness), token or not."""
    if not available():
        return []
    return sorted(marks.orphans_in(_all()))


def alive_with_prefix(prefix: str) -> list[int]:
    """Pids whose token starts with `prefix` (for doctor's report and the tests)."""
    if not available():
        return []
    return sorted(
        p.pid
        for p in _all()
        if p.state != "Z" and (t := token_of(p.pid)) is not None and t.startswith(prefix)
    )
