"""Passwords as pwgen draws them (tests/pwgen.py: its default pronounceable draws and its
`-s` secure ones), 1,000 of each shape under a credential's key in the syntaxes it is
written in (env, YAML, INI, code, JSON, a flag): every pronounceable one is masked, and
every secure one under a key that names a credential. Under `key` or `auth`, which may name
something else, a secure draw that reads as names and acronyms (`TB3PRTDW`, `FobQA7SA`:
about 5 in 100) passes (docs/secrets.md, "Not covered"), as names with a number do."""

from __future__ import annotations

import random

import pytest

from gitimprove.redaction import redact
from gitimprove.redaction.pronounced import pronounceable_draw, secure_draw
from tests import pwgen

# (keys naming a credential; written as words, so no line reads as an assignment)
STRONG = [
    "password",
    "passwd",
    "pass",
    "pwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "DB_PASSWORD",
    "API_TOKEN",
    "auth_token",
    "access_token",
    "client_secret",
    "passphrase",
    "credentials",
]
WEAK = ["key", "auth"]
SYNTAXES = [
    "{k}: {v}",
    "{k}={v}",
    "{k} = {v}",
    '{k} = "{v}"',
    '"{k}": "{v}"',
    "export {k}={v}",
    "{k}: '{v}'",
    "  {k}: {v}",
    "--{k} {v}",
    "--{k}={v}",
]


def _missed(draw: object, keys: list[str], seed: int) -> tuple[list[str], int]:
    rng = random.Random(seed)
    missed, n = [], 0
    for i in range(1000):
        value = draw(rng)  # type: ignore[operator]
        key = keys[i % len(keys)]
        text = SYNTAXES[(i // len(keys)) % len(SYNTAXES)].format(k=key, v=value)
        out = redact(text)
        n += 1
        if value[1:7] in out:
            missed.append(text)
    return missed, n


@pytest.mark.parametrize("keys", [STRONG, WEAK], ids=["strong", "weak"])
def test_every_pronounceable_draw_is_masked(keys: list[str]) -> None:
    missed, n = _missed(pwgen.phonemes, keys, 1419)
    assert n == 1000 and missed == []


def test_every_secure_draw_under_a_credentials_key_is_masked() -> None:
    missed, n = _missed(pwgen.secure, STRONG, 1420)
    assert n == 1000 and missed == []


def test_secure_draws_under_key_or_auth_are_masked_but_for_names() -> None:
    missed, n = _missed(pwgen.secure, WEAK, 1421)
    assert n == 1000 and len(missed) <= 60, missed  # 47 in 1,000 measured


def test_the_shapes_are_pwgens() -> None:
    rng = random.Random(1422)
    assert all(pronounceable_draw(pwgen.phonemes(rng)) for _ in range(1000))
    longer = [pwgen.phonemes(rng, n) for n in (10, 12, 16) for _ in range(1000)]
    assert sum(map(pronounceable_draw, longer)) >= 2990
    drawn = [pwgen.secure(rng) for _ in range(300)]
    assert sum(map(secure_draw, drawn)) >= 250


NAMES = [
    "utf8Name",
    "base64Url",
    "gRPCv2Api",
    "Int32Array",
    "IPv6Addr",
    "k8sNodeV1",
    "iPhone14Pro",
    "Log4jConfig",
    "Cam1080p",
    "MySQL8Password",
    "nginxV2Alpine3",
    "HTTP2Server",
    "Password1",
]


@pytest.mark.parametrize("name", NAMES)
def test_names_with_a_number_are_no_draw(name: str) -> None:
    assert not pronounceable_draw(name) and not secure_draw(name)
    for template in ("key: {v}", "auth = {v}", "image_key: {v}"):
        assert redact(template.format(v=name)) == template.format(v=name)
