"""Secrets written in a language's own string syntax, in configuration formats, across two
short lines, and the ordinary text of the same shapes (digests in prose, a key's public half,
one hex key written two ways) that must pass or keep one marker."""

from __future__ import annotations

import json
import re
import secrets
import string

from gitimprove.redaction import redact, redact_blob

_ALNUM = string.ascii_letters + string.digits


def _token(n: int = 28) -> str:
    """A random token of letters and digits (both kinds certainly present)."""
    while True:
        t = "".join(secrets.choice(_ALNUM) for _ in range(n))
        if any(c.isdigit() for c in t) and any(c.isupper() for c in t):
            return t


def _password() -> str:
    return _token(7) + secrets.choice("!#%*-_") + _token(6)


def _parts(secret: str) -> list[str]:
    return [secret[i : i + 8] for i in range(0, max(1, len(secret) - 7), 3)]


def _assert_masked(text: str, secret: str) -> None:
    out = redact(text)
    assert "[REDACTED:" in out, (text, out)
    for part in _parts(secret):
        assert part not in out, (text, out)
    assert redact(out) == out
    record = redact_blob(json.dumps({"content": text}).encode()).decode()
    content = json.loads(record)["content"]
    for part in _parts(secret):
        assert part not in content, record


def _hashes(text: str) -> set[str]:
    return set(re.findall(r"\[REDACTED:[a-z0-9-]+:([0-9a-f]{4})\]", text))


# --- what must pass ----------------------------------------------------------------------


def test_a_digest_after_a_bare_key_in_prose_passes() -> None:
    for _ in range(5):
        md5 = secrets.token_hex(16)
        for text in (
            f"The cache uses a key: {md5} for this file.",
            f"stored under the key: {md5}",
            f"Key: {md5.upper()}",
            f"key = '{md5}'",
        ):
            assert redact(text) == text, text
    # named as an API key, a secret key or a password, the same digits are one
    md5 = secrets.token_hex(16)
    for text in (f"API key: {md5}", f"secret key: {md5}", f"password: {md5}"):
        assert md5 not in redact(text), text


def test_a_public_key_derived_by_a_pipe_passes_a_private_one_does_not() -> None:
    import base64

    for _ in range(3):
        key = base64.b64encode(secrets.token_bytes(32)).decode()
        for cmd in (
            "wg genkey | tee privatekey | wg pubkey",
            "wg genkey | sudo tee /etc/wireguard/private.key | wg pubkey",
            "openssl genpkey -algorithm x25519 | openssl pkey -pubout",
            "openssl rand -hex 32 | sha256sum",
        ):
            for text in (f"$ {cmd}\n{key}\n", f"{cmd} → {key}"):
                assert redact(text) == text, text
        for text in (f"$ wg genkey\n{key}\n", f"$ wg genkey | tee privatekey\n{key}\n"):
            assert key not in redact(text), text


def test_one_hex_key_with_and_without_0x_gives_one_marker() -> None:
    for _ in range(5):
        key = secrets.token_hex(32)
        text = (
            f"private key: 0x{key}\n"
            f'privateKey="{key}"\n'
            f"PRIVATE_KEY=0X{key.upper()}\n"
            f"--private-key {key}\n"
        )
        out = redact(text)
        assert key not in out and key.upper() not in out, out
        assert len(_hashes(out)) == 1, out
