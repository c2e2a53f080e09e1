"""A token wrapped across lines (a terminal, a log or an editor broke it: a newline, or a
newline and indentation, anywhere inside it) is masked whole: neither its head nor its
rest stays, at every cut point, for every token-like fake of the corpus."""

from __future__ import annotations

import re

import pytest

from gitimprove import redaction
from tests.secret_corpus import Fake, corpus

MARKERS = re.compile(r"\[REDACTED:[a-z0-9-]+:[0-9a-f]{4}\]")
# Families whose wrapped secret is not masked whole, and why (each a different view):
NOT_WRAPPED = {
    # the secret is encoded: the break sits inside the encoded text, which the decoded
    # view reads line by line
    "html-entity",
    "html-hex-entity",
    "json-unicode-escape",
    "url-encoded-equals",
    "url-encoded-space",
    "double-url-encoded",
    "json-in-json",
    "json-in-json-twice",
    # a table cell or a YAML block: a line break ends the cell or the line of the value
    "csv-password-column",
    "tsv-token-column",
    "markdown-table",
    "yaml-folded",
    "hcl-heredoc",
    "k8s-env-pair",
    "yaml-block-wrapped",
    "psql-wrapped-cell",
    # all letters: a wrapped run of letters reads as words
    "passphrase-letters",
    # found by its URL and user id beside it, which the fake splits from the token
    "asana-pat",
    # a Go DSN's password is found by the `@tcp(` after it; the wrap view does not join a
    # break inside a `user:password` pair with no key naming it
    "go-mysql-dsn",
    # a here-document's body is read as a value when it is one line, and a Terraform
    # block's value by the block around it: the wrap view sees only the lines beside a wrap
    "ruby-squiggly-heredoc",
    "php-heredoc",
    "shell-cat-heredoc",
    "terraform-variable-default",
    "terraform-sensitive-variable",
}
SEPARATORS = ["\n", "\n    ", "\r\n", "\n\t"]


def _tokens() -> list[Fake]:
    out = []
    for f in corpus(seed=41):
        s = f.secret
        if len(s) >= 16 and not any(c.isspace() for c in s) and f.text.count(s) == 1:
            out.append(f)
    return out


TOKENS = [f for f in _tokens() if f.family not in NOT_WRAPPED]


