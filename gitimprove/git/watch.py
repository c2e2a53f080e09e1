"""What the loop watches while an agent works: the user's repository and the run's own refs.

`RepoState` is a snapshot of what an agent must never change in the user's repository: every
ref that is not the loop's own, HEAD, `.git/config` (and `config.worktree`), every other file
of the git directory but its objects, refs and index (hooks, info/, MERGE_HEAD, shallow, the
reflogs, linked worktrees; by name, size and times) and a `core.hooksPath` folder, the object
alternates, and, for every work tree of the repository (linked worktrees too), its status
with the `lstat` of every path the status names and its index's entries (what the status
trusts: a flag or a forged `lstat` hides a file from it).
`changes` lists what differs between two.

Not every difference stops the run: `WATCH` below classifies each path, with the reason, as
`read` (the harness reads it: any change stops the run), `user` (the user's own things an agent
could hurt: a change stops the run when the agent can reach the repository, that is without
the sandbox; with it the agent cannot, so only the user made it), `log` (reflogs: growing and
new ones are the user's git at work, a shrunk, replaced or deleted one stops like `user`) and
`background` (what the user's own git writes and neither the harness nor a later git command
takes as something to merge or go back to, such as COMMIT_EDITMSG or gc.log: never stops).
Remote-tracking refs, FETCH_HEAD and ORIG_HEAD are `user`: an agent that moved them would have
the user's next pull, merge or reset take its commit. See
docs/integrity.md ("The .git watch").

`forged_notes` tells whether the notes ref, moved by someone other than the harness, now holds
lines of the run that only the harness may write.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import json
import os
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from gitimprove.errors import GitImproveError
from gitimprove.git import gitfiles, objectstore, refs, witness
from gitimprove.git import ignored as ignored_files
from gitimprove.git.repo import RefMoved, Repo, update_refs
from gitimprove.git.status import (
    Index,
    ignored_paths,
    index_lies,
    index_state,
    work_tree_status,
)
from gitimprove.util import inodes, written
from gitimprove.util.clockset import Watch
from gitimprove.util.files import atomic_write, open_state, read_state, state_kind
from gitimprove.util.keys import KEY_FILE, key_problem, restore_key

# gitimprove's own state files under `<git-common-dir>/improve/`: each must be a regular file
# (or absent); a FIFO there would hang whoever reads it, a folder would break its writes
STATE_FILES = (KEY_FILE, witness.FILE, "integrity.jsonl", "hooks.log")


def _own(name: str) -> bool:
    """The loop's own refs: watched apart, against what gitimprove wrote (git/witness.py)."""
    return name == refs.NOTES or name.startswith((refs.RUN_BRANCH_PREFIX, "refs/improve/"))


def _file_state(path: Path) -> str | None:
    """A file's identity without reading it: a write always moves its ctime (which no
    program can set back), so mode, size, inode, mtime and ctime tell every change."""
    try:
        st = path.lstat()
        if os.path.islink(path):
            return f"link:{os.readlink(path)}:{st.st_ctime_ns}"
    except OSError:
        return None
    return f"{st.st_mode:o}:{st.st_size}:{st.st_ino}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def _tree_states(root: Path, label: str, out: dict[str, str | None]) -> None:
    if not root.is_dir() or root.is_symlink():
        out[label] = _file_state(root)
        return
    todo = [root]  # not os.walk: it recurses (a planted tree of any depth)
    while todo:
        folder = todo.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            full = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                todo.append(full)
            else:
                out[f"{label}/{full.relative_to(root)}"] = _file_state(full)


# Paths of the git directory the snapshot leaves out: objects (git checks what it reads; the
# alternates are watched above), gitimprove's own folder, refs (compared by value, the loop's
# own against what it wrote), the index (the work tree's status shows what it stages) and
# lock files (a git command of the user's at the wrong moment).
_SKIP_TOP = {"objects", "improve", "refs", "packed-refs", "index", "HEAD", "config"}
_OWN_LOGS = ("logs/refs/heads/improve/", "logs/refs/notes/", "logs/refs/improve/")


def _git_dir_states(common: Path, out: dict[str, str | None], refs_now: set[str]) -> None:
    """Every other file and folder of the git directory by name, size and times (no reading):
    MERGE_HEAD, MERGE_MSG, shallow, the reflogs, a linked worktree's HEAD, hooks, info/…
    A file or folder of `logs/` that is the reflog of no ref (`refs_now`, and `HEAD`) is
    labelled apart (`NO_REF`): git writes a reflog only with its ref, so a new one there is
    not git at work but something left for later code to read."""
    todo = [("", common)]
    while todo:
        prefix, folder = todo.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            rel = prefix + entry.name
            if (not prefix and entry.name in _SKIP_TOP) or entry.name.endswith(".lock"):
                continue
            if entry.name == "index" or rel.startswith(_OWN_LOGS) or rel + "/" in _OWN_LOGS:
                continue
            folder_entry = entry.is_dir(follow_symlinks=False)
            orphan = rel.startswith("logs/") and not _reflog_of_a_ref(
                rel[5:], folder_entry, refs_now
            )
            label = f".git/{rel}{'/' if folder_entry else ''}{NO_REF if orphan else ''}"
            if folder_entry:
                out[label] = "folder"
                todo.append((rel + "/", Path(entry.path)))
            elif _is_reflog(rel) and not orphan:
                out[label] = _reflog_state(Path(entry.path))
            else:
                out[label] = _file_state(Path(entry.path))


NO_REF = " (no ref of that name)"

PACKED_ODD = ".git/packed-refs (git would not write it: "  # a FIFO there is gitfiles'

# git's own traits of a packed-refs header (refs/packed-backend.c), and its lines
_PACKED_TRAITS = {"peeled", "fully-peeled", "sorted"}
_PACKED_HEADER = b"# pack-refs with:"
_PACKED_BY_STATE: dict[str, tuple[str, str | None]] = {}
_MAX_PACKED = 64 << 20  # read and checked up to this size (a large monorepo's is ~100 MB)


