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
(`<name>.prompt.md`, beside a clone of that name). The three folders themselves may carry
no extended attribute and no setuid, setgid or sticky bit. What is inside a checkout is
checked apart (git/checkout.py); what is inside a clone is the agent's.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gitimprove.git import witness
from gitimprove.git.checkout import PIDS
from gitimprove.git.watch import STATE_FILES
from gitimprove.util.alive import pid_alive
from gitimprove.util.files import remove_tree
from gitimprove.util.keys import KEY_FILE

__all__ = ["find", "remove", "watched"]

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
    {"cache", "locks", "work", "quarantine", "spool", "session-map", "watermarks", "backups"}
)
LOCKS = re.compile(r"(notes|memory|archive|sync|spool|run-[^/]+)\.lock")
_TEMP = re.compile(r"\.(?P<name>.+)\.\d+\.[0-9a-f]{8}\.tmp")  # util/files.atomic_write
_FOLDER = re.compile(r"(m-[0-9a-f]{16}|.+-[0-9a-f]{8})(\.trash)?")
_PID = re.compile(rb"(\d+\n([^\n]*\n)?)?")  # empty while it is being written
_MARKS = stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX


def find(improve_dir: Path) -> list[str]:
    """Every stray, as `.git/improve/<path> (<why>)`."""
    out: list[str] = []
    for folder in ("", "locks", "work"):
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
    return sorted(out)


def _work_strays(work: Path) -> list[str]:
    entries = dict(_entries(work))
    out = []
    for name, st in entries.items():
        label = _label("work/" + name)
        if stat.S_ISDIR(st.st_mode) and _FOLDER.fullmatch(name):
            if f"{name}.pid" not in entries:
                out.append(f"{label} (a folder without the .pid file naming its process)")
            continue
        if stat.S_ISREG(st.st_mode) and name.endswith(".pid"):
            if not _pid_file(work / name):
                out.append(f"{label} (not a .pid file gitimprove writes, or not as it wrote it)")
            continue
        stem = name[: -len(".prompt.md")]
        if stat.S_ISREG(st.st_mode) and name.endswith(".prompt.md"):
            if not any(_FOLDER.fullmatch(n) and n.startswith(stem + "-") for n in entries):
                out.append(f"{label} (the program of no agent's workspace)")
            continue
        out.append(f"{label} ({_kind(st)} gitimprove does not write)")
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
    return pid_alive(pid)


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
    with contextlib.suppress(OSError):
        out += [f"extended attribute {name}" for name in os.listxattr(path)]
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
        if why.startswith("extended attribute "):
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


@contextmanager
def watched(improve_dir: Path, *, reachable: bool) -> Iterator[list[str]]:
    """Around code that could write the harness's folder (`reachable`: no sandbox): the
    strays it left are removed on the way out and listed in what is yielded. Strays there
    before are not its doing: they are left for `doctor` to name."""
    before = set(find(improve_dir)) if reachable else set()
    found: list[str] = []
    try:
        yield found
    finally:
        if reachable:
            now = [s for s in find(improve_dir) if s not in before]
            remove(improve_dir, now)
            found += now
