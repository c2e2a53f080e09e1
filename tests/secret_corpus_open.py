"""More fakes for the corpus: the shapes of the last open points of secrets reaching git.
A table drawn with box bars whose header names the column, base64 of a credential decoded in
its own command (and the decoder's output), a value in a comment beside the name it belongs
to, recovery codes of one digit each and lists longer than 20 lines, a Yandex Cloud static
key's secret, credentials on command lines that take them behind a flag of their own, an
`Authorization:` header of any scheme, an ODBC braced password and a value fed by a
here-string. Generated, never real."""

from __future__ import annotations

import base64
import string
import uuid
from collections.abc import Callable

from tests.secret_corpus import ALNUM, Gen


def _password(g: Gen) -> str:
    return g.s(ALNUM, 7) + g.rng.choice("#%&@*") + g.s(ALNUM, 6)


def _codes(g: Gen, n: int) -> list[str]:
    out = []
    for _ in range(n):
        letters = g.s(string.ascii_lowercase, 9)
        at = g.rng.randrange(1, 9)
        out.append(letters[:at] + g.rng.choice(string.digits) + letters[at:])
    return out


def families(g: Gen) -> list[tuple[str, Callable[[str], str], str]]:
    out: list[tuple[str, Callable[[str], str], str]] = []
    bar = "\u2502"
    pw = _password(g)
    out.append(
        (
            "box-table-header",
            lambda s: (
                "\u250c\u2500\u2500\u252c\u2500\u2500\u2510\n"
                f"{bar} user  {bar} password {bar}\n"
                "\u251c\u2500\u2500\u253c\u2500\u2500\u2524\n"
                f"{bar} alice {bar} {s} {bar}\n"
            ),
            pw,
        )
    )
    pw = _password(g)
    b = base64.b64encode(f"deploy:{pw}".encode()).decode()
    out.append(("base64-decoded-here", lambda s: f"$ echo {s} | base64 -d\n", b))
    out.append(("base64-decoded-output", lambda s: f"$ echo {b} | base64 -d\ndeploy:{s}\n", pw))
    pw = _password(g)
    out.append(
        (
            "comment-after-secret-ref",
            lambda s: (
                "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n"
                f"        name: db\n        key: password  # value {s}\n"
            ),
            pw,
        )
    )
    codes = _codes(g, 24)
    listed = "\n".join(codes)
    for n in (0, 22):
        out.append(
            (f"recovery-code-{n}", lambda s: f"Your recovery codes:\n{listed}\n\nDone.", codes[n])
        )
    body = g.s(ALNUM, 30) + "_" + g.s(ALNUM, 7)
    out.append(
        ("yandex-static-secret", lambda s: f"rotated the old key {s} yesterday", "YC" + body)
    )
    pw = _password(g)
    out.append(("twine-password", lambda s: f"twine upload -u __token__ -p {s} dist/*", pw))
    tok = g.s(ALNUM, 32)
    out.append(("vault-unseal-key", lambda s: f"vault operator unseal {s}", tok))
    u = str(uuid.UUID(int=g.rng.getrandbits(128)))
    out.append(
        ("splunk-auth-scheme", lambda s: f"curl -H 'Authorization: Splunk {s}' https://x", u)
    )
    pw = _password(g)
    out.append(("odbc-braced-pwd", lambda s: f"Driver={{ODBC Driver 18}};Uid=svc;Pwd={{{s}}};", pw))
    pw = _password(g)
    out.append(("here-string", lambda s: f"op signin --raw <<< '{s}'", pw))
    return out
