"""The user's object store, watched around agent calls and measurements without the sandbox.

An agent's clone borrows the repository's objects (`objects/info/alternates`), so without the
sandbox the agent (and the code a measurement runs) can write `.git/objects` as the user can:
overwrite a loose object with other bytes, zero part of a pack, delete packs or loose objects.
Nothing of that is a ref or a config file, so the rest of the watch (git/watch.py) did not see
it: the user's history was gone without a word, or a later read of one of the harness's own
objects stopped the run with an internal error.

`take` lists the store without reading it (a `stat` of every loose object and pack file; the
object names of each pack's index, read once per pack), and `lost` tells what differs in a
way git itself never makes:

- a loose object or a pack file whose `lstat` moved is read again: a loose object must still
  hash to its name, a pack must still end with the checksum of its bytes, the one its index
  names (git rewrites neither; writing an object that exists only sets its times);
- an object that is gone must be somewhere else in the store (`git gc` packs loose objects
  and repacks packs), or be reachable from no ref (what `git gc` prunes).

- a file git derives from the objects and trusts as it is (a commit-graph, the
  multi-pack-index, a pack's index, reverse index, bitmap or `.mtimes`, `info/packs`) whose
  `lstat` moved must be what git writes: `git … verify` passes, a bitmap comes with its pack.

The object folders `info/alternates` lends (a `git clone --shared` user's history) are listed
and judged the same way. The listing records the kind of every entry of the loose-object
folders (`odd_problems`: what git would hang on), so the check of the git directory
(git/gitfiles.py) lists them no second time.

A pack rewritten with its checksums made again is caught only when one of its objects is read
(git checks each object's hash then); the docs' "What `sandbox = "none"` cannot protect".
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import BinaryIO

from gitimprove.util import inotify as inotify_events
from gitimprove.util import proc
from gitimprove.util.files import open_state
from gitimprove.util.gitdir import lower_hex
from gitimprove.util.inotify import Inotify

# what a loose object or a pack's index may be read to at most (a planted file of gigabytes)
_MAX_LOOSE = 256 << 20
_MAX_IDX = 1 << 30
_SHOWN = 3  # objects named in a reason
# a pack whose `lstat` moved is hashed whole up to this size; a larger one only has its end
# compared with the checksum its index names (git sets a pack's times whenever an object it
# holds is written again: hashing gigabytes then would cost seconds an attempt)
_HASHED_PACK = 64 << 20


def _kind(mode: int) -> str | None:
    """What an entry of a loose-object folder is, by its `lstat` mode; None for a regular
    file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "a link"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"


def _entry_kind(entry: os.DirEntry[str]) -> str | None:
    """`_kind` of a listed entry: a regular file known from the listing alone (no `stat`)."""
    if entry.is_file(follow_symlinks=False):
        return None
    try:
        return _kind(entry.stat(follow_symlinks=False).st_mode)
    except OSError:  # gone since the listing (`git prune` as it is looked at)
        return None


def _stat_key(path: str) -> tuple[int, ...] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass(frozen=True)
class Store:
    """One look at an object folder: every loose object (by inode where the folders are
    watched, else by `lstat`) and pack file (by `lstat`); `written` and `overflows` are the
    watch's counts when the look was taken (None: no watch)."""

    folder: Path
    loose: dict[str, tuple[int, ...]] = field(default_factory=dict)  # object name -> identity
    packs: dict[str, tuple[int, ...]] = field(default_factory=dict)  # file name -> lstat
    written: frozenset[str] | None = None  # loose objects written in place since the watch began
    overflows: int = 0  # times the kernel dropped events (then every object is read again)
    # what the listing found in the loose-object folders that is no regular file, by path under
    # the folder (`ab/cdef…`, or `ab` itself when it is no folder) -> "a FIFO", "a link"…
    odd: dict[str, str] = field(default_factory=dict)
    # the files git derives from the objects and trusts as they are (`_DERIVED`), by path
    # under the folder -> lstat
    derived: dict[str, tuple[int, ...]] = field(default_factory=dict)
    label: str = ".git/objects"  # how the folder is named to the user
    others: tuple[Store, ...] = ()  # the object folders `info/alternates` lends (a chain)


