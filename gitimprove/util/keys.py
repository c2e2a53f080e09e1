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

KEY_FILE = "key"


@dataclass(frozen=True)
class Key:
    id: str
    secret: bytes

    def mac(self, text: str, length: int = 32) -> str:
        return hmac.new(self.secret, text.encode("utf-8"), hashlib.sha256).hexdigest()[:length]


def _key_id(secret: bytes) -> str:
    return hashlib.sha256(b"gitimprove key id\0" + secret).hexdigest()[:12]


def load_key(improve_dir: Path, *, create: bool = True) -> Key | None:
    """The key, made on first use (created exclusively, 0600); None when unreadable."""
    path = improve_dir / KEY_FILE
    try:
        secret = path.read_bytes()
    except FileNotFoundError:
        if not create:
            return None
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            secret = path.read_bytes()
        except OSError:
            return None
        else:
            secret = os.urandom(32)
            with os.fdopen(fd, "wb") as f:
                f.write(secret)
    except OSError:
        return None
    if len(secret) < 16:
        return None
    return Key(_key_id(secret), secret)
