"""What in `<git-common-dir>/improve/` gitimprove did not write there (a stray).

Without the sandbox, the code the metric and the guard run, and the agent, can write the
harness's own folder: a file left there for a later run to read carries a result from one run
to the next. Every name gitimprove creates there is known, and so is the state it leaves each
in; anything else is a stray (`find`), named in the attempt's `tampered` reason and removed
(`watched`), and `git improve doctor` lists what is there now.

Known: at the top, the state files, logs and folders below (and an atomic write's temporary
file of one of them); in `locks/`, the empty lock files of the locks gitimprove takes; in
`work/`, the measurement checkouts (`m-<16 hex>`), the agents' clones (`<name>-<8 hex>`), each
with the `.pid` file that names its process (alive; this process's own exactly as it wrote
it), either renamed away as `.trash` while it is removed, and the agents' programs
(`<name>.prompt.md`, beside a clone of that name); in `watch/`, the snapshots taken before
agent calls (git/pending.py: `<attempt>.json`, signed). The three folders themselves may carry
no extended attribute and no setuid, setgid or sticky bit. What is inside a checkout is
checked apart (git/checkout.py); what is inside a clone is the agent's.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from gitimprove.errors import GitImproveError
from gitimprove.git import witness
from gitimprove.git.checkout import PIDS
from gitimprove.git.pending import read_saved
from gitimprove.git.repo import held_here, hold_again
from gitimprove.git.watch import STATE_FILES
from gitimprove.state import signing
from gitimprove.util import flocks, inodes, written
from gitimprove.util.alive import pid_alive, runs_gitimprove
from gitimprove.util.clockset import Watch
from gitimprove.util.files import atomic_write, read_state, remove_tree
from gitimprove.util.keys import KEY_FILE, key_problem, load_key
from gitimprove.util.seal import sealed, unseal

__all__ = ["changed", "find", "late", "listing", "owning", "remove", "undo", "watched"]

TOP_FILES = frozenset(
    {
        KEY_FILE,
        witness.FILE,
        "integrity.jsonl",  # state/integrity.py
        "integrity.reviewed.jsonl",
        "hooks.log",
        "last-error.log",
        "flush.log",
        "session-summary.log",
        "measure-on-commit.log",
        "sync.log",
    }
)
TOP_FOLDERS = frozenset(
    {
        "cache",
        "locks",
        "work",
        "quarantine",
        "spool",
        "session-map",
        "watermarks",
        "backups",
        "watch",
    }
)
LOCKS = re.compile(r"(notes|memory|archive|sync|spool|run-[^/]+)\.lock")
_TEMP = re.compile(r"\.(?P<name>.+)\.\d+\.[0-9a-f]{8}\.tmp")  # util/files.atomic_write
_FOLDER = re.compile(r"(m-[0-9a-f]{16}|.+-[0-9a-f]{8})(\.trash)?")
_PID = re.compile(rb"(\d+\n([^\n]*\n)?)?")  # empty while it is being written
_WATCHED = re.compile(r"[A-Za-z0-9._-]+\.json")  # git/pending.py NAME
_MARKS = stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX


def find(improve_dir: Path) -> list[str]:
    """Every stray, as `.git/improve/<path> (<why>)`."""
    out: list[str] = []
    for folder in ("", "locks", "work", "quarantine", "backups"):
        path = improve_dir / folder if folder else improve_dir
        out += [f"{_label(folder)} ({why})" for why in _folder_marks(path)]
    for name, st in _entries(improve_dir):
        if name in TOP_FOLDERS and stat.S_ISDIR(st.st_mode):
            continue
        if name in STATE_FILES:  # any kind: one that is not a regular file stops the run
            continue  # (git/watch.py `state_problems`), as before
        temp = _TEMP.fullmatch(name)
        if stat.S_ISREG(st.st_mode) and (name in TOP_FILES or (temp and temp["name"] in TOP_FILES)):
            continue
        out.append(f"{_label(name)} ({_kind(st)} gitimprove does not write)")
    for name, st in _entries(improve_dir / "locks"):
        if not (LOCKS.fullmatch(name) and stat.S_ISREG(st.st_mode) and st.st_size == 0):
            out.append(f"{_label('locks/' + name)} (not an empty lock file of gitimprove's)")
    out += _work_strays(improve_dir / "work")
    out += _file_flags(improve_dir)
    out += _set_aside(improve_dir)
    for name, st in _entries(improve_dir / "watch"):  # git/pending.py
        if not (stat.S_ISREG(st.st_mode) and _WATCHED.fullmatch(name)):
            out.append(f"{_label('watch/' + name)} (not a snapshot gitimprove writes)")
    for folder in ("spool", "session-map", "watermarks"):  # what hooks write, by its form
        for name, st in _entries(improve_dir / folder):
            entry = Entry(st.st_mode, st.st_size, st.st_ino, st.st_nlink, 0, 0)
            if not _form(improve_dir, f"{folder}/{name}", None, entry, sealed_only=False):
                out.append(f"{_label(folder + '/' + name)} (not an entry gitimprove writes)")
    return sorted(out)


def _work_strays(work: Path) -> list[str]:
    """What in `work/` no gitimprove process left as it leaves it. A listing is no snapshot:
    another run writes a `.pid` file, then the folder it names, while this one is listed, so
    what the listing lacks is looked for again on disk before anything is named."""
    entries = dict(_entries(work))
    out = []
    for name, st in entries.items():
        label = _label("work/" + name)
        if stat.S_ISDIR(st.st_mode) and _FOLDER.fullmatch(name):
            if f"{name}.pid" not in entries and not os.path.lexists(work / f"{name}.pid"):
                out.append(f"{label} (a folder without the .pid file naming its process)")
            continue
        if stat.S_ISREG(st.st_mode) and name.endswith(".pid"):
            if not _pid_file(work / name):
                out.append(f"{label} (not a .pid file gitimprove writes, or not as it wrote it)")
            continue
        stem = name[: -len(".prompt.md")]
        if stat.S_ISREG(st.st_mode) and name.endswith(".prompt.md"):

            def ours(n: str, stem: str = stem) -> bool:
                return _FOLDER.fullmatch(n) is not None and n.startswith(stem + "-")

            if not any(map(ours, entries)) and not any(map(ours, _names(work))):
                out.append(f"{label} (the program of no agent's workspace)")
            continue
        out.append(f"{label} ({_kind(st)} gitimprove does not write)")
    return out


def _set_aside(improve_dir: Path) -> list[str]:
    """In `quarantine/`, what gitimprove moved there (of any kind: a FIFO, a folder, a link;
    never read) under the names it gives (`<name>.<6 hex>`, `key.<pid>.<6 hex>`, a loose
    object's name); in `backups/`, the copies `reflect --apply` keeps of the CLAUDE.md it
    changes: regular files of its name and size, with one link and no extended attribute."""
    out = []
    for name, _st in _entries(improve_dir / "quarantine"):
        if not _ASIDE.fullmatch(name):
            out.append(f"{_label('quarantine/' + name)} (not a name gitimprove sets aside under)")
    for name, st in _entries(improve_dir / "backups"):
        path = improve_dir / "backups" / name
        if not (
            _BACKUP.fullmatch(name)
            and stat.S_ISREG(st.st_mode)
            and st.st_size <= _KEEP_BYTES
            and st.st_nlink == 1
            and not inodes.link_marked(path)
        ):
            out.append(f"{_label('backups/' + name)} (not a backup `reflect` keeps)")
    return out


def _pid_file(path: Path) -> bool:
    """Whether a `.pid` file is as gitimprove leaves it: this process's exactly as it wrote it
    (or still empty, being written), another's naming a process alive now."""
    try:
        with open(path, "rb") as f:
            data = f.read(200)
    except OSError:
        return False
    found = _PID.fullmatch(data)
    if found is None:
        return False
    if not data:
        return True
    pid = int(data.split(b"\n", 1)[0])
    if pid == os.getpid():
        return PIDS.get(path.name) == data
    return pid_alive(pid) and _could_have_written(pid, path)


def _could_have_written(pid: int, path: Path) -> bool:
    """Whether the process `pid` can be the gitimprove process that wrote `path`: one that
    runs gitimprove (util/alive.py `runs_gitimprove`), started before the file was written (where `/proc` tells): by its
    ctime, which no program sets back, or its mtime when earlier."""
    if not runs_gitimprove(pid):
        return False
    try:
        ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
        boot = next(
            int(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime ")
        )
        st = os.lstat(path)
        written_at = min(st.st_mtime, st.st_ctime)  # a time set ahead: its change time
    except (OSError, ValueError, IndexError, StopIteration):
        return True  # not Linux, or another user's process: alive is all that is known
    started = boot + ticks / os.sysconf("SC_CLK_TCK")
    return started <= written_at + 2.0  # btime is whole seconds


def _folder_marks(path: Path) -> list[str]:
    out = []
    try:
        st = os.lstat(path)
    except OSError:
        return []
    if not stat.S_ISDIR(st.st_mode):
        return [f"a {_kind(st)}, not a folder"]
    if st.st_mode & _MARKS:
        out.append(f"mode {stat.S_IMODE(st.st_mode):o}")
    out += [f"extended attribute {name}" for name in inodes.xattr_names(path)]
    out += [f"file-system flag {name}" for name in inodes.flag_names(path)]
    return out


def _file_flags(improve_dir: Path) -> list[str]:
    """The file-system flags (`chattr +i`, `+a`: root only) on the files gitimprove writes in
    its folder — its records and logs, lock files, `.pid` files: an immutable `refs.witness`
    made every later witness line of the run fail to be written."""
    out = []
    for folder in ("", "locks", "work"):
        for name, st in _entries(improve_dir / folder if folder else improve_dir):
            if not stat.S_ISREG(st.st_mode):
                continue
            rel = f"{folder}/{name}" if folder else name
            out += [
                f"{_label(rel)} (file-system flag {n})"
                for n in inodes.flag_names(improve_dir / rel)
            ]
    return out


def _entries(folder: Path) -> list[tuple[str, os.stat_result]]:
    try:
        with os.scandir(folder) as it:
            found = list(it)
    except OSError:
        return []
    out = []
    for entry in found:
        with contextlib.suppress(OSError):
            out.append((entry.name, entry.stat(follow_symlinks=False)))
    return out


def _names(folder: Path) -> list[str]:
    """The names in `folder` now (a listing taken again)."""
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _kind(st: os.stat_result) -> str:
    if stat.S_ISDIR(st.st_mode):
        return "a folder"
    if stat.S_ISLNK(st.st_mode):
        return "a link"
    return "a file" if stat.S_ISREG(st.st_mode) else "a special file"


def _label(rel: str) -> str:
    return ".git/improve/" + rel if rel else ".git/improve"


def remove(improve_dir: Path, found: list[str]) -> None:
    """Remove the strays `find` named (what was set on a folder is taken off it), and set the
    three folders' times to now (a run could have set them to be read back)."""
    for item in found:
        label, _, why = item.rpartition(" (")
        rel = label[len(".git/improve/") :] if label != ".git/improve" else ""
        path = improve_dir / rel
        if why.startswith("file-system flag "):
            try:
                inodes.clear_own_flags(path)
            except inodes.FlagsStuck as exc:
                raise GitImproveError(
                    f"{label} carries a file-system flag gitimprove cannot clear ({why[:-1]})",
                    hint=f"clear it: `chattr -i -a {exc.filename}` (as root), then "
                    "`git improve run --resume`",
                ) from None
        elif why.startswith("extended attribute "):
            with contextlib.suppress(OSError):
                os.removexattr(path, why[len("extended attribute ") : -1], follow_symlinks=False)
        elif why.startswith("mode "):
            with contextlib.suppress(OSError):
                os.chmod(path, stat.S_IMODE(os.lstat(path).st_mode) & ~_MARKS)
        elif rel:
            remove_tree(path)
    for folder in (improve_dir, improve_dir / "locks", improve_dir / "work"):
        with contextlib.suppress(OSError):
            os.utime(folder)


# --- what changed during a watched window --------------------------------------------------

# the harness's own records there, which later decisions read: put back as they were before
# the window when anyone else changed them (the run stops naming one it cannot put back)
RECORDS = (KEY_FILE, witness.FILE, "integrity.jsonl", "integrity.reviewed.jsonl")
# logs any gitimprove process appends to (the user's hooks, a concurrent command)
LOGS = tuple(sorted(TOP_FILES - set(RECORDS)))
# locks other gitimprove processes take (a hook's spool, `log`/`sync`'s refs): made empty
OTHERS_LOCKS = re.compile(r"(notes|memory|archive|sync|spool)\.lock")
_KEEP_BYTES = 8 << 20  # what is kept of a record to check and put back
_LOG_TAIL = 64 << 10  # what is kept of a log: its end (anything appended is accepted anyway)
_MAX_ENTRIES = 20_000  # a listing stops there (a planted tree of any size costs no more)
_SPOOL = re.compile(r"[a-z]+__\d{4}__\d{2}__[0-9TZ]+-[A-Za-z0-9._-]+-[0-9a-f]{6}\.[a-z]+")
_BACKUP = re.compile(r"CLAUDE\.md\.[0-9T.]+Z\.[A-Za-z0-9._-]+")
_ASIDE = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}|[^/]+?\.(\d+\.)?[0-9a-f]{6}")
_OTHERS_TEMP = re.compile(r"\..+\.(?P<pid>\d+)\.[0-9a-f]{8}\.tmp")


@dataclass(frozen=True)
class Entry:
    """One entry of the folder as `lstat` shows it (and the bytes of a record or log)."""

    mode: int
    size: int
    ino: int
    nlink: int
    mtime: int
    ctime: int
    data: bytes | None = None
    offset: int = 0  # where `data` starts in the file (a log: its last `_LOG_TAIL` bytes)

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode)

    @property
    def is_file(self) -> bool:
        return stat.S_ISREG(self.mode)

    def same(self, other: Entry) -> bool:
        if self.is_dir:  # what is in a folder is judged entry by entry
            return other.is_dir and self.mode == other.mode and self.ino == other.ino
        return (self.mode, self.size, self.ino, self.nlink, self.mtime, self.ctime) == (
            other.mode,
            other.size,
            other.ino,
            other.nlink,
            other.mtime,
            other.ctime,
        )


