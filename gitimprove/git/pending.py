"""The watch's snapshot of the user's repository kept on disk while an agent works.

The snapshot (git/watch.py `RepoState`) is taken before each agent call and compared after it
in memory. A harness killed (`kill -9`, a power cut) while the agent works never makes that
comparison, and a later `run --resume` starts from a new snapshot: what the agent, or a
daemon of its reaped at the resume, changed meanwhile in `~/.gitconfig`, a hook, the user's
work tree or a ref would never be seen. So before each call the snapshot is also written here,
small (`_durable`: the refs, the stat keys of the files, a digest of each work tree's status,
of each index's entries and of its ignored files, the stat keys of the paths the status names,
the listings of the folders outside the repository Python and the runners read code from, and
whether the agent could reach the repository), atomically and signed with the repository's key, as
`<git-common-dir>/improve/watch/<attempt>.json`, and removed once the comparison is made. A
call interrupted by Ctrl-C or SIGTERM makes it on the way out (`look_now`), once the agent's
processes are dead: the snapshot stays only when something differs.

One still there names an agent call whose comparison never happened. `run` (a resume or a new
run) compares each one of a run no process holds with now, after the survivors are killed and
before anything else, and refuses to start naming what differs (`Outstanding`); `git improve
doctor` shows the same, and `doctor --repair` accepts it (the user made those changes): the
snapshot is set aside. One that does not verify (written by someone else) is a difference too.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitimprove.errors import GitImproveError
from gitimprove.git.repo import Repo
from gitimprove.git.status import Index
from gitimprove.git.watch import IGNORED_LABEL, RepoState
from gitimprove.state import signing
from gitimprove.util import flocks, folders, written
from gitimprove.util.files import atomic_write, read_state
from gitimprove.util.keys import load_key

__all__ = [
    "FOLDER", "Outstanding", "Saved", "accept", "check_at_start", "drop", "look_now",
    "outstanding", "read_saved", "save",
]  # fmt: skip

FOLDER = "watch"
NAME = re.compile(r"[A-Za-z0-9._-]+\.json")
_MAX = 64 << 20  # a snapshot larger than this was not written by gitimprove
_VERSION = 1


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def _index_digest(index: Index) -> str:
    """The index's entries (path, flags, mode, blob, stage), not the `lstat` git recorded:
    your own `git status` refreshes those."""
    h = hashlib.sha256(index.unread.encode("utf-8", "surrogateescape"))
    for path in sorted(index.entries):
        h.update(path + b"\t" + index.entries[path] + b"\0")
    return h.hexdigest()[:32]


def _ignored_digests(ignored: dict[str, str] | None) -> dict[str, str] | None:
    """The ignored files (git/ignored.py) as one digest per top folder of the work tree;
    made once per look that found something new (git/ignored.py returns the same dict while
    nothing moved: 20,000 files cost 30 ms to digest)."""
    if ignored is None:
        return None
    if _DIGESTED and _DIGESTED[0][0] is ignored:
        return _DIGESTED[0][1]
    groups: dict[str, hashlib._Hash] = {}
    for path in sorted(ignored):
        top = path.split("/", 1)[0]
        h = groups.setdefault(top, hashlib.sha256())
        h.update(f"{path}\0{ignored[path]}\n".encode("utf-8", "surrogateescape"))
    found = {top: h.hexdigest()[:32] for top, h in groups.items()}
    _DIGESTED[:] = [(ignored, found)]  # the dict held: its id is never another's
    return found


_DIGESTED: list[tuple[dict[str, str], dict[str, str]]] = []


def _durable(state: RepoState) -> dict[str, Any]:
    return {
        "ignored": _ignored_digests(state.ignored),
        "refs": state.refs,
        "files": state.files,
        "status": _digest(state.status),
        "dirty": state.dirty,
        "indexes": {os.fspath(t): _index_digest(i) for t, i in state.indexes.items()},
        "unsafe": state.unsafe,
    }


def save(
    repo: Repo,
    run: str,
    attempt: str,
    state: RepoState,
    *,
    reachable: bool,
    outside: Mapping[str, tuple[Sequence[Path], folders.Listing]] | None = None,
) -> Path:
    """Write the snapshot taken before an agent call (`state`) for `run`'s `attempt`, with
    the listings of the folders outside the repository watched around it (`outside`: what
    Python and the runners read code from, what the commands name: loop/sites.py), each
    with the paths it was taken of."""
    record: dict[str, Any] = {
        "version": _VERSION,
        "run": run,
        "attempt": attempt,
        "reachable": reachable,
        **_durable(state),
        "outside": {
            name: {"paths": [os.fspath(p) for p in paths], "listing": listing}
            for name, (paths, listing) in (outside or {}).items()
        },
    }
    key = load_key(repo.improve_dir)
    if key is not None:
        record[signing.FIELD] = signing.tag(record, key)
    path = repo.improve_dir / FOLDER / f"{attempt}.json"
    atomic_write(path, json.dumps(record, sort_keys=True, separators=(",", ":")))
    return path


def look_now(repo: Repo, path: Path) -> list[str]:
    """The comparison an interrupted agent call never made, made on the way out once its
    processes are dead: what differs from the snapshot at `path` now (it stays, for `run
    --resume` and `doctor` to name), else nothing (it goes: what the user changes after this
    is theirs). One that does not verify stays, named; one already gone needs no look."""
    if not os.path.lexists(path):
        return []
    record = read_saved(path, load_key(repo.improve_dir, create=False))
    if record is None:
        return [f".git/improve/{FOLDER}/{path.name} (not written by gitimprove)"]
    found = changes_since(record, RepoState.take(repo, ignored=bool(record.get("reachable"))))
    if not found:
        drop(path)
    return found


def drop(path: Path) -> None:
    """The comparison was made: the snapshot goes."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    written.mark(path)


