"""A session cookie set in code or passed to curl is masked like one in a header: a test's
`.set('Cookie', ['connect.sid=…'])`, a client's `cookies={'sessionid': …}`, a server's
`res.cookie('sid', …)`, a browser driver's `{name: 'sid', value: …}`, `curl -b 'sid=…'`.
A cookie that says nothing secret (`theme=dark`, a cookie jar's file) passes."""

from __future__ import annotations

import secrets
import string

import pytest

from gitimprove.redaction import redact

_ALNUM = string.ascii_letters + string.digits


def _token(n: int) -> str:
    while True:
        t = "".join(secrets.choice(_ALNUM) for _ in range(n))
        if all(any(f(c) for c in t) for f in (str.isdigit, str.isupper, str.islower)):
            return t


SET = [
    ".set('Cookie', ['connect.sid={s}'])",
    '.set("Cookie", ["connect.sid={s}", "theme=dark"])',
    ".set('Cookie', 'lang=en; connect.sid={s}')",
    "headers = {{'Cookie': 'csrftoken=abc; sessionid={s}'}}",
    "document.cookie = 'auth_token={s}; path=/'",
    "curl -s -b 'sid={s}' https://app.internal/api",
    'curl --cookie "PHPSESSID={s}" https://app.internal/',
    "curl -X POST --cookie='_session={s}' https://app.internal/",
    "res.cookie('sid', '{s}', {{ httpOnly: true }})",
    "cookies={{'sessionid': '{s}'}}",
    "requests.get(url, cookies={{'remember_token': '{s}'}})",
    "await page.setCookie({{name: 'sid', value: '{s}'}})",
    "driver.add_cookie({{'name': 'session', 'value': '{s}'}})",
    "session.cookies.set('auth', '{s}')",
]


@pytest.mark.parametrize("template", SET, ids=range(len(SET)))
def test_a_session_cookie_in_code_is_masked(template: str) -> None:
    for value in (_token(32), "s%3A" + _token(32) + "." + _token(43)):
        out = redact(template.format(s=value))
        assert not any(value[i : i + 10] in out for i in range(0, len(value) - 9)), out


PASS = [
    "res.cookie('theme', 'dark')",
    "res.cookie('lang', 'en-US', { maxAge: 900 })",
    ".set('Cookie', ['theme=dark; lang=en'])",
    "curl -b cookies.txt -c cookies.txt https://example.org/",
    "curl -b 'theme=dark' https://example.org/",
    "cookies={'consent': 'accepted'}",
    "page.setCookie({name: 'locale', value: 'fr_FR'})",
    "git checkout -b 'feature/cookie-banner'",
]


@pytest.mark.parametrize("text", PASS, ids=range(len(PASS)))
def test_a_cookie_that_says_nothing_secret_passes(text: str) -> None:
    assert redact(text) == text
