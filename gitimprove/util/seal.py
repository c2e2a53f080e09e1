"""The seal of what hooks write under gitimprove's folder (docs/integrity.md 8b).

A spool entry, a session map or a watermark is written by a hook of any session of the
user's, at any time; without the sandbox the measured code and the agent can write the same
forms there. Each carries, as its last line, `#gitimprove-seal <tag>`: a tag of its path in
the folder and its bytes, made with the repository's key (util/keys.py). The watch of the
folder (git/strays.py) takes a new or changed one for a hook's only when its seal verifies;
readers leave the line out. Cheap for the hooks: the key file is read as it is (the key
module, with what it imports, is loaded only to make a key that is not there yet).
"""

from __future__ import annotations

import os

from gitimprove.util.files import read_state

SEAL = b"#gitimprove-seal "


def _mac(secret: bytes, rel: str, body: bytes) -> bytes:
    import hashlib
    import hmac

    text = b"hook file\0" + rel.encode("utf-8", "surrogateescape") + b"\0" + body
    return hmac.new(secret, text, hashlib.sha256).hexdigest()[:32].encode()


def _secret(improve_dir: str | os.PathLike[str]) -> bytes | None:
    try:
        secret = read_state(os.path.join(improve_dir, "key"))
    except FileNotFoundError:
        from pathlib import Path

        from gitimprove.util.keys import load_key

        key = load_key(Path(improve_dir))
        return key.secret if key is not None else None
    except OSError:
        return None
    return secret if len(secret) >= 16 else None


def seal(improve_dir: str | os.PathLike[str], rel: str, body: bytes) -> bytes:
    """`body` (ending with a newline) with the seal of `rel` (`spool/<name>`, …) as its last
    line; unchanged when no key can be had."""
    secret = _secret(improve_dir)
    if secret is None:
        return body
    return body + SEAL + _mac(secret, rel, body) + b"\n"


def _split(data: bytes) -> tuple[bytes, bytes] | None:
    body, found, tail = data.rpartition(SEAL)
    if not found or not tail.endswith(b"\n") or b"\n" in tail[:-1]:
        return None
    if body and not body.endswith(b"\n"):
        return None
    return body, tail[:-1]


def unseal(data: bytes) -> bytes:
    """What a hook wrote, without its seal line (if any)."""
    split = _split(data)
    return data if split is None else split[0]


def sealed(improve_dir: str | os.PathLike[str], rel: str, data: bytes) -> bool:
    """Whether `data` ends with the seal of `rel` made with this repository's key (the one
    this process pinned)."""
    import hmac
    from pathlib import Path

    from gitimprove.util.keys import load_key

    split = _split(data)
    key = load_key(Path(improve_dir), create=False)
    if split is None or key is None:
        return False
    return hmac.compare_digest(split[1], _mac(key.secret, rel, split[0]))
