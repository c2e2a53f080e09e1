"""A credential written in base64 and decoded in the same command or call (`echo <b64> |
base64 -d`, `base64 --decode <<< <b64>`, `b64decode("…")`, `atob('…')`, `Buffer.from('…',
'base64')`, `FromBase64String("…")`) is masked when what it encodes is a credential on its
own (a password, a token, `user:password`), and so is the decoded text where the command's
output shows it. Base64 of prose, a path, a host and port, JSON or a placeholder pair passes."""

from __future__ import annotations

import base64
import random
import string

import pytest

from gitimprove.redaction import redact

_ALNUM = string.ascii_letters + string.digits


def _password(rnd: random.Random) -> str:
    head = "".join(rnd.choice(_ALNUM) for _ in range(rnd.randint(5, 9)))
    tail = "".join(rnd.choice(_ALNUM) for _ in range(rnd.randint(3, 7)))
    return head + rnd.choice("!#$%&*@") + tail + rnd.choice(string.digits)


def _token(rnd: random.Random, n: int) -> str:
    return "".join(rnd.choice(_ALNUM) for _ in range(n - 3)) + "aZ9"


def _b64(text: str, rnd: random.Random) -> str:
    raw = text.encode()
    return (
        base64.urlsafe_b64encode(raw).decode()
        if rnd.random() < 0.2
        else base64.b64encode(raw).decode()
    )


DECODED = [
    "echo {b} | base64 -d",
    "echo -n '{b}' | base64 --decode",
    "printf '%s' \"{b}\" | base64 -D",
    "echo {b} | openssl base64 -d -A",
    "base64 -d <<< {b}",
    "base64 --decode <<< '{b}'",
    "creds=$(echo {b} | base64 -d)",
    "python3 -c 'import base64; print(base64.b64decode(\"{b}\"))'",
    "raw = base64.urlsafe_b64decode('{b}').decode()",
    "const s = atob('{b}');",
    "Buffer.from('{b}', 'base64').toString('utf8')",
    '[Text.Encoding]::UTF8.GetString([Convert]::FromBase64String("{b}"))',
    'data, _ := base64.StdEncoding.DecodeString("{b}")',
    'new String(Base64.getDecoder().decode("{b}"))',
    "Base64.decode64('{b}')",
    "base64_decode('{b}')",
]


@pytest.mark.parametrize("template", DECODED, ids=range(len(DECODED)))
def test_a_credential_decoded_in_its_own_command_is_masked(template: str) -> None:
    for seed in range(12):
        rnd = random.Random(seed)
        pw = _password(rnd)
        plain = rnd.choice([pw, f"deploy:{pw}", f"ci-bot@acme.io:{pw}", _token(rnd, 24)])
        b = _b64(plain, rnd)
        out = redact(template.format(b=b))
        assert b[:12] not in out and b[-10:] not in out, out


def test_what_the_decoder_printed_is_masked_too() -> None:
    for seed in range(12):
        rnd = random.Random(seed)
        pw = _password(rnd)
        b = base64.b64encode(f"admin:{pw}".encode()).decode()
        text = f"$ echo {b} | base64 -d\nadmin:{pw}\n$ ls\nREADME.md\n"
        out = redact(text)
        assert pw not in out and b[:12] not in out, out
        assert out.endswith("$ ls\nREADME.md\n")


@pytest.mark.parametrize(
    "plain",
    [
        "Hello world, this is fine",
        "hello:world",
        "user:password",
        "alice:alice",
        "localhost:8080",
        "/usr/local/bin/python3",
        '{"a": 1, "b": [2, 3]}',
        "SomeConfigValue",
        "main-branch-v2",
        "https://example.com/a/b",
    ],
)
@pytest.mark.parametrize("template", DECODED[:6] + DECODED[9:11])
def test_base64_of_ordinary_text_decoded_in_a_command_passes(plain: str, template: str) -> None:
    text = template.format(b=base64.b64encode(plain.encode()).decode())
    assert redact(text) == text
