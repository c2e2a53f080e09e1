"""Reading and parsing every note on more than one core (a cold `log`, DESIGN §13).

Ten thousand notes cost a cold `log` most of its time in parsing, and git itself answers in
one process: so the notes are cut into as many contiguous parts as there are cores (up to
four, and only when each part has a thousand notes or more), each part read by its own `git
cat-file` and parsed by its own process (the first by this one, the others by forked
children, which send back what they parsed as `marshal` data and keep it in the note cache as
a shard of their own). A child that fails, or sends back something that does not fit its
part, costs a parse of that part here: never a wrong or a missing row.
"""

from __future__ import annotations

import marshal
import os
import signal
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    # the notes of one part, (path, blob id), and what parsing them gives: the note cache's
    # entries by path (`notecache.Entry`), for the notes that had content
    Part = Sequence[tuple[str, str]]
    Parsed = dict[str, Any]

_PER_PROCESS = 1000  # notes a process must have to be worth forking
_MOST = 4


def processes(notes: int) -> int:
    """How many processes parse `notes` notes: on Linux (forking a process that has loaded
    system frameworks is not safe on macOS) and with no other thread running, one per core
    the process may run on."""
    if not sys.platform.startswith("linux") or _threaded():
        return 1
    return max(1, min(_cores(), _MOST, notes // _PER_PROCESS))


def _threaded() -> bool:
    """Whether other threads run here: a child forked now could find a lock one of them held
    (the process registry's, a file's) held for ever, so such a process parses alone."""
    threading = sys.modules.get("threading")
    return threading is not None and threading.active_count() > 1


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def parse_all(
    notes: Part,
    parse: Callable[[Part, int, int], Parsed],
    usable: Callable[[Any, str], bool],
) -> list[Parsed]:
    """`[parse(part, k, len(parts)) for k, part in enumerate(parts)]` over `notes` cut into
    parts, the parts after the first parsed at the same time in forked children; a child's
    answer is taken when each of its entries is `usable` for its note's blob."""
    n = processes(len(notes))
    size = -(-len(notes) // n)
    parts = [notes[k * size : (k + 1) * size] for k in range(n)]
    children: list[tuple[int, int]] = []  # (pid, read end of its pipe)
    try:
        for k in range(1, n):
            children.append(_fork(parts[k], k, n, parse))
        out = [parse(parts[0], 0, n)]
        for k, (pid, fd) in enumerate(children, start=1):
            with os.fdopen(fd, "rb") as fh:
                data = fh.read()
            children[k - 1] = (pid, -1)
            _, status = os.waitpid(pid, 0)
            got = _loaded(data) if status == 0 else None
            fits = got is not None and _fits(got, parts[k], usable)
            out.append(got if fits else parse(parts[k], k, n))  # type: ignore[arg-type]
        return out
    finally:
        for pid, fd in children:
            if fd >= 0:
                os.close(fd)
                try:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                except OSError:
                    pass


def _fork(part: Part, k: int, n: int, parse: Callable[[Part, int, int], Parsed]) -> tuple[int, int]:
    r, w = os.pipe()
    pid = os.fork()
    if pid:
        os.close(w)
        return pid, r
    code = 1  # the child: parse, send, and leave without running the parent's cleanup
    try:
        os.close(r)
        data = marshal.dumps(parse(part, k, n))
        with os.fdopen(w, "wb") as fh:
            fh.write(data)
        code = 0
    except BaseException:  # the parent parses the part itself
        pass
    finally:
        os._exit(code)


def _loaded(data: bytes) -> Parsed | None:
    try:
        got = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return None
    return got if type(got) is dict else None


def _fits(got: Parsed, part: Part, usable: Callable[[Any, str], bool]) -> bool:
    """Whether a child's answer holds only entries of its part's notes, each of its blob."""
    blobs = dict(part)
    return all(usable(entry, blobs.get(path, "")) for path, entry in got.items())
