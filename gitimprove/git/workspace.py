"""Agent workspaces: a throwaway clone per attempt, and the tree hashed from its files.

The clone borrows the repository's objects (`git clone --shared`) and has no remote, so
whatever the agent's own git does stays in it. Its path has a random suffix: a resumed attempt
never reuses a folder a survivor of the old run might still hold open. `hash_workspace` reads
the files with a git directory of its own, so a deleted `.git`, a corrupt config or a
rewritten index in the clone changes nothing about what is hashed. Each file is written as
your own `git checkout` of the commit writes it (line ends by your settings and the commit's
`.gitattributes`, as a measurement checkout's: git/attributes.py), so the agent sees the CRLF
you see; the clone's index and the tree hashed from unchanged files hold the commit's blobs.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import re
import secrets
import stat
import struct
import tempfile
import threading
import unicodedata
import zlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from gitimprove.git import space
from gitimprove.git.attributes import Cleaner, LineEnds, cleaner, converter, line_ends, tree_reader
from gitimprove.git.checkout import (
    EXEC,
    LINK,
    META,
    Stat,
    _stat,
    blob_id,
    count,
    discard,
    materialize,
    scan,
    work_root,
    write_pid,
)
from gitimprove.git.listing import MAX_DEPTH, Listing, kind, list_files
from gitimprove.git.repo import Repo
from gitimprove.util import inodes, proc
from gitimprove.util.clockset import Watch

__all__ = [
    "Hashed",
    "agent_workspace",
    "checked_name",
    "fsck_refused",
    "gitmodules_name",
    "hash_workspace",
    "refused_name",
]


@dataclass
class Made:
    """An agent's workspace as the harness wrote it: its files as proved (`record`, the
    listing with every entry's `lstat`, `.git` not in it; `expected`, each file's mode and
    the id of the bytes written), and a watch of the clock armed before any of them was
    written. Each file is written as your `git checkout` writes it (line ends: git/attributes.py);
    `stored` holds the tree's blob id of each one written otherwise than its blob holds it."""

    path: Path
    commit: str
    tree: str
    record: dict[str, Stat]
    expected: dict[str, tuple[int, str]]
    clock: Watch
    stored: dict[str, str] = field(default_factory=dict)

    def proven(self, rel: str, st: os.stat_result) -> tuple[int, str] | None:
        """(mode, blob id) of the file at `rel`, when its `lstat` proves it holds what the
        harness wrote (no process of the agent left; the caller checks afterwards that the
        clock was not set, `clock.was_set`); else None."""
        want = self.expected.get(rel)
        if want is None:
            return None
        was = self.record.get(rel)
        if was is None or was[:META] != _stat(st)[:META]:
            return None
        return want[0], self.stored.get(rel, want[1])


class Workspaces:
    """Agents' workspaces kept after their attempt: the next attempt's is the most recent one,
    moved under its own fresh name once every process of the agent is gone, and brought back
    to the incumbent's tree (git/renew.py: whatever is not as the harness recorded it is
    thrown away, what the tree has there written anew; `.git` is always made anew)."""

    def __init__(self, limit: int = 1, release: Callable[[Path], None] | None = None) -> None:
        self.limit = limit
        self._held: list[Made] = []
        self._lock = threading.Lock()
        # told of a kept workspace before it is moved for reuse or removed (loop/siblings.py
        # watches one until then)
        self._release = release or (lambda path: None)

    def give(self, made: Made) -> None:
        with self._lock:
            self._held.append(made)
            extra = self._held[: max(0, len(self._held) - self.limit)]
            del self._held[: len(extra)]
        for old in extra:
            self._release(old.path)
            _throw(old.path)
            old.clock.close()

    def release(self, path: Path) -> None:
        """Tell the watcher of a workspace that it is about to go (`release` above)."""
        self._release(path)

    def take(self) -> Made | None:
        with self._lock:
            made = self._held.pop() if self._held else None
        if made is not None:
            self._release(made.path)
        return made

    def close(self) -> None:
        with self._lock:
            held, self._held = self._held, []
        for made in held:
            self._release(made.path)
            _throw(made.path)
            made.clock.close()