Listing = dict[str, Entry]


def listing(improve_dir: Path) -> Listing:
    """Every entry of the folder by its path in it, except the view caches (git/caches.py)
    and what is inside a checkout or clone of `work/` (git/checkout.py, the agent's), with the
    bytes of the records and logs at the top; at most about `_MAX_ENTRIES` (`_listing`)."""
    return _listing(improve_dir)[0]


def _listing(improve_dir: Path) -> tuple[Listing, bool]:
    """`listing`, and whether it is whole: it stops once it holds `_MAX_ENTRIES` entries
    (every entry of the folder it is in is kept), leaving the folders it has not read yet."""
    out: Listing = {}
    todo = [""]
    while todo and len(out) < _MAX_ENTRIES:
        rel = todo.pop()
        try:
            with os.scandir(improve_dir / rel if rel else improve_dir) as it:
                found = list(it)
        except OSError:
            continue
        for item in found:
            name = f"{rel}/{item.name}" if rel else item.name
            try:
                st = item.stat(follow_symlinks=False)
            except OSError:
                continue
            data, offset = None, 0
            if not rel and item.name in LOGS and stat.S_ISREG(st.st_mode):
                offset = max(0, st.st_size - _LOG_TAIL)
                data = _pread(Path(item.path), offset, _LOG_TAIL)
            elif not rel and item.name in TOP_FILES and stat.S_ISREG(st.st_mode):
                data = _read(Path(item.path), st.st_size)
            out[name] = Entry(
                st.st_mode,
                st.st_size,
                st.st_ino,
                st.st_nlink,
                st.st_mtime_ns,
                st.st_ctime_ns,
                data,
                offset,
            )
            if stat.S_ISDIR(st.st_mode) and name != "cache" and rel != "work":
                todo.append(name)
    return out, not todo


