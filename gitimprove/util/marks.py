"""The marks of attempts' processes (util/supervise.py), read from /proc.

Without the sandbox the supervisor marks the agent's process with `no_new_privs` and
`MARK_FILTERS` seccomp filters; every descendant carries them, whatever it does to its
environment, session or process group. A marked process whose nearest unmarked ancestor is
not a supervisor lost its supervisor — the agent killed it, or the harness and it died
together — and is a survivor to kill (util/reaper.py `kill_survivors`, `doctor --repair`).
A process of another user, one with fewer filters than this process plus the mark, or one
carrying the token of a harness still alive (which sweeps it itself) is never taken for one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from gitimprove.util.supervise import MARK_FILTERS

if TYPE_CHECKING:
    from gitimprove.util.reaper import ProcInfo

_PROC = Path("/proc")


def _mark_of(pid: int | str) -> tuple[int, int, int] | None:
    """(real uid, no_new_privs, seccomp filters) from /proc/<pid>/status, readable by all."""
    try:
        text = (_PROC / str(pid) / "status").read_text(errors="replace")
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    try:
        uid = int(fields["Uid"].split()[0])
        return uid, int(fields["NoNewPrivs"]), int(fields["Seccomp_filters"])
    except (KeyError, ValueError, IndexError):
        return None  # a kernel without Seccomp_filters (before 5.9): no marks to read


def _is_supervisor(pid: int) -> bool:
    try:
        args = (_PROC / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(a.endswith(b"/supervise.py") for a in args[:4])


def orphans_in(table: list[ProcInfo]) -> set[int]:
    """The marked processes of `table` (every process, from /proc) with no supervisor above."""
    own = _mark_of("self")
    if own is None:
        return set()
    uid, _, base = own
    me = os.getpid()
    parent = {p.pid: p.ppid for p in table}
    marks: dict[int, bool] = {}

    def marked(pid: int) -> bool:
        if pid not in marks:
            m = _mark_of(pid)
            marks[pid] = m is not None and m[0] == uid and m[1] == 1 and m[2] >= base + MARK_FILTERS
        return marks[pid]

    out = set()
    for p in table:
        if p.pid == me or p.state == "Z" or not marked(p.pid):
            continue
        above = p.ppid
        while above in parent and marked(above):
            above = parent[above]
        if not _is_supervisor(above) and not _owned(p.pid):
            out.add(p.pid)
    return out


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process, or None when it is gone."""
    try:
        raw = (_PROC / str(pid) / "stat").read_bytes().decode("ascii", "replace")
        fields = raw[raw.rfind(")") + 2 :].split()
        return fields[0], int(fields[1])
    except (OSError, ValueError, IndexError):
        return None


def orphan(pid: int) -> bool | None:
    """`orphans_in` for one process, its ancestors read as they are now (util/reaper.py
    `hunt_marked`); None when that cannot be told yet (an ancestor exited and the process is
    not reparented yet: ask again)."""
    own = _mark_of("self")
    if own is None or pid == os.getpid():
        return False

    def marked(p: int) -> bool:
        m = _mark_of(p)
        return m is not None and m[0] == own[0] and m[1] == 1 and m[2] >= own[2] + MARK_FILTERS

    first = _stat(pid)
    if first is None or first[0] == "Z" or not marked(pid):
        return False
    above = first[1]
    for _ in range(4096):  # deeper than any real tree; a loop is no orphan
        got = _stat(above)
        if got is None or got[0] == "Z":
            return None
        if not marked(above):
            return not _is_supervisor(above) and not _owned(pid)
        above = got[1]
    return False


def _owned(pid: int) -> bool:
    """Whether a live harness still answers for the process: it carries the token of one (that
    harness sweeps it; another repository's run is not this one's to kill)."""
    from gitimprove.util.reaper import Token, token_of

    token = token_of(pid)
    harness = Token(token).harness_pid if token is not None else None
    if harness is None or harness == os.getpid():
        return False
    # A harness is alive, unmarked (no agent can start one) and runs gitimprove: a token
    # forged to name pid 1 or any other live process owns nothing.
    own = _mark_of("self")
    mark = _mark_of(harness)
    if own is None or mark is None or mark[1:] != own[1:]:
        return False
    from gitimprove.util.alive import runs_gitimprove

    return runs_gitimprove(harness)


def marked(pid: int) -> bool:
    """Whether `pid` carries an attempt's mark on top of this process's own (the agent's
    process, the metric's or the guard's, or anything they started)."""
    own, mark = _mark_of("self"), _mark_of(pid)
    if own is None or mark is None:
        return False
    return mark[0] == own[0] and mark[1] == 1 and mark[2] >= own[2] + MARK_FILTERS


def attempt_above() -> str | None:
    """The token of the attempt this process belongs to whatever it did to its environment:
    the nearest of its ancestors that is an attempt's supervisor (every descendant of the
    agent, the metric or the guard, double-forked or `setsid`, stays below it: it is their
    subreaper) carries it. `""` when that token cannot be read, or when no supervisor is
    above but this process carries an attempt's mark on top of a gitimprove harness above it
    (its supervisor killed, it was reparented to the harness; a service's own seccomp filters
    above it are no harness). None when it belongs to no attempt (once the harness died too,
    reparented to init, nothing tells: `doctor --repair` kills such a process). `""` too when
    the first of its ancestors it can see carries an attempt's mark: a pid namespace of its own
    (`unshare -Urpf --mount-proc`) hides every process above it, and no init a system or a
    container starts carries `no_new_privs` with that many filters."""
    from gitimprove.util.alive import runs_gitimprove
    from gitimprove.util.reaper import ancestors, token_of

    own = _mark_of("self")
    chain = ancestors(os.getpid())
    for pid in chain:
        if _is_supervisor(pid):
            return token_of(pid) or ""
        mark = _mark_of(pid)
        if own is None or mark is None or own[0] != mark[0]:
            continue
        if own[1] == 1 and own[2] >= mark[2] + MARK_FILTERS and runs_gitimprove(pid):
            return ""  # reparented to the harness: its supervisor was killed
    # the top of a namespace an attempt's process made (nothing above it seen), marked
    uid, no_new_privs, filters = _mark_of(chain[-1] if chain else "self") or (-1, 0, 0)
    if own is not None and uid == own[0] and no_new_privs == 1 and filters >= MARK_FILTERS:
        return ""
    return None