def _throw(path: Path) -> None:
    """Remove a folder of `work/` (in the background, its `.pid` file with it)."""
    discard(path)


@contextmanager
def agent_workspace(
    repo: Repo, commit: str, name: str, pool: Workspaces | None = None
) -> Iterator[Path]:
    """A throwaway workspace at `commit` with no remote, under `<name>-<random>` (`made`)."""
    with made_workspace(repo, commit, name, pool) as made:
        yield made.path


@contextmanager
def made_workspace(
    repo: Repo,
    commit: str,
    name: str,
    pool: Workspaces | None = None,
    lock: AbstractContextManager[Any] | None = None,
) -> Iterator[Made]:
    """The agent's workspace at `commit` under `<name>-<random>`, a fresh path every time:
    a kept one of `pool` brought to `commit` when one proves itself, else written anew; its
    `.git` is made by the harness (HEAD detached at `commit`, the repository's objects
    borrowed, no remote, an index matching the files). Kept in `pool` when the context ends
    without an error, else removed."""
    root = work_root(repo)
    path = root / f"{name}-{secrets.token_hex(4)}"
    pid_file = root / f"{path.name}.pid"
    write_pid(pid_file)
    made: Made | None = None
    ok = False
    try:
        with lock if lock is not None else contextlib.nullcontext():  # pygit2 objects
            made = _make(repo, commit, path, pool)
        yield made
        ok = True
    finally:
        if ok and pool is not None and made is not None:
            pool.give(made)
        else:
            if pool is not None:
                pool.release(path)
            discard(path)
            if made is not None:
                made.clock.close()


def _make(repo: Repo, commit: str, path: Path, pool: Workspaces | None) -> Made:
    """The workspace at `path`: one of `pool` renewed, else written anew; `.git` made."""
    made: Made | None = None
    obj = repo.raw[commit]
    assert isinstance(obj, pygit2.Commit)
    tree = str(obj.tree_id)
    ends = line_ends(repo)
    try:
        while pool is not None and made is None:
            old = pool.take()
            if old is None:
                break
            made = _renewed(repo, old, path, commit, tree, ends)
        if made is None:
            made = _fresh(repo, path, commit, tree, ends)
        _init_git(repo, made, ends)
    except OSError as exc:
        if made is not None:
            made.clock.close()
        if space.out_of_space(exc, repo.common_dir):
            raise space.NoSpace(repo.common_dir, "creating the agent's workspace") from None
        raise
    return made


def _renewed(
    repo: Repo, old: Made, path: Path, commit: str, tree: str, ends: LineEnds
) -> Made | None:
    """`old` moved to `path` and brought to `tree` (git/renew.py), or None (removed)."""
    from gitimprove.git.renew import move, renew

    root = path.parent
    stored = dict(old.stored)
    if old.clock.was_set() or inodes.mounts_under(old.path) or not move(old.path, path):
        _throw(old.path)
        old.clock.close()
        return None
    (root / f"{old.path.name}.pid").unlink(missing_ok=True)
    try:
        got = renew(
            repo,
            path,
            old.record,
            old.expected,
            old.tree,
            tree,
            largest=0,
            skip_compiled=False,
            convert=converter(repo, repo.raw[tree].peel(pygit2.Tree), ends),
            stored=stored,
        )
    except OSError as exc:
        if space.out_of_space(exc, repo.common_dir):
            raise
        got = [f"({exc.strerror})"]
    if isinstance(got, list):
        _set_aside(path)
        old.clock.close()
        return None
    count("renewed")
    return Made(path, commit, tree, got.snapshot, got.expected, old.clock, stored)


def _set_aside(path: Path) -> None:
    """Move a folder away from `path` (its name is the attempt's) and remove it."""
    trash = path.parent / f"t-{secrets.token_hex(4)}"
    write_pid(path.parent / f"{trash.name}.pid", "trash")
    os.rename(path, trash)
    discard(trash)


