"""Every move of a gitimprove ref made by gitimprove, witnessed (docs/integrity.md).

Every transaction of `repo.update_refs` on a ref gitimprove trusts — every run's branch, the
notes, the archive, run markers, the memory branch, session refs — appends one line per ref to
`<git-common-dir>/improve/refs.witness`:

    <ref> <old or -> <new or -> <tag>

(the tag an HMAC with the repository's key, util/keys.py). A ref that moved to a value no
gitimprove process wrote — an agent that rewrites `improve/<another run>`, its notes or a run
marker, through the user's `.git` or with plain git — is named by `moved_outside`, which the
loop calls around every agent call and measurement, whatever run the ref belongs to, so
concurrent runs never trip each other. Scratch refs of `sync` (`refs/improve/remotes/`) are
written by `git fetch` and trusted by nothing, so they are not watched.

The file is compacted (`compact`) at the end of every run and whenever an append finds it
over `COMPACT_AT` bytes: it is rewritten with only what `_alive` would read from it, the
values of each ref no later move superseded (one signed line each), so it never grows
without bound. Appenders hold a shared `flock` on the file while they write, the compactor an
exclusive one from its read to its `rename`, and an appender whose file was replaced
meanwhile writes again into the new one: no concurrent line is lost.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from gitimprove.git import refs
from gitimprove.util import flocks, written
from gitimprove.util.files import open_state, read_state
from gitimprove.util.keys import Key, load_key

FILE = "refs.witness"
_NONE = "-"
COMPACT_AT = 256 * 1024  # bytes: an append that finds the file larger compacts it
DEFER_UP_TO = 4 * COMPACT_AT  # ... unless a run is under way, until it is this large


def watched(name: str) -> bool:
    """The refs the loop trusts and only gitimprove writes."""
    if name.startswith(refs.REMOTES_PREFIX):
        return False
    return name == refs.NOTES or name.startswith((refs.RUN_BRANCH_PREFIX, "refs/improve/"))


def _line(key: Key, name: str, old: str | None, new: str | None) -> str:
    body = f"{name} {old or _NONE} {new or _NONE}"
    return f"{body} {key.mac(body, 24)}\n"


def record(improve_dir: Path, updates: Iterable[tuple[str, str | None, str | None]]) -> None:
    """Witness a transaction that landed: (ref, new, old) as `update_refs` takes them. One
    `write` in append mode, so lines of concurrent writers never interleave."""
    moves = [(n, new, old) for n, new, old in updates if watched(n)]
    if not moves:
        return
    key = load_key(improve_dir)
    if key is None:
        return
    data = "".join(_line(key, n, old, new) for n, new, old in moves).encode()
    with contextlib.suppress(OSError):
        size = _append(improve_dir / FILE, data)
        if size > COMPACT_AT:
            compact(improve_dir, deferrable=size <= DEFER_UP_TO)


def _append(path: Path, data: bytes) -> int:
    """Append `data` in one `write` under a shared lock, into the file now at `path` (not one
    a compactor replaced meanwhile). Returns the file's size after it."""
    while True:
        fd = open_state(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            try:
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                at = os.fstat(fd).st_size  # where the append lands unless another lands first
                written.mark(path, pending=True, data=data, offset=at)
                try:
                    os.write(fd, data)
                    return os.fstat(fd).st_size
                finally:
                    written.mark(path, data=data, offset=at)
        finally:
            os.close(fd)  # closing releases the lock


def compact(improve_dir: Path, *, deferrable: bool = False) -> bool:
    """Rewrite the witness file with one signed line per value each ref can still be at
    (what `_alive` reads from it, nothing more); lines no key signed are dropped. False when
    there is no file or no key, or when `deferrable` and another run is under way: a run's
    snapshot of the refs is judged by where the file ended when it was taken (`position`),
    which a new file loses."""
    path = improve_dir / FILE
    if deferrable and flocks.run_held(improve_dir, others_only=True):
        return False
    key = load_key(improve_dir, create=False)
    if key is None:
        return False
    try:
        fd = open_state(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            if os.fstat(fd).st_ino != os.stat(path).st_ino:
                return False  # another compactor replaced it just now
        except FileNotFoundError:
            return False
        alive = _parse(key, read_state(path))
        lines = []
        for name in sorted(alive):
            values = alive[name]
            # "-" (no ref) last: a later line "<ref> - <value>" would otherwise discard it
            for value in [*sorted(values - {_NONE}), *([_NONE] if _NONE in values else [])]:
                lines.append(_line(key, name, None, None if value == _NONE else value))
        tmp = path.with_name(f"{FILE}.{os.getpid()}.tmp")
        data = "".join(lines).encode("utf-8")
        written.mark(tmp, pending=True, data=data)
        tmp.write_bytes(data)
        os.chmod(tmp, 0o600)
        written.mark(path, pending=True, data=data)
        os.replace(tmp, path)
        written.mark(path, data=data)
        written.mark(tmp)
        return True
    finally:
        os.close(fd)


Position = tuple[int, int]  # the witness file's (inode, size) when refs were read


def position(improve_dir: Path) -> Position:
    """Where the witness file ends now: taken before a snapshot reads the refs, every line
    past it was appended after (its move may still have been before: a writer appends
    after its transaction). (0, 0) when there is no file yet."""
    try:
        st = os.stat(improve_dir / FILE)
    except OSError:
        return (0, 0)
    return (st.st_ino, st.st_size)


def _alive(improve_dir: Path, since: Position | None = None) -> dict[str, set[str]]:
    """For each witnessed ref, the values gitimprove wrote that no later move superseded;
    with `since`, the values a snapshot taken at that position could have found: a move
    past it supersedes nothing (the snapshot was taken before it)."""
    key = load_key(improve_dir, create=False)
    try:
        fd = open_state(improve_dir / FILE)
    except OSError:
        return {}
    try:
        ino = os.fstat(fd).st_ino
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read()
    except OSError:
        return {}
    finally:
        os.close(fd)
    upto = None
    if since is not None and since == (0, 0):
        upto = 0
    elif since is not None and since[0] == ino:
        upto = since[1]
    return {} if key is None else _parse(key, data, upto)


def _parse(key: Key, data: bytes, upto: int | None = None) -> dict[str, set[str]]:
    """Each ref's values, line by line; a line that starts at or past `upto` only adds."""
    out: dict[str, set[str]] = {}
    at = 0
    for raw in data.split(b"\n"):
        start, at = at, at + len(raw) + 1
        parts = raw.decode("utf-8", "replace").split(" ")
        if len(parts) != 4:
            continue
        name, old, new, mac = parts
        if mac != key.mac(f"{name} {old} {new}", 24):
            continue  # not written by gitimprove: a forged line counts for nothing
        values = out.setdefault(name, set())
        if old != new and (upto is None or start < upto):
            values.discard(old)
        values.add(new)
    return out


def unexplained(
    improve_dir: Path,
    before: Mapping[str, str],
    after: Mapping[str, str],
    *,
    settle: float = 5.0,
    since: Position | None = None,
) -> list[str]:
    """The watched refs that changed from `before` to `after` (name -> target) to a value no
    gitimprove transaction wrote. A writer appends its line just after its transaction (after
    `git update-ref` exits: a hook's flush among a burst of hooks on a loaded machine took over
    a second), so an unexplained move is looked at again for up to `settle` seconds before it
    is named (only a move not yet explained waits). `since`: the witness file's `position`
    when `after` was read, so a value gitimprove moved on from after the snapshot (a hook's
    flush meanwhile) is still one it wrote, and a value it had moved on from before (a ref
    put back to an old value) is not."""
    changed = {n: after.get(n) for n in set(before) | set(after) if before.get(n) != after.get(n)}
    if not changed:
        return []
    deadline = time.monotonic() + settle
    while True:
        alive = _alive(improve_dir, since)
        bad = sorted(n for n, v in changed.items() if (v or _NONE) not in alive.get(n, ()))
        if not bad or time.monotonic() > deadline:
            return bad
        time.sleep(0.02)


def moved_outside(
    improve_dir: Path,
    before: Mapping[str, str],
    after: Mapping[str, str],
    since: Position | None = None,
) -> list[str]:
    """`unexplained`, each named the way a person finds it."""
    return [
        f"{n} moved to {(after.get(n) or 'nothing')[:12]} outside gitimprove"
        for n in unexplained(improve_dir, before, after, since=since)
    ]


def last_written(improve_dir: Path, name: str, before: str | None) -> tuple[bool, str | None]:
    """(known, value): where gitimprove last left `name` — the one value it wrote that nothing
    superseded, else `before` when gitimprove wrote that; a ref gitimprove never wrote was not
    there (a ref an agent created)."""
    alive = _alive(improve_dir).get(name)
    if not alive:
        return True, None
    if len(alive) == 1:
        value = next(iter(alive))
        return True, None if value == _NONE else value
    if (before or _NONE) in alive:
        return True, before
    return False, None


def stale(improve_dir: Path, current: Mapping[str, str]) -> list[str]:
    """For `doctor`: watched refs whose value is not the last one gitimprove wrote (refs it
    never wrote, such as those from before witnessing, are not judged)."""
    alive = _alive(improve_dir)
    out = []
    for name in sorted(set(alive) | set(current)):
        if name not in alive or not watched(name):
            continue
        value = current.get(name) or _NONE
        if value not in alive[name]:
            out.append(f"{name} is at {value[:12]}, not where gitimprove left it")
    return out