def _read(path: Path, size: int) -> bytes | None:
    """The file's bytes when it is no larger than `_KEEP_BYTES` (its first ones with size 0)."""
    if size > _KEEP_BYTES:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        data = os.read(fd, _KEEP_BYTES)
        return data if len(data) < _KEEP_BYTES or size == 0 else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _mine(improve_dir: Path, rel: str, now: Entry) -> bool:
    """What this process left there (util/written.py); a checkout's or clone's folder is its
    own while the `.pid` file beside it is."""
    path = improve_dir / rel
    marked, value = written.state(path)
    if marked and (value == written.PENDING or not now.is_dir):
        return written.mine(path)
    if marked and value is not None:  # a folder it made: the same folder
        return now.is_dir and value.split(":")[2] == str(now.ino)
    folder, _, name = rel.rpartition("/")
    if folder == "work" and now.is_dir and _FOLDER.fullmatch(name):
        pid = improve_dir / "work" / f"{name}.pid"
        return written.mine(pid) and PIDS.get(pid.name) is not None
    return False


def _form(
    improve_dir: Path, rel: str, old: Entry | None, now: Entry, *, sealed_only: bool = True
) -> bool:
    """Whether a change of `rel` is one another gitimprove process provably makes: a log
    that only grew, a signed line added to the witness, a new spool entry, session or
    watermark of valid form, a new backup of `reflect`, a new empty lock of one it takes, its
    temporary file in flight."""
    folder, _, name = rel.rpartition("/")
    path = improve_dir / rel
    if now.is_dir and folder == "work":  # another run of this repository, alive
        return _another_run(improve_dir / "work", name)
    if now.is_dir:
        return (not folder and name in TOP_FOLDERS) and not (now.mode & _MARKS)
    if not now.is_file or now.nlink != 1 or inodes.link_marked(path):
        return False  # a hard link lets a file be written later from outside any window
    temp = _OTHERS_TEMP.fullmatch(name)
    if folder in ("spool", "watermarks", "watch") and temp and old is None:
        pid = int(temp["pid"])
        return (
            pid != os.getpid() and pid_alive(pid) and runs_gitimprove(pid) and now.size <= 1 << 20
        )
    if not folder and name == "last-error.log" and _pread(path, 0, 6) == b"argv: ":
        return now.size <= 1 << 20  # any gitimprove command that fails writes it anew
    if not folder and name in LOGS:
        return _grew(path, old, now)
    if not folder and name == witness.FILE:
        return _signed(improve_dir, now)
    if not folder and name == KEY_FILE:  # the first gitimprove process to sign makes it
        return old is None and 16 <= now.size <= 4096 and stat.S_IMODE(now.mode) == 0o600
    if folder == "locks":
        if old is not None or now.size != 0:
            return False
        return OTHERS_LOCKS.fullmatch(name) is not None or flocks.held([path])
    if folder == "work":  # another run of this repository at the same time, alive
        return _another_run(improve_dir / "work", name)
    if not folder and name == "integrity.jsonl":
        return _grew(path, old, now) and _signed_incidents(improve_dir, old, now)
    if folder == "spool":
        return (
            old is None
            and _SPOOL.fullmatch(name) is not None
            and _json(improve_dir, rel, 1 << 20, sealed_only=sealed_only)
        )
    if folder == "watch":  # another run's snapshot before its agent call (git/pending.py)
        return _WATCHED.fullmatch(name) is not None and _signed_json(improve_dir, rel, now)
    if folder == "session-map":
        return (
            old is None
            and now.size <= 4096
            and _one_line(improve_dir, rel, sealed_only=sealed_only)
        )
    if folder == "watermarks":
        return name.endswith(".json") and _json(improve_dir, rel, 64 << 10, sealed_only=sealed_only)
    if folder == "backups":  # `reflect --apply` keeps the CLAUDE.md it changes (memory/reflect)
        return old is None and _BACKUP.fullmatch(name) is not None and now.size <= _KEEP_BYTES
    return False


