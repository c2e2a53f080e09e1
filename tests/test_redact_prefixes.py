"""A token of a provider no rule names yet is masked by its shape: lower-case words as its
prefix, then a long random body. Names in code, digests, payment ids and base64 of text
with the same shape pass unchanged."""

from __future__ import annotations

import base64
import hashlib
import random
import string

import pytest

from gitimprove.redaction import redact

_ALNUM = string.ascii_letters + string.digits


def _body(rnd: random.Random, n: int) -> str:
    while True:
        t = "".join(rnd.choice(_ALNUM) for _ in range(n))
        if all(any(f(c) for c in t) for f in (str.isdigit, str.isupper, str.islower)):
            return t


def _prefix(rnd: random.Random) -> str:
    sep = rnd.choice("_-")
    words = [
        "".join(rnd.choice("bcdfghjklmnpqrstvwxz") for _ in range(rnd.randint(2, 6)))
        for _ in range(rnd.randint(1, 3))
    ]
    return sep.join(words) + sep


SHAPES = [
    "{s}",
    "error: token {s} was revoked",
    "export SVC={s}",
    "client = Client('{s}')",
    '{{"auth": "{s}"}}',
    "| prod | {s} |",
    "(see {s}).",
    "x-auth: {s}\r\n",
]


@pytest.mark.parametrize("seed", range(40))
def test_an_unknown_providers_token_is_masked(seed: int) -> None:
    rnd = random.Random(seed)
    body = _body(rnd, rnd.randint(28, 80))
    if seed % 4 == 0:  # the provider's separators inside the body
        body = f"{body[:12]}-{_body(rnd, 9)}_{body[12:]}"
    token = _prefix(rnd) + body
    for shape in SHAPES:
        text = shape.format(s=token)
        out = redact(text)
        assert body[:12] not in out and body[-12:] not in out, (text, out)
        assert "[REDACTED:" in out


def _record_line(rnd: random.Random) -> str:
    digest = hashlib.sha256(rnd.randbytes(64)).digest()
    return f"pkg/mod.py,sha256={base64.urlsafe_b64encode(digest).decode().rstrip('=')},1234"


ORDINARY = [
    "def test_parse_HTTP2Response_for_UTF8Input_handling(self):",
    "assert build_index_forUTF8Strings_and_HTTP2Frames_v2() == 3",
    # Stripe's object ids are public (receipts, URLs)
    "payment pi_3MtwBwLkdIwHu7ix28a3tqPa9xZ1 succeeded",
    "open https://checkout.stripe.com/c/pay/cs_test_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0",
    # a digest after its algorithm (npm's integrity, a wheel's RECORD)
    '"integrity": "sha512-Kq5sNclPz7QV2+lfQIqz8cTzFfmAnmvbE3eFeKkL2xWrPzfoCS7P3aWj1bg2ZvBTOS=="',
    # a name spelled in base64
    "cache-key-" + base64.b64encode(b"eu-west-1.builds.internal/2026").decode(),
    # hex digits of both cases: an id printed so
    "sgp_local_d45b6G86aBb0F2Cee943902dbaDBCFCFDD1dA089",
]


def _ids(rnd: random.Random) -> list[str]:
    """An API's handles: a completion's, a request's, a run's, a batch's (random bodies
    as long as a token's, public in every log and response)."""
    return [
        f'"id": "chatcmpl-{_body(rnd, 29)}"',
        f"completion cmpl-{_body(rnd, 29)} finished",
        f"x-request-id: req_{_body(rnd, 32)}",
        f'"run_id": "run_{_body(rnd, 28)}"',
        f'"id": "batch_{_body(rnd, 32)}"',
        f"trace-id: trace_{_body(rnd, 32)}",
        f'{{"id": "gen-{rnd.randrange(10**9, 10**10)}-{_body(rnd, 28)}"}}',
        f'"id": "qzx_{_body(rnd, 40)}"',
    ]


@pytest.mark.parametrize("seed", range(20))
def test_an_apis_handles_pass(seed: int) -> None:
    for text in _ids(random.Random(seed)):
        assert redact(text) == text


@pytest.mark.parametrize("text", ORDINARY, ids=range(len(ORDINARY)))
def test_ordinary_text_of_the_same_shape_passes(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize("seed", range(20))
def test_a_wheels_record_of_digests_passes(seed: int) -> None:
    rnd = random.Random(seed)
    text = "\n".join(_record_line(rnd) for _ in range(30))
    assert redact(text) == text


@pytest.mark.parametrize(
    ("prefix", "body"),
    [
        ("e2b_", "hex40"),
        ("dtn_", "hex64"),
        ("lin_oauth_", "hex64"),
        ("sk_", "hex48"),
    ],
)
def test_newer_providers_hex_tokens_are_masked(prefix: str, body: str) -> None:
    rnd = random.Random(prefix)
    token = prefix + "".join(rnd.choice("0123456789abcdef") for _ in range(int(body[3:])))
    out = redact(f"request with {token} failed")
    assert token[len(prefix) :][:12] not in out, out
