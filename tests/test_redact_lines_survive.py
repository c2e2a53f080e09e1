"""A masked secret never swallows the text after it: the lines, keys and words that follow a
secret survive byte for byte (LF and CRLF), and one secret gives one marker wherever it
appears (the marker's hash is of the secret alone, never of what followed it)."""

from __future__ import annotations

import hashlib
import re

import pytest

from gitimprove import redaction
from tests.secret_corpus import corpus

MARKERS = re.compile(r"\[REDACTED:[a-z0-9-]+:([0-9a-f]{4})\]")
PW = "Xk29vLqPz81Wm"
GHP = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
AWS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8Lm2Nv4T"
HEXTOK = "7f3e9b2a4c1d8e6f"
EOLS = ["\n", "\r\n"]


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()[:4]


# (the line holding the secret, the secret, the lines after it): .env, YAML, shell, CI
# logs, git output, config files
SHAPES = [
    ("DB_PASSWORD={}", PW, ["DB_HOST=db.acme.io", "DB_PORT=5432", "DEBUG=true"]),
    ("GITHUB_TOKEN={}", GHP, ["NODE_ENV=production"]),
    ("export GITHUB_TOKEN={}", GHP, ["export NODE_ENV=production", "npm run build"]),
    ("export AWS_SECRET_ACCESS_KEY={}", AWS, ["export AWS_REGION=us-east-1"]),
    ("AWS_SECRET_ACCESS_KEY={}", AWS, ["AWS_DEFAULT_REGION=eu-west-1", "AWS_PROFILE=ci"]),
    ("password: {}", PW, ["username: admin"]),
    ("  password: {}", PW, ["  username: admin", "  port: 5432"]),
    ("- password: {}", PW, ["- name: web", "  image: nginx"]),
    ('"password": "{}",', PW, ['"user": "admin",', '"port": 5432']),
    ("token: {}", HEXTOK, ["count=3"]),
    ("token: {}", HEXTOK, ["count: 3", "retries: 5"]),
    ("api_token = {}", GHP, ["timeout = 30", "[server]"]),
    ("set PASSWORD={}", PW, ["set USER=admin"]),
    ("$env:GITHUB_TOKEN = '{}'", GHP, ["$env:NODE_ENV = 'production'"]),
    ("Run echo {}", GHP, ["Run actions/checkout@v4", "Post job cleanup."]),
    ("remote: Invalid username or token {}", GHP, ["fatal: Authentication failed", "done"]),
    ("t {}", GHP, ["and the rest of the sentence"]),
    ("using {}", GHP, ["Run npm ci"]),
    ("PGPASSWORD={}", PW, ["PGUSER=app", "psql -h db app"]),
]


@pytest.mark.parametrize("eol", EOLS, ids=["lf", "crlf"])
@pytest.mark.parametrize("shape", SHAPES, ids=[s[0] + "|" + s[2][0] for s in SHAPES])
def test_the_lines_after_a_secret_survive_byte_for_byte(
    shape: tuple[str, str, list[str]], eol: str
) -> None:
    line, secret, after = shape
    tail = eol + eol.join(after) + eol
    out = redaction.redact(line.format(secret) + tail)
    assert secret not in out
    assert out.endswith(tail), out
    head = out[: len(out) - len(tail)]
    assert "\n" not in head and head.count("[REDACTED:") == 1, out
    assert MARKERS.findall(out) == [_hash(secret)], out


# outputs of tools where nothing is a secret, whose lines used to be joined into one
ORDINARY = [
    " create mode 100644 src/auth/token_store.py\nTo github.com:acme/app.git\n"
    "   84c15ef..b4664b4  main -> main",
    "Writing objects: 100% (5/5), done.\nTo github.com:acme/token_service.git\n"
    " * [new branch]      fix-token -> fix-token",
    "session_key: 3f2a9c0d1e4b5a6c\nsession_ttl: 3600",
    "api_key: abc123def456\nother: 1",
    "api_key: your_api_key_here\nregion: us-east-1",
    '# token = 1*tchar\n# tchar = "!" / "#"',
]


@pytest.mark.parametrize("eol", EOLS, ids=["lf", "crlf"])
@pytest.mark.parametrize("text", ORDINARY, ids=range(len(ORDINARY)))
def test_ordinary_lines_are_left_alone(text: str, eol: str) -> None:
    text = text.replace("\n", eol)
    assert redaction.redact(text) == text


