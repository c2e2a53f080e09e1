"""What your ignore rules hide from `git status`, watched without the sandbox.

The work tree's status (git/status.py) leaves out what `.gitignore` ignores, and that is where
code runs from that no status shows: a `.pyc` in `__pycache__/` (run in place of its source
when its header matches), a `.pth` in `.venv/lib/…/site-packages/` (its lines run at every
start of that python), a module under `node_modules/`. An agent without the sandbox can plant
any of them, and your next Python or Node process runs it. So each ignored file and folder the
status names is watched too, by its `lstat` (`_key`: type and mode, size, inode, mtime, ctime;
a link by its target): `take` returns them all, by path under the work tree.

A full walk costs about 10 µs a file (20,000 files of a virtualenv: ~0.2 s), too much at every
look of a loop whose budget is 150 ms an attempt. The walk is made once per work tree; after
it, inotify on every folder walked tells what changed: an entry made, removed or renamed in a
folder (that folder is listed again, a new folder walked), a file written or its mode changed
(that file's `lstat` taken again). Events lost (the kernel's queue overflowed) fall back to a
full walk; a folder the kernel would not watch (`max_user_watches`) to one `lstat` of it at
every look (listed again when its times moved: a file made, removed or renamed there; a file
of it written in place is then not seen). Without inotify (not Linux) every look walks.
`git status`'s own tool caches (`.pytest_cache/`, `.mypy_cache/`, `.ruff_cache/` with their
tool's rule file: `status.TOOL_CACHES`) are left out as the status leaves them out: your
`pytest` writes there at any time, and nothing there is run. Nor is a `__pycache__` `.pyc` named that your own
Python wrote or removed (`compiled_honestly`: byte for byte what this interpreter compiles
from the source beside it, with that source's size and mtime), so running your code while a
run goes on stops nothing; a forged one is named.

In the sandbox the work tree is hidden from the agent (and the measured code): nothing here is
taken then.
"""

from __future__ import annotations

import importlib._bootstrap_external as external
import os
import stat
import sys
import threading
from pathlib import Path

from gitimprove.util import inotify as inotify_events
from gitimprove.util.inotify import Inotify

__all__ = ["compiled_honestly", "take"]

_MAX_ENTRIES = 500_000  # a walk stops there: the rest is named as one entry


def _key(st: os.stat_result, path: bytes) -> str:
    if stat.S_ISLNK(st.st_mode):
        try:
            return f"link:{os.fsdecode(os.readlink(path))}"
        except OSError:
            return "link:?"
    if stat.S_ISDIR(st.st_mode):
        return f"dir:{st.st_mode:o}:{st.st_ino}"
    return f"{st.st_mode:o}:{st.st_size}:{st.st_ino}:{st.st_mtime_ns}:{st.st_ctime_ns}"


# what a folder's watch reports: an entry made, removed or renamed there (that folder is listed
# again, and so is one moved or gone itself), a file of it written or its mode changed
_LISTING = (
    inotify_events.MOVED_FROM | inotify_events.MOVED_TO | inotify_events.CREATE
    | inotify_events.DELETE | inotify_events.DELETE_SELF | inotify_events.MOVE_SELF
)  # fmt: skip
_MASK = (
    _LISTING | inotify_events.MODIFY | inotify_events.ATTRIB | inotify_events.DONT_FOLLOW
    | inotify_events.ONLYDIR
)  # fmt: skip


class _Watch:
    """inotify on every folder walked, each by its path under the work tree."""

    def __init__(self, inotify: Inotify) -> None:
        self.inotify = inotify
        self.folders: dict[int, bytes] = {}  # watch descriptor -> folder (relative)

    @classmethod
    def start(cls) -> _Watch | None:
        inotify = Inotify.start()
        return cls(inotify) if inotify is not None else None

    def add(self, full: bytes, rel: bytes) -> bool:
        wd = self.inotify.add(full, _MASK)
        if wd < 0:
            return False
        self.folders[wd] = rel
        return True

    def drain(self) -> tuple[set[bytes], set[bytes], bool]:
        """(folders to list again, files to `lstat` again, whether events were lost)."""
        relist: set[bytes] = set()
        files: set[bytes] = set()
        events, lost = self.inotify.read()
        for wd, mask, name in events:
            folder = self.folders.get(wd)
            if mask & inotify_events.OVERFLOW:
                lost = True
            elif folder is None:
                continue
            elif mask & inotify_events.IGNORED:  # gone or replaced: walked again if there
                del self.folders[wd]
                relist.add(folder)
            elif mask & _LISTING:
                relist.add(folder)
            elif name:
                files.add(os.path.join(folder, name) if folder else name)
            else:  # the folder's own mode
                files.add(folder)
        return relist, files, lost

    def close(self) -> None:
        self.inotify.close()


