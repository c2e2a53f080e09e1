"""This repository's integrity key: `<git-common-dir>/improve/key`, 32 random bytes, 0600.

It tags the note lines the harness writes (state/signing.py) and the ref moves it makes
(git/witness.py). The sandbox hides the whole git directory, so an agent in it cannot read
the key; without the sandbox an agent runs with the user's permissions and can (see
docs/integrity.md)."""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass
from pathlib import Path

from gitimprove.util import written
from gitimprove.util.files import NotAFile, atomic_write, create_whole, read_state

KEY_FILE = "key"


@dataclass(frozen=True)
class Key:
    id: str
    secret: bytes

    def mac(self, text: str, length: int = 32) -> str:
        return hmac.new(self.secret, text.encode("utf-8"), hashlib.sha256).hexdigest()[:length]


def _key_id(secret: bytes) -> str:
    return hashlib.sha256(b"gitimprove key id\0" + secret).hexdigest()[:12]


# The key each process first loaded, per improve folder: a process never signs with another
# (an agent without the sandbox that writes new bytes there, or a folder, gains nothing).
_pinned: dict[str, Key] = {}


def load_key(improve_dir: Path, *, create: bool = True) -> Key | None:
    """The key, made on first use (whole or not at all, 0600); None when unreadable. The
    first key a process loads is pinned: later calls return it, whatever the file holds."""
    where = os.path.realpath(improve_dir)
    if where in _pinned:
        return _pinned[where]
    path = improve_dir / KEY_FILE
    try:
        secret = read_state(path)
    except FileNotFoundError:
        if not create:
            return None
        secret = os.urandom(32)
        try:  # whole or not at all: a reader never finds it empty, and one maker wins
            made = create_whole(path, secret)
        except OSError:
            return None
        if not made:
            try:
                secret = read_state(path)
            except OSError:
                return None
    except OSError:
        return None
    if len(secret) < 16:
        return None
    key = _pinned[where] = Key(_key_id(secret), secret)
    return key


def key_problem(improve_dir: Path) -> str | None:
    """What is wrong with the key file, when this process pinned a key there and the file no
    longer holds it (replaced, emptied, a folder, a FIFO); None when it is as pinned."""
    pinned = _pinned.get(os.path.realpath(improve_dir))
    if pinned is None:
        return None
    try:
        now = read_state(improve_dir / KEY_FILE)
    except NotAFile as e:
        return f"{KEY_FILE} ({e.strerror})"
    except OSError:
        return f"{KEY_FILE} (removed)"
    if now != pinned.secret:
        return f"{KEY_FILE} (not the key {pinned.id} this run started with: put back)"
    return None


def restore_key(improve_dir: Path) -> bool:
    """Put the pinned key back in place of whatever is there now (moved aside to
    `quarantine/`, never deleted). True when something was restored."""
    pinned = _pinned.get(os.path.realpath(improve_dir))
    if pinned is None or key_problem(improve_dir) is None:
        return False
    path = improve_dir / KEY_FILE
    if os.path.lexists(path):
        aside = improve_dir / "quarantine"
        os.makedirs(aside, exist_ok=True)
        moved = aside / f"{KEY_FILE}.{os.getpid()}.{os.urandom(3).hex()}"
        os.replace(path, moved)
        written.mark(moved)
    atomic_write(path, pinned.secret)
    return True