def _packed_refs(repo: Repo) -> tuple[str | None, bool]:
    """What in `packed-refs` is not what git writes (or None), and whether git dies on it.
    Refs are compared by value, and libgit2 reads this file leniently, but git dies on a line
    it cannot read (`unexpected line`: every git command of the user's, and the harness's own
    `update-ref` that records the attempt); and a line git does read yet no ref needs — a
    trait of the header git does not know, a peeled line after a ref that is no annotated tag
    or naming another object, lines out of order — carries whatever later code reads from it.
    Read again only when its `lstat` moved."""
    path = repo.common_dir / "packed-refs"
    state = _file_state(path)
    if state is None or state.startswith("link:"):
        return None, False
    if int(state.split(":")[1]) > _MAX_PACKED:  # gitfiles.problems bounds it, not so low
        return None, False
    cached = _PACKED_BY_STATE.get(os.fspath(path))
    if cached is None or cached[0] != state:
        try:
            data = read_state(path)  # checked by gitfiles.problems: regular, bounded
        except OSError:
            return None, False
        cached = (state, _packed_odd(repo, data))
        _PACKED_BY_STATE[os.fspath(path)] = cached
    odd = cached[1]
    return odd, odd is not None and odd.endswith(_DIES)


_DIES = "git cannot read"


def packed_refs_dies(repo: Repo) -> str | None:
    """What in `packed-refs` git dies on (every git command fails), or None."""
    odd, dies = _packed_refs(repo)
    return odd if dies else None


def packed_refs_problem(repo: Repo, *, repair: bool = False) -> str | None:
    """What in `packed-refs` git would not write (for `doctor`), or None; with `repair` the
    file is written again as git writes it from the refs it holds."""
    odd, _ = _packed_refs(repo)
    if odd is not None and repair:
        path = repo.common_dir / "packed-refs"
        atomic_write(path, _packed_repaired(repo, read_state(path)))
    return odd


def _packed_odd(repo: Repo, data: bytes) -> str | None:
    """What in the bytes of a packed-refs file git would not have written, or None."""
    if data and not data.endswith(b"\n"):
        return f"an unterminated last line, which {_DIES}"
    last_name: bytes | None = None
    last_oid: str | None = None
    for number, line in enumerate(data.split(b"\n")[:-1] if data else [], 1):
        if number == 1 and line.startswith(_PACKED_HEADER):
            unknown = set(line[len(_PACKED_HEADER) :].decode("utf-8", "replace").split())
            if unknown - _PACKED_TRAITS:
                return f"line 1: a trait git does not know: {sorted(unknown - _PACKED_TRAITS)[0]}"
            continue
        if line.startswith(b"^"):
            peeled = line[1:].decode("ascii", "replace")
            if last_oid is None or not _is_oid(peeled) or _peel(repo, last_oid) != peeled:
                return f"line {number}: a peeled line that peels no annotated tag to it"
            last_oid = None  # one peeled line per ref
            continue
        oid, space, name = line.partition(b" ")
        text = oid.decode("ascii", "replace")
        if not space or not name or not _is_oid(text):
            return f"line {number}: a line {_DIES}"
        if last_name is not None and name <= last_name:
            return f"line {number}: out of order"
        last_name, last_oid = name, text
    return None


def _packed_repaired(repo: Repo, data: bytes) -> bytes:
    """`packed-refs` as git writes it from the refs it holds: the header with git's traits,
    each ref line git reads, in order and once, and its peeled line where it is an annotated
    tag (made anew: a peeled line found there is never trusted)."""
    records: dict[bytes, str] = {}
    for line in data.split(b"\n"):
        oid, space, name = line.partition(b" ")
        text = oid.decode("ascii", "replace")
        if space and name and _is_oid(text) and name not in records:
            records[name] = text
    out = [_PACKED_HEADER + b" peeled fully-peeled sorted \n"]
    for name in sorted(records):
        out.append(records[name].encode() + b" " + name + b"\n")
        peeled = _peel(repo, records[name])
        if peeled is not None:
            out.append(b"^" + peeled.encode() + b"\n")
    return b"".join(out)


