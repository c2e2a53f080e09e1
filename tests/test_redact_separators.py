"""Passwords holding the characters their syntax separates with: a connection string's bare
password with `;` or `,` (`Password=ab;c,1!;`, ADO.NET and ODBC), an `Authorization:` or
`Bearer` value holding `&`, `?`, `$`, `%`, `^`, `*` (in a log, a curl flag, a requests
call). Templates, variables and the pairs after the password pass."""

from __future__ import annotations

import random

import pytest

from gitimprove.redaction import redact
from tests.masked import assert_masked, drawn

_RNG = random.Random(1418)


def _drawn(n: int, symbols: str) -> str:
    return drawn(_RNG, n, symbols)


CONNECTIONS = [
    "Server=db;Database=app;User Id=sa;Password={p};",
    "Server=db;Database=app;User Id=sa;Password={p};Encrypt=true",
    'conn = "Data Source=db,1433;Initial Catalog=app;User ID=sa;Password={p}"',
    "Driver={{ODBC Driver 18 for SQL Server}};Server=db;Uid=sa;Pwd={p};",
    "Host=db;Port=5432;Username=app;Password={p};Pooling=true",
    "Password={p};Server=db;Database=app",
]


@pytest.mark.parametrize("template", CONNECTIONS)
def test_a_connection_strings_password_holding_its_separators_is_masked(template: str) -> None:
    for _ in range(12):
        secret = _drawn(_RNG.randint(6, 14), ";,!")
        if ";" not in secret and "," not in secret:
            continue
        text = template.format(p=secret)
        assert_masked(text, secret)
        # the pairs after it stay
        assert redact(text).endswith(text[text.index(secret) + len(secret) :]), text


@pytest.mark.parametrize(
    "text",
    [
        "Server=db;Database=app;User Id=sa;Password={0};",
        "Server=db;User Id=sa;Password=$(DB_PASSWORD);Encrypt=true",
        'cs = "Server=%s;User Id=%s;Password=%s;" % (host, user, pw)',
        "Server=db;User Id=sa;Password=;Encrypt=true",
        "the password=optional; a comma, then more words",
        "Server=db;Integrated Security=true;Database=app",
    ],
)
def test_connection_strings_without_a_password_pass(text: str) -> None:
    assert redact(text) == text


HEADERS = [
    "Authorization: Bearer {t}",
    "> Authorization: Bearer {t}",
    "curl -sS -H 'Authorization: Bearer {t}' https://api.acme.io/v1/items",
    'curl -H "Authorization: Bearer {t}" -H "Accept: application/json" https://api.acme.io',
    "requests.get(url, headers={{'Authorization': 'Bearer {t}'}}, timeout=5)",
    'httpx.post(url, headers={{"Authorization": "Bearer {t}"}})',
    "session.headers['Authorization'] = 'Bearer {t}'",
]


@pytest.mark.parametrize("template", HEADERS)
def test_a_bearer_value_holding_symbols_is_masked_whole(template: str) -> None:
    for _ in range(12):
        secret = _drawn(_RNG.randint(16, 40), "$%^&*!#?@")
        assert_masked(template.format(t=secret), secret, width=4)


def test_basic_with_padding_is_masked() -> None:
    import base64

    for n in range(6, 18):  # every padding: none, `=`, `==`
        pair = f"deploy:{_drawn(n, '!#%')}"
        value = base64.b64encode(pair.encode()).decode()
        for template in HEADERS:
            assert_masked(template.format(t=value).replace("Bearer", "Basic"), value[:-3])


@pytest.mark.parametrize(
    "text",
    [
        "fetch(url, {headers: {Authorization: `Bearer ${token}`}})",
        'headers = {"Authorization": f"Bearer {token}"}',
        "Authorization: Bearer <token>",
        "curl -H 'Authorization: Bearer $(gh auth token)' https://api.github.com",
        "Authorization: Bearer ${{ secrets.GITHUB_TOKEN }}",
        "headers={'Authorization': 'Bearer %s' % token}",
        "request.headers['Authorization'] = f'Bearer {self.token}'",
        "<td>Authorization: Bearer required</td>",
    ],
)
def test_header_templates_pass(text: str) -> None:
    assert redact(text) == text


def test_a_question_after_a_header_keeps_its_mark() -> None:
    secret = _drawn(20, "$%^&*!#")
    assert_masked(f"why does Authorization: Bearer {secret}? fail", secret)
    assert redact(f"why does Authorization: Bearer {secret}? fail").endswith("]? fail")
