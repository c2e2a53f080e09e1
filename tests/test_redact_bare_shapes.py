"""Credentials known by their shape where no name stands beside them: a Facebook app's
`<app id>|<secret>` token printed bare, and a `.pgpass` line shown in a diff, quoted in a
command or escaped in JSON. Their look-alikes (a number and a name in a table) stay."""

from __future__ import annotations

import json
import random
import string

import pytest

from gitimprove.redaction import redact

_RNG = random.Random(1416)
_ALNUM = string.ascii_letters + string.digits


def _random(alphabet: str, n: int) -> str:
    while True:
        s = "".join(_RNG.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
            return s


def _app_token() -> str:
    app_id = str(_RNG.randint(10**14, 10**16 - 1))
    body = _RNG.choice(
        [_random("0123456789abcdef", 32), _random(_ALNUM + "_-", _RNG.randint(27, 40))]
    )
    return app_id + _RNG.choice(["|", "%7C"]) + body


_APP_PLACES = [
    "{t}",
    "token: {t}",
    "GET /v19.0/me?access_token={t}&fields=id HTTP/1.1",
    "E       AssertionError: assert '{t}' == 'x'",
    "| prod | `{t}` |",
    "認証トークン：{t}（本番用）",
]


@pytest.mark.parametrize("place", _APP_PLACES, ids=range(len(_APP_PLACES)))
def test_a_facebook_app_token_is_masked_bare(place: str) -> None:
    for _ in range(10):
        token = _app_token()
        out = redact(place.format(t=token))
        body = token.replace("%7C", "|").split("|")[1]
        assert body[:12] not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize(
    "text",
    [
        "| 1234567890123456|the_quick_brown_fox_jumps_over |",
        "id 1234567890123456|ExternalServiceConfiguration_v2",
        "| 2026112418021144|row-count-for-the-table-foo |",
        "order 123456789012345|shipped-to-warehouse-number-nine",
    ],
)
def test_a_number_and_a_name_beside_a_pipe_stay(text: str) -> None:
    assert redact(text) == text


def _pgpass_line() -> tuple[str, str]:
    password = _random(_ALNUM, 10) + _RNG.choice("*!.-") + _random(_ALNUM, 5)
    host = _RNG.choice(["db.internal", "localhost", "*", "pg-1.corp.example"])
    return f"{host}:5432:app:app_user:{password}", password


_PGPASS_PLACES = [
    "+{line}",
    "-{line}",
    "@@ -0,0 +1,2 @@\n+{line}\n+other:5432:a:b:{{x}}",
    "echo '{line}' >> ~/.pgpass",
    'printf "%s\\n" "{line}" > ~/.pgpass',
    "> {line}",
]


@pytest.mark.parametrize("place", _PGPASS_PLACES, ids=range(len(_PGPASS_PLACES)))
def test_a_pgpass_line_in_a_diff_or_quoted_is_masked(place: str) -> None:
    for _ in range(10):
        line, password = _pgpass_line()
        out = redact(place.format(line=line))
        assert password not in out, out


def test_a_pgpass_line_escaped_in_json_text_is_masked() -> None:
    for _ in range(10):
        line, password = _pgpass_line()
        text = "output: " + json.dumps({"stdout": line + "\n", "exit": 2})
        assert password not in redact(text)
