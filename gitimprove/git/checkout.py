"""Measurement checkouts: a commit's tree written out under `<git-common-dir>/improve/work/`,
and the proof that what is measured is what was committed.

The files are written from the object database directly, so no index, no worktree admin
entry and no ref of the user's repository is involved; each file's line ends are those git's
own checkout writes in your repository (git/attributes.py: the commit's `.gitattributes`,
`.git/info/attributes`, your global attributes file, `core.autocrlf`, `core.eol`), and the
proof expects those bytes; the folder goes away when the context
exits, also on error. Its name is random and it is created exclusively, so nothing can be put
in its place beforehand. A `<name>.pid` file beside it lets `doctor` find ones left by a killed
process.

`Checkout.verify` compares the folder with the snapshot taken when it was written: the
listing plus every entry's `lstat` (mode, size, mtime, ctime, inode, link count, device), the
root's too (an extended attribute or ACL set moves the ctime). Between runs nothing may change
at all; during a run the files of the commit may not change. After every run `Checkout.reset`
keeps the folder only when it is provably as written (`Checkout.unchanged`: the full `lstat`,
atime and allocated blocks included, no extended attribute, no file-system flag, no mount on
the work folder); else it removes it and writes the commit anew under a new random name. So
every run starts from exactly the committed tree and nothing a run can set on a directory
entry reaches a later run: not the files it added, not the mode, times, extended attributes,
ACLs or flags of any entry or of the root, not inode numbers, link counts or the order of a
folder's entries. A file of the commit that changed is re-hashed to tell "changed" from
"rewritten" in the reason. Flags that keep a file from being removed (`chattr +i`, `+a`) are
cleared first, and a mount stacked on the work folder is taken off (util/inodes.py).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import itertools
import os
import secrets
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from gitimprove.errors import GitImproveError, again
from gitimprove.git import space
from gitimprove.git.attributes import Converter, blob_hash, converter
from gitimprove.git.repo import Repo
from gitimprove.util import inodes
from gitimprove.util.alive import pid_alive
from gitimprove.util.clockset import Watch
from gitimprove.util.files import create_whole, read_state, remove_tree
from gitimprove.util.written import mark

if TYPE_CHECKING:
    from gitimprove.git.renew import Spares

LINK = pygit2.enums.FileMode.LINK
EXEC = pygit2.enums.FileMode.BLOB_EXECUTABLE

# mode, size, mtime_ns, ctime_ns, inode, link count, device, atime_ns, blocks (the last two
# are compared only to keep a checkout for the next run: the harness's own listing moves a
# folder's atime where the file system updates it on every read, and some file systems trim
# blocks allocated beyond a file's end after it was written)
Stat = tuple[int, int, int, int, int, int, int, int, int]
META = 7  # the fields of a Stat that nothing may change between and during runs

# how many times a used checkout was kept for the next run (provably unchanged) or written
# anew; how many checkouts were made from a spare and agents' workspaces from the last one,
# writing only what differs (git/renew.py)
COUNTS = {"reused": 0, "rewritten": 0, "patched": 0, "renewed": 0}
_counts_lock = threading.Lock()


def count(what: str) -> None:
    with _counts_lock:
        COUNTS[what] += 1


_count = count


def _stat(st: os.stat_result) -> Stat:
    return (
        st.st_mode,
        st.st_size,
        st.st_mtime_ns,
        st.st_ctime_ns,
        st.st_ino,
        st.st_nlink,
        st.st_dev,
        st.st_atime_ns,
        st.st_blocks,
    )


# what this process wrote in each `.pid` file it made (git/strays.py checks them against it)
PIDS: dict[str, bytes] = {}


def write_pid(path: Path, what: str = "") -> None:
    """The `.pid` file beside a workspace or checkout: this process's pid and what it is for.
    It appears whole (another run that read it empty would take the folder for one whose
    process is gone, and remove it under this one)."""
    data = f"{os.getpid()}\n{what}\n" if what else f"{os.getpid()}\n"
    PIDS[path.name] = data.encode("utf-8")
    with contextlib.suppress(OSError):  # else written in place, as before
        if create_whole(path, PIDS[path.name], 0o644):
            return
    mark(path, pending=True, data=PIDS[path.name])
    path.write_text(data, encoding="utf-8")
    mark(path, data=PIDS[path.name])


def work_root(repo: Repo) -> Path:
    root = repo.improve_dir / "work"
    root.mkdir(parents=True, exist_ok=True)
    return root


def materialize(
    repo: Repo,
    tree: pygit2.Tree,
    dest: Path,
    expected: dict[str, tuple[int, str]],
    prefix: str = "",
    *,
    skip: bool = True,
    convert: Converter | None = None,
    stored: dict[str, str] | None = None,
) -> int:
    """Write `tree` under `dest`; `expected` gets every file's (mode, blob id). Returns the
    size of the largest file written. Compiled Python (`__pycache__/`, `*.pyc`) is never
    written with `skip` (a measurement checkout): Python could run it instead of its source
    (a forged one, checked against the source's time and size or not at all); nor is a
    tool's cache (`unwritten`). With `convert` (git/attributes.py) each file is written as
    git's checkout writes it, and `expected` holds the id of what was written; `stored` then
    gets the tree's blob id of each file written otherwise than its blob holds it."""
    largest = 0
    dest.mkdir(parents=True, exist_ok=prefix != "")
    for entry in tree:
        name = entry.name or ""
        path = dest / name
        rel = prefix + name
        if skip and unwritten(rel):
            continue
        if entry.type_str == "tree":
            sub = repo.raw[entry.id]
            assert isinstance(sub, pygit2.Tree)
            path.mkdir()
            largest = max(
                largest,
                materialize(
                    repo, sub, path, expected, rel + "/", skip=skip, convert=convert, stored=stored
                ),
            )
        elif entry.type_str == "blob":
            blob = repo.raw[entry.id]
            assert isinstance(blob, pygit2.Blob)
            expected[rel] = write_blob(path, rel, blob, int(entry.filemode), convert, stored)
            # CRLF for LF at most doubles a file
            largest = max(largest, blob.size if convert is None else 2 * blob.size)
        else:  # a submodule: an empty folder, as a fresh clone has
            path.mkdir(exist_ok=True)
    return largest


def write_blob(
    path: Path,
    rel: str,
    blob: pygit2.Blob,
    mode: int,
    convert: Converter | None = None,
    stored: dict[str, str] | None = None,
) -> tuple[int, str]:
    """Write a blob at `path` (a link, or a file converted by `convert`); what the tree check
    expects there: (mode, id of the bytes written). `stored` gets the blob's id when the bytes
    written are not the blob's."""
    if mode == LINK:
        os.symlink(blob.data.decode("utf-8", errors="surrogateescape"), path)
        return mode, str(blob.id)
    raw = blob.data
    data = convert(rel, raw) if convert is not None else raw
    _create(path, data, mode == EXEC)
    if data is raw:
        return mode, str(blob.id)
    if stored is not None:
        stored[rel] = str(blob.id)
    return mode, blob_hash(data)


_NEW = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC


def _create(path: Path, data: bytes, executable: bool) -> None:
    """A file holding `data` (never written through a link), mode 0755 when `executable`."""
    fd = os.open(path, _NEW, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if executable:
            os.fchmod(fd, 0o755)
    finally:
        os.close(fd)


def compiled(rel: str) -> bool:
    """Whether a path of a checkout is compiled Python, which Python may run for its source."""
    return rel.endswith((".pyc", ".pyo")) or "__pycache__" in rel.split("/")


# what a tool keeps of its last run to skip work or to choose what to run now, by the name of
# its folder (or file) in any folder: a committed one is read by the guard's tool as its own
# (a forged `.mypy_cache` entry whose recorded hash is the changed source's has mypy take the
# module as checked; `.pytest_cache/v/cache/lastfailed` and `stepwise` choose what `--lf`,
# `--ff`, `--nf` and `--sw` run; `.tox/` holds the python a tox guard runs)
TOOL_STATE = {
    ".pytest_cache": "pytest's cache: what --lf, --ff, --nf and --sw run",
    ".mypy_cache": "mypy's cache: a module it records as checked is not checked again",
    ".ruff_cache": "ruff's cache: a file it records as clean is not linted again",
    ".dmypy.json": "the mypy daemon dmypy asks in place of checking",
    ".tox": "tox's environments: the python and packages a tox guard runs",
    ".nox": "nox's environments: the python and packages a nox guard runs",
    ".pytype": "pytype's cache: a module it records as checked is not checked again",
    ".eslintcache": "eslint's cache: a file it records as clean is not linted again",
}
TOOL_STATE_SUFFIXES = {
    ".tsbuildinfo": "tsc's build state: a project it records as built is not checked again",
}


def tool_state(rel: str) -> tuple[str, str] | None:
    """(why, the name) when a path is, or is under, a tool's cache or state (`TOOL_STATE`)."""
    for part in rel.split("/"):
        if part in TOOL_STATE:
            return TOOL_STATE[part], part
        for suffix, why in TOOL_STATE_SUFFIXES.items():
            if part.endswith(suffix):
                return why, suffix
    return None


def unwritten(rel: str) -> bool:
    """Whether a measurement checkout leaves a path of the commit out: compiled Python, and a
    tool's cache or state (`tool_state`): every run starts without them, as a fresh clone
    whose tools never ran."""
    return compiled(rel) or tool_state(rel) is not None


def scan(root: Path) -> dict[str, Stat]:
    """Every entry under `root` (not following links) with its stat snapshot, the root
    itself as "."."""
    out: dict[str, Stat] = {}
    with contextlib.suppress(OSError):
        st = os.lstat(root)
        out["."] = _stat(st)
    todo = [("", str(root))]
    while todo:
        prefix, folder = todo.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            rel = prefix + entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            out[rel] = _stat(st)
            if stat.S_ISDIR(st.st_mode):
                todo.append((rel + "/", entry.path))
    return unproven(out)


_POISON = itertools.count(1)


def unproven(listing: dict[str, Stat]) -> dict[str, Stat]:
    """`listing` with every file a live process of an agent or a run holds mapped shared and
    writable (util/inodes.py `written_mapped`) given a stat that equals no other: its bytes can
    change through the mapping without moving its times, so its `lstat` proves nothing now or
    later (the harness compares listings; such a file is never as recorded)."""
    mapped = inodes.written_mapped()
    if not mapped:
        return listing
    for rel, st in listing.items():
        if (st[6], st[4]) in mapped and not stat.S_ISDIR(st[0]):
            listing[rel] = (st[0], st[1], -next(_POISON), *st[3:])
    return listing


def blob_id(path: Path, limit: int | None = None) -> tuple[int, str] | None:
    """(git mode, blob id) of a file or link on disk, hashed here; None if it is neither.
    A file over `limit` bytes is not read: its id is "" (it matches no blob that small)."""
    try:
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode):
            data, mode = os.readlink(path).encode("utf-8", "surrogateescape"), int(LINK)
        elif stat.S_ISREG(st.st_mode):
            mode = int(EXEC) if st.st_mode & 0o111 else int(pygit2.enums.FileMode.BLOB)
            with open(path, "rb") as f:
                data = f.read(limit + 1) if limit is not None else f.read()
            if limit is not None and len(data) > limit:
                return mode, ""
        else:
            return None
    except OSError:
        return None
    digest = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    return mode, digest


@dataclass
class Checkout:
    """A measurement checkout and what it must hold."""

    path: Path
    commit: str
    expected: dict[str, tuple[int, str]]
    snapshot: dict[str, Stat] = field(default_factory=dict)
    largest: int | None = None  # the largest file written: nothing larger is ever read
    lock: threading.Lock = field(default_factory=threading.Lock)
    tree: frozenset[str] = frozenset()  # every path the commit puts here, folders included
    repo: Repo | None = None  # to write it anew (`reset`)
    purpose: str = "measure"
    handed: bool = False  # given to another owner (`hand_over`): its context leaves it alone
    spent: bool = False  # found tampered: never kept as a spare (git/renew.py)
    # armed before the files are written: a step of the system clock since then means a ctime
    # may have been given back (util/clockset.py), so no `lstat` proves a file unchanged
    clock: Watch = field(default_factory=Watch)
    # entries found without a flag or an extended attribute, by the `lstat` they had then:
    # setting either moves the change time, so an entry with that `lstat` still has none
    unmarked: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def verify(self, *, after_run: bool = False, now: dict[str, Stat] | None = None) -> list[str]:
        """The paths that differ from the last snapshot (empty: all is as it was).

        With `after_run`, files a run added (its output, caches) are not named: `added` lists
        them and `reset` removes them; a file of the commit that changed always is. `now` is a
        listing just taken (`scan`), when no process of the run is left to change it."""
        now = scan(self.path) if now is None else now
        stepped = self.clock.was_set()
        if now == self.snapshot and not stepped:
            return []
        bad = []
        for rel in sorted(set(now) | set(self.snapshot)):
            before, after = self.snapshot.get(rel), now.get(rel)
            if before is not None and after is not None and before[:META] == after[:META]:
                if not stepped or rel not in self.expected:
                    continue
                # the clock was set: the same `lstat` proves nothing, the content tells
                if blob_id(self.path / rel, self.largest) != self.expected[rel]:
                    bad.append(f"{rel} (changed, its times put back with the system clock set)")
                continue
            if rel in self.expected:
                got = blob_id(self.path / rel, self.largest)
                what = "changed" if got != self.expected[rel] else "rewritten"
                bad.append(f"{rel} ({'removed' if after is None else what})")
            elif not after_run:
                state = "added" if before is None else "removed" if after is None else "changed"
                bad.append(f"{rel} ({state})")
        return bad

    def added(self, *, every: bool = False, now: dict[str, Stat] | None = None) -> list[str]:
        """What is here that the commit does not hold (a run's output): the top-most paths,
        or with `every` each path under them too."""
        now = scan(self.path) if now is None else now
        extra = sorted(rel for rel in now if rel not in self.tree)
        if every:
            return extra
        out: list[str] = []
        for rel in extra:
            if not out or not rel.startswith(out[-1] + "/"):
                out.append(rel)
        return out

    def reset(self, *, rewrite: bool = False, now: dict[str, Stat] | None = None) -> list[str]:
        """Make the folder ready for the next run: kept as it is when it is provably as
        written (`unchanged`), else (or with `rewrite`) the used folder is removed and the
        commit written anew under a new random name, so the next run starts from exactly the
        committed tree: nothing a run can set survives, neither files it added nor the
        metadata of any entry (the root's too: mode bits, times, ctime, extended attributes,
        ACLs, file-system flags, inode numbers, link counts, the order of a folder's entries).
        The used folder is removed first, so a nearly full disk needs room for one copy only.

        Returns what makes the run that used it `tampered`: a mount on or under the work
        folder (taken off), a flag that kept a file from being removed (cleared), what could
        not be removed (renamed away all the same). Raises `StuckFlags` when a flag cannot be
        cleared."""
        if self.repo is None:
            raise RuntimeError("a checkout not written by `checkout` cannot be renewed")
        root = self.path.parent
        mounted = inodes.mounts_under(root)
        if not rewrite and not mounted and self.unchanged(now):
            _count("reused")
            return []
        _count("rewritten")
        marks = _unmount(root, mounted)
        old = self.path
        left = marks + _remove_now(old)
        fresh = _write(self.repo, self.commit, self.purpose)
        self.clock.close()
        self.clock = fresh.clock
        self.path, self.expected, self.snapshot = fresh.path, fresh.expected, fresh.snapshot
        self.largest, self.tree = fresh.largest, fresh.tree
        self.unmarked = fresh.unmarked
        return left

    def unchanged(self, now: dict[str, Stat] | None = None, *, moved: bool = False) -> bool:
        """Whether the folder is provably as it was written, so a later run may use it: every
        entry's full `lstat` as in the snapshot (type, mode, size, inode, link count, mtime,
        ctime, atime, allocated blocks), all on the work folder's device, no extended attribute and no
        file-system flag on any entry. (Mounts are checked by `reset`.) With `moved` (the
        harness just renamed the folder) the root's change time may differ, nothing else."""
        now = scan(self.path) if now is None else now
        if moved:
            was, here = self.snapshot.get("."), now.get(".")
            if was is None or here is None or was[:3] + was[4:] != here[:3] + here[4:]:
                return False
            now = {**now, ".": was}
        if now != self.snapshot:
            return False
        if self.clock.was_set():  # a ctime could have been given back: written anew
            return False
        try:
            device = os.lstat(self.path.parent).st_dev
        except OSError:
            return False
        if any(st[6] != device for st in self.snapshot.values()):
            return False
        return not _marked(os.fspath(self.path), self.snapshot, self.unmarked)


# how much older than the look an entry's change time must be for its `lstat` to prove later
# that nothing was set on it (a change in the same tick of a coarse clock keeps the time)
_SETTLED_NS = 200_000_000


def _marked(base: str, snapshot: dict[str, Stat], unmarked: dict[str, tuple[int, ...]]) -> bool:
    """Whether any entry of a checkout has a file-system flag or an extended attribute. The
    entries of one folder follow each other in a listing (`scan`): each is opened relative to
    its folder, never through a link; a link's own attributes are read by path.

    An entry in `unmarked` with the `lstat` recorded there is not opened again: setting a flag
    or an attribute moves its change time (the caller has checked the clock was not set).
    When none is marked, `unmarked` records every entry whose change time was settled."""
    if inodes.marked(base):
        return True
    settled = time.time_ns() - _SETTLED_NS
    found: dict[str, tuple[int, ...]] = {}
    parent, pfd = None, -1
    try:
        for rel, st in snapshot.items():
            if rel == ".":
                continue
            if unmarked.get(rel) == st[:META]:
                found[rel] = st[:META]
                continue
            folder, _, name = rel.rpartition("/")
            if stat.S_ISLNK(st[0]):
                if inodes.link_marked(os.path.join(base, rel)):
                    return True
                continue
            if folder != parent:
                if pfd >= 0:
                    os.close(pfd)
                    pfd = -1
                pfd = os.open(os.path.join(base, folder) if folder else base, _DIR)
                parent = folder
            if inodes.marked(name, pfd):
                return True
            if st[3] < settled:
                found[rel] = st[:META]
    except OSError:
        return True  # not as listed: never kept
    finally:
        if pfd >= 0:
            os.close(pfd)
    unmarked.clear()
    unmarked.update(found)
    return False


_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class StuckFlags(GitImproveError):
    """A file-system flag on a used checkout that this process cannot clear."""

    def __init__(self, exc: inodes.FlagsStuck) -> None:
        super().__init__(
            f"cannot remove {exc.filename}: it is {exc.strerror} and the flag cannot be "
            "cleared by this process",
            hint=f"see it with `lsattr -d {exc.filename}`, clear it as root with "
            f"`chattr -i -a {exc.filename}` (for a folder: `chattr -R -i -a`), then "
            f"`git improve doctor --repair`, then {again()}",
        )
        self.path = str(exc.filename)


def take_off_mounts(root: Path) -> list[str]:
    """Every mount at or under the work folder `root`, taken off where this process may, each
    named (relative to `root`) for the record; empty when there is none (the usual case: one
    read of `/proc/self/mountinfo`)."""
    return _unmount(root, inodes.mounts_under(root))


def _unmount(root: Path, mounted: list[str]) -> list[str]:
    """Take off every mount at or under the work folder `root` (a run stacked it there), each
    named for the record; one that stays is named too (what is under it is never removed)."""
    if not mounted:
        return []
    base = os.path.realpath(root)
    out = []
    for point in dict.fromkeys(mounted):  # a mount stacked several times: each comes off
        for _ in range(16):
            if point not in inodes.mounts_under(point) or not inodes.unmount(point):
                break
        still = point in inodes.mounts_under(point)
        rel = os.path.relpath(point, base)
        out.append(f"{rel} (a mount{' that stays' if still else ', taken off'})")
    return out


def _remove_now(path: Path) -> list[str]:
    """Remove a used checkout before the next run starts (a run without the sandbox could
    read a copy still being removed in the background): renamed away at once, then removed;
    what could not be removed (relative paths) is left to `doctor --repair`. A folder with a
    mount under it is left whole (what is mounted there is never removed); an immutable or
    append-only flag is cleared and named."""
    if inodes.mounts_under(path):
        return [f"{path.name} (left: a mount under it stays)"]
    trash = path.with_name(f"{path.name}.trash")
    try:
        write_pid(trash.parent / f"{trash.name}.pid", "trash")
        os.rename(path, trash)
    except OSError:  # a full disk: removed where it is (its own pid file names it)
        (trash.parent / f"{trash.name}.pid").unlink(missing_ok=True)
        trash = path
    if trash != path:
        (path.parent / f"{path.name}.pid").unlink(missing_ok=True)
    remove_tree(trash)
    flagged: list[str] = []
    if os.path.lexists(trash):  # a folder the run made unreadable, or a flag on a file
        _unlock(trash)
        try:
            flagged = inodes.clear_flags(trash)
        except inodes.FlagsStuck as exc:
            raise StuckFlags(exc) from None
        remove_tree(trash)
    if os.path.lexists(trash):
        return flagged + (sorted(str(p.relative_to(trash)) for p in trash.rglob("*")) or ["."])
    (trash.parent / f"{trash.name}.pid").unlink(missing_ok=True)
    return flagged


def _unlock(folder: Path) -> None:
    """Make a folder tree a run wrote readable again (mode 0700 on each folder), so it can
    be removed; links are never followed."""
    if os.path.islink(folder) or not folder.is_dir():
        return
    with contextlib.suppress(OSError):
        os.chmod(folder, 0o700)
    for top, dirs, _files in os.walk(folder):
        for name in dirs:  # a link to a folder is listed too: Linux has no chmod of a link
            with contextlib.suppress(OSError, NotImplementedError):
                os.chmod(os.path.join(top, name), 0o700, follow_symlinks=False)


class NotAsWritten(GitImproveError):
    """A checkout differed from the commit right after it was written (something wrote it)."""

    def __init__(self, commit: str, paths: list[str]) -> None:
        super().__init__(
            f"the checkout of {commit[:10]} was changed while it was written: "
            + ", ".join(paths[:10]),
            hint="another process writes the measurement checkouts; stop it (a sandbox keeps "
            "agents out of them)",
        )
        self.paths = paths


def not_as_written(co: Checkout) -> list[str]:
    """What in a fresh checkout's snapshot is not what was written: a file whose content or
    mode differs from its blob (hashed from disk now, after the snapshot, so a rewrite between
    writing and snapshot is seen here and one after it by `verify`), a missing file, a file
    that is not in the tree."""
    bad = [
        f"{rel} (added)"
        for rel, st in co.snapshot.items()
        if rel not in co.expected and not stat.S_ISDIR(st[0])  # a folder's files are named
    ]
    for rel, want in sorted(co.expected.items()):
        if rel not in co.snapshot:
            bad.append(f"{rel} (removed)")
        elif blob_id(co.path / rel, co.largest) != want:
            bad.append(f"{rel} (changed)")
    return sorted(bad)


def _write(repo: Repo, commit: str, purpose: str) -> Checkout:
    """A new checkout of `commit` under a random name, proved to hold exactly the commit's
    files (written anew under another name up to three times, else NotAsWritten). The work
    folder's times are set to now: a run without the sandbox could have set them. A full disk
    is `NoSpace` (how much is free, and to resume once there is more), nothing left behind.

    The listing is taken twice: before every file is hashed from disk (a rewrite before it is
    seen by its hash) and after (nothing but access times may differ: a rewrite after the
    hash is seen there); the second is the snapshot, so reading the files (the hash did)
    moves no access time any more where the file system updates it only once after a write."""
    obj = repo.raw[commit]
    assert isinstance(obj, pygit2.Commit)
    root = work_root(repo)
    bad: list[str] = []
    for _ in range(3):
        name = f"m-{secrets.token_hex(8)}"
        path = root / name
        pid_file = root / f"{name}.pid"
        expected: dict[str, tuple[int, str]] = {}
        clock = Watch()  # before the first file: every ctime of this copy is watched
        try:
            write_pid(pid_file, purpose)
            # mkdir fails if it exists
            largest = materialize(repo, obj.tree, path, expected, convert=converter(repo, obj.tree))
            co = Checkout(
                path, commit, expected, largest=largest, repo=repo, purpose=purpose, clock=clock
            )
            co.snapshot = scan(path)
            co.tree = frozenset(co.snapshot)
            bad = not_as_written(co)
            again = scan(path)
            bad += [
                f"{rel} (changed)"
                for rel in sorted(set(again) | set(co.snapshot))
                if (again.get(rel) or ())[:META] != (co.snapshot.get(rel) or ())[:META]
            ]
            co.snapshot = again
        except BaseException as exc:
            _drop(path)
            clock.close()
            if isinstance(exc, OSError) and space.out_of_space(exc, repo.common_dir):
                raise space.NoSpace(
                    repo.common_dir, f"writing a measurement checkout of {commit[:10]}"
                ) from None
            raise
        if not bad:
            with contextlib.suppress(OSError):
                os.utime(root)
            return co
        _drop(path)
        clock.close()
    raise NotAsWritten(commit, bad)


def _drop(path: Path) -> None:
    if os.path.lexists(path):
        discard(path)
    (path.parent / f"{path.name}.pid").unlink(missing_ok=True)


@contextmanager
def checkout(
    repo: Repo, commit: str, purpose: str = "measure", spares: Spares | None = None
) -> Iterator[Checkout]:
    """A fresh checkout of `commit` (see `_write`), or one made from a spare that proves
    itself (git/renew.py); removed on exit, under whatever name `reset` gave it last, or
    kept as a spare when the context ends without an error and nothing found it tampered."""
    co = spares.take(repo, commit, purpose) if spares is not None else None
    if co is None:
        co = _write(repo, commit, purpose)
    ok = False
    try:
        yield co
        ok = True
    finally:
        if not co.handed:
            if ok and spares is not None and not co.spent:
                spares.give(co)
            else:
                _drop(co.path)
                co.clock.close()


def hand_over(co: Checkout) -> None:
    """Take a checkout from the context that wrote it (which then leaves it): the caller
    removes it with `release`. A kept candidate's checkout becomes the new incumbent's."""
    co.handed = True
    _count("reused")


def release(co: Checkout) -> None:
    """Remove a checkout taken with `hand_over`."""
    _drop(co.path)
    co.clock.close()


def stale_workspaces(repo: Repo) -> list[Path]:
    """Workspaces whose owning process is gone."""
    root = repo.common_dir / "improve" / "work"
    if not root.is_dir():
        return []
    stale = []
    for entry in sorted(root.iterdir()):
        if entry.suffix == ".pid" or not entry.is_dir():
            continue
        pid_file = root / f"{entry.name}.pid"
        alive = False
        try:
            pid = int(read_state(pid_file).decode("utf-8").split()[0])
            alive = pid_alive(pid)  # EPERM is another user's live process, not a dead one
        except (OSError, ValueError, IndexError):
            alive = False
        if not alive:
            stale.append(entry)
    return stale


def remove_workspace(path: Path) -> None:
    """Remove a workspace or checkout and its pid file. One with a mount under it is left
    (its pid file names it for `doctor`) once the mounts were tried off: what is mounted there
    is never removed. An immutable or append-only flag is cleared where this process may."""
    if inodes.mounts_under(path):
        _unmount(path, inodes.mounts_under(path))
        if inodes.mounts_under(path):
            return
    remove_tree(path)  # an agent's tree of any depth (shutil.rmtree recurses)
    if os.path.lexists(path):
        _unlock(path)
        with contextlib.suppress(inodes.FlagsStuck):
            inodes.clear_flags(path)
        remove_tree(path)
    (path.parent / f"{path.name}.pid").unlink(missing_ok=True)


_removing: list[threading.Thread] = []


def discard(path: Path) -> None:
    """Remove a workspace or checkout no process of an attempt uses any more: renamed at once
    (nothing reaches it by its name again), its files removed by a background thread (removing
    a clone's folders one by one is most of an attempt's time on a slow disk). A pid file
    names the trash while it goes, so `doctor --repair` removes what a killed harness left;
    the process waits for every removal before it exits."""
    trash = path.with_name(f"{path.name}.trash")
    pid_file = path.parent / f"{path.name}.pid"
    trash_pid = trash.parent / f"{trash.name}.pid"
    try:
        write_pid(trash_pid, "trash")  # before the rename: the folder is never without one
        os.rename(path, trash)
    except OSError:  # a full disk too: removed where it is, now
        trash_pid.unlink(missing_ok=True)
        remove_workspace(path)
        return
    pid_file.unlink(missing_ok=True)
    thread = threading.Thread(target=remove_workspace, args=(trash,), daemon=True)
    thread.start()
    _removing[:] = [t for t in _removing if t.is_alive()] + [thread]


@atexit.register
def finish_removals() -> None:
    """Wait for the background removals (at exit, and before a run reports it is done)."""
    for thread in list(_removing):
        thread.join()
