"""Tournaments without the sandbox: which agent wrote into a sibling's files.

Agents of a tournament work at once as the same user, so one can write into another
candidate's workspace or measurement checkout (they sit side by side under
`.git/improve/work/`). What is measured is still what was committed (a checkout changed during
a run is caught by its verification, a workspace is hashed from its files), but the change
landed on the victim: its checkout `tampered`, its workspace put back silently. The harness
cannot see which process wrote a file (no `fanotify` without privileges), so it tells the
writer by time: every agent call is a window on one clock, and a change to files that belong to
an attempt whose own processes are all gone — a workspace at rest (its tree hashed, its agent
swept) or a checkout during a run — was made by an agent whose window overlapped the interval
in which it appeared. Those attempts are blamed (`blamed`, taken by the round's
`finalize`: `tampered`, never kept), each record naming the paths, with every candidate it
could have been when more than one was at work. A checkout spoiled during a run is measured
again while no agent works (`alone`): the victim is judged on its own committed tree, and a
change made again then is its own code's (`tampered` as before).

Limits (docs/integrity.md): a write into a sibling's workspace while that sibling's own agent
still works is that sibling's edit as far as anything can tell — it is hashed, committed and
measured as the sibling's (the writer can spoil or donate an edit, never its own measurement);
code measured in one checkout that writes its own checkout only while another agent works is
measured again cleanly and the blame falls on that agent.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from gitimprove.git.checkout import META, scan

_CLOCK = itertools.count(1)
_LOCK = threading.Condition()
# owner -> its windows: [start, end or None] on the clock, and the same two on the wall clock
_WINDOWS: dict[str, list[_Window]] = {}
_WORKING = 0  # agent calls under way
_ALONE = 0  # threads waiting for, or holding, a moment with no agent at work
_BLAME: dict[str, list[str]] = {}  # owner -> what it wrote into a sibling's files
_SHOWN = 10
# seconds: a change's stamp comes from the kernel's coarse clock, which runs up to a tick
# (1–10 ms: CONFIG_HZ 1000–100) behind the fine one a window's ends are read from, never
# ahead of it
_TICK = 0.01


@dataclass
class _Window:
    start: int
    wall_start: float
    end: int | None = None
    wall_end: float | None = None

    def close(self) -> None:
        self.end, self.wall_end = next(_CLOCK), time.time()

    def held(self, when: float) -> bool:
        """Whether a change the file system stamped at `when` can have been made within this
        window: the write came at `when` or up to a tick after it (the coarse clock lags),
        so not before the window opened, and not after it closed. No slack past the end: a
        window that opens just after the writer's closed (one agent at a time) must not
        hold the writer's last change."""
        end = time.time() if self.wall_end is None else self.wall_end
        return self.wall_start - _TICK <= when <= end + 0.001


@dataclass
class _Resting:
    owner: str
    path: Path
    label: str
    listing: dict[str, tuple[int, ...]]
    since: int


# path -> a workspace whose tree was hashed and whose agent is gone: watched until its agent
# works again, or it is moved for reuse or removed (`release`)
_RESTING: dict[str, _Resting] = {}
_LOOKING = threading.Lock()  # held while `_RESTING` is read, changed or a workspace listed
# a checkout (by identity: a reset may give it another folder) -> the moment it was last
# proved as written (made, or verified after a run)
_CLEAN: dict[int, int] = {}


def clean(checkout: object) -> None:
    """`checkout` was proved as written just now."""
    with _LOCK:
        _CLEAN[id(checkout)] = next(_CLOCK)


def clean_since(checkout: object) -> int | None:
    """When `checkout` was last proved as written (None: not since this process made it)."""
    with _LOCK:
        return _CLEAN.get(id(checkout))


def tick() -> int:
    """A moment on the windows' clock."""
    with _LOCK:
        return next(_CLOCK)


@contextmanager
def agent(owner: str | None) -> Iterator[None]:
    """Around one agent call of `owner`: its window, opened once no moment `alone` is
    wanted."""
    global _WORKING
    with _LOCK:
        while _ALONE:
            _LOCK.wait()
        _WORKING += 1
        window = _Window(next(_CLOCK), time.time())
        if owner is not None:
            _WINDOWS.setdefault(owner, []).append(window)
    try:
        yield
    finally:
        with _LOCK:
            window.close()
            _WORKING -= 1
            _LOCK.notify_all()


@contextmanager
def window(owner: str | None) -> Iterator[None]:
    """Around one metric or guard run of `owner`: the measured code writes as an agent can,
    so its window makes it a suspect as theirs do (it neither waits for nor holds back a
    moment `alone`)."""
    with _LOCK:
        span = _Window(next(_CLOCK), time.time())
        if owner is not None:
            _WINDOWS.setdefault(owner, []).append(span)
    try:
        yield
    finally:
        with _LOCK:
            span.close()


