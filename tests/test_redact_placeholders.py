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
