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

A pack rewritten with its checksums made again is caught only when one of its objects is read
(git checks each object's hash then); the docs' "What `sandbox = "none"` cannot protect".
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import struct
import sys
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from gitimprove.util import proc
from gitimprove.util.files import open_state

# what a loose object or a pack's index may be read to at most (a planted file of gigabytes)
_MAX_LOOSE = 256 << 20
_MAX_IDX = 1 << 30
_SHOWN = 3  # objects named in a reason
# a pack whose `lstat` moved is hashed whole up to this size; a larger one only has its end
# compared with the checksum its index names (git sets a pack's times whenever an object it
# holds is written again: hashing gigabytes then would cost seconds an attempt)
_HASHED_PACK = 64 << 20


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


# object names of a pack's index, by the index's path and `lstat` (an index is never rewritten)
_IDX: dict[str, tuple[tuple[int, ...], list[str]]] = {}


class _Watch:
    """inotify on the object folders: a write into a loose object (which git never makes: it
    writes a new file and renames it into place) is seen without a `stat` of every object at
    every look (2,500 loose objects cost 20 ms a look so)."""

    _MODIFY, _OVERFLOW, _IGNORED = 0x2, 0x4000, 0x8000

    def __init__(self, fd: int, libc: ctypes.CDLL) -> None:
        self.fd, self.libc = fd, libc
        self.folders: dict[int, str] = {}  # watch descriptor -> folder name
        self.watched: set[str] = set()
        self.written: set[str] = set()
        self.overflows = 0
        self.lock = threading.Lock()

    @classmethod
    def start(cls) -> _Watch | None:
        if not sys.platform.startswith("linux"):
            return None
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, AttributeError):
            return None
        return cls(fd, libc) if fd >= 0 else None

    def add(self, path: str, name: str) -> bool:
        if name in self.watched:
            return True
        wd = self.libc.inotify_add_watch(self.fd, os.fsencode(path), self._MODIFY)
        if wd < 0:
            return False
        self.folders[wd] = name
        self.watched.add(name)
        return True

    def drain(self) -> None:
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return
            except OSError:
                self.overflows += 1
                return
            at = 0
            while at + 16 <= len(data):
                wd, mask, _cookie, size = struct.unpack_from("iIII", data, at)
                name = data[at + 16 : at + 16 + size].rstrip(b"\0").decode("ascii", "replace")
                at += 16 + size
                if mask & self._OVERFLOW:
                    self.overflows += 1
                elif mask & self._IGNORED:  # the folder is gone (or replaced): watch it anew
                    self.watched.discard(self.folders.pop(wd, ""))
                elif mask & self._MODIFY and wd in self.folders:
                    self.written.add(self.folders[wd] + name)


_WATCHES: dict[str, _Watch | None] = {}
# each object folder's entries by the folder's inode and times (adding, removing or renaming an
# entry moves them), kept once they are older than the clock's tick could blur
_LISTED: dict[str, tuple[tuple[int, int, int], dict[str, tuple[int, ...]]]] = {}
_SETTLED_NS = 200_000_000


def take(folder: Path) -> Store:
    """The store's listing; nothing is read but the index of a pack not seen before."""
    key = os.fspath(folder)
    if key not in _WATCHES:
        _WATCHES[key] = _Watch.start()
    watch = _WATCHES[key]
    if watch is None:
        return _take(folder, None)
    with watch.lock:
        return _take(folder, watch)


def _take(folder: Path, watch: _Watch | None) -> Store:
    loose: dict[str, tuple[int, ...]] = {}
    packs: dict[str, tuple[int, ...]] = {}
    try:
        folders = [e for e in os.scandir(folder) if len(e.name) == 2 and _hex(e.name)]
    except OSError:
        return Store(folder)
    watched = watch is not None
    settled = time.time_ns() - _SETTLED_NS
    for sub in folders:
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
                continue
        try:
            entries = list(os.scandir(sub.path))
        except OSError:
            continue
        found_here: dict[str, tuple[int, ...]] = {}
        for entry in entries:
            if not (_hex(entry.name) and len(entry.name) in (38, 62)):
                continue
            if watch is not None:
                found_here[sub.name + entry.name] = (entry.inode(),)
            else:
                found = _stat_key(entry.path)
                if found is not None:
                    found_here[sub.name + entry.name] = found
        loose.update(found_here)
        if watch is not None and max(st.st_mtime_ns, st.st_ctime_ns) < settled:
            _LISTED[sub.path] = (key, found_here)
    try:
        pack_entries = list(os.scandir(folder / "pack"))
    except OSError:
        pack_entries = []
    for entry in pack_entries:
        if entry.name.startswith("pack-") and entry.name.endswith((".pack", ".idx")):
            found = _stat_key(entry.path)
            if found is not None:
                packs[entry.name] = found
                if entry.name.endswith(".idx"):
                    _index_names(Path(entry.path), found)
    if watch is None:
        return Store(folder, loose, packs)
    watch.drain()
    overflows = watch.overflows + (0 if watched else 1)
    return Store(folder, loose, packs, frozenset(watch.written), overflows)