def _is_oid(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def _peel(repo: Repo, oid: str) -> str | None:
    """What an annotated tag `oid` peels to (its last non-tag target), else None."""
    try:
        obj = repo.raw[oid]
        if obj.type != pygit2.enums.ObjectType.TAG:
            return None
        return str(obj.peel(None).id)
    except (KeyError, ValueError, pygit2.GitError):
        return None


def _reflog_of_a_ref(name: str, folder: bool, refs_now: set[str]) -> bool:
    """Whether `logs/<name>` is the reflog of a ref (or, a folder, holds one's)."""
    if folder:
        return name == "refs" or any(ref.startswith(name + "/") for ref in refs_now)
    return name == "HEAD" or name in refs_now


LOCK_LEFT = " (a lock file left on gitimprove's refs)"
_LOCK_SETTLE = 3.0  # seconds: git holds a ref's lock for milliseconds, a hook's flush too


def _own_locks(common: Path) -> dict[str, str | None]:
    """Lock files on the refs gitimprove writes (`refs/notes/improve.lock`, a run branch's,
    `refs/improve/…`, `packed-refs.lock`) still there after `_LOCK_SETTLE` seconds: nothing
    of git holds one that long, and while it is there every record of the run waits for it
    and then fails (an agent that left `refs/notes/improve.lock` had its attempt unrecorded
    and the run stopped a minute later). Each by name, under `LOCK_LEFT`."""
    found: list[Path] = []
    lock = common / "packed-refs.lock"
    if os.path.lexists(lock):
        found.append(lock)
    todo = [common / "refs" / "notes", common / "refs" / "heads" / "improve"]
    todo.append(common / "refs" / "improve")
    while todo:
        folder = todo.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                todo.append(Path(entry.path))
            elif entry.name.endswith(".lock"):
                found.append(Path(entry.path))
    out: dict[str, str | None] = {}
    for path in found:
        deadline = time.monotonic() + _LOCK_SETTLE
        while os.path.lexists(path) and time.monotonic() < deadline:
            try:
                age = time.time() - path.lstat().st_ctime
            except OSError:
                break
            if age >= _LOCK_SETTLE:
                break
            time.sleep(0.05)
        if os.path.lexists(path):
            out[f".git/{path.relative_to(common).as_posix()}{LOCK_LEFT}"] = "lock"
    return out


def _stray_refs(common: Path, out: dict[str, str | None], refs_now: set[str]) -> None:
    """The files and folders under `refs/` that hold no ref: refs are compared by value, and
    a file git cannot read as one (`refs/x` holding `1`), or an empty folder, is listed by
    nobody, yet later code can read it. A file by name, size and times, a folder by its name
    (an empty `refs/tags/` gets new times whenever a tag comes and goes), each under its path;
    a folder that holds a ref, a file that is one and a lock file are left to the refs."""
    todo = [("refs/", common / "refs")]
    while todo:
        prefix, folder = todo.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            rel = prefix + entry.name
            own = (rel + "/").startswith(_OWN_REFS[:2]) or rel == refs.NOTES
            if entry.name.endswith(".lock") or own:
                continue
            if entry.is_dir(follow_symlinks=False):
                if not any(ref.startswith(rel + "/") for ref in refs_now):
                    out[f".git/{rel}/"] = "folder"  # its times move with the user's refs
                todo.append((rel + "/", Path(entry.path)))
            elif rel not in refs_now:
                out[f".git/{rel}"] = _file_state(Path(entry.path))


# what the peeled (`^`) lines of packed-refs say, by the file's `lstat`: read again only when
# it moved (git writes them with the refs, `git pack-refs`; the refs' own values are compared
# apart, by value)
_PEELED: dict[str, tuple[str, str | None]] = {}


def _peeled_state(repo: Repo, path: Path) -> str | None:
    """None when every peeled line of packed-refs names what its tag really peels to (or
    there is none: the user's own `git pack-refs` or `gc` changes nothing here); else the
    first ref whose line lies (`git show-ref -d`, `describe` and `log --decorate` trust the
    line, not the tag)."""
    state = _file_state(path)
    if state is None or state.startswith("link:"):
        return None
    cached = _PEELED.get(os.fspath(path))
    if cached is not None and cached[0] == state:
        return cached[1]
    verdict: str | None = None
    try:
        data = read_state(path)  # checked before: regular, within its kind's limit
    except OSError:
        return None
    name, target = b"", b""
    for line in data.splitlines():
        if line.startswith(b"^") and target:
            try:
                obj = repo.raw[target.decode("ascii")]
                while isinstance(obj, pygit2.Tag):
                    obj = repo.raw[obj.target]
                peeled = str(obj.id)
            except (KeyError, ValueError, UnicodeDecodeError, pygit2.GitError):
                continue  # an object that is gone: the object store's watch names that
            if line[1:].strip().decode("ascii", "replace") != peeled:
                verdict = f"a peeled line that lies: {name.decode('utf-8', 'replace')}"
                break
        elif not line.startswith(b"#"):
            target, _, name = line.partition(b" ")
    _PEELED[os.fspath(path)] = (state, verdict)
    return verdict


def _is_reflog(rel: str) -> bool:
    return rel.startswith("logs/") or (rel.startswith("worktrees/") and "/logs/" in rel)


# a reflog's content digest by its `lstat`: `git gc` (`reflog expire`) writes every reflog
# anew, the same lines in a new file less those past `gc.reflogExpire`; read again only when
# the `lstat` moved. The lines of each digest seen, for a reflog up to `_KEPT_REFLOG` bytes.
_REFLOGS: dict[str, tuple[str, str]] = {}
_REFLOG_LINES: dict[str, list[bytes]] = {}
_MAX_REFLOG = 64 << 20
_KEPT_REFLOG = 1 << 20


def _reflog_state(path: Path) -> str | None:
    """`_file_state` and, for a regular file within bounds, the digest of its bytes."""
    state = _file_state(path)
    if state is None or state.startswith("link:"):
        return state
    key = os.fspath(path)
    cached = _REFLOGS.get(key)
    if cached is not None and cached[0] == state:
        return f"{state}:{cached[1]}"
    digest = "-"
    try:
        if int(state.split(":")[1]) <= _MAX_REFLOG:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as f:
                if stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    data = f.read(_MAX_REFLOG)
                    digest = hashlib.sha256(data).hexdigest()[:20]
                    if len(data) <= _KEPT_REFLOG and len(_REFLOG_LINES) < 10_000:
                        _REFLOG_LINES[digest] = data.splitlines()
    except (OSError, ValueError):
        digest = "-"
    _REFLOGS[key] = (state, digest)
    return f"{state}:{digest}"


def _flag_states(common: Path, out: dict[str, str | None]) -> None:
    """The file-system flags (`chattr +i`, `+a`) on what the harness writes in the git
    directory — the folder itself, `objects/` and its folders, the folders of `refs/` and the refs gitimprove writes, `packed-refs`, `HEAD`,
    `config` and the reflogs' folders — each flagged one as a label of its own: an immutable
    `objects/` or `refs/notes/` stopped the run with an internal error, or with "other writers
    kept moving it". Only root (with CAP_LINUX_IMMUTABLE) can set them, so only a harness
    running as root looks."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    todo: list[tuple[str, Path, int]] = [("", common, 1)]
    for name, depth in (("objects", 1), ("refs", 64), ("logs", 64)):
        todo.append((name, common / name, depth))
    paths = [(n, common / n) for n in ("packed-refs", "HEAD", "config")]
    while todo:
        rel, folder, depth = todo.pop()
        paths.append((rel + "/" if rel else "", folder))
        if depth <= 0 or not rel:
            continue
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            sub = f"{rel}/{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                todo.append((sub, Path(entry.path), depth - 1))
            elif sub.startswith(_OWN_REFS) and entry.is_file(follow_symlinks=False):
                paths.append((sub, Path(entry.path)))  # the refs the harness writes
    settled = time.time_ns() - _SETTLED_NS
    for rel, path in paths:
        names = _flags_of(path, settled)
        if names:
            out[f".git/{rel} (file-system flag {', '.join(names)})"] = "flag"


# the flags last read of each path, by the `lstat` it had: setting a flag moves the change
# time, so a path with that `lstat` has the same flags, unless the system clock was set since
# (util/clockset.py: then every path is read again)
_FLAGS: dict[str, tuple[tuple[int, ...], list[str]]] = {}
_FLAGS_CLOCK: list[Watch] = []
_SETTLED_NS = 200_000_000  # a change time this much older than the look is not racing it


def _flags_of(path: Path, settled: int) -> list[str]:
    if not _FLAGS_CLOCK or _FLAGS_CLOCK[0].was_set() or not _FLAGS_CLOCK[0].armed:
        _FLAGS.clear()
        if _FLAGS_CLOCK:
            _FLAGS_CLOCK.pop().close()
        _FLAGS_CLOCK.append(Watch())
    key = os.fspath(path)
    try:
        st = os.lstat(key)
    except OSError:
        _FLAGS.pop(key, None)
        return []
    seen = (st.st_dev, st.st_ino, st.st_mode, st.st_ctime_ns)
    cached = _FLAGS.get(key)
    if cached is not None and cached[0] == seen:
        return cached[1]
    names = inodes.flag_names(path)
    if st.st_ctime_ns < settled:
        _FLAGS[key] = (seen, names)
    return names


_OWN_REFS = ("refs/improve/", "refs/heads/improve/", "refs/notes/")

READ, USER, LOG, BACKGROUND = "read", "user", "log", "background"

# label pattern (fnmatch, first match wins) -> (kind, why). Labels: a ref's name, `HEAD`,
# `.git/<path>` for a file of the git directory (a linked worktree's as
# `.git/worktrees/<name>/<path>`), `hooks:<path>` for a `core.hooksPath` folder, `work tree`.
WATCH: tuple[tuple[str, str, str], ...] = (
    ("refs/improve/*", READ, "gitimprove's refs: checked against what gitimprove wrote"),
    ("refs/heads/improve/*", READ, "run branches: checked against what gitimprove wrote"),
    ("refs/notes/improve", READ, "the experiment records"),
    (".git/config", READ, "improve.* settings the run pinned; commands git runs (fsmonitor)"),
    (".git/config.worktree", READ, "as .git/config"),
    (".git/objects/info/alternates", READ, "where the harness's git finds objects"),
    (".git/shallow", READ, "which parents the harness's history walk sees"),
    (".git/commondir", READ, "where the repository's git directory is"),
    ("refs/replace/*", READ, "replacement objects change what git shows the harness"),
    # what your next `git pull`, `merge`, `rebase` or `reset ORIG_HEAD` takes as upstream: an
    # agent without the sandbox could point it at a commit of its own (your fetch during an
    # agent call then stops a `none` run too: the price of telling them apart)
    ("refs/remotes/*", USER, "your remote-tracking branches: what pull and rebase merge"),
    ("refs/prefetch/*", USER, "as refs/remotes/*: `git maintenance` prefetch"),
    (".git/FETCH_HEAD", USER, "what `git pull` and `git merge FETCH_HEAD` merge"),
    (".git/packed-refs (peeled lines)", USER, "what `show-ref -d` and `describe` take a tag for"),
    (".git/ORIG_HEAD", USER, "what `git reset ORIG_HEAD` goes back to"),
    (".git/AUTO_MERGE", BACKGROUND, "merge writes it; never read"),
    (".git/COMMIT_EDITMSG", BACKGROUND, "`git commit` writes it; never read"),
    (".git/gc.log", BACKGROUND, "`git gc --auto` writes it; never read"),
    (".git/gc.pid", BACKGROUND, "`git gc` writes it; never read"),
    (".git/info/refs", BACKGROUND, "`git repack` (`gc`) writes it for dumb HTTP; never read"),
    (".git/worktrees/*/ORIG_HEAD", USER, "as .git/ORIG_HEAD"),
    (".git/worktrees/*/FETCH_HEAD", USER, "as .git/FETCH_HEAD"),
    (".git/worktrees/*/COMMIT_EDITMSG", BACKGROUND, "as .git/COMMIT_EDITMSG"),
    (".git/worktrees/*/AUTO_MERGE", BACKGROUND, "as .git/AUTO_MERGE"),
    (
        f"{PACKED_ODD}*",
        READ,
        "a line git would not write: git dies on it, or it carries what no ref holds",
    ),
    (f".git/*{LOCK_LEFT}", READ, "every record of the run waits for it, then fails"),
    (f".git/logs/*{NO_REF}", USER, "git writes a reflog only with its ref"),
    (".git/logs/*", LOG, "reflogs: git appends; the history of your branches"),
    (".git/worktrees/*/logs/*", LOG, "a linked worktree's reflog"),
    ("HEAD", USER, "your checked-out branch"),
    ("refs/heads/*", USER, "your branches"),
    ("refs/tags/*", USER, "your tags"),
    (".git/hooks/*", USER, "run by your next git command"),
    ("hooks:*", USER, "core.hooksPath: run by your next git command"),
    (".git/info/*", USER, "excludes, attributes, grafts"),
    ("work tree", USER, "your files"),
    (".git/index", USER, "a flag or a recorded lstat of an entry hides a file from `git status`"),
    # an improve.* setting of any git config file (~/.gitconfig, an included file, the XDG or
    # system one): the repository's own .gitimprove.toml yields to it in the next run
    ("git config *", READ, "gitimprove's settings in any git config file, ~/.gitconfig too"),
    ("*", USER, "anything else of your repository (other refs, MERGE_HEAD, a sequencer…)"),
)


def kind_of(label: str) -> tuple[str, str]:
    """(kind, why) of a watched path, from `WATCH`."""
    for pattern, kind, why in WATCH:
        if fnmatch.fnmatchcase(label, pattern):
            return kind, why
    return USER, ""


def _appended(before: str | None, after: str | None) -> bool:
    """A reflog that only grew (or was created): the same file, no shorter."""
    if before is None:
        return after is not None
    if after is None or before.startswith("link:") or after.startswith("link:"):
        return False
    old, new = before.split(":"), after.split(":")
    if len(old) > 5 and len(new) > 5 and _expired_only(old, new):
        return True  # written anew with its lines or some of them (`git gc`'s `reflog expire`)
    return old[2] == new[2] and int(new[1]) >= int(old[1])  # inode, size


def _expired_only(old: list[str], new: list[str]) -> bool:
    """Is the reflog now (state `new`) what `git reflog expire` (`git gc`) writes from the one
    it was (`old`): the same lines in a new file, or in a new file the lines it had less some
    older than `_EXPIRED` (git's shortest default, `gc.reflogExpireUnreachable`), none
    changed, none added, in their order? A reflog emptied in place still stops the run."""
    if old[5] == "-" or new[5] == "-":
        return False
    if old[5] == new[5]:
        return True
    was, now = _REFLOG_LINES.get(old[5]), _REFLOG_LINES.get(new[5])
    if was is None or now is None or old[2] == new[2]:  # git renames a new file into place
        return False
    rest, removed = iter(was), []
    for line in now:
        for kept in rest:
            if kept == line:
                break
            removed.append(kept)
        else:
            return False
    removed += list(rest)
    limit = time.time() - _EXPIRED
    return all(_reflog_time(line) < limit for line in removed)


_EXPIRED = 30 * 86400


def _reflog_time(line: bytes) -> float:
    """The time of a reflog line (`<old> <new> <who> <email> <time> <zone>\t<message>`)."""
    try:
        return float(line.split(b"\t", 1)[0].rsplit(b" ", 2)[1])
    except (IndexError, ValueError):
        return float("inf")


def stops(label: str, before: str | None, after: str | None, *, reachable: bool) -> bool:
    """Whether a change of `label` from `before` to `after` stops the run; `reachable` is
    whether the agent (and the measured code) could reach the repository (no sandbox)."""
    kind, _ = kind_of(label)
    if kind == READ:
        return True
    if kind == BACKGROUND:
        return False
    if kind == LOG and _appended(before, after):
        return False
    return reachable


@dataclass(frozen=True)
class RepoState:
    refs: dict[str, str]
    files: dict[str, str | None]
    status: bytes
    dirty: dict[str, str | None]
    own: dict[str, str] = field(default_factory=dict)  # gitimprove's refs (every run's)
    improve_dir: Path | None = None
    unsafe: list[str] = field(default_factory=list)  # files git would hang on (gitfiles.py)
    kept: dict[str, bytes] = field(default_factory=dict)  # HEAD and config, to put back
    witnessed: witness.Position | None = None  # the witness file before `own` was read
    objects: objectstore.Store | None = None  # loose objects and packs (git/objectstore.py)
    # each work tree's index entries (git/status.py), the one the harness runs in first
    indexes: dict[Path, Index] = field(default_factory=dict)
    common_dir: Path | None = None
    # what each work tree's ignore rules hide from its status, by path (git/ignored.py), when
    # taken: without the sandbox only
    ignored: dict[str, str] | None = None

    @classmethod
    def take(cls, repo: Repo, *, ignored: bool = False) -> RepoState:
        """The snapshot; when a file libgit2 or git would read is not a regular file within
        bounds (a FIFO for `.git/config`), only that (`unsafe`), nothing read. With `ignored`,
        the files the work trees' ignore rules hide from their status too (git/ignored.py)."""
        # the object store listed first (nothing of it read): its listing gives the kinds of
        # the loose objects' entries for the check of what git would hang on
        objects = objectstore.take(repo.common_dir / "objects")
        unsafe = gitfiles.problems(repo.git_dir, repo.common_dir, store=objects)
        if unsafe:
            if set(unsafe) & set(gitfiles.outside_problems()):
                repo.drop_user_config()  # libgit2 would read it at its next diff or commit
            return cls({}, {}, b"", {}, {}, repo.improve_dir, unsafe)
        kept = {}
        for name, base in (("HEAD", repo.git_dir), ("config", repo.common_dir)):
            try:
                kept[name] = read_state(base / name)  # checked above: regular, bounded
            except OSError:
                continue
        odd, dies = _packed_refs(repo)
        if dies:  # libgit2 fails on it too: named alone, as a file git would hang on
            return cls({}, {}, b"", {}, {}, repo.improve_dir, [f"{PACKED_ODD}{odd})"])
        found: dict[str, str] = {}
        own: dict[str, str] = {}
        listed: set[str] = set()
        witnessed = witness.position(repo.improve_dir)
        for name in repo.raw.references:
            try:
                ref = repo.raw.references[name]
            except (KeyError, pygit2.GitError, ValueError):
                continue
            listed.add(name)
            if not _own(name):
                found[name] = str(ref.target)
            elif witness.watched(name):
                own[name] = str(ref.target)
        files: dict[str, str | None] = {}
        git_dir, common = repo.git_dir, repo.common_dir
        for label, path in (
            ("HEAD", git_dir / "HEAD"),
            (".git/config", common / "config"),
            (".git/config.worktree", git_dir / "config.worktree"),
            (".git/objects/info/alternates", common / "objects" / "info" / "alternates"),
        ):
            files[label] = _file_state(path)
        _git_dir_states(common, files, listed)
        files[".git/packed-refs (peeled lines)"] = _peeled_state(repo, common / "packed-refs")
        if odd is not None:
            files[f"{PACKED_ODD}{odd})"] = "odd"
        _stray_refs(common, files, listed)
        files.update(_own_locks(common))
        _flag_states(common, files)
        # gitimprove's settings wherever git config keeps them: a new run takes them over the
        # committed .gitimprove.toml, so one an agent plants in ~/.gitconfig (or in a file
        # outside the repository that .git/config includes) would judge every later run
        for name, value in repo.fresh_config_items("improve.").items():
            digest = hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()
            files[f"git config {name}"] = f"value:{digest[:20]}"
        # what your own git reads outside the repository: `*.txt ident` in the XDG attributes
        # file, `core.autocrlf`, a smudge filter or `url.*.insteadOf` in ~/.gitconfig change
        # what `git switch improve/<run>` writes or what your next fetch takes
        core = repo.config_items("core.")
        named = {k: v for k, v in core.items() if k in ("core.attributesfile", "core.excludesfile")}
        for path, label in gitfiles.outside_files(named, [common / "config"]):
            files[label] = _file_state(path)
        hooks_path = core.get("core.hookspath")
        if hooks_path and repo.work_tree is not None:
            where = Path(os.path.expanduser(hooks_path))
            _tree_states(
                where if where.is_absolute() else repo.work_tree / where,
                f"hooks:{hooks_path}",
                files,
            )
        status, dirty = b"", {}
        indexes: dict[Path, Index] = {}
        hidden: dict[str, str] | None = {} if ignored else None
        for tree, index_file, prefix in _work_trees(repo):
            found_status, stuck = work_tree_status(tree, repo.common_dir)
            if stuck:
                return cls({}, {}, b"", {}, {}, repo.improve_dir, stuck)
            if hidden is not None:  # a `.pth` in `.venv/`, a `.pyc` in `__pycache__/`
                kept_out = ignored_files.take(tree, ignored_paths(tree))
                if not prefix and not hidden:  # the first work tree: shared, never copied
                    hidden = kept_out
                else:
                    hidden = {**hidden, **{prefix + rel: key for rel, key in kept_out.items()}}
            status += os.fsencode(prefix) + b"\0" + found_status + b"\0"
            for item in found_status.split(b"\0"):
                if len(item) > 3 and item[2:3] == b" ":
                    rel = os.fsdecode(item[3:])
                    dirty[prefix + rel] = _file_state(tree / rel)
            # what the status trusts: a flag or a forged lstat hides a changed file from it
            indexes[tree] = index_state(tree, index_file, repo.common_dir)
        for tree, index_file in _submodules(indexes):  # the status trusts their index too
            indexes[tree] = index_state(tree, index_file, repo.common_dir)
        return cls(
            found, files, status, dirty, own, repo.improve_dir, [], kept, witnessed, objects,
            indexes, repo.common_dir, hidden,
        )  # fmt: skip

    def changes(self, after: RepoState, *, reachable: bool = True) -> list[str]:
        """What differs from `self` in `after` and stops the run (`stops`: `reachable` is
        false in the sandbox), each named the way a person finds it."""
        out = list(after.unsafe)  # whatever the sandbox: the harness itself would hang
        if after.unsafe:
            return out
        for name in sorted(set(self.refs) | set(after.refs)):
            old, new = self.refs.get(name), after.refs.get(name)
            if old != new and stops(name, old, new, reachable=reachable):
                out.append(name)
        if after.improve_dir is not None:
            out += state_problems(after.improve_dir)
            out += witness.moved_outside(
                after.improve_dir, self.own, after.own, since=after.witnessed
            )
        for label in sorted(set(self.files) | set(after.files)):
            old, new = self.files.get(label), after.files.get(label)
            if old == "folder" and new is None and label.startswith(".git/refs/"):
                continue  # an empty folder under refs/ now holds a ref (named with the refs)
            if old != new and stops(label, old, new, reachable=reachable):
                out.append(label)
        if reachable and self.objects is not None and after.objects is not None:
            out += objectstore.lost(self.objects, after.objects)  # your history, not ours
        if (self.status != after.status or self.dirty != after.dirty) and reachable:
            paths = set(self.dirty) | set(after.dirty)
            named = sorted(p for p in paths if self.dirty.get(p) != after.dirty.get(p))
            out.append("work tree: " + (", ".join(named[:10]) if named else "status changed"))
        if (
            reachable
            and self.ignored is not None
            and after.ignored is not None
            and self.ignored is not after.ignored  # the same look: nothing moved
        ):
            paths = set(self.ignored) | set(after.ignored)
            named = sorted(p for p in paths if self.ignored.get(p) != after.ignored.get(p))
            here = next(iter(after.indexes), None)  # the work tree the harness runs in
            named = [p for p in named if not _compiled_honestly(here, p)]
            if named:
                how = [
                    f"{p} (added)"
                    if p not in self.ignored
                    else f"{p} (removed)"
                    if p not in after.ignored
                    else f"{p} (changed)"
                    for p in named[:10]
                ]
                shown = ", ".join(how) + (f" and {len(named) - 10} more" if len(named) > 10 else "")
                out.append(f"{IGNORED_LABEL}{shown}")
        for tree, index in after.indexes.items() if reachable else ():
            old_index = self.indexes.get(tree)
            if old_index is None or old_index is index:
                continue
            lies = old_index.changed(index)
            lies += index_lies(old_index, index, tree, after.common_dir)
            if lies:
                where = "" if tree == next(iter(after.indexes)) else f" of {tree}"
                out.append(f".git/index{where}: " + ", ".join(lies[:10]))
        return out


IGNORED_LABEL = "work tree (ignored files): "


def _compiled_honestly(here: Path | None, label: str) -> bool:
    """An ignored `.pyc` your own Python wrote or removed (git/ignored.py), in the work tree
    the harness runs in (`here`) or another one (`<folder>: <path>`)."""
    folder, sep, rel = label.partition(": ")
    if not (sep and os.path.isabs(folder)):  # a path of its own may hold ": "
        folder, rel = "", label
    tree = Path(folder) if folder else here
    return tree is not None and ignored_files.compiled_honestly(tree, rel)


def _submodules(indexes: dict[Path, Index]) -> list[tuple[Path, Path]]:
    """The checked-out submodules of these work trees (gitlink entries of their indexes), and
    theirs in turn, each with its index: `git status` reports a submodule's changes as its own
    index lets it see them (a `skip-worktree` flag there hides a rewritten file)."""
    out: list[tuple[Path, Path]] = []
    todo = [(tree, index) for tree, index in indexes.items()]
    while todo and len(out) < _MAX_SUBMODULES:
        tree, index = todo.pop()
        for path, head in index.entries.items():
            if head.split(b" ")[1:2] != [b"160000"]:
                continue
            sub = tree / os.fsdecode(path)
            dot_git = sub / ".git"
            try:
                if sub.is_symlink() or dot_git.is_symlink() or not dot_git.exists():
                    continue
                if dot_git.is_dir():
                    git_dir = dot_git
                else:
                    with os.fdopen(open_state(dot_git), "rb") as fh:
                        text = fh.read(4096).decode("utf-8", "surrogateescape")
                    where = Path(text.removeprefix("gitdir:").strip())
                    git_dir = where if where.is_absolute() else sub / where
            except OSError:
                continue
            found = index_state(sub, git_dir / "index", None)
            out.append((sub, git_dir / "index"))
            todo.append((sub, found))
    return out


_MAX_SUBMODULES = 1000


def _work_trees(repo: Repo) -> list[tuple[Path, Path, str]]:
    """Every work tree of the repository as (folder, its index, how a path of it is named):
    the one the harness runs in first (its paths as they are), then the main one and each
    linked worktree (`git worktree add`; their paths named `<folder>: <path>`): an agent
    without the sandbox can write any of them, your work in another branch."""
    out: list[tuple[Path, Path, str]] = []
    if repo.work_tree is not None:
        out.append((repo.work_tree, repo.git_dir / "index", ""))
    common = repo.common_dir
    known = _OTHER_TREES.get(common)
    if known is None:  # those of the run's start: one added later is named by its files
        known = _OTHER_TREES[common] = _other_work_trees(repo)
    return out + known


# the other work trees of each repository, found once per process: an agent that adds one
# (`.git/worktrees/<name>/gitdir` naming your home) is stopped by that file's change, never
# followed into a status of your whole home
_OTHER_TREES: dict[Path, list[tuple[Path, Path, str]]] = {}


def _other_work_trees(repo: Repo) -> list[tuple[Path, Path, str]]:
    common = repo.common_dir
    out: list[tuple[Path, Path, str]] = []
    others: list[tuple[Path, Path]] = []
    if common.name == ".git" and (common / "index").is_file():
        others.append((common.parent, common / "index"))
    for pointer in sorted((common / "worktrees").glob("*/gitdir")):
        try:  # checked by gitfiles.problems: a regular file within bounds
            where = Path(read_state(pointer).decode("utf-8", "surrogateescape").strip())
        except OSError:
            continue
        where = Path(os.path.normpath(where if where.is_absolute() else pointer.parent / where))
        with contextlib.suppress(OSError):  # a linked worktree's `.git` is a file naming it
            if where.name == ".git" and stat.S_ISREG(os.lstat(where).st_mode):
                others.append((where.parent, pointer.parent / "index"))
    seen = {os.path.realpath(repo.work_tree)} if repo.work_tree is not None else set()
    for tree, index_file in others:
        real = os.path.realpath(tree)
        if real not in seen and tree.is_dir() and not tree.is_symlink():
            seen.add(real)
            out.append((tree, index_file, f"{tree}: "))
    return out


def state_problems(improve_dir: Path) -> list[str]:
    """gitimprove's state files that are not what it left: the integrity key replaced (not the
    one this process pinned), a state file that is a FIFO, a folder, a link..."""
    out = []
    problem = key_problem(improve_dir)
    if problem is not None:
        out.append(f".git/improve/{problem}")
    for name in STATE_FILES:
        found = state_kind(improve_dir / name)
        if found is not None and not (name == KEY_FILE and problem is not None):
            out.append(f".git/improve/{name} (a {found}, not a regular file)")
    return out


def objects_hint(moved: list[str], changed: Sequence[str] = ()) -> str | None:
    """What to do when loose objects that were no regular files (a FIFO, a link to
    `/dev/zero`: git would hang on them), or the repository's config leading to such a file,
    were moved aside, or when a `.gitignore` of your work tree is named (`changed`); None for
    the usual hint."""
    objects = [p for p in moved if p.startswith(".git/objects/")]
    if not objects:
        if ".git/config" not in moved:
            return _rule_hint(changed)
        return (
            ".git/config was moved to .git/improve/quarantine/ and put back as it was before "
            "the agent, less any include that leads to the file named (git would hang on it): "
            "put that file back as a regular file, restore the include from the quarantined "
            "copy, then `git improve run --resume`; a sandbox ([agent] sandbox = "
            '"bwrap" or "landlock") keeps agents out of your repository'
        )
    return (
        f"{', '.join(objects[:3])}{' and more' if len(objects) > 3 else ''} moved to "
        ".git/improve/quarantine/ unread (no regular file: git would hang on it); that object "
        "of your history is gone: `git fsck` names what is missing, fetch it back from a "
        "clone or remote, delete the quarantined file, then `git improve run --resume`; a "
        'sandbox ([agent] sandbox = "bwrap" or "landlock") keeps agents out of your '
        "repository"
    )


def _rule_hint(changed: Sequence[str]) -> str | None:
    """What to do when a `.gitignore` in your work tree came or changed: a folder that ignores
    itself (`*`) is what a tool you ran makes (`python -m venv .venv`, uv, virtualenv) and
    what an agent hides a file in; the run cannot tell them apart."""
    named = [
        p
        for item in changed
        if item.startswith("work tree: ")
        for p in item.removeprefix("work tree: ").split(", ")
        if p.endswith(".gitignore")
        for p in [p.rpartition(": ")[2]]  # another work tree's path follows its name
    ]
    if named:  # a folder that ignores itself: what it hides is named with it
        folder = named[0].rpartition("/")[0] or "."
        return (
            f"{named[0]} came or changed in your work tree while the run went on. A folder "
            "whose own .gitignore holds `*`, as `python -m venv`, uv or virtualenv make, hides "
            "what it holds from git status, and an agent without the sandbox can hide a file "
            "so: if you made or changed it, `git improve run --resume` goes on; if not, look at "
            f"what `git status --ignored {folder}` shows and remove what you did not make "
            'first. A sandbox ([agent] sandbox = "bwrap" or "landlock") keeps agents out of '
            "your work tree"
        )
    if any(i.startswith(IGNORED_LABEL) for i in changed):
        return (
            "files your ignore rules hide from git status changed in your work tree while the "
            "run went on: Python runs a `.pth` of a virtualenv's site-packages at every start "
            "and a `__pycache__` `.pyc` in place of its source, Node a module of node_modules. "
            "If you made them (pip install, your own python or npm run), `git improve run "
            "--resume` goes on; if not, remove them first (or the whole folder, then install "
            'again). A sandbox ([agent] sandbox = "bwrap" or "landlock") keeps agents out of '
            "your work tree"
        )
    return None


def put_back(repo: Repo, before: RepoState, after: RepoState) -> list[str]:
    """Every gitimprove ref moved outside gitimprove between the two snapshots, put back where
    gitimprove last left it (a ref it never wrote is deleted), each only if it is still where
    the mover left it; the integrity key this process pinned too. Returns what was put back."""
    # packed-refs holds the user's refs: a line git would not write is dropped, never the file
    odd = [x for x in [*after.unsafe, *after.files] if x.startswith(PACKED_ODD)]
    done = []
    if odd and odd[0] not in before.files:
        with contextlib.suppress(OSError):
            path = repo.common_dir / "packed-refs"
            atomic_write(path, _packed_repaired(repo, read_state(path)))
            done.append(odd[0])
    unsafe = [x for x in after.unsafe if x not in odd]
    done += gitfiles.move_aside(repo.git_dir, repo.common_dir, repo.improve_dir, unsafe)
    left = [x for x in after.files if x.endswith(LOCK_LEFT) and x not in before.files]
    done += gitfiles.move_aside(repo.git_dir, repo.common_dir, repo.improve_dir, left)
    for label in after.files:  # a flag first: the harness must still write its records there
        rel, flagged, _ = label.partition(" (file-system flag ")
        if flagged and label not in before.files:
            with contextlib.suppress(OSError):
                inodes.clear_own_flags(repo.common_dir / rel.removeprefix(".git/"))
                done.append(label)
    for name, base in (("HEAD", repo.git_dir), ("config", repo.common_dir)):
        if f".git/{name}" in done and name in before.kept:  # as it was before the agent
            data = before.kept[name]
            if name == "config":  # less an include that leads to what git would hang on:
                # the file included was there before (outside the repository, the agent's
                # FIFO in its place), and libgit2 here reads it again at its next look
                data = gitfiles.drop_includes(data, gitfiles.leading_includes(after.unsafe))
            atomic_write(base / name, data)
    if restore_key(repo.improve_dir):
        done.append(f".git/improve/{KEY_FILE}")
    for name in STATE_FILES:  # a FIFO or folder in a state file's place: moved aside
        if name != KEY_FILE and state_kind(repo.improve_dir / name) is not None:
            aside = repo.improve_dir / "quarantine"
            try:
                os.makedirs(aside, exist_ok=True)
                moved = aside / f"{name}.{os.urandom(3).hex()}"
                os.replace(repo.improve_dir / name, moved)
                written.mark(moved)
            except OSError:
                continue
            done.append(f".git/improve/{name}")
    for name in witness.unexplained(
        repo.improve_dir, before.own, after.own, settle=0, since=after.witnessed
    ):
        known, value = witness.last_written(repo.improve_dir, name, before.own.get(name))
        now = after.own.get(name)
        if not known or value == now:
            continue
        try:
            update_refs(repo, [(name, value, now)], "gitimprove: put back a ref moved outside")
        except (RefMoved, GitImproveError):
            continue
        done.append(name)
    return done


def _lines(repo: Repo, oid: pygit2.Oid) -> set[str]:
    blob = repo.raw[oid]
    if not isinstance(blob, pygit2.Blob):
        return set()
    return set(blob.data.decode("utf-8", "replace").splitlines())


def _run_of(line: str) -> object:
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return obj.get("run") if isinstance(obj, dict) else None


def _names_commit(path: str) -> bool:
    name = path.replace("/", "")
    return len(name) == 40 and all(c in "0123456789abcdef" for c in name)


def forged_notes(
    repo: Repo, old: str | None, new: str | None, run: str, base: str | None = None
) -> list[str]:
    """Commits whose note changed between `old` (the harness's last transaction) and `new` in
    a way only a forger does: any line removed (notes only grow); on a commit of the run (one
    whose note holds a line of `run`, other than the run's `base`, which other runs may start
    from), any line added, whatever its `run` field (the harness wrote every line there, and
    `old` holds them all); elsewhere, a line of `run` added (only the harness writes those).
    A note that only moved to another fanout (plain `git notes` rewrites them) is no change."""
    if new is None:
        return ["(the notes ref was deleted)"]
    try:
        new_tree = repo.commit(new).tree
        old_tree = repo.commit(old).tree if old else repo.raw[repo.raw.TreeBuilder().write()]
    except Exception:
        return ["(the notes ref points at something that is not a commit)"]
    assert isinstance(old_tree, pygit2.Tree)
    before: dict[str, set[str]] = {}
    after: dict[str, set[str]] = {}
    for delta in old_tree.diff_to_tree(new_tree).deltas:
        if not _names_commit(delta.old_file.path) or not _names_commit(delta.new_file.path):
            continue  # not a note: the digests stored beside them (state/noteindex.py)
        if delta.status != pygit2.enums.DeltaStatus.ADDED:
            before[delta.old_file.path.replace("/", "")] = _lines(repo, delta.old_file.id)
        if delta.status != pygit2.enums.DeltaStatus.DELETED:
            after[delta.new_file.path.replace("/", "")] = _lines(repo, delta.new_file.id)
    out = []
    for commit in sorted(set(before) | set(after)):
        old_lines, new_lines = before.get(commit, set()), after.get(commit)
        if new_lines is None or not old_lines <= new_lines:
            out.append(commit)
            continue
        added = new_lines - old_lines
        of_run = commit != base and any(_run_of(line) == run for line in old_lines)
        if added and (of_run or any(_run_of(line) == run for line in added)):
            out.append(commit)
    return out