def _another_run(work: Path, name: str) -> bool:
    """A file or folder of `work/` that another gitimprove process alive now made: its `.pid`
    file (or, for a folder or program, the one beside it) names that live process."""
    if name.endswith(".prompt.md"):
        stem = name[: -len(".prompt.md")] + "-"
        return any(
            _FOLDER.fullmatch(p.name[:-4]) and p.name.startswith(stem) and _other(p)
            for p in work.glob("*.pid")
        )
    pid = work / (name if name.endswith(".pid") else f"{name}.pid")
    if name.endswith(".pid") and not _FOLDER.fullmatch(name[:-4]):
        return False
    return (name.endswith(".pid") or _FOLDER.fullmatch(name) is not None) and _other(pid)


def _other(pid_file: Path) -> bool:
    try:
        data = read_state(pid_file)[:200]
    except OSError:
        return False
    try:
        if not data or _PID.fullmatch(data) is None or os.lstat(pid_file).st_nlink != 1:
            return False
    except OSError:  # removed since it was read: its process is done with it
        return False
    pid = int(data.split(b"\n", 1)[0])
    return pid != os.getpid() and pid_alive(pid) and _could_have_written(pid, pid_file)


def _signed_incidents(improve_dir: Path, old: Entry | None, now: Entry) -> bool:
    """Lines added to the incident log are incidents signed with the repository's key."""
    key = load_key(improve_dir, create=False)
    if key is None or now.data is None:
        return False
    start = len(old.data) if old is not None and old.data is not None else 0
    for line in now.data[start:].decode("utf-8", "replace").split("\n")[:-1]:
        try:
            record = json.loads(line)
        except ValueError:
            return False
        if not isinstance(record, dict) or not signing.verify(record, key):
            return False
    return True


