"""A credential told in a sentence: a secret word, a few words, a connector, the value.

"the passcode for the vault is …", "I set the secret key to …", "login with admin / …",
"pw is …", "creds are bob/…", "my passphrase was set as …": a word naming a credential,
at most four words naming whose it is, a connector (`is`, `=`, `:`, `to`, `as`, `with`,
`are`, `now` …) and a token that reads as a credential (`credential_like`: no plain word,
host, path, address or versioned name), optionally after a user and a slash. A user and
a password given together after logging in or an account ("log in as root / …", "connect as
sa:…", "the admin account is admin / …") need no credential word, nor a connector when a slash joins them ("login admin/…").
"""

from __future__ import annotations

import re

from gitimprove.redaction.calls import credential_like
from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.pronounced import pwgen_draw
from gitimprove.redaction.values import (
    assignment_is_secret,
    is_identifier_value,
    is_value,
    kind_of,
    looks_random,
)

_WORD = (
    r"(?P<word>pass(?:word|wd|phrase|code)s?|pw|pwd|pin|secret(?:[ _-]key)?s?|tokens?|"
    r"api[ _-]?keys?|access[ _-]?keys?|credentials?|creds|log[ -]?in|sign[ -]?in)"
)
# words that may lead to the connector, and the connector itself (the last one)
_CONNECTOR = (
    r"(?:[ \t]+(?:has|have|had|been|be|now|just|was|is|are|were|set|changed|reset|updated|"
    r"still)\b,?){0,3}(?:[ \t]*[:=]|[ \t]+(?:is|are|was|were|to|as|with|becomes?)\b"
    r"|,?[ \t]+(?:it'?s|it[ \t]+is|it[ \t]+was|which[ \t]+is)\b|'s\b)"
    r"(?:[ \t]+(?:now|still|just|probably|actually))?"
)


def _check(secret: str, m: re.Match[str]) -> bool | str:
    value = secret.rstrip(".,;:!?)*_~")
    word = m.group("word").lower()
    if word.startswith(("pin", "pass code", "passcode")) and value.isdigit():
        return "password" if len(value) >= 4 else False
    if m.string[m.end() : m.end() + 1] == "(" or not credential_like(value):
        return False
    if is_identifier_value(value):
        return False
    if word.startswith("token") and not (
        looks_random(value) or len(value) >= 12 or pwgen_draw(value)
    ):
        return False  # "tokens are counted with tiktoken" is about text, not a credential
    return "password" if word.startswith(("pass", "pw", "pwd", "log", "sign")) else "credential"


_LAST_WORD = (
    r"\w*(?:password|passwd|pwd|passphrase|passcode|secret|token|key|pin|credentials?|creds)"
)
_DECLARATIONS = frozenset(
    [
        "let",
        "const",
        "var",
        "my",
        "our",
        "local",
        "export",
        "set",
        "def",
        "val",
        "auto",
        "static",
        "final",
        "private",
        "public",
        "readonly",
        "declare",
        "dim",
        "global",
        "mut",
    ]
)


def _check_spaced_key(secret: str, m: re.Match[str]) -> bool | str:
    """`"Admin Password": "…"`, `Secret Key = …`: a key of words naming a credential."""
    words = (m.group("key") or m.group("key2")).split()
    if words[0].lower() in _DECLARATIONS:
        return False  # `let token = …`: code, read by the assignment rules
    if not compiled(_LAST_WORD, re.I).fullmatch(words[-1]):
        return False  # the last word names the credential: `Admin Password`, not a sentence
    key = "_".join(words)
    quoted = m.group("dq") is not None or m.group("sq") is not None
    value = secret if quoted else secret.rstrip(".,;")
    if not assignment_is_secret(key, value, quoted=quoted, env_style=False):
        return False
    if not quoted and not credential_like(value):
        return False
    return kind_of(key)


# minutes, seconds, a fraction and a zone: what follows the hour of a timestamp
_TIME_REST = r"[0-5][0-9](?::[0-5][0-9])?(?:\.[0-9]{1,9})?(?:Z|[+-][0-9]{2}:?[0-9]{2})?"