def test_a_digest_ends_at_the_line_break() -> None:
    digest = "3f9a0c4e1b2d7a8c9e0f1a2b3c4d5e6f"
    for eol in EOLS:
        text = f"Cache restored from key: Linux-pip-{digest}{eol}Run actions/checkout@v4{eol}"
        out = redaction.redact(text)
        assert out.endswith(f"{eol}Run actions/checkout@v4{eol}"), out


def test_one_secret_gives_one_marker_wherever_it_appears() -> None:
    places = [
        "GITHUB_TOKEN={}\nNODE_ENV=production",
        "GITHUB_TOKEN={}\r\nDEBUG=1",
        "token: {}\nusername: admin",
        "curl -H 'Authorization: token {}' https://api.github.com",
        "t {}\nand more",
        "{}",
    ]
    found = set()
    for place in places:
        found.update(MARKERS.findall(redaction.redact(place.format(GHP))))
    # wrapped by a terminal, at any cut: still the secret alone
    for cut in (4, 9, 20, len(GHP) - 3):
        for sep in ("\n", "\r\n", "\n    "):
            out = redaction.redact(f"export GITHUB_TOKEN={GHP[:cut]}{sep}{GHP[cut:]}\nls\n")
            assert out.endswith("\nls\n") and GHP[cut:] not in out, out
            found.update(MARKERS.findall(out))
    assert found == {_hash(GHP)}


def _single_line_fakes() -> list[tuple[str, str, str]]:
    out = []
    for f in corpus(seed=23):
        if "\n" in f.text or "\r" in f.text or f.text.count(f.secret) != 1:
            continue
        if redaction.redact(f.text) == f.text:
            continue
        out.append((f.family, f.text, f.secret))
    return out


FAKES = _single_line_fakes()
# lines that may follow any of them: keys of .env, YAML, shell, CI logs, git output, prose
FOLLOWERS = [
    "DB_HOST=db.acme.io",
    "export AWS_REGION=us-east-1",
    "username: admin",
    "  port: 5432",
    "Run actions/checkout@v4",
    "To github.com:acme/app.git",
    "   84c15ef..b4664b4  main -> main",
    "and then it failed",
    "count=3",
]


@pytest.mark.slow
def test_every_family_keeps_the_lines_after_it() -> None:
    assert len(FAKES) >= 250
    bad = []
    for family, text, _secret in FAKES:
        alone = redaction.redact(text)
        for n, follower in enumerate(FOLLOWERS):
            eol = EOLS[n % 2]
            tail = eol + follower + eol + "DEBUG=true"
            out = redaction.redact(text + tail)
            # the lines after survive, and the line itself is masked as it is alone
            if out != alone + tail:
                bad.append((family, follower, out))
    assert not bad, bad[:5]


def test_invalid_utf8_bytes_in_a_blob_are_kept() -> None:
    raw = b"name: caf\xe9 \xff\xfe\nGITHUB_TOKEN=%s\n\x80tail\xc3\n" % GHP.encode()
    out = redaction.redact_blob(raw)
    assert GHP.encode() not in out
    assert out.startswith(b"name: caf\xe9 \xff\xfe\nGITHUB_TOKEN=[REDACTED:")
    assert out.endswith(b"]\n\x80tail\xc3\n")


# a type annotation between a credential's name and its quoted literal
TYPED = [
    'const password: string = "{}";',
    'let apiToken: string = "{}"',
    'password: str = "{}"',
    "    db_password: Optional[str] = '{}'",
    'val dbPassword: String = "{}"',
    'let password: String = "{}"',
    'let password: &str = "{}";',
    'private var clientSecret: String = "{}"',
]


@pytest.mark.parametrize("line", TYPED, ids=range(len(TYPED)))
def test_a_type_annotated_declaration_is_masked_inside_its_quotes(line: str) -> None:
    out = redaction.redact(line.format(PW) + "\nnext = 1\n")
    assert PW not in out and out.endswith("\nnext = 1\n"), out
    assert MARKERS.findall(out) == [_hash(PW)]
    quote = line[line.index("{}") - 1]
    assert f"{quote}[REDACTED:" in out, out


@pytest.mark.parametrize(
    "line",
    [
        'password: str = ""',
        'password: str = "password"',
        "password: str = field(default=None)",
        'token: Token = next_token("x")',
        'secret_key: str = os.environ["SECRET_KEY"]',
    ],
)
def test_a_type_annotated_declaration_of_no_literal_is_left(line: str) -> None:
    assert redaction.redact(line) == line