def _grew(path: Path, old: Entry | None, now: Entry) -> bool:
    """A log that only grew: the same file, the old bytes kept of it still where they were."""
    if old is None:
        return True
    if not old.is_file or old.ino != now.ino or now.size < old.size:
        return False
    if old.data is None:
        return True
    return _pread(path, old.offset, len(old.data)) == old.data


def _pread(path: Path, offset: int, size: int) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        return os.pread(fd, size, offset)
    except OSError:
        return None
    finally:
        os.close(fd)


def _signed(improve_dir: Path, now: Entry) -> bool:
    key = load_key(improve_dir, create=False)
    if key is None or now.data is None:
        return False
    lines = now.data.decode("utf-8", "replace").split("\n")
    for line in lines[:-1]:  # the last: empty, or an append being written now
        parts = line.split(" ")
        if len(parts) != 4 or parts[3] != key.mac(" ".join(parts[:3]), 24):
            return False
    return True


def _signed_json(improve_dir: Path, rel: str, now: Entry) -> bool:
    """A snapshot another gitimprove process wrote before its agent call (git/pending.py)."""
    key = load_key(improve_dir, create=False)
    return now.is_file and read_saved(improve_dir / rel, key) is not None


def _hook_file(improve_dir: Path, rel: str, *, sealed_only: bool) -> bytes | None:
    """What a hook wrote at `rel` without its seal line; None when a seal is wanted and it
    does not verify (no hook wrote it: util/keys.py)."""
    try:
        data = read_state(improve_dir / rel)
    except OSError:
        return None
    if sealed_only and not sealed(improve_dir, rel, data):
        return None
    return unseal(data)


