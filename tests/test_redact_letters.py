"""A generated password with no digit, and a bare hex token, under an ordinary key: masked.
Words, CamelCase names and digests under other keys: left alone."""

from __future__ import annotations

import random
import string

import pytest

from gitimprove.redaction import redact

KEYS = (
    "password={v}",
    "password: {v}",
    "passwd={v}",
    "secret={v}",
    "api_key={v}",
    "token={v}",
    "client_secret={v}",
    "AUTH_TOKEN={v}",
    "ssh_pass={v}",
    "db_pass={v}",
    "ansible_password={v}",
    "web1 ansible_host=10.0.0.5 ansible_user=deploy ansible_ssh_pass={v}",
    "deploy --password {v} --host db",
    "vault login --token {v}",
)


def letters(seed: int, n: int) -> str:
    rng = random.Random(seed)
    while True:
        v = "".join(rng.choice(string.ascii_letters) for _ in range(n))
        if not (v.isupper() or v.islower()):
            return v


@pytest.mark.parametrize("shape", KEYS)
@pytest.mark.parametrize("seed", range(4))
def test_letters_only_passwords_are_masked(shape: str, seed: int) -> None:
    value = letters(seed, 12 + 6 * seed)
    out = redact(shape.format(v=value))
    assert value not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize("n", [32, 40, 64])
def test_a_hex_token_under_a_token_key_is_masked(n: int) -> None:
    rng = random.Random(n)
    value = "".join(rng.choice("0123456789abcdef") for _ in range(n))
    for shape in ("token={v}", "TOKEN={v}", "gh_token: {v}"):
        assert value not in redact(shape.format(v=value))


@pytest.mark.parametrize(
    "text",
    [
        "password = getPassword",
        "token: 'identifier'",
        "token: 'TokenKind'",
        "nextPageToken=AbCdEfGhIjKl",
        "token = next_token",
        "commit=3f9a7c1e5b2d4f6a8c0e3f9a7c1e5b2d4f6a8c0e",
        "etag: 3f9a7c1e5b2d4f6a8c0e3f9a7c1e5b2d",
        "secret=PLACEHOLDER",
        "password_hint=RememberTheName",
        "kind: token, token: 'StringLiteral'",
        "pytest --token-type BearerToken",
        "git commit --password-prompt",
    ],
)
def test_names_and_digests_pass(text: str) -> None:
    assert redact(text) == text
