"""A local spool of memory entries written by hot hooks without pygit2.

A hook writes one file per entry to `<git-common-dir>/improve/spool/` (temp file + rename),
readable by the user alone (the folder 0700, the files 0600): a hook does not mask, so an
entry may hold a secret until the flush masks it (`deferred.py`).
`flush` moves every spooled entry into the memory branch in one compare-and-swap commit and
only then deletes the files; entry paths come from the file names, so a flush interrupted
after the commit adds nothing when it runs again.
"""

from __future__ import annotations

import json
import os
import time

from gitimprove.util.files import atomic_write, read_state
from gitimprove.util.reader import scrub
from gitimprove.util.seal import seal, unseal

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass

SPOOL = "spool"
SEP = "__"  # "/" in the entry path is stored as "__" in the file name


def spool_dir(improve_dir: str) -> str:
    return os.path.join(improve_dir, SPOOL)


def entry_name(kind: str, ext: str, stamp: str, host: str) -> str:
    compact = stamp.replace("-", "").replace(":", "").replace(".", "")
    return f"{kind}/{stamp[:4]}/{stamp[5:7]}/{compact}-{host}-{os.urandom(3).hex()}.{ext}"


def put(improve_dir: str, path: str, data: dict[str, object]) -> str:
    """Spool one entry destined for `path` on the memory branch; returns the path.

    The entry is whole or absent: text that is not valid Unicode (a lone surrogate from a
    payload) becomes U+FFFD rather than failing the write, and a temp file never stays."""
    folder = spool_dir(improve_dir)
    if not os.path.isdir(folder):
        os.makedirs(folder, mode=0o700, exist_ok=True)
    name = path.replace("/", SEP)
    text = scrub(json.dumps(data, sort_keys=True, ensure_ascii=False)) + "\n"
    # 0600; its temp name starts with "."; sealed: the watch of the folder tells it from a
    # file of the same form that no hook wrote (util/keys.py)
    atomic_write(os.path.join(folder, name), seal(improve_dir, f"{SPOOL}/{name}", text.encode()))
    return path


def pending(improve_dir: str) -> list[tuple[str, str]]:
    """(file, entry path) of every spooled entry, oldest name first."""
    folder = spool_dir(improve_dir)
    try:
        names = sorted(n for n in os.listdir(folder) if not n.startswith("."))
    except FileNotFoundError:
        return []
    return [(os.path.join(folder, n), n.replace(SEP, "/")) for n in names]


def read_entry(file: str) -> bytes:
    """A spooled entry as the hook wrote it (its seal line left out)."""
    return unseal(read_state(file))


def read_pending(improve_dir: str) -> list[tuple[str, bytes]]:
    out = []
    for file, path in pending(improve_dir):
        try:
            out.append((path, read_entry(file)))
        except OSError:
            continue
    return out


def stale_tmp(improve_dir: str, older_than: float = 3600.0) -> list[str]:
    folder = spool_dir(improve_dir)
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return []
    now = time.time()
    out = []
    for n in names:
        if n.startswith("."):
            full = os.path.join(folder, n)
            try:
                if now - os.path.getmtime(full) > older_than:
                    out.append(full)
            except OSError:
                pass
    return out
