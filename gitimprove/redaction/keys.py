"""Private key material without the line that names it.

A PEM block is easy to find by its `-----BEGIN … PRIVATE KEY-----` line, but what reaches a
record is often less: the tail of a key after a cut, the body lines of a key an agent
printed from the middle, a PuTTY `.ppk` file, a kubeconfig's base64 of a PEM block, or one
line of DER (`MII…`). These rules (and the joined view of `views.py`, which reads a key's
body lines as one run) find the key material itself: base64 lines that decode
to binary (a key), not to text (base64 of prose) and not to the hex of a hash.
"""

from __future__ import annotations

import re

from gitimprove.redaction.engine import SPECIFIC, Rule, compiled

_B64 = "A-Za-z0-9+/"
# a line break as text holds it, or as JSON escapes it
_NL = r"(?:\r?\n|\\r?\\n)"
_PUBLIC = ("CERTIFICATE", "PUBLIC KEY", "ssh-rsa AAAA", "ssh-ed25519 AAAA")


# what encoded files begin with: an image, a document or an archive is no key material
_MEDIA = (
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8\xff",
    b"GIF87a",
    b"GIF89a",
    b"%PDF-",
    b"PK\x03\x04",
    b"\x1f\x8b",
    b"RIFF",
    b"\x00\x00\x01\x00",
    b"\x00asm",
    b"OggS",
    b"ID3",
    b"fLaC",
    b"BZh",
    b"\xfd7zXZ\x00",
    b"(\xb5/\xfd",
    b"wOFF",
    b"wOF2",
)


def decodes_to_binary(b64: str) -> bool:
    """Base64 whose bytes are mostly not printable text: key material, not encoded prose."""
    import base64
    import binascii

    clean = "".join(c for c in b64 if c not in " \t\r\n\\").rstrip("=")
    if compiled(r"[0-9a-fA-F]+").fullmatch(clean):  # a hash or a git id, not base64
        return False
    clean = clean[: len(clean) - len(clean) % 4]
    try:
        raw = base64.b64decode(clean, validate=True)
    except (binascii.Error, ValueError):
        return False
    if not raw or raw.startswith(_MEDIA):
        return False
    printable = sum(1 for b in raw if 32 <= b < 127 or b in (9, 10, 13))
    return printable / len(raw) < 0.85


def _not_public(secret: str, m: re.Match[str]) -> bool:
    return not public_before(m.string, m.start())


def public_before(text: str, at: int) -> bool:
    """Whether the base64 at `at` is the body of a certificate or a public key."""
    before = text[max(0, at - 400) : at]
    last_begin = before.rfind("-----BEGIN")
    if last_begin != -1 and any(p in before[last_begin:] for p in _PUBLIC):
        return True
    return any(p in before[-40:] for p in _PUBLIC)


def _check_body(secret: str, m: re.Match[str]) -> bool:
    return _not_public(secret, m) and not public_der(secret) and decodes_to_binary(secret)


# an encrypted private key's algorithm: PKCS#5 (PBES2) or PKCS#12 password-based encryption
_PBE_OIDS = (bytes.fromhex("2a864886f70d0105"), bytes.fromhex("2a864886f70d010c"))


def public_der(line: str) -> bool:
    """Whether a line of DER starts what is public: a certificate (`SEQUENCE { SEQUENCE {
    [0] version …`), a public key's info (an algorithm, then the key as a bit string) or
    an RSA public key (its modulus first, where a private key has its version, 0). A
    certificate's body lines can start with these by chance of the wrap."""
    import base64
    import binascii

    try:
        head = base64.b64decode(line[:32])
    except (binascii.Error, ValueError):
        return False
    if len(head) < 16 or head[0] != 0x30 or head[1] != 0x82:
        return False
    inner = head[4:]
    if inner[0] == 0x02:  # an INTEGER: a private key's version (`02 01 00`) or a modulus
        return inner[1] != 0x01
    if inner[0] != 0x30:
        return False
    if inner[1] == 0x82 and inner[4:6] == b"\xa0\x03":
        return True  # a certificate's signed part, its version first
    return not any(oid in head for oid in _PBE_OIDS) and inner[2] == 0x06


def _check_encoded_pem(secret: str, m: re.Match[str]) -> bool:
    import base64
    import binascii

    clean = secret.rstrip("=")
    clean = clean[: len(clean) - len(clean) % 4]
    try:
        text = base64.b64decode(clean).decode("latin-1")
    except (binascii.Error, ValueError):
        return False
    return "PRIVATE KEY" in text


RULES: list[Rule] = [
    Rule(
        # PuTTY's .ppk: the private part (and its MAC) after `Private-Lines: N`
        "putty-private-key",
        r"(?i)Private-Lines:[ \t]*\d+[ \t]*" + _NL + rf"((?:[ \t]*[{_B64}=]{{4,}}[ \t]*"
        rf"(?:{_NL}|$))+(?:[ \t]*Private-MAC:[ \t]*[0-9a-fA-F]+)?)",
        ("private-lines",),
        priority=SPECIFIC,
    ),
    Rule(
        "putty-private-key",
        r"(?i)\bPrivate-MAC:[ \t]*([0-9a-fA-F]{32,})",
        ("private-mac",),
        priority=SPECIFIC,
    ),
    Rule(
        # the tail of a PEM key whose BEGIN line was cut off (or never printed)
        "private-key",
        rf"(?i)(?<![{_B64}=])((?:[ \t]*[{_B64}=]{{16,}}[ \t]*{_NL})+[ \t]*"
        r"-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----)",
        ("private key-----", "private key block-----"),
        priority=SPECIFIC,
    ),
    Rule(
        # one line of DER (`MII…`: a SEQUENCE with a two-byte length) or of an OpenSSH key
        "private-key-body",
        rf"(?<![{_B64}])((?:MII[A-Za-z0-9+/]|b3BlbnNzaC1rZXktdjE)[{_B64}]{{60,}}={{0,2}})",
        ("mii", "b3blbnnzac1rzxktdje"),
        priority=SPECIFIC,
        check=_check_body,
    ),
    Rule(
        # a PEM private key, base64-encoded again (kubeconfig `client-key-data`, k8s secrets)
        "private-key",
        rf"(?<![{_B64}])(LS0tLS1CRUdJT[{_B64}]{{40,}}={{0,2}})",
        ("ls0tls1crudjt",),
        priority=SPECIFIC,
        check=_check_encoded_pem,
    ),
]
