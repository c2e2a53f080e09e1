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
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from gitimprove.git import refs
from gitimprove.util.keys import Key, load_key

FILE = "refs.witness"
_NONE = "-"


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
        fd = os.open(improve_dir / FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)


def _alive(improve_dir: Path) -> dict[str, set[str]]:
    """For each witnessed ref, the values gitimprove wrote that no later move superseded."""
    key = load_key(improve_dir, create=False)
    try:
        data = (improve_dir / FILE).read_bytes().decode("utf-8", "replace")
    except OSError:
        return {}
    out: dict[str, set[str]] = {}
    for line in data.splitlines():
        parts = line.split(" ")
        if len(parts) != 4 or key is None:
            continue
        name, old, new, mac = parts
        if mac != key.mac(f"{name} {old} {new}", 24):
            continue  # not written by gitimprove: a forged line counts for nothing
        values = out.setdefault(name, set())
        if old != new:
            values.discard(old)
        values.add(new)
    return out


def unexplained(
    improve_dir: Path,
    before: Mapping[str, str],
    after: Mapping[str, str],
    *,
    settle: float = 0.3,
) -> list[str]:
    """The watched refs that changed from `before` to `after` (name -> target) to a value no
    gitimprove transaction wrote. A writer appends its line just after its transaction, so an
    unexplained move is looked at again for up to `settle` seconds before it is named."""
    changed = {n: after.get(n) for n in set(before) | set(after) if before.get(n) != after.get(n)}
    if not changed:
        return []
    deadline = time.monotonic() + settle
    while True:
        alive = _alive(improve_dir)
        bad = sorted(n for n, v in changed.items() if (v or _NONE) not in alive.get(n, ()))
        if not bad or time.monotonic() > deadline:
            return bad
        time.sleep(0.02)


def moved_outside(
    improve_dir: Path, before: Mapping[str, str], after: Mapping[str, str]
) -> list[str]:
    """`unexplained`, each named the way a person finds it."""
    return [
        f"{n} moved to {(after.get(n) or 'nothing')[:12]} outside gitimprove"
        for n in unexplained(improve_dir, before, after)
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