def _json(improve_dir: Path, rel: str, limit: int, *, sealed_only: bool) -> bool:
    data = _hook_file(improve_dir, rel, sealed_only=sealed_only)
    try:
        return data is not None and len(data) <= limit and isinstance(json.loads(data), dict)
    except ValueError:
        return False


def _one_line(improve_dir: Path, rel: str, *, sealed_only: bool) -> bool:
    data = _hook_file(improve_dir, rel, sealed_only=sealed_only)
    if data is None:
        return False
    return data.endswith(b"\n") and data.count(b"\n") == 1 and b"\0" not in data


def changed(improve_dir: Path, before: Listing, after: Listing) -> dict[str, str]:
    """What changed from `before` to `after` that neither this process nor another gitimprove
    process provably made: path -> why."""
    out: dict[str, str] = {}
    for rel in sorted(set(before) | set(after)):
        old, now = before.get(rel), after.get(rel)
        if _stops(improve_dir, rel, now):
            continue
        if now is None:
            # removed by this process: it marked the path absent (a mark of a write it made
            # there earlier proves nothing about who removed it)
            marked, value = written.state(improve_dir / rel)
            ours = marked and value is None
            kept = ("/" not in rel and rel in TOP_FILES) or (
                _is_lock(rel) and held_here(improve_dir / rel)
            )
            if kept and old is not None and old.is_file and not ours:
                out[rel] = "removed"
            continue
        if old is not None and old.same(now) and (old.data == now.data):
            continue
        if _mine(improve_dir, rel, now) or _form(improve_dir, rel, old, now):
            continue
        if not _still(improve_dir / rel, now):  # gone since the listing (another run's
            continue  # checkout renamed away): what is there now is judged by the next one
        if old is None:
            out[rel] = f"{_kind(_stat(now))} gitimprove did not write there"
        elif old.is_dir and now.is_dir and old.ino == now.ino:
            out[rel] = f"mode {stat.S_IMODE(now.mode):o}"
        elif old.is_file and now.is_file and old.ino == now.ino:
            if old.data is None or now.data is None:
                out[rel] = "changed in place"
            else:
                out[rel] = "rewritten" if old.data != now.data else "touched"
        else:
            out[rel] = "replaced"
    return out


