"""Bring a folder the harness wrote (a measurement checkout, an agent's workspace) from one
commit's tree to another's, writing only what differs, with the same proof as a fresh copy.

The harness keeps, for each such folder, the listing it proved with every entry's `lstat`
(`record`, see git/checkout.py `scan`) and the blob each file was written from (`expected`).
Once no process that could write the folder is alive, an entry whose `lstat` is still the
recorded one (mode, size, mtime, ctime, inode, link count, device: writing, renaming, linking,
putting times or bytes back all move one of them) holds what was written; anything else — a
file the agent changed, added (ignored or not), turned into a link, made executable, a folder
it added (empty or not), its `.git` — is moved into a trash folder, removed in the background,
and what the target tree has there is written anew. Then the paths that differ between the two
trees (a tree diff, identical subtrees skipped) are removed and written. The result is proved
as `_write` proves a fresh checkout: every file written is hashed from disk after its `lstat`
was taken, and a listing taken after the hashes must show every entry as expected (a written
one as when it was hashed, every other one as recorded); the listing is the new record.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

import pygit2

from gitimprove.git.attributes import Converter, converter
from gitimprove.git.checkout import (
    META,
    Checkout,
    Stat,
    _stat,
    blob_id,
    count,
    discard,
    materialize,
    release,
    scan,
    unproven,
    unwritten,
    write_blob,
    write_pid,
)
from gitimprove.git.repo import Repo
from gitimprove.util import inodes

__all__ = ["Renewed", "Spares", "renew", "tree_changes"]

COMMIT = int(pygit2.enums.FileMode.COMMIT)


@dataclass(frozen=True)
class Renewed:
    expected: dict[str, tuple[int, str]]  # every file of the target (mode, blob id)
    snapshot: dict[str, Stat]  # the listing taken after the proof: the new record
    largest: int  # the largest file of the target (an upper bound)
    written: int  # entries written anew


def tree_changes(
    repo: Repo, old_tree: str, new_tree: str
) -> tuple[list[str], dict[str, tuple[int, str]]]:
    """(paths the old tree has that the new one removes or replaces, {path: (mode, id)} the
    new one adds or replaces): files, links and submodules, found by a tree diff."""
    old = repo.raw[old_tree]
    new = repo.raw[new_tree]
    assert isinstance(old, pygit2.Tree) and isinstance(new, pygit2.Tree)
    gone: list[str] = []
    put: dict[str, tuple[int, str]] = {}
    for delta in old.diff_to_tree(new).deltas:
        if delta.status != pygit2.enums.DeltaStatus.ADDED:
            gone.append(delta.old_file.path)
        if delta.status != pygit2.enums.DeltaStatus.DELETED:
            put[delta.new_file.path] = (int(delta.new_file.mode), str(delta.new_file.id))
    return gone, put


def _lookup(tree: pygit2.Tree, rel: str) -> pygit2.Object | None:
    try:
        entry = tree[rel]
    except (KeyError, ValueError):
        return None
    return entry


def renew(
    repo: Repo,
    root: Path,
    record: dict[str, Stat],
    expected: dict[str, tuple[int, str]],
    old_tree: str,
    new_tree: str,
    *,
    largest: int,
    skip_compiled: bool,
    now: dict[str, Stat] | None = None,
    convert: Converter | None = None,
    stored: dict[str, str] | None = None,
) -> Renewed | list[str]:
    """Make `root`, recorded (`record`, `expected`) as a copy of `old_tree`, a copy of
    `new_tree`; the proof of the result, or what did not hold (the caller then writes the
    target anew elsewhere). No process may be writing `root` (all of them reaped). With
    `convert` what is written is converted as `materialize` does, and `stored` (the blob id
    of each file written converted, as `materialize` fills it) is brought to the target too;
    a `.gitattributes` that changes then refuses (the files it did not touch may convert
    otherwise)."""
    target = repo.raw[new_tree]
    assert isinstance(target, pygit2.Tree)
    now = scan(root) if now is None else now
    here = now.get(".")
    was = record.get(".")
    if here is None or was is None or not stat.S_ISDIR(here[0]):
        return [". (not the folder written)"]
    if here[0] != was[0] or here[4] != was[4] or here[6] != was[6] or inodes.marked(str(root)):
        return [". (its mode, inode or attributes changed)"]

    def skip(rel: str) -> bool:
        return skip_compiled and unwritten(rel)

    # 1. what is not as recorded goes to the trash, whole (top-most paths only)
    bad: set[str] = set()
    inside: set[str] = set()  # what is under a path of `bad` (a listing names a folder first)
    for rel, st in now.items():
        if rel == ".":
            continue
        folder = rel.rpartition("/")[0]
        if folder and (folder in bad or folder in inside):
            inside.add(rel)
            continue
        before = record.get(rel)
        if before is not None and before[:META] == st[:META]:
            continue
        if (
            before is not None
            and stat.S_ISDIR(st[0])
            and (st[0], st[4], st[6]) == (before[0], before[4], before[6])
            and not inodes.marked(str(root / rel))
        ):
            continue  # a folder whose entries changed: they are judged one by one
        bad.add(rel)
    missing = {rel for rel in record if rel != "." and rel not in now}
    trash: Path | None = None
    if bad:
        trash = root.parent / f"t-{secrets.token_hex(4)}"
        write_pid(root.parent / f"{trash.name}.pid", "trash")
        trash.mkdir()
        for i, rel in enumerate(sorted(bad)):
            os.rename(root / rel, trash / str(i))
        discard(trash)
    gone, put = tree_changes(repo, old_tree, new_tree)
    if convert is not None and any(
        rel.rpartition("/")[2] == ".gitattributes" for rel in [*gone, *put]
    ):
        return [".gitattributes (changed: its line ends may apply to every file)"]
    written: set[str] = set()
    removed: set[str] = set()
    touched: set[str] = {"."}

    def parent(rel: str) -> str:
        return rel.rpartition("/")[0] or "."

    for rel in bad:
        touched.add(parent(rel))
    # 2. what the new tree removes or replaces (each proved as recorded above)
    for rel in gone:
        if skip(rel) or rel in bad or rel in inside or not os.path.lexists(root / rel):
            continue
        if stat.S_ISDIR(now[rel][0]):
            os.rmdir(root / rel)  # a submodule's empty folder
        else:
            os.unlink(root / rel)
        removed.add(rel)
        touched.add(parent(rel))
    # 3. folders of the old tree the new one does not have (deepest first)
    folders = {p for rel in gone for p in _parents(rel)}
    pruned: set[str] = set()
    for rel in sorted(folders, key=lambda p: -p.count("/")):
        obj = _lookup(target, rel)
        if obj is not None and obj.type_str == "tree" and not skip(rel):
            continue
        full = root / rel
        if os.path.isdir(full) and not os.path.islink(full):
            try:
                os.rmdir(full)
            except OSError:
                return [f"{rel} (a folder the new tree removes is not empty)"]
            pruned.add(rel)
            touched.add(parent(rel))
    # 4. what the target has where something was trashed or is missing
    gone_set = set(gone)
    new_expected = {rel: v for rel, v in expected.items() if rel not in gone_set}
    if stored is not None:
        for rel in [r for r in stored if r in gone_set]:
            del stored[rel]
    sizes = [largest]
    redo = bad | missing
    for rel in sorted(redo):
        if any(p in redo for p in _parents(rel)) or skip(rel):
            continue
        obj = _lookup(target, rel)
        if obj is None or not os.path.isdir(root / parent(rel) if "/" in rel else root):
            continue
        # drop what the old copy held there; the target's is written below
        for key in [k for k in new_expected if k == rel or k.startswith(rel + "/")]:
            del new_expected[key]
            if stored is not None:
                stored.pop(key, None)
        sizes.append(
            _put(repo, root, rel, obj, new_expected, written, skip_compiled, convert, stored)
        )
        touched.add(parent(rel))
    # 5. what the new tree adds or replaces
    for rel, (mode, oid) in sorted(put.items()):
        if skip(rel) or os.path.lexists(root / rel):
            continue
        for folder in _parents(rel):
            if not os.path.lexists(root / folder):
                os.mkdir(root / folder)
                written.add(folder)
                touched.add(parent(folder))
        touched.add(parent(rel))
        if mode == COMMIT:
            os.mkdir(root / rel)
            written.add(rel)
            continue
        blob = repo.raw[oid]
        assert isinstance(blob, pygit2.Blob)
        new_expected[rel] = write_blob(root / rel, rel, blob, mode, convert, stored)
        written.add(rel)
        sizes.append(blob.size if convert is None else 2 * blob.size)
    top = max(sizes)
    # 6. the proof: what was written is hashed after its `lstat` was taken, and taken again
    # after the hash (nothing but its access time may differ); every other entry is as the
    # listing above proved it (its `lstat` is the recorded one)
    first = {}
    for rel in written:
        try:
            first[rel] = _stat(os.lstat(root / rel))
        except OSError:
            return [f"{rel} (removed)"]
    # a file mapped for writing now could be rewritten after its hash and unmapped before
    # the listing below: its `lstat` proves nothing (checkout.py `unproven`)
    first = unproven(first)
    problems = [
        f"{rel} (changed)"
        for rel in sorted(written)
        if rel in new_expected and blob_id(root / rel, top) != new_expected[rel]
    ]
    # each folder changed is read once before its `lstat` is taken (where the file system
    # moves a folder's access time on its first read after a change, the record holds it)
    for rel in touched | {r for r, st in first.items() if stat.S_ISDIR(st[0])}:
        with contextlib.suppress(OSError), os.scandir(root / rel if rel != "." else root) as it:
            for _ in it:
                pass
    again: dict[str, Stat] = {}
    dropped = bad | inside | removed | pruned
    for rel, st in now.items():
        if rel not in dropped and rel not in touched and rel not in first:
            again[rel] = st
    for rel in touched | set(first):
        try:
            got = _stat(os.lstat(root / rel if rel != "." else root))
        except OSError:
            if rel in pruned:
                continue
            problems.append(f"{rel} (removed)")
            continue
        if rel in first and got[:META] != first[rel][:META]:
            problems.append(f"{rel} (changed)")
        elif rel in touched and rel not in first and not stat.S_ISDIR(got[0]):
            problems.append(f"{rel} (not a folder)")
        again[rel] = got
    problems += [f"{rel} (missing)" for rel in new_expected if rel not in again]
    problems += [
        f"{rel} (added)"
        for rel, st in again.items()
        if rel not in new_expected and not stat.S_ISDIR(st[0])
    ]
    if problems:
        return sorted(set(problems))
    return Renewed(new_expected, unproven(again), top, len(written))


def _parents(rel: str) -> list[str]:
    """The folders `rel` is in, outermost first (not the root)."""
    parts = rel.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _put(
    repo: Repo,
    root: Path,
    rel: str,
    obj: pygit2.Object,
    expected: dict[str, tuple[int, str]],
    written: set[str],
    skip_compiled: bool,
    convert: Converter | None = None,
    stored: dict[str, str] | None = None,
) -> int:
    """Write the target's entry `obj` at `rel` (a folder with all it holds); the size of the
    largest file written."""
    mode = int(obj.filemode)
    if obj.type_str == "tree":
        tree = repo.raw[obj.id]
        assert isinstance(tree, pygit2.Tree)
        got: dict[str, tuple[int, str]] = {}
        largest = materialize(
            repo,
            tree,
            root / rel,
            got,
            rel + "/",
            skip=skip_compiled,
            convert=convert,
            stored=stored,
        )
        expected.update(got)
        written.add(rel)
        written.update(r for r in scan_names(root / rel, rel + "/"))
        return largest
    if obj.type_str == "commit":
        os.mkdir(root / rel)
        written.add(rel)
        return 0
    blob = repo.raw[obj.id]
    assert isinstance(blob, pygit2.Blob)
    expected[rel] = write_blob(root / rel, rel, blob, mode, convert, stored)
    written.add(rel)
    return blob.size if convert is None else 2 * blob.size


def scan_names(folder: Path, prefix: str) -> list[str]:
    """Every entry under `folder` (just written), relative to the root."""
    return [prefix + rel for rel in scan(folder) if rel != "."]


# --- measurement checkouts: a spare, patched --------------------------------------------------


class Spares:
    """Measurement checkouts kept after their last use, each provably as written when it is
    taken again (`take`): the next checkout is the most recent spare, moved under a fresh
    random name and patched to the commit wanted (`renew`), instead of every file written
    anew. At most `limit` are kept; the rest are removed."""

    def __init__(self, limit: int = 2) -> None:
        self.limit = limit
        self._held: list[Checkout] = []
        self._lock = threading.Lock()

    def give(self, co: Checkout) -> None:
        with self._lock:
            self._held.append(co)
            extra = self._held[: max(0, len(self._held) - self.limit)]
            del self._held[: len(extra)]
        for old in extra:
            release(old)

    def held(self) -> list[Checkout]:
        with self._lock:
            return list(self._held)

    def take(self, repo: Repo, commit: str, purpose: str) -> Checkout | None:
        """A checkout of `commit` made from a spare, or None (none is left that proves
        itself: the caller writes one anew). Call it only once no process of an agent or a
        run that could write the spare is alive."""
        while True:
            with self._lock:
                if not self._held:
                    return None
                same = [i for i, co in enumerate(self._held) if co.commit == commit]
                spare = self._held.pop(same[-1] if same else -1)
            co = _patched(repo, spare, commit, purpose)
            if co is not None:
                return co

    def close(self) -> None:
        with self._lock:
            held, self._held = self._held, []
        for co in held:
            release(co)


def _patched(repo: Repo, spare: Checkout, commit: str, purpose: str) -> Checkout | None:
    """`spare` under a new random name, proved as it was written (every entry's full `lstat`
    but the root's change time, which the move sets; no extended attribute, no flag, no mount,
    the clock not set), then brought to `commit`; None (the spare removed) otherwise."""
    root = spare.path.parent
    if spare.clock.was_set() or inodes.mounts_under(spare.path):
        release(spare)
        return None
    name = f"m-{secrets.token_hex(8)}"
    path = root / name
    write_pid(root / f"{name}.pid", purpose)
    if not move(spare.path, path):
        (root / f"{name}.pid").unlink(missing_ok=True)
        release(spare)
        return None
    (root / f"{spare.path.name}.pid").unlink(missing_ok=True)
    spare.path = path
    now = scan(path)
    if not spare.unchanged(now, moved=True):
        release(spare)
        return None
    old = repo.raw[spare.commit]
    new = repo.raw[commit]
    assert isinstance(old, pygit2.Commit) and isinstance(new, pygit2.Commit)
    try:
        got = renew(
            repo,
            path,
            now,
            spare.expected,
            str(old.tree_id),
            str(new.tree_id),
            largest=spare.largest or 0,
            skip_compiled=True,
            now=now,
            convert=converter(repo, new.tree),
        )
    except OSError as exc:
        got = [f"({exc.strerror})"]
    if isinstance(got, list):
        release(spare)
        return None
    with contextlib.suppress(OSError):
        os.utime(root)
    count("patched")
    return Checkout(
        path,
        commit,
        got.expected,
        snapshot=got.snapshot,
        largest=got.largest,
        repo=repo,
        purpose=purpose,
        clock=spare.clock,
        tree=frozenset(got.snapshot),
        unmarked=spare.unmarked,  # what renew left is as proven; what it wrote, not in it
    )


_RENAME_NOREPLACE = 1


def move(src: Path, dst: Path) -> bool:
    """Rename `src` to `dst`, which must not exist (never replaced: `renameat2` with
    RENAME_NOREPLACE where the C library has it)."""
    fn = getattr(_libc(), "renameat2", None)
    if fn is not None:
        at_fdcwd = -100
        res = fn(at_fdcwd, os.fsencode(src), at_fdcwd, os.fsencode(dst), _RENAME_NOREPLACE)
        if res == 0:
            return True
        if ctypes.get_errno() not in (errno.ENOSYS, errno.EINVAL):
            return False
    if os.path.lexists(dst):
        return False
    try:
        os.rename(src, dst)
    except OSError:
        return False
    return True


_LIBC: list[ctypes.CDLL | None] = []


def _libc() -> ctypes.CDLL | None:
    if not _LIBC:
        try:
            _LIBC.append(ctypes.CDLL(None, use_errno=True))
        except OSError:
            _LIBC.append(None)
    return _LIBC[0]