def _fresh(repo: Repo, path: Path, commit: str, tree: str, ends: LineEnds) -> Made:
    """Every file of `tree` written under `path` (compiled Python too: it is the agent's
    copy of the commit), proved as a measurement checkout is: listed, every file hashed from
    disk, listed again. A copy that does not prove itself is still the agent's workspace,
    with nothing recorded (the next attempt writes every file anew)."""
    clock = Watch()
    expected: dict[str, tuple[int, str]] = {}
    stored: dict[str, str] = {}
    obj = repo.raw[tree]
    assert isinstance(obj, pygit2.Tree)
    convert = converter(repo, obj, ends)
    materialize(repo, obj, path, expected, skip=False, convert=convert, stored=stored)
    first = scan(path)
    bad = any(rel not in first or blob_id(path / rel) != want for rel, want in expected.items())
    again = scan(path)
    if bad or any((again.get(r) or ())[:META] != (first.get(r) or ())[:META] for r in again):
        again = {".": again["."]} if "." in again else {}
    return Made(path, commit, tree, again, expected, clock, stored)


_CONFIG = (
    "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
    "\tlogallrefupdates = true\n"
)


def _init_git(repo: Repo, made: Made, ends: LineEnds) -> None:
    """The workspace's `.git`, written by the harness: HEAD detached at the commit, the
    repository's objects borrowed (as `git clone --shared` does), no remote, no hook, and an
    index that holds the commit's files with the `lstat` recorded (git status is clean). Its
    git converts line ends as yours does: your `core.autocrlf`, `core.eol` and
    `core.safecrlf`, `.git/info/attributes`, and the system and global attributes files
    (copied into `.git/info/`, which the sandbox leaves readable)."""
    git = made.path / ".git"
    for sub in ("objects/info", "objects/pack", "refs/heads", "refs/tags", "info"):
        (git / sub).mkdir(parents=True)
    objects = os.path.realpath(repo.common_dir / "objects")
    (git / "objects" / "info" / "alternates").write_text(objects + "\n", encoding="utf-8")
    (git / "HEAD").write_text(made.commit + "\n", encoding="utf-8")
    config = _CONFIG
    if not ends.plain() or ends.safecrlf != "warn" or ends.eol != "lf":
        config += (
            f"\tautocrlf = {ends.autocrlf}\n\teol = {ends.eol}\n\tsafecrlf = {ends.safecrlf}\n"
        )
    if ends.below.strip():
        (git / "info" / "global-attributes").write_bytes(ends.below)
        named = os.path.realpath(git / "info" / "global-attributes")
        quoted = named.replace("\\", "\\\\").replace('"', '\\"')
        config += f'\tattributesFile = "{quoted}"\n'
    if ends.above.strip():
        (git / "info" / "attributes").write_bytes(ends.above)
    (git / "config").write_text(config, encoding="utf-8")
    (git / "index").write_bytes(_index(made, _gitlinks(repo, made.tree)))


# the submodules of the last trees a workspace was made of (path -> commit id)
_LINKS: dict[str, dict[str, str]] = {}


def _gitlinks(repo: Repo, tree: str) -> dict[str, str]:
    """Every submodule of `tree` (an empty folder in the workspace; the index names it)."""
    if tree not in _LINKS:
        found: dict[str, str] = {}
        todo = [("", repo.raw[tree])]
        while todo:
            at, obj = todo.pop()
            assert isinstance(obj, pygit2.Tree)
            for entry in obj:
                if entry.type_str == "tree":
                    todo.append((f"{at}{entry.name}/", repo.raw[entry.id]))
                elif entry.type_str == "commit":
                    found[f"{at}{entry.name}"] = str(entry.id)
        if len(_LINKS) >= 8:
            _LINKS.clear()
        _LINKS[tree] = found
    return _LINKS[tree]


# index entries already built, by what they are made of (most are the same every attempt)
_ENTRIES: dict[tuple[str, tuple[int, str], str, tuple[int, ...] | None, int, int], bytes] = {}