def _is_lock(rel: str) -> bool:
    """A run's lock file (`locks/run-<name>.lock`): held for the whole run, it is never
    removed by gitimprove while held (`doctor --repair` removes free ones only), and once
    removed it no longer keeps a second `run --resume` of the same run out. (The short locks,
    `notes.lock` and the like, are left out: `doctor --repair` may remove one the moment after
    it found it free, as another process takes it.)"""
    folder, _, name = rel.rpartition("/")
    return folder == "locks" and _RUN_LOCK.fullmatch(name) is not None


_RUN_LOCK = re.compile(r"run-[^/]+\.lock")


def _still(path: Path, entry: Entry) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return st.st_ino == entry.ino and stat.S_IFMT(st.st_mode) == stat.S_IFMT(entry.mode)


def _stops(improve_dir: Path, rel: str, now: Entry | None) -> bool:
    """A state file that stops the run instead (git/watch.py `state_problems`): the key no
    longer the one this run pinned, a FIFO, folder or link in a state file's place."""
    if rel == KEY_FILE:
        return key_problem(improve_dir) is not None
    return rel in STATE_FILES and now is not None and not now.is_file


def _stat(entry: Entry) -> os.stat_result:
    return os.stat_result((entry.mode, entry.ino, 0, entry.nlink, 0, 0, entry.size, 0, 0, 0))


def undo(improve_dir: Path, before: Listing, found: dict[str, str]) -> list[str]:
    """Put back what `changed` found: a record or log as it was before (a new file in its
    place), a lock's times, this process's `.pid` file as it wrote it; anything else new is
    removed. Returns the records that could not be put back."""
    lost = []
    for rel in sorted(found, key=lambda r: -r.count("/")):
        path = improve_dir / rel
        old = before.get(rel)
        folder, _, name = rel.rpartition("/")
        if rel == witness.FILE:
            # only its signed lines count: keep them all (a concurrent writer's too), in a
            # new file (a hard link to the old one is left behind)
            with contextlib.suppress(OSError):
                if os.path.isfile(path) and not os.path.islink(path):
                    for attr in inodes.xattr_names(path):
                        os.removexattr(path, attr, follow_symlinks=False)
                if witness.compact(improve_dir):
                    continue
        if not folder and name in TOP_FILES and old is not None:
            if old.data is None or old.offset:  # a log is read by no decision: named only
                if name in RECORDS:
                    lost.append(rel)
                continue
            with contextlib.suppress(OSError):
                if (os.path.lexists(path) and not os.path.isfile(path)) or os.path.islink(path):
                    remove_tree(path)
                atomic_write(path, old.data)  # a new file: a hard link to it is left behind
                os.chmod(path, stat.S_IMODE(old.mode))
                written.mark(path)
            continue
        if folder == "work" and name in PIDS and old is not None:
            with contextlib.suppress(OSError):
                remove_tree(path)
                atomic_write(path, PIDS[name])
            continue
        if old is not None and old.is_file and _is_lock(rel) and not os.path.lexists(path):
            with contextlib.suppress(OSError):  # made again, and held again if this run holds it
                hold_again(path)
            continue
        if old is not None and old.is_file and folder == "locks":
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                if stat.S_ISREG(st.st_mode) and st.st_ino == old.ino:
                    os.truncate(path, 0)
                    for attr in inodes.xattr_names(path):
                        os.removexattr(path, attr, follow_symlinks=False)
                    os.utime(path, ns=(old.mtime, old.mtime), follow_symlinks=False)
                    written.mark(path)
                    continue
        if old is not None and old.is_dir:
            continue  # a folder of its own: its marks are judged apart
        remove_tree(path)
        written.mark(path)
    return lost


@dataclass(eq=False)
class _Window:
    owner: str | None
    before: Listing
    marks: list[str]
    overlapped: set[_Window] = field(default_factory=set)
    blamed: list[str] = field(default_factory=list)
    open: bool = True


_OPEN: set[_Window] = set()
_LAST: dict[str, Listing] = {}  # improve folder -> the listing after the last window closed
_LATE: dict[str, list[str]] = {}  # owner -> strays found after its window closed
_JUDGE = threading.Lock()
_LOCAL = threading.local()