def _open(path: Path, *, buffered: bool = True) -> BinaryIO:
    """A regular file of the store, opened without following a link or blocking (an agent
    can put a FIFO in place of an object: a plain `open` would wait on it for ever)."""
    return os.fdopen(open_state(path), "rb", buffering=-1 if buffered else 0)


def _hex(name: str) -> bool:
    return all(c in "0123456789abcdef" for c in name)


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


def lost(before: Store, after: Store, *, timeout: float = 60.0) -> list[str]:
    """What git never does to an object store that happened between the two looks, each
    named as `.git/objects/…` with the why; [] when the store is only added to, packed or
    pruned of what no ref reaches."""
    folder = after.folder
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
        out.append(f".git/objects/{shown}{more} (rewritten: no longer what their names say)")
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
            out.append(
                f".git/objects/pack/{name} (rewritten: its bytes no longer match its checksum)"
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
        out.append(f".git/objects/{shown}{more} (written anew: no longer what their names say)")
    for name in sorted(set(after.packs) - set(before.packs)):
        if name.endswith(".pack") and not _new_pack_sound(folder, name, after.packs[name], timeout):
            out.append(
                f".git/objects/pack/{name} (a new pack whose objects are not what their names "
                "say: git reads a packed object before a loose or older one of that name)"
            )
    missing = _missing(folder, gone, timeout) if gone else []
    if missing:
        shown = ", ".join(missing[:_SHOWN])
        more = f" and {len(missing) - _SHOWN} more" if len(missing) > _SHOWN else ""
        out.append(f".git/objects ({len(missing)} objects your refs reach are gone: {shown}{more})")
    return out


# new packs found sound, by path and `lstat`: each is hashed whole once
_SOUND: dict[str, tuple[int, ...]] = {}
_VERIFIED_PACK = 256 << 20


def _new_pack_sound(folder: Path, name: str, key: tuple[int, ...], timeout: float) -> bool:
    """Does every object of a pack that appeared hash to the name its index gives it (`git
    index-pack --verify`)? Git reads an object from a pack without checking its hash, and
    from the newest pack first: a pack holding other bytes under the name of a blob of the
    user's history shows them in every checkout. A pack over 256 MB (the user's `git gc` of a
    large repository) is not read: the docs' limits."""
    path = folder / "pack" / name
    if _SOUND.get(os.fspath(path)) == key or key[2] > _VERIFIED_PACK:
        return True
    got = proc.git(
        ["--git-dir", os.fspath(folder.parent), "index-pack", "--verify", os.fspath(path)],
        timeout=timeout,
        isolated=True,
    )
    if got.returncode == 0 and not got.timed_out:
        _SOUND[os.fspath(path)] = key
        return True
    return got.timed_out  # too slow to tell: not taken as forged


def _missing(folder: Path, names: list[str], timeout: float) -> list[str]:
    """Of `names`, those the store no longer holds and some ref still reaches (`git gc`
    prunes only what none does): what the user lost."""
    import pygit2

    try:
        odb = pygit2.Odb(os.fspath(folder))
        absent = {n for n in names if not odb.exists(n)}
    except (pygit2.GitError, ValueError, OSError):
        absent = set(names)
    if not absent:
        return []
    git_dir = folder.parent
    got = proc.git(
        ["--git-dir", os.fspath(git_dir), "rev-list", "--objects", "--all", "--missing=print"],
        timeout=timeout,
        isolated=True,
    )
    if got.returncode != 0 or got.timed_out:
        return sorted(absent)  # the walk itself failed (on what is gone: a ref's own commit)
    reached = {line[1:].split(" ", 1)[0] for line in got.stdout.splitlines() if line[:1] == "?"}
    return sorted(absent & reached)