@contextmanager
def alone() -> Iterator[None]:
    """A moment with no agent at work: waits for those at work, holds new ones back."""
    global _ALONE
    with _LOCK:
        _ALONE += 1
        while _WORKING:
            _LOCK.wait()
    try:
        yield
    finally:
        with _LOCK:
            _ALONE -= 1
            _LOCK.notify_all()


def at_work_since(since: int, *, but: str | None, when: float | None = None) -> list[str]:
    """The owners (other than `but`) of an agent's or a measured run's window open at any
    moment from `since` on; with `when` (the latest change's stamp, `changed_at`), only those
    whose window held that moment — the latest write was made within its writer's window —
    unless none did (the wall clock moved): then all of them."""
    with _LOCK:
        windows = {
            owner: [w for w in spans if w.end is None or w.end >= since]
            for owner, spans in _WINDOWS.items()
            if owner != but
        }
    open_since = sorted(owner for owner, spans in windows.items() if spans)
    if when is None:
        return open_since
    held = [owner for owner in open_since if any(w.held(when) for w in windows[owner])]
    return held or open_since


def changed_at(root: Path, paths: list[str]) -> float | None:
    """The latest change time among `paths` under `root` (a path gone: the nearest folder of
    it that is left, whose entries changed): when the last of those writes was made. Change
    times cannot be set by a program (a modification time can)."""
    latest: float | None = None
    for rel in paths:
        path = root / rel
        while True:
            try:
                stamp = os.lstat(path).st_ctime
                break
            except OSError:
                if path == root or path.parent == path:
                    stamp = None
                    break
                path = path.parent
        if stamp is not None and (latest is None or stamp > latest):
            latest = stamp
    return latest


def blame(writers: list[str], victim: str, paths: list[str]) -> None:
    """Lay the change of `paths` in `victim`'s files on `writers` (the one agent at work
    then, or each that was)."""
    if not writers or not paths:
        return
    shown = ", ".join(paths[:_SHOWN]) + (
        f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else ""
    )
    who = "" if len(writers) == 1 else f" (the writer is one of {', '.join(_names(writers))})"
    with _LOCK:
        for owner in writers:
            _BLAME.setdefault(owner, []).append(f"{victim}: {shown}{who}")


def blamed(owner: str) -> list[str]:
    """What `owner`'s agent wrote into a sibling's files, as far as the windows tell."""
    with _LOCK:
        return list(_BLAME.get(owner, ()))


def _names(owners: list[str]) -> list[str]:
    return [f"candidate {o.rsplit('-', 1)[-1]}" for o in owners]


def _listing(path: Path) -> dict[str, tuple[int, ...]]:
    """Every entry of a workspace but its clone's `.git`, with what a write moves (not the
    access time: reading is no change)."""
    return {k: v[:META] for k, v in scan(path).items() if k != ".git" and not k.startswith(".git/")}


def rest(owner: str, path: Path, label: str) -> None:
    """`owner`'s workspace at `path` now holds what was hashed and none of its processes is
    left: from now on a change there is another's."""
    with _LOOKING:
        _RESTING[str(path)] = _Resting(owner, path, label, _listing(path), tick())


def _look(key: str, r: _Resting, *, drop: bool) -> None:
    """Compare one resting workspace with its listing: a change is laid on the agents at
    work since it was last seen unchanged (caller holds `_LOOKING`)."""
    now = _listing(r.path)
    changed = sorted(p for p in set(r.listing) | set(now) if r.listing.get(p) != now.get(p))
    changed = [p for p in changed if p != "."]
    if changed:
        writers = at_work_since(r.since, but=r.owner, when=changed_at(r.path, changed))
        blame(writers, r.label, changed)
        r.listing, r.since = now, tick()
    if drop:
        _RESTING.pop(key, None)


def look(*, but: str | None = None) -> None:
    """Every resting workspace but `but`'s, looked at (after an agent call: what it wrote)."""
    with _LOOKING:
        for key, r in list(_RESTING.items()):
            if r.owner != but:
                _look(key, r, drop=False)


def wake(owner: str | None) -> None:
    """`owner`'s agent works in its workspace again: a last look, then no more watching."""
    with _LOOKING:
        for key, r in list(_RESTING.items()):
            if r.owner == owner:
                _look(key, r, drop=True)


def release(path: Path) -> None:
    """The workspace at `path` is about to be moved for reuse or removed: a last look."""
    with _LOOKING:
        r = _RESTING.get(str(path))
        if r is not None:
            _look(str(path), r, drop=True)


class Spoiled(Exception):
    """A checkout changed during a run while another attempt's agent was at work: measured
    again alone before anyone is blamed."""

    def __init__(self, paths: list[str], writers: list[str], victim: str | None = None) -> None:
        super().__init__("a sibling's agent may have written the checkout")
        self.paths = paths
        self.writers = writers
        self.victim = victim  # what changed, when not the checkout's files