@contextmanager
def owning(owner: str) -> Iterator[None]:
    """Windows this thread opens inside belong to `owner` (an attempt: a candidate)."""
    before = getattr(_LOCAL, "owner", None)
    _LOCAL.owner = owner
    try:
        yield
    finally:
        _LOCAL.owner = before


def current_owner() -> str | None:
    """The owner this thread's windows belong to (`owning`), if any."""
    return getattr(_LOCAL, "owner", None)


def late(owner: str) -> list[str]:
    """Strays found after `owner`'s windows closed, written while one of them was open (with
    another's: the writer is unknown). A round keeps no candidate with any."""
    with _JUDGE:
        return list(_LATE.get(owner, ()))


def _label_all(found: dict[str, str]) -> list[str]:
    return [f"{_label(rel)} ({why})" for rel, why in sorted(found.items())]


def _judge(improve_dir: Path, before: Listing, marks: list[str]) -> tuple[list[str], Listing]:
    # a flag first: an immutable or append-only record cannot be put back
    flagged = [m for m in _marks(improve_dir) if m not in marks and "(file-system flag " in m]
    if flagged:
        remove(improve_dir, flagged)
    after, whole = _listing(improve_dir)
    found = changed(improve_dir, before, after)
    lost = undo(improve_dir, before, found)
    more = found
    while not whole and more:  # a listing stopped at its bound: what it left is judged now,
        after, whole = _listing(improve_dir)  # never taken for the next window's start
        more = {r: why for r, why in changed(improve_dir, before, after).items() if r not in found}
        lost += undo(improve_dir, before, more)  # (one that cannot be undone: found once)
        found.update(more)
    if lost:
        raise GitImproveError(
            "gitimprove's own records changed and could not be put back: "
            + ", ".join(_label(rel) for rel in lost),
            hint="check them, then `git improve doctor --repair` and `git improve run --resume`",
        )
    out = _label_all(found) + flagged
    now = [m for m in _marks(improve_dir) if m not in marks]
    if now:
        remove(improve_dir, now)
        out += now
    return out, listing(improve_dir) if out else after


def _marks(improve_dir: Path) -> list[str]:
    out = []
    for folder in ("", "locks", "work", "quarantine", "backups"):
        path = improve_dir / folder if folder else improve_dir
        out += [f"{_label(folder)} ({why})" for why in _folder_marks(path)]
    return out + _file_flags(improve_dir)


@contextmanager
def watched(improve_dir: Path, *, reachable: bool) -> Iterator[list[str]]:
    """Around code that could write the harness's folder (`reachable`: no sandbox): what
    changed there during it that neither this process nor another gitimprove process
    provably wrote is undone on the way out and listed in what is yielded. With windows of
    several attempts open at once (a tournament), a change is named in the one window open
    alone while it happened, else in every window that overlapped (`late` for those already
    closed). A change made while no window was open is named in the next one."""
    found: list[str] = []
    if not reachable:
        yield found
        return
    key = str(improve_dir)
    # a file's ctime proves it untouched only while the clock was not set (util/clockset.py)
    clock = Watch()
    with _JUDGE:
        before = listing(improve_dir)
        if not _OPEN and key in _LAST:  # nothing watched since the last window closed
            between = changed(improve_dir, _LAST[key], before)
            if between:
                undo(improve_dir, _LAST[key], between)
                found += [f"{s}, while nothing was watched" for s in _label_all(between)]
                before = listing(improve_dir)
        win = _Window(getattr(_LOCAL, "owner", None), before, _marks(improve_dir))
        for other in _OPEN:
            other.overlapped.add(win)
            win.overlapped.add(other)
        _OPEN.add(win)
    try:
        yield found
    finally:
        with _JUDGE:
            _OPEN.discard(win)
            win.open = False
            try:
                now, last = _judge(improve_dir, win.before, win.marks)
                if clock.was_set():
                    now.append(
                        f"{_label('')} (the system clock was set while it was watched: "
                        "no ctime there proves a file untouched any more)"
                    )
            finally:
                clock.close()
                found += win.blamed
            if now and win.overlapped:
                for other in win.overlapped:
                    if other.open:
                        other.blamed += now
                    elif other.owner is not None and other.owner != win.owner:
                        _LATE.setdefault(other.owner, []).extend(now)
            found += now
            _LAST[key] = last