def _index(made: Made, links: dict[str, str]) -> bytes:
    """A git index (version 2) of the recorded files: each entry with the `lstat` the
    harness recorded (a file not recorded gets none: git hashes it when it looks), and the
    submodules (`links`, as a clone that did not initialize them has them)."""
    uid = os.geteuid()
    gid = os.lstat(made.path).st_gid  # what every file made in the folder has
    out = bytearray()
    names = set(made.expected) | set(links)
    entries = sorted((rel.encode("utf-8", "surrogateescape"), rel) for rel in names)
    built: dict[tuple[str, tuple[int, str], str, tuple[int, ...] | None, int, int], bytes] = {}
    for raw, rel in entries:
        if rel in links:
            link = struct.pack(">10I", *([0] * 6), 0o160000, 0, 0, 0) + bytes.fromhex(links[rel])
            link += struct.pack(">H", min(len(raw), 0xFFF)) + raw
            out += link + b"\0" * (8 - len(link) % 8)
            continue
        st = made.record.get(rel)
        held = made.stored.get(rel, "")
        key = (rel, made.expected[rel], held, st[:META] if st is not None else None, uid, gid)
        entry = _ENTRIES.get(key)
        if entry is None:
            entry = _entry(raw, rel, made, uid, gid)
        built[key] = entry
        out += entry
    _ENTRIES.clear()  # only what the next attempt's index may take again
    _ENTRIES.update(built)
    data = b"DIRC" + struct.pack(">II", 2, len(entries)) + bytes(out)
    return data + hashlib.sha1(data).digest()


