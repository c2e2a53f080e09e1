"""What documentation writes where a credential goes, and what names a credential without
being one, pass through; the real thing in the same place is masked. Generated, never real."""

from __future__ import annotations

import random
import string

import pytest

from gitimprove.redaction import redact

RNG = random.Random(1402)


def _secret(n: int = 14) -> str:
    """Letters of both cases and digits at random, with a digit and both cases."""
    while True:
        t = "".join(RNG.choice(string.ascii_letters + string.digits) for _ in range(n))
        if all(any(f(c) for c in t) for f in (str.isupper, str.islower, str.isdigit)):
            return t


PLACEHOLDERS = [
    # the word for what goes there, or the user's name again, as the password of a pair
    "curl -u user:pass https://api.example.com/v1",
    "curl -i -u 'guest:guest' http://localhost:8080/",
    "curl --user admin:admin --digest http://127.0.0.1/",
    "curl -u username:token https://x.example.com",
    "curl -u myuser:apikey https://x.example.com",
    "wget --user=bob --auth=bob:secret http://x/",
    "git clone https://user:token@git.example.com/r.git",
    "amqp://guest:guest@localhost:5672/",
    "postgres://app:pwd@db:5432/app",
    # a query value that is its own name again
    "GET https://api.example.com/v2/users?access_token=ACCESS_TOKEN",
    "https://maps.example.com/js?key=KEY&callback=init",
    "https://example.com/api?api_key=API_KEY&q=1",
    "https://example.com/api?apiKey=apiKey",
    # a named argument naming an id or a variable, not the credential the call takes
    "withCredentials([usernamePassword(credentialsId: '{uuid}', "
    "usernameVariable: 'USER', passwordVariable: 'PASS')]) {{",
    "withCredentials([sshUserPrivateKey(credentialsId: '{uuid}', keyFileVariable: 'KEY')])",
    "withCredentials([string(credentialsId: '{uuid}', variable: 'TOKEN')])",
]


def _uuid() -> str:
    h = "".join(RNG.choice("0123456789abcdef") for _ in range(32))
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@pytest.mark.parametrize("text", PLACEHOLDERS, ids=range(len(PLACEHOLDERS)))
def test_placeholders_and_names_of_credentials_pass(text: str) -> None:
    text = text.format(uuid=_uuid())
    assert redact(text) == text


REAL = [
    "curl -u deploy:{s} https://api.example.com/v1",
    "curl --user 'ci:{s}' http://127.0.0.1/",
    "wget --user=bob --auth=bob:{s} http://x/",
    "git clone https://user:{s}@git.example.com/r.git",
    "amqp://guest:{s}@localhost:5672/",
    "GET https://api.example.com/v2/users?access_token={s}",
    "https://maps.example.com/js?key={s}&callback=init",
    "withCredentials([usernamePassword(credentialsId: 'ci', password: '{s}')])",
    "login(user='bob', password='{s}')",
    "usernamePassword('{s}')",
]


@pytest.mark.parametrize("template", REAL, ids=range(len(REAL)))
def test_the_real_thing_in_the_same_place_is_masked(template: str) -> None:
    secret = _secret()
    out = redact(template.format(s=secret))
    assert secret not in out and "[REDACTED:" in out, out


NAMES = [
    # a Maven, Gradle or Ivy coordinate under a group id holding a credential's word
    'notes = "Maven - io.jsonwebtoken:jjwt-jackson-0.11.2"',
    "implementation 'io.jsonwebtoken:jjwt-api:0.12.5'",
    "runtimeOnly 'io.jsonwebtoken:jjwt-impl:0.12.5:runtime'",
    "implementation 'com.auth0:java-jwt:4.4.0'",
    "org.keycloak.token:keycloak-core:24.0.1",
    # what a key names comes before `to` / `for`
    "  keyVaultToStoreSecrets: cmp2-qat-1208358310",
    "path_to_key: deploy-prod-2024-01",
    "vaultForTokens: prod-vault-01",
    # a provider-like prefix inside a file's name
    "https://indieweb.org/images/3/35/2018-250-xoxo-indieweb-1.jpg",
    "<img src=/assets/box/video_box.ico-{hex}.png>",
    "see /static/img/xoxb-banner-2023-final.png",
    "url(../fonts/app.ico-{hex}.woff2)",
]


@pytest.mark.parametrize("text", NAMES, ids=range(len(NAMES)))
def test_coordinates_purposes_and_file_names_pass(text: str) -> None:
    text = text.format(hex="".join(RNG.choice("0123456789abcdef") for _ in range(32)))
    assert redact(text) == text


def test_tokens_beside_those_names_are_masked() -> None:
    body = _secret(24)
    slack = "xo" + "xb-"  # (built here: the file holds no token's prefix)
    for text, secret in (
        (f"io.jsonwebtoken:{body}", body),
        (f"password_for_db: {body}", body),
        (f"key_to_sign: {body}", body),
        (f"SLACK_TOKEN={slack}{body[:10]}-{body[10:]}", body[10:]),
        (f"slack: {slack}{body[:10]}-{body[10:]}.", body[10:]),
        (f"infracost: ico-{body}{body[:8]}", body),
    ):
        out = redact(text)
        assert secret not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize(
    "text",
    [
        "user:\n  token: Punctuation\n",
        "user:\n  id: {uuid}\n  token: PageToken\n",
        "events:\n  user:\n    token: session-cookie-name\n",
    ],
)
def test_a_name_under_a_users_token_passes(text: str) -> None:
    text = text.format(uuid=_uuid())
    assert redact(text) == text


def test_a_users_token_of_any_real_shape_is_masked() -> None:
    bootstrap = "".join(RNG.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(22))
    for value in (_uuid(), f"{bootstrap[:6]}.{bootstrap[6:]}", _secret(32)):
        out = redact(f"users:\n- name: dev\n  user:\n    token: {value}\n")
        assert value not in out and "[REDACTED:" in out, out


def test_prose_after_a_line_naming_a_credential_column_is_no_cell() -> None:
    text = (
        '    """A query\'s credential, unless the value only says its name again\n'
        '    (`?access_token=ACCESS_TOKEN`, `&api_key=API_KEY`: a placeholder)."""\n'
    )
    assert redact(text) == text


def test_a_cookie_headers_names_stay_and_its_values_go() -> None:
    sid = "s%3A" + _secret(16) + "." + _secret(27)
    for header in ("Set-Cookie", "cookie"):
        out = redact(f"{header}: connect.sid={sid}; Path=/; HttpOnly")
        assert out.startswith(f"{header}: connect.sid=[REDACTED:") and sid[4:12] not in out, out
    out = redact('{"cookie": "connect.sid=' + sid + '"}')
    assert sid[4:12] not in out, out
