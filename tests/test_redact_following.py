"""What follows a secret is never part of its mask: for every fake of the corpus, whatever
line comes next (a log line, a traceback, a SHA, a version, markdown, a shell prompt, …)
and whatever ends the value on its own line (`&user=bob`, `|next`, a final `.`), the text
comes out as the fake masked alone plus what followed, byte for byte (LF and CRLF), and
the marker is the one of the fake alone. A line break is inside a token only where the
text shows it is (a full line at a wrap width, a format incomplete before the break)."""

from __future__ import annotations

import base64
import random
import re
import struct
import textwrap
import zlib

import pytest

from gitimprove import redaction
from tests.secret_corpus import corpus

MARKERS = re.compile(r"\[REDACTED:[a-z0-9-]+:[0-9a-f]{4}\]")
EOLS = ["\n", "\r\n"]


def _single_line_fakes() -> list[tuple[str, str, str]]:
    out = []
    for f in corpus(seed=57):
        if "\n" in f.text or "\r" in f.text or f.text.count(f.secret) != 1:
            continue
        alone = redaction.redact(f.text)
        if alone == f.text:
            continue
        out.append((f.family, f.text, alone))
    return out


FAKES = _single_line_fakes()
# lines that follow a secret in logs, tracebacks, CI output, git output, markdown, shells
FOLLOWERS = [
    "Traceback (most recent call last):",
    "Running tests",
    "Collecting requests",
    "Step 3/10 : RUN pip install -r requirements.txt",
    "200 OK",
    "7f3a2b1 fix: typo",
    "2026-11-23 10:00:01 INFO started worker",
    "HTTP/1.1 401 Unauthorized",
    "Downloading",
    "abc123",
    "v1.2.3",
    "3f9a0c4e1b2d7a8c9e0f1a2b3c4d5e6f7a8b9c0d",
    "##[group]Run pytest -q",
    "$ git push origin main",
    "# Deployment notes",
    "- [ ] rotate the key",
    "> quoted reply",
    '  File "app/settings.py", line 12, in <module>',
    "E       AssertionError: assert 1 == 2",
    "npm ERR! code E401",
    "INFO:root:connected",
    "ok",
    "user@host:~/app$ ls -la",
    "WARNING: Retrying (Retry(total=4))",
    "PASSED tests/test_app.py::test_login",
]
# what may end a value on its own line: a query's next parameter, a pipe, prose's stop
SUFFIXES = ["&user=bob", "|next", ".", ",", ")", "; echo done", " and more"]


# a final `.` is part of the value: letters and a stop read as a sentence's word; these
# formats' alphabets hold `.` (curl's `user:password`, an apr1 hash, PlanetScale's tokens)
DOTTED = {"passphrase-letters", "twilio-auth-curl", "htpasswd-apr1", "end-pscale"}


def test_the_corpus_and_the_followers_are_large() -> None:
    assert len(FAKES) >= 250 and len(FOLLOWERS) >= 20


@pytest.mark.slow
@pytest.mark.parametrize("eol", EOLS, ids=["lf", "crlf"])
def test_every_following_line_survives_byte_for_byte(eol: str) -> None:
    bad = []
    for family, text, alone in FAKES:
        for follower in FOLLOWERS:
            tail = eol + follower + eol
            out = redaction.redact(text + tail)
            if out != alone + tail:
                bad.append((family, follower, out))
    assert not bad, bad[:5]


def test_what_ends_a_value_on_its_line_survives() -> None:
    bad = []
    for family, text, alone in FAKES:
        if not alone.endswith("]") or not MARKERS.search(alone[-40:]):
            continue  # the value is quoted or followed by text of its own
        for suffix in SUFFIXES:
            if suffix == "." and family in DOTTED:
                continue
            out = redaction.redact(text + suffix)
            if out != alone + suffix:
                bad.append((family, suffix, out))
    assert not bad, bad[:5]