def _entry(raw: bytes, rel: str, made: Made, uid: int, gid: int) -> bytes:
    """One entry of the index (`_index`)."""
    mode, oid = made.expected[rel]
    oid = made.stored.get(rel, oid)  # the index holds the blob, not the converted bytes
    st = made.record.get(rel)
    m = 0o120000 if mode == int(LINK) else (0o100755 if mode == int(EXEC) else 0o100644)
    if st is None:
        times: tuple[int, ...] = (0, 0, 0, 0, 0, 0, 0)
        size = 0
    else:
        times = (st[3] // 10**9, st[3] % 10**9, st[2] // 10**9, st[2] % 10**9, st[6], st[4], m)
        size = st[1]
    head = struct.pack(">10I", *(v & 0xFFFFFFFF for v in (*times, uid, gid, size)))
    entry = head + bytes.fromhex(oid) + struct.pack(">H", min(len(raw), 0xFFF)) + raw
    return entry + b"\0" * (8 - len(entry) % 8)


# Code points HFS+ ignores in names (git's is_hfs_dotgit), so ".g\u200cit" is ".git" there.
_HFS_IGNORED = {
    0x200C,
    0x200D,
    0x200E,
    0x200F,
    0xFEFF,
    *range(0x202A, 0x202F),
    *range(0x206A, 0x2070),
}


@functools.lru_cache(maxsize=65536)
def refused_name(component: str) -> bool:
    """True for a path component git refuses to commit: `.git` in any case or disguise
    (HFS ignorable characters, NTFS short name `GIT~1`, trailing dots or spaces, a stream
    suffix), or a backslash."""
    if "\\" in component:
        return True
    name = "".join(c for c in component if ord(c) not in _HFS_IGNORED)
    name = unicodedata.normalize("NFC", name).casefold().split(":", 1)[0].rstrip(" .")
    return name in (".git", "git~1")


_GITMODULES = re.compile(r"\.gitmodules|gitmod~[1-4]|gi7eba~[0-9]+")
_GITATTRIBUTES = re.compile(r"\.gitattributes|gitatt~[1-4]|gi7d29~[0-9]+")


def _dotted(component: str) -> str:
    """A name as git compares it with its own files' (HFS ignorable characters dropped, case
    folded, an NTFS stream suffix and trailing dots or spaces taken off)."""
    name = "".join(c for c in component if ord(c) not in _HFS_IGNORED)
    return unicodedata.normalize("NFC", name).casefold().split(":", 1)[0].rstrip(" .")


@functools.lru_cache(maxsize=4096)
def gitmodules_name(component: str) -> bool:
    """True for a name git reads as `.gitmodules`, in any case or disguise (`GITMOD~1`, a
    trailing dot, a stream suffix: git's `is_ntfs_dotgitmodules`, `is_hfs_dotgitmodules`)."""
    return _GITMODULES.fullmatch(_dotted(component)) is not None


@functools.lru_cache(maxsize=4096)
def checked_name(component: str) -> str | None:
    """`.gitmodules` or `.gitattributes` for a name git's fsck reads as one (in any case or
    disguise) and checks the content of, else None."""
    name = _dotted(component)
    if _GITMODULES.fullmatch(name):
        return ".gitmodules"
    return ".gitattributes" if _GITATTRIBUTES.fullmatch(name) else None


def fsck_refused(name: str, content: bytes, blob: pygit2.Oid) -> str | None:
    """What git's fsck says of `content` as the file `name` (`.gitmodules`: a submodule URL
    or path git would read as an option, an `update = !command`, a name that climbs with
    `..`; `.gitattributes`: a line over 2,048 bytes), or None: git judges it itself
    (`index-pack --strict` on a pack of it and a tree naming it). Kept, such a file failed
    your `git fsck`, and a host that checks what is pushed refuses the branch."""
    size = len(blob.raw)
    if size not in (20, 32):
        return None
    digest = hashlib.sha1 if size == 20 else hashlib.sha256
    tree = b"100644 " + name.encode() + b"\0" + blob.raw
    pack = b"PACK" + struct.pack(">II", 2, 2)
    # the tree first: git 2.39 crashed on a pack of the blob first, outside a repository
    for kind_, data in ((2, tree), (3, content)):
        n = len(data)
        head = [(kind_ << 4) | (n & 15)]
        n >>= 4
        while n:
            head[-1] |= 0x80
            head.append(n & 0x7F)
            n >>= 7
        pack += bytes(head) + zlib.compress(data)
    pack += digest(pack).digest()
    with tempfile.TemporaryDirectory(prefix="gitimprove-fsck-") as folder:
        path = Path(folder) / "m.pack"
        path.write_bytes(pack)
        args = ["index-pack", "--strict", "-o", str(path.with_suffix(".idx")), str(path)]
        if size == 32:
            args.insert(1, "--object-format=sha256")
        res = proc.git(args, cwd=folder, isolated=True, timeout=60)
    if res.ok:
        return None
    said = [
        line[line.index(": git") + 2 :]
        for line in res.stderr.splitlines()
        if ": gitmodules" in line or ": gitattributes" in line
    ]
    return f"git refuses it: {said[0] if said else res.tail(200).strip()}"


@dataclass(frozen=True)
class Hashed:
    """The workspace's tree, and what had to be left out of it (with why)."""

    tree: str
    refused: list[str] = field(default_factory=list)  # names git refuses, nested repositories
    escaping: list[str] = field(default_factory=list)  # "link -> target" leaving the workspace


def _escapes(root: Path, full: Path) -> str | None:
    """Why the link at `full` does not resolve to a regular file or a folder inside the
    workspace, or None when it does."""
    target = os.readlink(full)
    if os.path.isabs(target):
        return "an absolute path"
    try:
        mode = os.stat(full).st_mode
    except OSError as exc:  # a loop (ELOOP), a dangling link (ENOENT)
        return f"it does not resolve: {exc.strerror}"
    real = Path(os.path.realpath(full))
    if real != root and root not in real.parents:
        return "outside the workspace"
    if (root / ".git") == real or (root / ".git") in real.parents:
        return "into the workspace's .git"
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return f"to {kind(mode)}"
    return None


def _read_capped(full: Path, cap: int) -> bytes | None:
    """The file's bytes, or None when it holds more than `cap` (never more is read)."""
    with open(full, "rb") as f:
        data = f.read(cap + 1)
    return None if len(data) > cap else data


_GONE = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def _blob(repo: Repo, data: bytes) -> pygit2.Oid:
    """The blob of `data`, written only when the repository lacks it: hashing in memory
    costs far less than a write that finds the object already there (most of a tree)."""
    oid = pygit2.hash(data)
    return oid if repo.raw.odb.exists(oid) else repo.raw.create_blob(data)


def _tracked_ignored(path: Path, known: Made, listed: list[bytes]) -> list[bytes]:
    """Files of the incumbent's tree (`known.expected`) on disk that the listing left out:
    ignored by a `.gitignore`. Not one below a link or a nested repository (git would not
    reach it either); each is judged as any listed file afterwards."""
    seen = set(listed)
    nested = tuple(raw for raw in listed if raw.endswith(b"/"))
    folders: dict[str, bool] = {"": True}

    def real_folder(rel: str) -> bool:
        if rel not in folders:
            parent, _, _ = rel.rpartition("/")
            try:
                is_dir = stat.S_ISDIR(os.lstat(os.path.join(path, rel)).st_mode)
            except OSError:
                is_dir = False
            folders[rel] = is_dir and real_folder(parent)
        return folders[rel]

    out = []
    for rel in known.expected:
        raw = os.fsencode(rel)
        if raw in seen or raw.startswith(nested) or not real_folder(rel.rpartition("/")[0]):
            continue
        if os.path.lexists(os.path.join(path, rel)):
            out.append(raw)
    return out


def _cleaner(repo: Repo, path: Path, known: Made | None) -> Cleaner:
    """What `git add` stores for each of the workspace's files in your repository: line ends
    by your settings and the `.gitattributes` files as git reads them to add a file (the
    workspace's own where it holds a regular file, else the commit's: git falls back to the
    index), the index holding the commit the workspace was made of (git/attributes.py)."""
    index = repo.raw[known.tree] if known is not None else None
    held = tree_reader(repo, index if isinstance(index, pygit2.Tree) else None)

    found: dict[str, bytes | None] = {}

    def read(rel: str) -> bytes | None:
        if rel not in found:
            full = os.path.join(path, rel)
            try:
                if stat.S_ISREG(os.lstat(full).st_mode):
                    found[rel] = _read_capped(Path(full), 1 << 20) or b""
                    return found[rel]
            except OSError:
                pass
            found[rel] = held(rel)
        return found[rel]

    return cleaner(repo, read, index if isinstance(index, pygit2.Tree) else None)


def hash_workspace(
    repo: Repo,
    path: Path,
    *,
    max_file: int = 100_000_000,
    max_tree: int = 1_000_000_000,
    known: Made | None = None,
) -> Hashed:
    """Hash the workspace's files (not ignored ones) into a tree in the repository. A file
    whose `lstat` proves it holds what the harness wrote there (`known`, `Made.proven`: the
    agent's processes are gone) is not read again: its blob is the one written.

    Each file holds what `git add` would store in your repository (line ends: `_cleaner`).
    Never fails because of what the agent did: a name git refuses, a nested repository, a
    link leaving the workspace, a file over `max_file` bytes or the files past `max_tree`
    bytes in all are left out of the tree and named in the result (no more than the cap of
    a file is ever read); so is a file git reads itself (a `.gitignore`...) that is not a
    regular file within `max_file`, removed before git lists the workspace (git/listing.py)."""
    total = 0
    files: dict[str, pygit2.Oid] = {}
    modes: dict[str, int] = {}
    escaping: list[str] = []
    root = Path(os.path.realpath(path))
    listing = (
        list_files(path, max_file)
        if path.is_dir() and not path.is_symlink()
        else Listing([], [], None)
    )
    listed, refused = listing.paths, listing.refused
    if known is not None and listing.failed is None:
        # a file of the incumbent's tree stays in the commit when a `.gitignore` the agent
        # wrote matches it, as git keeps a tracked file (`git add -A`): the listing, made with
        # an empty index, leaves every ignored file out, and `src/.gitignore` holding `*`
        # dropped all of `src/` from the commit
        listed += _tracked_ignored(path, known, listed)
    if listing.failed is not None:
        refused.append(f"(the workspace's files: {listing.failed})")
    if path.is_symlink():  # the workspace itself replaced by a link to somewhere else
        refused.append(f"{path.name} (the workspace folder was replaced by a link)")
    base = os.fspath(path)
    clean = _cleaner(repo, path, known)
    proven: set[str] = set()  # files taken as written, not read (`known`)
    for raw in listed:
        if raw.endswith(b"/"):
            refused.append(f"{raw.decode('utf-8', 'replace')} (a nested repository)")
            continue
        try:
            rel = raw.decode("utf-8")
        except UnicodeDecodeError:
            refused.append(f"{raw.decode('utf-8', 'backslashreplace')} (not UTF-8)")
            continue
        parts = rel.split("/")
        if len(parts) > MAX_DEPTH:  # every later walk of the tree stays shallow
            refused.append(f"{'/'.join(parts[:3])}/… (nested deeper than {MAX_DEPTH} folders)")
            continue
        if any(refused_name(part) for part in parts):
            refused.append(rel)
            continue
        named = next((checked_name(part) for part in parts[:-1] if checked_name(part)), None)
        if named is not None:
            refused.append(f"{rel} (in a folder named {named}: git refuses it)")
            continue
        try:
            try:  # one call, never following a link
                st = os.lstat(os.path.join(base, rel))
            except OSError as exc:
                if exc.errno in _GONE:  # listed, then removed (a deleted file): not in the tree
                    continue
                raise
            mode = st.st_mode
            same = known.proven(rel, st) if known is not None else None
            fits = st.st_size <= max_file and total + st.st_size <= max_tree
            if same is not None and stat.S_ISREG(mode) and fits:
                total += st.st_size
                files[rel] = pygit2.Oid(hex=same[1])
                modes[rel] = same[0]
                proven.add(rel)
                continue
            full = path / rel
            if stat.S_ISLNK(mode):
                if gitmodules_name(parts[-1]):
                    refused.append(f"{rel} (a link named .gitmodules: git refuses it)")
                    continue
                why = _escapes(root, full)
                if why is not None:
                    escaping.append(f"{rel} -> {os.readlink(full)} ({why})")
                    continue
                files[rel] = _blob(
                    repo, os.readlink(full).encode("utf-8", errors="surrogateescape")
                )
                modes[rel] = LINK
            elif stat.S_ISREG(mode):
                data = _read_capped(full, max_file)
                over = (
                    "scope.max_file_size"
                    if data is None
                    else "scope.max_tree_size"
                    if total + len(data) > max_tree
                    else None
                )
                if data is None or over is not None:
                    refused.append(f"{rel} (too large: over {over})")
                    continue
                stored = clean(rel, data)
                if isinstance(stored, str):
                    refused.append(f"{rel} ({stored})")
                    continue
                blob = _blob(repo, stored)
                named = checked_name(parts[-1])
                why = fsck_refused(named, stored, blob) if named is not None else None
                if why is not None:
                    refused.append(f"{rel} ({why})")
                    continue
                total += len(data)
                files[rel] = blob
                modes[rel] = EXEC if os.access(full, os.X_OK) else pygit2.enums.FileMode.BLOB
        except OSError as exc:
            refused.append(f"{rel} (unreadable: {exc.strerror})")
    if proven and known is not None and known.clock.was_set():  # no `lstat` proves anything
        unproven = Made(
            known.path, known.commit, known.tree, {}, known.expected, known.clock, known.stored
        )
        return hash_workspace(repo, path, max_file=max_file, max_tree=max_tree, known=unproven)
    if known is not None:
        _keep_submodules(repo, known.tree, files, modes)
    reuse = _clean_folders(repo, known, files, proven) if known is not None else None
    return Hashed(str(_build_tree(repo, files, modes, refused, reuse=reuse)), refused, escaping)


def _keep_submodules(
    repo: Repo, tree_id: str, files: dict[str, pygit2.Oid], modes: dict[str, int]
) -> None:
    """The incumbent's submodules (gitlinks) stay in the commit, as `git add -A` keeps them: the
    workspace holds no submodule's files, only the harness's empty folder in its place (a file
    the agent put at that path, or below it, wins and is judged by scope as any change)."""
    links = _gitlinks(repo, tree_id)  # cached: the incumbent's, the same every attempt
    if not links:
        return
    below = {rel.rpartition("/")[0] for rel in files}
    folders: set[str] = set()
    for folder in below:
        while folder and folder not in folders:
            folders.add(folder)
            folder = folder.rpartition("/")[0]
    for rel, oid in links.items():
        if rel not in files and rel not in folders:
            files[rel] = pygit2.Oid(hex=oid)
            modes[rel] = pygit2.enums.FileMode.COMMIT


def _clean_folders(
    repo: Repo, known: Made, files: dict[str, pygit2.Oid], proven: set[str]
) -> Callable[[str], pygit2.Oid | None] | None:
    """The incumbent's subtree for a folder whose files are all proven as the harness wrote
    them and are all there (nothing added, removed, left out or read): the tree a build
    would give it. None for any other folder, and for one of the incumbent's that holds
    anything but files and folders (a submodule) or an empty folder."""
    if known.clock.was_set():
        return None
    dirty: set[str] = set()

    def mark(rel: str) -> None:
        folder = rel.rpartition("/")[0]
        while folder and folder not in dirty:
            dirty.add(folder)
            folder = folder.rpartition("/")[0]

    for rel in files:
        if rel not in proven:
            mark(rel)
    for rel in known.expected:
        if rel not in files:
            mark(rel)
    inc = repo.raw[known.tree]
    assert isinstance(inc, pygit2.Tree)
    _odd_folders(repo, inc, "", dirty)

    def reuse(folder: str) -> pygit2.Oid | None:
        if folder in dirty:
            return None
        try:
            entry = inc[folder]
        except (KeyError, ValueError):
            return None
        return entry.id if entry.type_str == "tree" else None

    return reuse


def _odd_folders(repo: Repo, tree: pygit2.Tree, at: str, out: set[str]) -> bool:
    """Add to `out` every folder of `tree` holding a submodule or an empty folder (at any
    depth); True when `tree` itself is such a folder."""
    odd = len(tree) == 0
    for entry in tree:
        if entry.type_str == "tree":
            sub = repo.raw[entry.id]
            assert isinstance(sub, pygit2.Tree)
            if _odd_folders(repo, sub, f"{at}{entry.name}/", out):
                odd = True
        elif entry.type_str != "blob":
            odd = True
    if odd and at:
        out.add(at[:-1])
    return odd


def _build_tree(
    repo: Repo,
    files: dict[str, pygit2.Oid],
    modes: dict[str, int],
    refused: list[str],
    at: str = "",
    *,
    reuse: Callable[[str], pygit2.Oid | None] | None = None,
) -> pygit2.Oid:
    nested: dict[str, dict[str, pygit2.Oid]] = {}
    nested_modes: dict[str, dict[str, int]] = {}
    builder = repo.raw.TreeBuilder()
    for rel, oid in files.items():
        head, sep, rest = rel.partition("/")
        if sep:
            nested.setdefault(head, {})[rest] = oid
            nested_modes.setdefault(head, {})[rest] = modes[rel]
            continue
        try:
            builder.insert(head, oid, modes[rel])
        except (ValueError, pygit2.GitError):
            refused.append(at + head)
    for name, sub in nested.items():
        same = reuse(at + name) if reuse is not None else None
        try:
            if same is not None:
                builder.insert(name, same, pygit2.enums.FileMode.TREE)
                continue
            builder.insert(
                name,
                _build_tree(repo, sub, nested_modes[name], refused, f"{at}{name}/", reuse=reuse),
                pygit2.enums.FileMode.TREE,
            )  # fmt: skip
        except (ValueError, pygit2.GitError):
            refused.append(at + name + "/")
    return builder.write()
