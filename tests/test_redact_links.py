"""Credentials a link carries: a Telegram bot's token inside the Bot API's path (`bot` runs
into the id), a one-time code in a redirect or a reset link, an OAuth implicit flow's token
in the fragment. A status code, a slug or an anchor in a link passes."""

from __future__ import annotations

import random
import string

import pytest

from gitimprove.redaction import redact

_ALNUM = string.ascii_letters + string.digits


def _token(rnd: random.Random, n: int, alphabet: str = _ALNUM) -> str:
    while True:
        t = "".join(rnd.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in t) and any(c.isalpha() for c in t):
            return t


def _cases(rnd: random.Random) -> list[tuple[str, str]]:
    bot = f"{rnd.randrange(10**8, 10**9)}:AA{_token(rnd, 33, _ALNUM + '_-')}"
    code = _token(rnd, 32)
    google = "4/0A" + _token(rnd, 70, _ALNUM + "_-")
    lower = _token(rnd, 20, string.ascii_lowercase + string.digits)
    implicit = _token(rnd, 40)
    return [
        (f"curl https://api.telegram.org/bot{bot}/sendMessage -d text=hi", bot),
        (f"POST /bot{bot}/getUpdates HTTP/1.1", bot),
        (f"https://app.example/reset?code={code}", code),
        (f"GET /oauth/callback?code={google}&scope=email", google),
        (f"GET /callback?state=xyz&code={lower} 302", lower),
        (f"redirect to https://app.example/cb#access_token={implicit}&token_type=Bearer", implicit),
        (f"https://app.example/login?magic={code}", code),
    ]


@pytest.mark.parametrize("n", range(7))
def test_a_credential_in_a_link_is_masked(n: int) -> None:
    for seed in range(20):
        text, secret = _cases(random.Random(seed))[n]
        out = redact(text)
        assert not any(secret[i : i + 10] in out for i in range(len(secret) - 9)), out


PASS = [
    "https://x.example/?code=200&lang=en",
    "https://github.com/login?return_to=x&code=python-requests-guide",
    "https://docs.python.org/3/library/codecs.html#codecs.encode",
    "see #code=utf8-is-the-default-encoding",
    "?code=ABCDEFGHIJKLMNOPQRST",
    "https://t.me/botfather and bot12345 replied",
]


@pytest.mark.parametrize("text", PASS, ids=range(len(PASS)))
def test_a_links_ordinary_parts_pass(text: str) -> None:
    assert redact(text) == text