GHP = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
PW, AWS = "Xq9vR2mT7zLp4w", "h7Rk2Qw9ZpL4xV8nB3mT6yC1fD5gJ0sA2eU4iO7r"
SECRET_LINES = [
    f"GITHUB_TOKEN={GHP}",
    f"password: {PW[:3]}!{PW[3:6]}#{PW[6:]}",
    f"Authorization: Bearer {GHP}",
    f"aws_secret_access_key = {AWS}",
    "sk-proj-Qv3Lm8Zx2Nc7Bw4Kt9Hy6Jd1Fs5Gp0RqQv3Lm8Zx2Nc7Bw4Kt9Hy6Jd1Fs5Gp0Rq",
    "xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    f"PASSWORD={PW}",
    f"API_KEY={PW}Abq3",
]


@pytest.mark.parametrize("eol", EOLS, ids=["lf", "crlf"])
@pytest.mark.parametrize("line", SECRET_LINES, ids=range(len(SECRET_LINES)))
def test_the_reviewed_lines_keep_what_follows(line: str, eol: str) -> None:
    alone = redaction.redact(line)
    assert alone != line and alone.count("[REDACTED:") == 1
    for follower in FOLLOWERS:
        tail = eol + follower
        assert redaction.redact(line + tail) == alone + tail
    for suffix in SUFFIXES:
        assert redaction.redact(line + suffix) == alone + suffix


# decorations a log repeats on every line: a wrapped secret continues after them, and
# they stay byte for byte
DECORATIONS = [
    "app-1  | ",
    "2026-11-23T10:00:01.123456789Z stdout P ",
    "2026-11-23T10:00:01.1234567Z ",
    "E       ",
    "# ",
    "> ",
    "  12 | ",
    "│ ",
]


@pytest.mark.parametrize("eol", EOLS, ids=["lf", "crlf"])
@pytest.mark.parametrize("deco", DECORATIONS, ids=range(len(DECORATIONS)))
def test_a_secret_wrapped_on_decorated_lines_keeps_the_decorations(deco: str, eol: str) -> None:
    value = "Zq8Xw3Vn5Mb7Lk9Jh2Gf4Ds6Pa1Ty0Ue"
    head = f"API_TOKEN={value[:12]}"
    first = deco + head.rjust(80 - len(deco))  # a terminal's full line: the wrap
    nxt = deco.replace("P ", "F ") if "stdout" in deco else deco
    text = first + eol + nxt + value[12:] + eol + nxt + "Traceback (most recent call last):"
    out = redaction.redact(text)
    assert value[12:] not in out and value[:12] not in out, out
    whole = redaction.redact(f"API_TOKEN={value}")
    marker = MARKERS.search(whole)
    assert marker is not None
    expected = first[: -len(value[:12])] + marker.group(0) + eol + nxt
    assert out == expected + eol + nxt + "Traceback (most recent call last):", out


@pytest.mark.parametrize("eol", EOLS, ids=["lf", "crlf"])
@pytest.mark.parametrize("deco", DECORATIONS, ids=range(len(DECORATIONS)))
def test_decorated_lines_after_a_secret_are_kept(deco: str, eol: str) -> None:
    deco = deco.replace(" P ", " F ")  # a CRI line flagged P goes on in the next one
    line = f"{deco}GITHUB_TOKEN={GHP}"
    alone = redaction.redact(line)
    for follower in FOLLOWERS:
        tail = eol + deco + follower
        assert redaction.redact(line + tail) == alone + tail