def _cuts(secret: str) -> list[int]:
    n = len(secret)
    return sorted({4, 5, 6, 8, n // 3, n // 2, n - 6, n - 4, n - 2})


def _leaks(text: str, secret: str, cut: int, around: str) -> list[str]:
    left = MARKERS.sub("", redaction.redact(text))
    head, rest = secret[:cut], secret[cut:]
    return [p for p in (head, rest) if len(p) >= 4 and p in left and p not in around]


def test_the_wrapped_families_are_most_of_the_corpus() -> None:
    assert len(TOKENS) >= 120 and len({f.family for f in TOKENS}) >= 100


_ESCAPES = re.compile(r"\x1b\[[0-9;]*m|[\u00ad\u200b-\u200f\u2060\ufeff]")


def _wrapped(text: str, secret: str, cut: int, sep: str) -> tuple[str, str]:
    """`text` as a terminal shows it with the secret broken after `cut` characters (and
    what is around the secret): the secret's line is padded so that the line before the
    break is full at 80, 120 or 160 visible characters (colour codes take no room); a
    longer line is wrapped at 80 all along, as a terminal does."""
    at = text.index(secret)
    start = text.rfind("\n", 0, at) + 1
    column = len(_ESCAPES.sub("", text[start:at] + secret[:cut]))
    width = next((w for w in (80, 120, 160) if w >= column), 0)
    if width:
        wide = text[:start] + " " * (width - column) + text[start:]
        return wide.replace(secret, secret[:cut] + sep + secret[cut:]), wide.replace(secret, "")
    wide = text[:start] + " " * (-column % 80) + text[start:]
    end = wide.index(secret) + len(secret)
    line = wide[start:end]
    assert not _ESCAPES.search(line)
    rows = [line[i : i + 80] for i in range(0, len(line), 80)]
    return wide[:start] + sep.join(rows) + wide[end:], wide.replace(secret, "")


@pytest.mark.slow
@pytest.mark.parametrize("fake", TOKENS, ids=[f.family for f in TOKENS])
def test_a_wrapped_token_is_masked_whole(fake: Fake) -> None:
    """A terminal wraps a line at its width: the line before the break is full."""
    for cut in _cuts(fake.secret):
        for sep in SEPARATORS:
            s = fake.secret
            text, around = _wrapped(fake.text, s, cut, sep)
            assert not _leaks(text, s, cut, around), (cut, sep, redaction.redact(text))


GH = "github_pat_11AQ3ZK7Y0mXvP2s9LtQ4n_" + "Hx7Kc2Vb9Nq4Wm1Zr8Ts5Yp3Lg6Fd0Ja" * 2
SLACK = "https://hooks.slack.com/services/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"
DISCORD = "https://discord.com/api/webhooks/123456789012345678/" + "aB3dE5fG7hJ9kL1m" * 4 + "nP3q"
TELEGRAM = "7123456789:AAH" + "k3Jd9QmZ2xW7pL4vB8nR1tY6cF5hG0sA"  # AA + 33
DYNATRACE = "dt0c01.ABCDEFGHIJ2345KLMNOPQRST." + "A1B2C3D4E5F6G7H8" * 4
TWILIO = "SK" + "0f1e2d3c4b5a69788796a5b4c3d2e1f0"


@pytest.mark.parametrize(
    "template",
    [
        "  at client.send() token {} (retry 3/5)",
        "curl -X POST -d @msg.json {}",
        "export WEBHOOK={}\nnext line",
        "│ {} │",
        "    Authorization: Bearer {}",
    ],
)
@pytest.mark.parametrize("secret", [GH, SLACK, DISCORD, TELEGRAM, DYNATRACE, TWILIO])
def test_every_cut_point_of_a_wrapped_provider_token(template: str, secret: str) -> None:
    for cut in range(3, len(secret) - 1):
        for sep in ("\n", "\n  "):
            text = template.format(secret[:cut] + sep + secret[cut:])
            left = MARKERS.sub("", redaction.redact(text))
            # no run of 6 of the secret's characters stays (the URL's host may)
            pieces = [secret[i : i + 6] for i in range(len(secret) - 5)]
            shown = [p for p in pieces if p in left and p not in template and "." not in p]
            assert not shown or all(
                p in "https://hooks.slack.com/services/discord.com/api/webhooks/" for p in shown
            ), (
                cut,
                redaction.redact(text),
            )


ORDINARY = [
    "INVALID_ACCESS_ERR             = 15\nVALIDATION_ERR                 = 16",
    "ASN1_BOOLEAN = c_int\nASN1_INTEGER = asn1_string_st",
    "    token = Punctuation\n    else:\n        token = Name",
    "Ran 1523 tests in 12.4s\nOK (skipped=12)\nversion2024rc1\nbuild finished",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: A U Thor <a@example.org>",
    "sha256:3f9a0c4e1b2d\n7a8c9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b",
    "Successfully installed click-8.1.7\npygit2-1.15.0 tomlkit-0.13.2",
    "See https://docs.python.org/3/library/\nfunctions.html#open for details",
    # a quote that closes a literal at a line's end opens nothing
    'Cmd("wmic", opts="/password:"),\n    Cmd("sc.exe", opts="password="),',
    "x = f('a', key='k3y:'),\n    g('b', key='v4l:')",
]


@pytest.mark.parametrize("text", ORDINARY, ids=range(len(ORDINARY)))
def test_lines_that_only_sit_next_to_each_other_are_not_joined(text: str) -> None:
    assert redaction.redact(text) == text


OWN_LINES = [
    "Traceback (most recent call last):",
    "Running tests",
    "Collecting requests",
    "Step 3/10 : RUN make",
    "200 OK",
    "2026-11-23 10:00:01 INFO ok",
    "7f3a2b1 fix: typo",
    "HTTP/1.1 401 Unauthorized",
    "INFO starting worker",
    "Downloading",
    "done.",
    "v1.2.3",
]
KEYED = ["API_TOKEN={}", "password: {}", "Authorization: Bearer {}", "--client-secret {}"]
VARIABLE = "Vb7Nq2Lx9Pz4Kd8Rw3Ht6Jm1"


@pytest.mark.parametrize("nxt", OWN_LINES)
def test_a_full_line_ending_in_a_token_keeps_a_next_line_of_its_own(nxt: str) -> None:
    """A line exactly at a terminal's width that ends in a variable-length secret is not
    evidence enough that the next line continues it when that line reads as its own."""
    for width in (80, 120):
        for shape in KEYED:
            line = shape.format(VARIABLE)
            text = " " * (width - len(line)) + line + "\n" + nxt + "\n"
            out = redaction.redact(text)
            assert VARIABLE not in out and out.endswith("]\n" + nxt + "\n"), out
            assert redaction.marker("x", VARIABLE)[-6:] in out, out


@pytest.mark.parametrize("rest", ["Qm4r", "Qm4rT8xW2z", "x9", "Qm4rT8 and more", "Zx81 HTTP/1.1"])
def test_a_full_line_ending_in_a_token_joins_the_rest_of_it(rest: str) -> None:
    for shape in KEYED:
        line = shape.format(VARIABLE)
        text = " " * (80 - len(line)) + line + "\n" + rest + "\n"
        token = rest.split()[0]
        out = redaction.redact(text)
        assert VARIABLE not in out and token not in out.split(), out
        assert redaction.marker("x", VARIABLE + token)[-6:] in out, out


def test_a_key_left_open_before_a_quote_left_open_is_read_in_text_order() -> None:
    """A key whose value goes on to the next line, then further down a quoted value its
    line leaves open: both joins are read, in text order (they were found the other way
    round, and joining them so lost track of the text: an IndexError on a licence file)."""
    licence = (
        "Files: gdk/win32/wintab.h\n       gdk/win32/pktdef.h\n"
        ' Attribution-ShareAlike 4.0 International Public License ("Public\n'
        ' License"). To the extent this Public License may be interpreted as a'
    )
    assert redaction.redact(licence) == licence
    head, tail = "Xk29vLqP", "z81WmQ7r"
    quoted_head, quoted_tail = "pR4tY8wQ", "n2Vb6Kd3"
    text = f'API_TOKEN={head}\n{tail}\nnotes: ok\ndb_key = "{quoted_head}\n{quoted_tail}"\n'
    out = redaction.redact(text)
    for piece in (head, tail, quoted_head, quoted_tail):
        assert piece not in out, out


def test_a_flaw_of_the_redactor_keeps_the_record_and_leaks_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rule that raises on some text (a flaw like the one above) does not lose the text
    nor store it raw: it is masked line by line, and a line that fails alone is masked
    whole."""
    import random
    import string

    from gitimprove.redaction import engine

    rnd = random.Random(14)
    body = "".join(rnd.choice(string.ascii_letters + string.digits) for _ in range(36))
    leaked = "gh" + "p_" + body
    poison = "Z" + "q7" * 20
    real = engine.RuleSet.spans

    def flawed(self: engine.RuleSet, text: str, *args: object, **kw: object) -> object:
        if poison in text:
            raise IndexError("a flaw")
        return real(self, text, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(engine.RuleSet, "spans", flawed)
    text = f"push failed: {leaked}\n{poison}\nok\n"
    out = redaction.redact(text)
    assert leaked not in out and poison not in out
    assert out.endswith("\nok\n") and "[REDACTED:unmaskable:" in out
    blob = redaction.redact_blob(text).decode()
    assert leaked not in blob and poison not in blob and blob.endswith("ok\n")


_KEYED = [
    "x-api-key: {v}",
    '{{"client_secret": "{v}"}}',
    'privateaiToken = "{v}"',
    "DATABASE_PASSWORD={v}",
    'SNYK_TOKEN = "{v}"',
]


@pytest.mark.parametrize("form", _KEYED, ids=range(len(_KEYED)))
def test_a_key_a_terminal_wrapped_is_read_with_its_value(form: str) -> None:
    """A log line wrapped at 80 columns inside the name of the key (`x-api-k` / `ey: …`,
    `{"clien` / `t_secret": "…"`): the value after the rest of the name and its `:` or `=`
    is masked like the line unwrapped."""
    import random
    import string

    rng = random.Random(form)
    alphabet = string.ascii_letters + string.digits
    for _ in range(3):
        value = "".join(rng.choice(alphabet) for _ in range(24)) + "7Qz"
        line = form.format(v=value)
        key_end = line.index(value) - 1
        start = len(line) - len(line.lstrip('{"'))
        for cut in range(start + 4, key_end):  # a break inside the key, after 4 characters
            if not all(c.isalnum() or c in "_-" for c in line[cut - 1 : cut + 1]):
                continue
            head = ("ERROR request failed with credentials " + "." * 80)[: 80 - cut]
            text = head + line[:cut] + "\n" + line[cut:] + " status=403"
            out = redaction.redact(text)
            assert value[:12] not in out, text