# object names of a pack's index, by the index's path and `lstat` (an index is never rewritten)
_IDX: dict[str, tuple[tuple[int, ...], list[str]]] = {}


class _Watch:
    """inotify on the object folders: a write into a loose object (which git never makes: it
    writes a new file and renames it into place) is seen without a `stat` of every object at
    every look (2,500 loose objects cost 20 ms a look so)."""

    def __init__(self, inotify: Inotify) -> None:
        self.inotify = inotify
        self.folders: dict[int, str] = {}  # watch descriptor -> folder name
        self.watched: set[str] = set()
        self.written: set[str] = set()
        self.overflows = 0
        self.lock = threading.Lock()

    @classmethod
    def start(cls) -> _Watch | None:
        inotify = Inotify.start()
        return cls(inotify) if inotify is not None else None

    def add(self, path: str, name: str) -> bool:
        if name in self.watched:
            return True
        wd = self.inotify.add(path, inotify_events.MODIFY)
        if wd < 0:
            return False
        self.folders[wd] = name
        self.watched.add(name)
        return True

    def drain(self) -> None:
        events, failed = self.inotify.read()
        if failed:
            self.overflows += 1
        for wd, mask, raw in events:
            name = raw.decode("ascii", "replace")
            if mask & inotify_events.OVERFLOW:
                self.overflows += 1
            elif mask & inotify_events.IGNORED:  # the folder is gone (or replaced): anew
                self.watched.discard(self.folders.pop(wd, ""))
            elif mask & inotify_events.MODIFY and wd in self.folders:
                self.written.add(self.folders[wd] + name)


_WATCHES: dict[str, _Watch | None] = {}
# each object folder's entries by the folder's inode and times (adding, removing or renaming an
# entry moves them), kept once they are older than the clock's tick could blur
_LISTED: dict[str, tuple[tuple[int, int, int], dict[str, tuple[int, ...]], dict[str, str]]] = {}
_SETTLED_NS = 200_000_000


def take(folder: Path, label: str = ".git/objects", *, indexes: bool = True) -> Store:
    """The store's listing, and that of each object folder its `info/alternates` lends (a
    chain, to git's depth); nothing is read but the alternates and, with `indexes`, the index
    of a pack not seen before."""
    return _chain(folder, label, lambda f, lb: _take_watched(f, lb, indexes), 1, set())


def odd_entries(folder: Path, label: str = ".git/objects") -> Store:
    """What a look for entries that are no regular file needs (`odd_problems`), for a process
    that does not watch the store (a hook, a one-shot command): the listings' kinds alone, no
    watch started and no regular entry `stat`ed (a hook's repository open pays one `readdir`
    per folder: 10,000 loose objects in 8 ms, where `take` spends 28). A process that watches
    the store takes it whole (`take`): one listing serves both."""
    if os.fspath(folder) in _WATCHES:
        return take(folder, label, indexes=False)
    return _chain(folder, label, _odd_only, 1, set())


def _chain(
    folder: Path, label: str, look: Callable[[Path, str], Store], depth: int, seen: set[str]
) -> Store:
    """`look` at `folder`, and at each object folder its alternates lend, to git's depth."""
    seen.add(os.path.realpath(folder))
    store = look(folder, label)
    others = []
    if depth <= _MAX_ALTERNATES:
        for alt in alternates(folder):
            if os.path.realpath(alt) not in seen:
                others.append(_chain(alt, os.fspath(alt), look, depth + 1, seen))
    return replace(store, others=tuple(others)) if others else store