class _Tree:
    """The ignored entries of one work tree as last seen, and the watch that keeps them."""

    def __init__(self, root: bytes) -> None:
        self.root = root
        self.roots: frozenset[bytes] = frozenset()  # the ignored paths the status named
        self.entries: dict[bytes, str] = {}
        self.children: dict[bytes, set[bytes]] = {}  # a folder's entries, as last listed
        # folders the kernel would not watch, with their times: listed again when they moved
        self.unwatched: dict[bytes, tuple[int, int]] = {}
        self.watch = _Watch.start()
        self.lock = threading.Lock()
        self.shown: dict[str, str] | None = None  # `entries` decoded, while nothing moved

    def _walk(self, top: bytes) -> None:
        """`top` and all below it into `entries`, its folders watched."""
        self.children.get(os.path.dirname(top), set()).add(top)
        todo = [top]
        while todo:
            rel = todo.pop()
            full = os.path.join(self.root, rel)
            try:
                st = os.lstat(full)
            except OSError:
                self.entries.pop(rel, None)
                continue
            self.entries[rel] = _key(st, full)
            if not stat.S_ISDIR(st.st_mode):
                continue
            if len(self.entries) >= _MAX_ENTRIES:
                self.entries[rel + b"/\0"] = "not walked: too many ignored files"
                self.children[rel] = {rel + b"/\0"}
                continue
            if self.watch is None or not self.watch.add(full, rel):
                self.unwatched[rel] = (st.st_mtime_ns, st.st_ctime_ns)
            else:
                self.unwatched.pop(rel, None)
            try:
                with os.scandir(full) as it:
                    names = [os.path.join(rel, os.fsencode(e.name)) for e in it]
            except OSError:
                names = []
            self.children[rel] = set(names)
            todo += names

    def _drop(self, rel: bytes) -> None:
        """`rel` and all below it gone from what is kept (by the folders' listings: a look
        after `npm install` costs what changed, not what is kept times what changed)."""
        self.children.get(os.path.dirname(rel), set()).discard(rel)
        todo = [rel]
        while todo:
            path = todo.pop()
            self.entries.pop(path, None)
            self.unwatched.pop(path, None)
            todo += self.children.pop(path, ())

    def _relist(self, rel: bytes) -> None:
        """A folder listed again: what left it dropped, what came walked."""
        if not self._under_roots(rel):
            return
        full = os.path.join(self.root, rel)
        try:
            here = os.lstat(full)
            if self.entries.get(rel) != _key(here, full):  # replaced, or its mode changed
                raise FileNotFoundError(full)
            if rel in self.unwatched:  # listed from here on: these times are seen
                self.unwatched[rel] = (here.st_mtime_ns, here.st_ctime_ns)
            with os.scandir(full) as it:
                now = {os.path.join(rel, os.fsencode(e.name)) for e in it}
        except OSError:
            self._drop(rel)
            self._walk(rel)
            return
        for gone in self.children.get(rel, set()) - now:
            self._drop(gone)
        for path in list(now):
            try:
                st = os.lstat(os.path.join(self.root, path))
            except OSError:  # gone since the listing
                self._drop(path)
                now.discard(path)
                continue
            key = _key(st, os.path.join(self.root, path))
            if path not in self.entries or (stat.S_ISDIR(st.st_mode) and self.entries[path] != key):
                self._drop(path)
                self._walk(path)
            else:
                self.entries[path] = key
        self.children[rel] = now
        self._restat(rel)

    def _restat(self, rel: bytes) -> None:
        if rel not in self.entries:
            return
        full = os.path.join(self.root, rel)
        try:
            self.entries[rel] = _key(os.lstat(full), full)
        except OSError:
            self._drop(rel)

    def _under_roots(self, rel: bytes) -> bool:
        return any(rel == r or rel.startswith(r + b"/") for r in self.roots)

    def look(self, roots: frozenset[bytes]) -> dict[str, str]:
        """The entries now, decoded: the very same dict as the last look's while nothing
        changed (no event, no unwatched folder, the same roots), so comparing two looks
        costs nothing then."""
        with self.lock:
            if self.watch is not None:
                relist, files, lost = self.watch.drain()
            else:
                relist, files, lost = set(), set(), True
            for rel, seen in list(self.unwatched.items()):  # one `lstat` a folder
                try:
                    st = os.lstat(os.path.join(self.root, rel))
                    moved = (st.st_mtime_ns, st.st_ctime_ns) != seen
                except OSError:
                    moved = True
                if moved:
                    relist.add(rel)
            quiet = not (relist or files or lost) and roots == self.roots
            if quiet and self.shown is not None:
                return self.shown
            if lost:  # every event since the last look may be missing: walked anew
                self.entries.clear()
                self.children.clear()
                self.unwatched.clear()
                if self.watch is not None:
                    self.watch.close()
                    self.watch = _Watch.start()
                self.roots = frozenset()
            for gone in self.roots - roots:
                self._drop(gone)
            for new in sorted(roots - self.roots):
                self._walk(new)
            self.roots = roots
            for rel in sorted(relist, key=len):
                if rel in self.entries or rel in relist:
                    self._relist(rel)
            for rel in files:
                if self._under_roots(rel):
                    self._restat(rel)
            self.shown = {os.fsdecode(p): v for p, v in self.entries.items()}
            return self.shown


