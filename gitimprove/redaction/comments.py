"""A credential's value written in a comment beside the line that names it.

A manifest or a config file takes a credential from elsewhere (`secretKeyRef:` / `key:
password`, `password: ${DB_PASSWORD}`, `- name: DB_PASSWORD`), and a note at the end of the
line gives the value away: `key: password  # value <pw>`, `DB_TOKEN=${DB_TOKEN}  # <pw>`,
`token: !vault |  // was <pw>`. The line's code must name a credential (a key or a value
naming one) and the comment must be one credential-like token, after at most two words
saying what it is (`value`, `was`, `default`, `old`, `is`, …) and an optional `:` or `=`;
a comment of words (`# value comes from vault`), a path, a host or a version passes.
"""

from __future__ import annotations

import re

from gitimprove.redaction.calls import credential_like
from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.keynames import key_strength, kind_of, words
from gitimprove.redaction.values import looks_random, password_evidence

# the words a comment may say before the value
_LEADS = words(
    "value val was is default old new current real actual prod dev test local it pw pass "
    "password passwd secret token key the one"
)
_COMMENT = (
    r"(?m)^(?P<code>[^\n#]{1,300}?)[ \t](?:#|//)[ \t]*"
    r"(?P<lead>(?:[A-Za-z]{1,12}[ \t]+){0,2}[A-Za-z]{1,12}[ \t]*[:=]?[ \t]+|[:=][ \t]*)?"
    r"(?P<v>[^\s]{6,128})[ \t]*\r?$"
)


def _names_credential(code: str) -> str | None:
    """The name in `code` that names a credential (a key or a value), or None."""
    for w in compiled(r"[A-Za-z][\w.-]{1,60}", 0).finditer(code):
        if key_strength(w.group()) == "strong":
            return w.group()
    # a reference to one: `passwordSecretRef`, `tokenFrom`, `secretKeyRef: {key: api-token}`
    m = compiled(r"(?i)passw(?:or)?d|passphrase|secret|token|api[_-]?key|credential", 0).search(
        code
    )
    return m.group() if m else None


def _check(secret: str, m: re.Match[str]) -> bool | str:
    name = _names_credential(m.group("code"))
    if name is None:
        return False
    lead = (m.group("lead") or "").lower().replace(":", " ").replace("=", " ").split()
    if any(w not in _LEADS for w in lead):
        return False
    value = secret.strip("\"'`")
    if not credential_like(value) or value.lower() in _LEADS:
        return False
    if not (password_evidence(value) or looks_random(value, min_len=12)):
        return False
    return kind_of(name)


RULES: list[Rule] = [
    Rule(
        "credential",
        _COMMENT,
        ("pass", "pwd", "secret", "token", "key", "cred", "auth"),
        groups=("v",),
        needs=("#", "//"),
        priority=CONTEXT,
        check=_check,
        whole=True,  # the comment's one token is the value, `&` and `;` included
    ),
]