def _bare_pair(user: str, value: str, sep: str) -> bool:
    """`login admin/<pw>`, with no connector: a slash, a user that is a name and a value
    that reads as a credential, so a path (`log in usr/bin`, `login src/main.py`), a
    fraction or a date (`login 3/4`, `logins 11/2026`) and `host:port` pass."""
    if sep != "/" or not user[:1].isalpha() or user.isdigit():
        return False
    if is_identifier_value(value) or not credential_like(value):
        return False
    return not compiled(r"[a-z0-9]+(?:[_-][a-z0-9]+)*", 0).fullmatch(value)


def _check_user_pair(secret: str, m: re.Match[str]) -> bool | str:
    """`root / <pw>`: a value beside a user; not a port, a path, a word or a uid:gid."""
    value = secret.rstrip(".,;:!?)*_~")
    if m.group("bare") is not None and not _bare_pair(m.group("user"), value, m.group("sep")):
        return False
    if m.group("sep") != "/" and value.isdigit():
        return False  # `sa:1433` is a port, `bob:1000` a uid
    if len(value) < 4 or not is_value(value) or is_identifier_value(value):
        return False
    if compiled(_TIME_REST, 0).fullmatch(value):
        return False  # a time's rest: `2002-04-18T16:56:10Z` read as `<user>:<pw>`
    if value.isalpha() and not (value.islower() or value.isupper() or value.istitle()):
        return "password"  # mixed case: `hunTer`
    return any(not c.isalpha() for c in value) and "password"


RULES: list[Rule] = [
    Rule(
        # a key of two to four words, quoted (JSON, YAML) or starting a line (INI, prose)
        "credential",
        r"(?im)(?:(?P<kq>[\"'])(?P<key>[A-Za-z][\w-]*(?:[ \t]+[\w-]+){1,3})(?P=kq)"
        r"|^[ \t>*#-]*(?P<key2>[A-Za-z][\w-]*(?:[ \t]+[\w-]+){1,3}))"
        r"[ \t]*(?:=|:)[ \t]*(?:\"(?P<dq>[^\"\n]{1,500})\"|'(?P<sq>[^'\n]{1,500})'"
        r"|(?P<bare>[^\s\"'`,;()\[\]{}<>]{4,500})(?![(\w]))",
        ("pass", "pwd", "secret", "token", "key", "cred", "pin"),
        groups=("dq", "sq", "bare"),
        needs=(" ", "\t"),
        priority=CONTEXT,
        check=_check_spaced_key,
    ),
    Rule(
        "credential",
        r"(?i)\b"
        + _WORD
        + r"\b(?:[ \t]+[\w'@.:-]{1,40},?){0,4}?"
        + _CONNECTOR
        + r"[ \t]*:?[ \t]*[\"'`]?(?:[\w.@-]{1,40}[ \t]*/[ \t]*)?"
        r"(?P<v>(?=[A-Za-z0-9!@#$%^*+~_.-])(?=[^\s\"'`]*(?:[\d!@#$%^&*+~=?]|(?-i:[a-z][A-Z])))[^\s\"'`,;/\\()\[\]{}<>]{4,100}?)(?=[.,;:!?)*_~]*(?:[\s\"'`,;]|$))",
        ("pass", "pw", "pin", "secret", "token", "key", "cred", "log", "sign"),
        groups=("v",),
        priority=CONTEXT,
        check=_check,
    ),
    Rule(
        # "log in as root / …", "connect as sa:…", "the admin account is admin / …"
        "password",
        r"(?i)\b(?:log(?:ged)?[ -]?(?:in|on)|sign(?:ed)?[ -]?in|connect(?:ed)?|ssh(?:ed)?|"
        r"su|authenticat\w*|account|creds?|credentials?)(?:[ \t]+[\w'-]{1,20}){0,3}?[ \t]*"
        r"(?:[ \t]as|[ \t]with|[ \t]is|[ \t]are|[ \t]using|:|=|(?P<bare>[ \t]))[ \t]*[\"'`]?"
        r"(?P<user>[\w.@\\-]{1,40})[ \t]*(?P<sep>/|:)[ \t]*"
        r"(?P<v>[^\s\"'`,;/()\[\]{}<>]{3,99}[^\s\"'`,;/()\[\]{}<>.?])"
        r"(?=[.,;?)]*(?:[\s\"'`]|$))",
        ("log", "sign", "connect", "ssh", "su ", "authenticat", "account", "cred"),
        groups=("v",),
        needs=("/", ":"),
        priority=CONTEXT,
        check=_check_user_pair,
    ),
]