_TREES: dict[str, _Tree] = {}
_TREES_LOCK = threading.Lock()


def take(work_tree: Path, roots: frozenset[bytes]) -> dict[str, str]:
    """Every ignored file and folder at or under `roots` (the ignored paths the work tree's
    status named, folders without their trailing `/`), by path under the work tree, with its
    `lstat` key; the same dict as the last time while nothing changed (never to be
    changed by the caller)."""
    key = os.fspath(work_tree)
    with _TREES_LOCK:
        tree = _TREES.get(key)
        if tree is None:
            tree = _TREES[key] = _Tree(os.fsencode(work_tree))
    return tree.look(roots)


_PYC_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_MAX_SOURCE = 8 << 20


def compiled_honestly(work_tree: Path, rel: str) -> bool:
    """Whether the ignored file `rel` of the work tree is a `__pycache__` `.pyc` that runs
    nothing its source does not (your own Python wrote it, or removed it): gone, or exactly
    what this interpreter compiles from the source beside it, for that source's size and
    mtime as it is now (the header Python checks). One for another Python (its tag), or one
    that differs by a byte, is not judged so: it stays named."""
    folder, _, name = rel.rpartition("/")
    full = work_tree / rel
    if name == "__pycache__":  # the folder itself runs nothing: what it holds is judged
        return not os.path.islink(full)
    parent, _, cache = folder.rpartition("/")
    if cache != "__pycache__" or not name.endswith(".pyc"):
        return False
    if not os.path.lexists(full):
        return True  # removed: nothing runs from it
    stem, _, rest = name[: -len(".pyc")].partition(".")
    tag, _, opt = rest.partition(".")
    if tag != sys.implementation.cache_tag or opt not in ("", "opt-1", "opt-2"):
        return False
    source = work_tree / parent / f"{stem}.py" if parent else work_tree / f"{stem}.py"
    try:
        return _matches(full, source, 0 if not opt else int(opt[-1]))
    except (OSError, ValueError, SyntaxError, OverflowError, MemoryError, RecursionError):
        return False


def _matches(pyc: Path, source: Path, optimize: int) -> bool:
    with os.fdopen(os.open(pyc, _PYC_READ), "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return False
        data = fh.read(_MAX_SOURCE * 4 + 1)
    with os.fdopen(os.open(source, _PYC_READ), "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_SOURCE:
            return False
        text = fh.read(_MAX_SOURCE + 1)
    if len(data) < 16 or data[4:8] != b"\0\0\0\0":  # timestamp-based only (no hash check)
        return False
    code = compile(text, os.fspath(source), "exec", dont_inherit=True, optimize=optimize)
    made = external._code_to_timestamp_pyc  # type: ignore[attr-defined]
    want = made(code, int(st.st_mtime), st.st_size)
    return bytes(want) == data