def _png(width: int = 48, height: int = 48) -> bytes:
    """A real PNG image of noise (its IDAT compresses little: a few kilobytes)."""
    rng = random.Random(5)
    rows = b"".join(
        b"\x00" + bytes(rng.randrange(256) for _ in range(width * 3)) for _ in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def _jwt(header: bytes, claims: bytes) -> str:
    def part(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    return f"{part(header)}.{part(claims)}."


NONE_JWT = _jwt(b'{"alg":"none"}', b'{"sub":"1234567890","name":"test","admin":true}')
SHAS = [
    "8400667a1b2c3d4e5f60718293a4b5c6d7e8f901",
    "7337886a1b2c3d4e5f60718293a4b5c6d7e8f902",
    "2385f13a1b2c3d4e5f60718293a4b5c6d7e8f903",
    "359081fa1b2c3d4e5f60718293a4b5c6d7e8f904",
    "dd38930a1b2c3d4e5f60718293a4b5c6d7e8f905",
]
DIGEST = "3f9a0c4e1b2d7a8c" * 3 + "9e0f1a2b"  # a GitHub Actions cache key's hash (56)
FALSE_POSITIVES = [
    "Checking password policy...\n2026-11-23 07:00:01 INFO ok",
    "tokens used by commits:\n" + "\n".join(SHAS),
    "tokens used by commits:\n" + "\n".join(s + s[:24] for s in SHAS),  # SHA-256s
    "Rotated secrets:\nprod-db-password\nstaging-api-token\n3f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f60",
    f"Cache restored from key: Linux-pip-{DIGEST}\n##[group]Run pytest",
    f"key: Linux-pip-{DIGEST[::-1]}\n##[endgroup]",
    "\n".join(textwrap.wrap(base64.b64encode(_png()).decode(), 76)) + "\n",
    "\n".join(textwrap.wrap(base64.b64encode(_png(16, 16)).decode(), 64)) + "\n",
    'S105 Possible hardcoded password assigned to: "PASSWORD_FIELD"',
    'app/settings.py:4:12: S105 Possible hardcoded password assigned to: "API_TOKEN_NAME"',
    f"token = '{NONE_JWT}'",
    f"AUTH_HEADER = 'Bearer {NONE_JWT}'",
    "trace token 4bf92f3577b34da6a3ce929d0e0e4736",
    "request token 00f067aa0ba902b7a1b2c3d4e5f60718 took 3ms",
    "tokens: 1523 in, 812 out\nsecrets: none found\npassword: (set)",
    "Successfully built 3f9a0c4e1b2d\nSuccessfully tagged app:latest",
]


@pytest.mark.parametrize("eol", EOLS, ids=["lf", "crlf"])
@pytest.mark.parametrize("text", FALSE_POSITIVES, ids=range(len(FALSE_POSITIVES)))
def test_false_positives_pass_unchanged(text: str, eol: str) -> None:
    text = text.replace("\n", eol)
    assert redaction.redact(text) == text


def test_a_signed_jwt_is_still_masked() -> None:
    signed = _jwt(b'{"alg":"HS256","typ":"JWT"}', b'{"sub":"42","iat":1700000000}')
    signed += "Zq8Xw3Vn5Mb7Lk9Jh2Gf4Ds6Pa1Ty0UeRc5Wv"
    assert signed not in redaction.redact(f"token = '{signed}'")


def test_key_material_still_is_masked_when_wrapped() -> None:
    """A base64 key body (not an image) wrapped at 64 or 76 stays masked whole."""
    rng = random.Random(9)
    body = base64.b64encode(b"0\x82\x04\xa4\x02\x01\x00" + rng.randbytes(900)).decode()
    for width in (64, 76):
        text = "\n".join(textwrap.wrap(body, width)) + "\nDone."
        out = redaction.redact(text)
        assert out.endswith("\nDone.") and body[:12] not in out and body[-12:] not in out, out


@pytest.mark.parametrize("width", [80, 120])
def test_a_jwt_wrapped_by_a_terminal_is_masked_whole(width: int) -> None:
    jwt = _jwt(b'{"alg":"HS256","typ":"JWT"}', b'{"sub":"42","name":"Ann","iat":1700000000}')
    jwt += "Zq8Xw3Vn5Mb7Lk9Jh2Gf4Ds6Pa1Ty0UeRc5Wv"
    line = f"Authorization: Bearer {jwt}"
    rows = [line[i : i + width] for i in range(0, len(line), width)]
    for eol in EOLS:
        out = redaction.redact(eol.join(rows) + eol + "Traceback (most recent call last):")
        left = MARKERS.sub("", out)
        assert not any(jwt[i : i + 8] in left for i in range(len(jwt) - 8)), out
        assert out.endswith(eol + "Traceback (most recent call last):")