@dataclass(frozen=True)
class Saved:
    """An outstanding snapshot: its file, its run, and what differs now (empty: nothing)."""

    path: Path
    run: str
    changes: list[str]


def read_saved(path: Path, key: signing.Key | None) -> dict[str, Any] | None:
    """The snapshot at `path`, None when it is not one gitimprove wrote (not a regular file
    within bounds, not JSON of its form, a tag that does not verify)."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX:
            return None
        record = json.loads(read_state(path))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("version") != _VERSION:
        return None
    if key is None or not signing.verify(record, key):
        return None
    shapes = {"run": str, "refs": dict, "files": dict, "status": str, "dirty": dict}
    if not all(isinstance(record.get(k), t) for k, t in shapes.items()):
        return None
    return record


def _state(record: dict[str, Any]) -> RepoState:
    return RepoState(
        refs=record["refs"],
        files=record["files"],
        status=record["status"].encode(),
        dirty=record["dirty"],
        unsafe=list(record.get("unsafe") or []),
    )


def changes_since(record: dict[str, Any], now: RepoState) -> list[str]:
    """What differs between the saved snapshot and `now` and stops a run, as the comparison
    after the agent call would have named it (git/watch.py `stops`)."""
    reachable = bool(record.get("reachable", True))
    out = _state(record).changes(_state(_durable(now)), reachable=reachable)
    if now.unsafe:
        return out
    found = record.get("indexes")
    saved: dict[str, str] = found if isinstance(found, dict) else {}
    here = _durable(now)["indexes"]
    first = next(iter(here), None)
    for tree, digest in here.items() if reachable else ():
        if tree in saved and saved[tree] != digest:
            where = "" if tree == first else f" of {tree}"
            out.append(f".git/index{where}: its entries (flags, staged blobs) changed")
    out += _outside_changes(record.get("outside"))
    was, now_ignored = record.get("ignored"), _ignored_digests(now.ignored)
    if reachable and isinstance(was, dict) and now_ignored is not None:
        tops = sorted(t for t in set(was) | set(now_ignored) if was.get(t) != now_ignored.get(t))
        if tops:
            out.append(IGNORED_LABEL + ", ".join(f"under {t}" for t in tops[:10]))
    return out


def _outside_changes(saved: object) -> list[str]:
    """What changed in the folders outside the repository the snapshot listed, taken again
    from the paths it names (a `.pth` planted in a virtualenv's site-packages)."""
    out: list[str] = []
    for group in saved.values() if isinstance(saved, dict) else ():
        if not isinstance(group, dict) or not isinstance(group.get("listing"), dict):
            continue
        was = {k: tuple(v) for k, v in group["listing"].items() if isinstance(v, list)}
        paths = [Path(p) for p in group.get("paths") or () if isinstance(p, str)]
        out += folders.changes(was, folders.take(paths))
    return out


def outstanding(repo: Repo, *, but: str | None = None) -> list[Saved]:
    """Every snapshot left by an agent call whose comparison never happened, of a run no
    other process holds now (and not of run `but`'s process, this one), each with what
    differs now."""
    folder = repo.improve_dir / FOLDER
    try:
        names = sorted(e.name for e in os.scandir(folder))
    except OSError:
        return []
    found = [folder / n for n in names if NAME.fullmatch(n)]
    if not found:
        return []
    key = load_key(repo.improve_dir, create=False)
    now: RepoState | None = None
    out = []
    for path in found:
        record = read_saved(path, key)
        if record is None:
            out.append(
                Saved(path, "?", [f".git/improve/{FOLDER}/{path.name} (not written by gitimprove)"])
            )
            continue
        run = record["run"]
        lock = repo.improve_dir / "locks" / f"run-{run}.lock"
        if run != but and flocks.held([lock], others_only=True):
            continue  # its run is under way: the agent is at work now
        if now is None:  # the ignored files too: a snapshot of an agent without the sandbox
            now = RepoState.take(repo, ignored=True)
        out.append(Saved(path, run, changes_since(record, now)))
    return out


def accept(saved: list[Saved]) -> None:
    """The user made those changes: the snapshots are set aside (`doctor --repair`)."""
    for item in saved:
        drop(item.path)


HINT = (
    "a run was killed (kill -9, a crash) while its agent worked, and these changed since the "
    "snapshot taken before that agent call: the agent, or a process it left, may have made "
    "them. Look at each (git status, git for-each-ref, .git/config, .git/hooks, ~/.gitconfig) "
    "and undo what you did not make; if you made them yourself, `git improve doctor --repair` "
    'accepts them, then run again. A sandbox ([agent] sandbox = "bwrap") keeps agents out '
    "of your repository"
)


class Outstanding(GitImproveError):
    """A run may not start while a killed run's agent call left changes nobody looked at."""

    def __init__(self, found: list[Saved]) -> None:
        paths = [p for item in found for p in item.changes]
        runs = sorted({item.run for item in found})
        shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
        super().__init__(
            f"your repository changed while an agent of run {', '.join(runs)} worked and the "
            f"run was killed before it could look: {shown}",
            hint=HINT,
        )
        self.paths = paths


def check_at_start(repo: Repo, run: str) -> None:
    """Before a run reuses anything: raise `Outstanding` when a snapshot left by a killed
    agent call differs from now; remove those that do not."""
    found = outstanding(repo, but=run)
    differ = [item for item in found if item.changes]
    if differ:
        raise Outstanding(differ)
    accept(found)