def _odd_only(folder: Path, label: str) -> Store:
    odd: dict[str, str] = {}
    try:
        with os.scandir(folder) as top:
            fans = [e for e in top if len(e.name) == 2 and lower_hex(e.name)]
    except OSError:
        return Store(folder, label=label)
    for fan in fans:
        if not fan.is_dir(follow_symlinks=False):
            if os.path.lexists(fan.path):  # not an empty folder `git prune` removed just now
                odd[fan.name] = _entry_kind(fan) or "a file"
            continue
        try:
            with os.scandir(fan.path) as entries:
                for entry in entries:
                    kind = _entry_kind(entry)
                    if kind is not None:
                        odd[f"{fan.name}/{entry.name}"] = kind
        except OSError:
            continue
    try:
        with os.scandir(folder / "pack") as packs:
            for entry in packs:
                if entry.name.startswith("pack-") and entry.is_symlink():
                    odd[f"pack/{entry.name}"] = "a link"
    except OSError:
        pass
    return Store(folder, odd=odd, label=label)


def _take_watched(folder: Path, label: str, indexes: bool) -> Store:
    key = os.fspath(folder)
    if key not in _WATCHES:
        _WATCHES[key] = _Watch.start()
    watch = _WATCHES[key]
    if watch is None:
        return _take(folder, None, label, indexes)
    with watch.lock:
        return _take(folder, watch, label, indexes)


_MAX_ALTERNATES = 5  # git's own limit on the alternates chain
_MAX_LIST = 64 << 20


