"""A user and a password joined by a slash after a login word, with no connector between
(`login admin/<pw>`, `sign in bob/<pw>`), are read as a login: the password is masked.
Paths, fractions, dates, versions and `host:port` after a login word pass."""

from __future__ import annotations

import random
import string

import pytest

from gitimprove.redaction import redact


def _password(rnd: random.Random) -> str:
    n = rnd.randint(6, 14)
    body = [rnd.choice(string.ascii_letters) for _ in range(n)]
    body[rnd.randrange(n)] = rnd.choice(string.digits)
    body[rnd.randrange(n)] = rnd.choice(string.ascii_uppercase)
    return "".join(body) + rnd.choice("!#%@") + rnd.choice(string.digits)


@pytest.mark.parametrize(
    "shape",
    [
        "login {u}/{p}",
        "then login {u}/{p} and run the suite",
        "Log in {u}/{p} on staging.",
        "logged in {u}/{p}, then deployed",
        "sign in {u}/{p}",
        "- login {u} / {p}",
    ],
)
def test_a_user_and_password_after_a_login_word_are_masked(shape: str) -> None:
    for seed in range(10):
        rnd = random.Random(seed)
        user = rnd.choice(["admin", "root", "deploy", "svc_ci", "bob.smith"])
        pw = _password(rnd)
        out = redact(shape.format(u=user, p=pw))
        assert pw not in out and pw[:-2] not in out, out
        assert user in out  # the user stays: only the password is a secret


@pytest.mark.parametrize(
    "text",
    [
        "login usr/bin",
        "log in src/main.py to see the flow",
        "the login page src/components/LoginForm.tsx",
        "login 3/4",
        "logins 11/2026 were counted",
        "login host.example.com:8443",
        "login flow in linux/x86_64 builds",
        "login docs/README.md",
        "login api/v1 endpoint",
        "login lib/utf-8",
        "login v1/v2.3.4",
        "login nodes/node_modules",
    ],
)
def test_paths_fractions_and_versions_after_a_login_word_pass(text: str) -> None:
    assert redact(text) == text