def alternates(folder: Path) -> list[Path]:
    """The object folders `folder/info/alternates` names (relative ones from `folder`); []
    when it is absent, or no regular file within bounds (gitfiles.py names that)."""
    try:  # never blocks: a FIFO there is not read
        fd = os.open(folder / "info" / "alternates", os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_LIST:
            return []
        with os.fdopen(fd, "rb", closefd=False) as f:
            text = f.read(_MAX_LIST).decode("utf-8", "surrogateescape")
    except OSError:
        return []
    finally:
        os.close(fd)
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            out.append(Path(os.path.normpath(line if os.path.isabs(line) else folder / line)))
    return out


# files git writes from the objects and then trusts as they are (a commit's parents and
# generation from the commit-graph, an object's place from an index), by where they sit
_DERIVED_INFO = ("commit-graph", "packs")
_DERIVED_PACK = (".rev", ".bitmap", ".mtimes")


def _take(folder: Path, watch: _Watch | None, label: str, indexes: bool = True) -> Store:
    loose: dict[str, tuple[int, ...]] = {}
    packs: dict[str, tuple[int, ...]] = {}
    odd: dict[str, str] = {}
    derived: dict[str, tuple[int, ...]] = {}
    try:
        folders = [e for e in os.scandir(folder) if len(e.name) == 2 and lower_hex(e.name)]
    except OSError:
        return Store(folder, label=label)
    watched = watch is not None
    settled = time.time_ns() - _SETTLED_NS
    for sub in folders:
        if not sub.is_dir(follow_symlinks=False):
            if os.path.lexists(sub.path):  # not an empty folder `git prune` removed just now
                odd[sub.name] = _entry_kind(sub) or "a file"
            continue
        # watched before listed: a write after the listing is an event
        if watch is not None and not watch.add(sub.path, sub.name):
            watched = False
        if watch is not None:
            try:
                st = sub.stat(follow_symlinks=False)
            except OSError:
                continue
            key = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
            cached = _LISTED.get(sub.path)
            if cached is not None and cached[0] == key:
                loose.update(cached[1])  # no entry added, removed or renamed since
                odd.update(cached[2])
                continue
        try:
            entries = list(os.scandir(sub.path))
        except OSError:
            continue
        found_here: dict[str, tuple[int, ...]] = {}
        odd_here: dict[str, str] = {}
        for entry in entries:
            kind = _entry_kind(entry)  # the listing's own d_type: no `stat` of a regular file
            if kind is not None:
                odd_here[f"{sub.name}/{entry.name}"] = kind
            if not (lower_hex(entry.name) and len(entry.name) in (38, 62)):
                continue
            if watch is not None:
                found_here[sub.name + entry.name] = (entry.inode(),)
            else:
                found = _stat_key(entry.path)
                if found is not None:
                    found_here[sub.name + entry.name] = found
        loose.update(found_here)
        odd.update(odd_here)
        if watch is not None and max(st.st_mtime_ns, st.st_ctime_ns) < settled:
            _LISTED[sub.path] = (key, found_here, odd_here)
    try:
        pack_entries = list(os.scandir(folder / "pack"))
    except OSError:
        pack_entries = []
    for entry in pack_entries:
        name = entry.name
        if name.startswith("pack-") and entry.is_symlink():
            odd[f"pack/{name}"] = "a link"
        if name.startswith("pack-") and name.endswith((".pack", ".idx")):
            found = _stat_key(entry.path)
            if found is not None:
                packs[name] = found
                if indexes and name.endswith(".idx"):
                    _index_names(Path(entry.path), found)
        elif name.startswith("multi-pack-index") or (
            name.startswith("pack-") and name.endswith(_DERIVED_PACK)
        ):
            found = _stat_key(entry.path)
            if found is not None:
                derived[f"pack/{name}"] = found
    for name in _DERIVED_INFO:
        found = _stat_key(os.fspath(folder / "info" / name))
        if found is not None:
            derived[f"info/{name}"] = found
    try:
        chain = list(os.scandir(folder / "info" / "commit-graphs"))
    except OSError:
        chain = []
    for entry in chain:
        found = _stat_key(entry.path)
        if found is not None:
            derived[f"info/commit-graphs/{entry.name}"] = found
    if watch is None:
        return Store(folder, loose, packs, odd=odd, derived=derived, label=label)
    watch.drain()
    overflows = watch.overflows + (0 if watched else 1)
    return Store(folder, loose, packs, frozenset(watch.written), overflows, odd, derived, label)


def odd_problems(store: Store) -> list[str]:
    """What the store's listings (its own and its alternates') found that is no regular
    file, each as `.git/objects/ab/cdef… (a FIFO, not a regular file)`: libgit2 and git open
    a loose object with a blocking read, and trust a pack's file behind a link."""
    out = []
    for rel, kind in sorted(store.odd.items()):
        what = "not a folder of loose objects" if "/" not in rel else "not a regular file"
        out.append(f"{store.label}/{rel} ({kind}, {what})")
    for other in store.others:
        out += odd_problems(other)
    return out


def _open(path: Path, *, buffered: bool = True) -> BinaryIO:
    """A regular file of the store, opened without following a link or blocking (an agent
    can put a FIFO in place of an object: a plain `open` would wait on it for ever)."""
    return os.fdopen(open_state(path), "rb", buffering=-1 if buffered else 0)


def _index_names(path: Path, key: tuple[int, ...]) -> list[str]:
    """The object names a pack index (version 2) lists; [] for what cannot be read."""
    cached = _IDX.get(os.fspath(path))
    if cached is not None and cached[0] == key:
        return cached[1]
    names: list[str] = []
    try:
        if key[2] <= _MAX_IDX:
            with _open(path, buffered=False) as f:
                data = f.read(_MAX_IDX)
            names = _parse_index(data)
    except OSError:
        names = []
    _IDX[os.fspath(path)] = (key, names)
    return names


def _parse_index(data: bytes) -> list[str]:
    if len(data) < 8 + 1024 or data[:4] != b"\xfftOc" or data[4:8] != b"\0\0\0\x02":
        return []
    count = int.from_bytes(data[8 + 1020 : 8 + 1024], "big")
    for size in (20, 32):  # SHA-1 or SHA-256: the index's length tells which
        low = 8 + 1024 + count * (size + 8) + 2 * size
        if low <= len(data) <= low + count * 8:
            start = 8 + 1024
            return [data[start + i * size : start + (i + 1) * size].hex() for i in range(count)]
    return []


def _loose_path(folder: Path, name: str) -> Path:
    return folder / name[:2] / name[2:]


def _loose_intact(folder: Path, name: str) -> bool:
    """Does the loose object still hash to its name?"""
    try:
        with _open(_loose_path(folder, name), buffered=False) as f:
            raw = f.read(_MAX_LOOSE + 1)
        if len(raw) > _MAX_LOOSE:
            return False
        data = zlib.decompress(raw)
    except (OSError, zlib.error):
        return False
    algorithm = "sha1" if len(name) == 40 else "sha256"
    return hashlib.new(algorithm, data).hexdigest() == name


def _pack_intact(folder: Path, stem: str) -> bool:
    """Does the pack still end with the checksum of its bytes, the one its index names?"""
    pack, idx = folder / "pack" / f"{stem}.pack", folder / "pack" / f"{stem}.idx"
    try:
        with _open(idx, buffered=False) as f:
            f.seek(-64, os.SEEK_END)
            tail = f.read()
        with _open(pack) as f:
            size = os.fstat(f.fileno()).st_size
            for width, algorithm in ((20, "sha1"), (32, "sha256")):
                named = tail[-2 * width : -width]
                f.seek(size - width)
                if f.read(width) != named:
                    continue
                if size > _HASHED_PACK:
                    return True
                digest = hashlib.new(algorithm)
                f.seek(0)
                left = size - width
                while left > 0:
                    chunk = f.read(min(left, 1 << 20))
                    if not chunk:
                        return False
                    digest.update(chunk)
                    left -= len(chunk)
                return digest.digest() == named
    except OSError:
        return False
    return False


def lost(
    before: Store, after: Store, *, timeout: float = 60.0, git_dir: Path | None = None
) -> list[str]:
    """What git never does to an object store that happened between the two looks, each
    named as `.git/objects/…` with the why; [] when the store is only added to, packed or
    pruned of what no ref reaches. The object folders the alternates lend are judged the same
    way (named by their path); `git_dir` is the repository whose refs say what is reached."""
    repo = git_dir if git_dir is not None else before.folder.parent
    out = _lost_here(before, after, timeout, repo)
    was = {os.fspath(o.folder): o for o in before.others}
    for other in after.others:
        old = was.get(os.fspath(other.folder))
        if old is not None:
            out += lost(old, other, timeout=timeout, git_dir=repo)
    return out


def _lost_here(before: Store, after: Store, timeout: float, git_dir: Path) -> list[str]:
    folder, label = after.folder, after.label
    out: list[str] = []
    suspects = {n for n, key in before.loose.items() if n in after.loose and after.loose[n] != key}
    if before.written is None or after.written is None or before.overflows != after.overflows:
        if after.written is not None:  # events were lost: every object is read again
            suspects = {n for n in before.loose if n in after.loose}
    else:
        suspects |= {n for n in after.written - before.written if n in before.loose}
    damaged = sorted(n for n in suspects if not _loose_intact(folder, n))
    if damaged:
        shown = ", ".join(f"{n[:2]}/{n[2:]}" for n in damaged[:_SHOWN])
        more = f" and {len(damaged) - _SHOWN} more" if len(damaged) > _SHOWN else ""
        out.append(f"{label}/{shown}{more} (rewritten: no longer what their names say)")
    gone = [n for n in before.loose if n not in after.loose]
    for name in sorted(before.packs):
        if not name.endswith(".pack"):
            continue
        stem = name[: -len(".pack")]
        moved = after.packs.get(name) != before.packs[name]
        moved = moved or after.packs.get(stem + ".idx") != before.packs.get(stem + ".idx")
        if not moved:
            continue
        if name in after.packs and not _pack_intact(folder, stem):
            out.append(f"{label}/pack/{name} (rewritten: its bytes no longer match its checksum)")
        elif (
            stem + ".idx" in after.packs
            and after.packs[stem + ".idx"] != before.packs.get(stem + ".idx")
            and not _new_pack_sound(folder, name, after.packs[name], timeout, git_dir)
        ):  # an index written anew that sends a name to other bytes of the pack
            out.append(
                f"{label}/pack/{stem}.idx (rewritten: it no longer indexes its pack as git does)"
            )
        key = before.packs.get(stem + ".idx")
        if key is not None:
            gone += _index_names(folder / "pack" / f"{stem}.idx", key)
    # a gone object found again as a new loose one (the pack holding it deleted, other bytes
    # written under its name): read, as a rewritten one is
    forged = sorted(
        n for n in set(gone) if n in after.loose and n not in before.loose
        and not _loose_intact(folder, n)
    )  # fmt: skip
    if forged:
        shown = ", ".join(f"{n[:2]}/{n[2:]}" for n in forged[:_SHOWN])
        more = f" and {len(forged) - _SHOWN} more" if len(forged) > _SHOWN else ""
        out.append(f"{label}/{shown}{more} (written anew: no longer what their names say)")
    for name in sorted(set(after.packs) - set(before.packs)):
        if name.endswith(".pack") and not _new_pack_sound(
            folder, name, after.packs[name], timeout, git_dir
        ):
            out.append(
                f"{label}/pack/{name} (a new pack whose objects are not what their names "
                "say: git reads a packed object before a loose or older one of that name)"
            )
    missing = _missing(folder, gone, timeout, git_dir) if gone else []
    if missing:
        shown = ", ".join(missing[:_SHOWN])
        more = f" and {len(missing) - _SHOWN} more" if len(missing) > _SHOWN else ""
        out.append(f"{label} ({len(missing)} objects your refs reach are gone: {shown}{more})")
    out += _derived_lost(before, after, timeout, git_dir)
    return out


# packs found sound, by path and the `lstat` of the pack, its index and its reverse index
_SOUND: dict[str, tuple[tuple[int, ...] | None, ...]] = {}
_VERIFIED_PACK = 256 << 20


def _new_pack_sound(
    folder: Path, name: str, key: tuple[int, ...], timeout: float, git_dir: Path
) -> bool:
    """Does every object of the pack hash to the name its index gives it, at the place the
    index and its reverse index (`.rev`) give (`git index-pack --verify`)? Git reads an
    object from a pack without checking its hash, and from the newest pack first: a pack
    holding other bytes under the name of a blob of the user's history shows them in every
    checkout, and an index that sends a name to another object's bytes does the same. A pack
    over 256 MB (the user's `git gc` of a large repository) is not read: the docs' limits."""
    path = folder / "pack" / name
    stem = os.fspath(path)[: -len(".pack")]
    rev = _stat_key(stem + ".rev")
    state = (key, _stat_key(stem + ".idx"), rev)
    if _SOUND.get(os.fspath(path)) == state or key[2] > _VERIFIED_PACK:
        return True
    args = ["index-pack", "--verify", *(["--rev-index"] if rev is not None else []), str(path)]
    got = proc.git(["--git-dir", os.fspath(git_dir), *args], timeout=timeout, isolated=True)
    if got.returncode == 0 and not got.timed_out:
        _SOUND[os.fspath(path)] = state
        return True
    return got.timed_out  # too slow to tell: not taken as forged


# derived files found sound, by their `lstat`s
_DERIVED_SOUND: dict[str, tuple[tuple[str, tuple[int, ...]], ...]] = {}


def _derived_lost(before: Store, after: Store, timeout: float, git_dir: Path) -> list[str]:
    """The files git derives from the objects and trusts (`Store.derived`) that changed in a
    way git does not write them: a commit-graph or multi-pack-index that `git … verify`
    finds false (one that lies about a commit's parents or generation makes `git log` and
    `merge-base` wrong), a reverse index that does not match its pack, a bitmap or `.mtimes`
    file written for a pack that did not itself appear or change (git writes them with the
    pack), an `info/packs` naming a pack the store does not hold. What the user's own `git
    gc`, `repack` or `commit-graph write` writes is sound and stops nothing."""
    folder, label = after.folder, after.label
    changed = sorted(n for n, k in after.derived.items() if before.derived.get(n) != k)
    if not changed:
        return []
    out: list[str] = []
    repo = ["--git-dir", os.fspath(git_dir)]
    checks = (
        ("info/commit-graph", ["commit-graph", "verify", "--object-dir", os.fspath(folder)],
         "a commit-graph that does not match the commits it lists: `git log` and `merge-base` "
         "would take parents and generations from it"),
        ("pack/multi-pack-index", ["multi-pack-index", "--object-dir", os.fspath(folder), "verify"],
         "a multi-pack-index that does not match the packs: git would look objects up at "
         "places it made up"),
    )  # fmt: skip
    for prefix, args, why in checks:
        moved = [n for n in changed if n.startswith(prefix)]
        if not moved:
            continue
        state = tuple((n, k) for n, k in sorted(after.derived.items()) if n.startswith(prefix))
        key = f"{folder}:{prefix}"
        if _DERIVED_SOUND.get(key) == state:
            continue
        got = proc.git([*repo, *args], timeout=timeout, isolated=True)
        if got.returncode == 0 or got.timed_out:
            _DERIVED_SOUND[key] = state
        else:
            out.append(f"{label}/{moved[0]} ({why})")
    for name in changed:
        if not name.startswith("pack/pack-") or not name.endswith(_DERIVED_PACK):
            continue
        stem = name[len("pack/") : name.rindex(".")]
        pack = stem + ".pack"
        if pack not in after.packs:
            continue  # git reads none of it without its pack
        if name.endswith(".rev"):
            if not _new_pack_sound(folder, pack, after.packs[pack], timeout, git_dir):
                out.append(f"{label}/{name} (a reverse index that does not match its pack)")
        elif before.packs.get(pack) == after.packs[pack]:
            out.append(
                f"{label}/{name} (written for a pack that did not change: git writes a pack's "
                "bitmap and `.mtimes` with the pack)"
            )
    if "info/packs" in changed:
        listed = _packs_listed(folder / "info" / "packs")
        absent = [n for n in listed or [] if n not in after.packs]
        if listed is None or absent:
            what = f"names {absent[0]}, which the store does not hold" if absent else "unreadable"
            out.append(f"{label}/info/packs ({what})")
    return out


def _packs_listed(path: Path) -> list[str] | None:
    """The packs an `info/packs` file names (`P pack-….pack` lines); None when it is no
    regular file within bounds."""
    try:
        with _open(path, buffered=False) as f:
            data = f.read(_MAX_LIST + 1)
    except OSError:
        return None
    if len(data) > _MAX_LIST:
        return None
    text = data.decode("utf-8", "replace")
    return [line[2:].strip() for line in text.splitlines() if line.startswith("P ")]


def _missing(folder: Path, names: list[str], timeout: float, git_dir: Path) -> list[str]:
    """Of `names`, those the store no longer holds and some ref still reaches (`git gc`
    prunes only what none does): what the user lost. The walk reads no commit-graph (an
    agent can forge one that hides a parent)."""
    import pygit2

    try:
        odb = pygit2.Odb(os.fspath(folder))
        absent = {n for n in names if not odb.exists(n)}
    except (pygit2.GitError, ValueError, OSError):
        absent = set(names)
    if not absent:
        return []
    got = proc.git(
        ["--git-dir", os.fspath(git_dir), "-c", "core.commitGraph=false", "rev-list",
         "--objects", "--all", "--missing=print"],
        timeout=timeout,
        isolated=True,
    )  # fmt: skip
    if got.returncode != 0 or got.timed_out:
        return sorted(absent)  # the walk itself failed (on what is gone: a ref's own commit)
    reached = {line[1:].split(" ", 1)[0] for line in got.stdout.splitlines() if line[:1] == "?"}
    return sorted(absent & reached)
