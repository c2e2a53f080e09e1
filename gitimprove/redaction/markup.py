"""Credentials laid out by markup: Markdown emphasis, table rows, inline code, definition
lists, HTML label/value cells.

- `**Password:** …`, `- **DB password**: …`, `__API key__ = …`: an emphasised key;
- `| API token | … |`: a table row whose first cell names a credential and whose next cell
  holds it (a settings table with descriptions, not values, reads as prose and passes);
- ``Set `DB_PASSWORD` to `…` ``, `` `api_key` is `…` ``: a key and its value in inline code;
- `Password` / `: …` (a definition list), `:password: …` (a field list), `<dt>Password</dt>
  <dd>…</dd>`, `<th>Token</th><td>…</td>`.
The key must name a credential (`key_strength`) and the value read as one (`credential_like`
when bare, any real value when quoted in code), so "`password` is `required`" passes.
"""

from __future__ import annotations

import re

from gitimprove.redaction.calls import credential_like
from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.values import (
    assignment_is_secret,
    is_identifier_value,
    key_strength,
    kind_of,
)

_NOT_VALUE = frozenset(
    {"required", "optional", "string", "secret", "none", "null", "true", "false", "yes", "no"}
)


# a file's path: directories and a name with an extension, or an absolute path
_PATH = r"(?:[\w.-]+/)+[\w-]+\.[A-Za-z][A-Za-z0-9]{0,4}|~?/(?:[\w.-]+/)*[\w.-]+"


def pair_is_secret(key: str, value: str, *, quoted: bool) -> bool | str:
    """Whether a key (a label, a cell, a term) and the value beside it give a credential."""
    key = key.strip(" \t*_`:：").strip()
    value = value.strip()
    value = value.strip("`") if quoted else value.rstrip(".,;:!?)*_~")
    if any(c.isspace() for c in value):
        return False  # a sentence or a code fragment, not one credential
    if not key or key_strength(key) is None or value.lower() in _NOT_VALUE:
        return False
    if compiled(_PATH, 0).fullmatch(value):
        return False  # `secret_key_base` to `config/test.exs`: where it goes, not what it is
    if not assignment_is_secret(key, value, quoted=quoted, env_style=False):
        return False
    if not quoted and (not credential_like(value) or is_identifier_value(value)):
        return False
    return kind_of(key)


def _check_bare(secret: str, m: re.Match[str]) -> bool | str:
    return pair_is_secret(m.group("key"), secret, quoted=m.group("tick") is not None)


def _check_code(secret: str, m: re.Match[str]) -> bool | str:
    return pair_is_secret(m.group("key"), secret, quoted=True)


_KW = ("pass", "pwd", "secret", "token", "key", "cred", "auth", "pin")
_VALUE = r"(?:(?P<tick>`)(?P<code>[^`\n]{4,300})`|(?P<v>[^\s`|<>]{4,300}?))"
_AFTER = r"(?=[.,;:!?)*_~]*(?:[\s|<]|$))"

RULES: list[Rule] = [
    Rule(
        # **Password:** …, - **DB password**: …, __API key__ = …
        "credential",
        r"(?m)(?:^|(?<=[ \t(>]))(?P<em>\*\*|__|\*|_)(?P<key>[A-Za-z][\w .'/-]{1,39}?)[ \t]*[:：=]?"
        r"(?P=em)(?![\w*])[ \t]*[:：=]?[ \t]*" + _VALUE + _AFTER,
        _KW,
        groups=("code", "v"),
        needs=("*", "_"),
        priority=CONTEXT,
        check=_check_bare,
    ),
    Rule(
        # | API token | … |: a row whose first cell names the credential, the next holds it
        "credential",
        r"(?m)^[ \t]*\|[ \t]*(?P<key>[^|\n\"'()\\\[\]{}=]{2,40}?)[ \t]*\|[ \t]*"
        + _VALUE
        + r"[ \t]*(?:\|[ \t]*|$)",
        _KW,
        groups=("code", "v"),
        needs=("|",),
        priority=CONTEXT,
        check=_check_bare,
    ),
    Rule(
        # Set `DB_PASSWORD` to `…`; `api_key` is `…`; `token`: `…`
        "credential",
        r"`(?P<key>[\w.-]{2,60})`[ \t]*(?::|=|[ \t](?:to|is|as|with|=)[ \t])[ \t]*"
        r"`(?P<code>[^`\n]{4,300})`",
        _KW,
        groups=("code",),
        needs=("`",),
        priority=CONTEXT,
        check=_check_code,
    ),
    Rule(
        # a definition list (`Password` / `: …`), a field list (`:password: …`)
        "credential",
        r"(?m)(?:(?:^|(?<=:[ \t]))(?P<key>[^\s:|][^\n:|]{1,39})[ \t]*\r?\n(?:[ \t]*\r?\n)?[ \t]*:[ \t]+"
        r"|^[ \t]*:(?P<key2>[\w -]{2,40}):[ \t]+)"
        r"(?:(?P<tick>`)(?P<code>[^`\n]{4,300})`|(?P<v>[^\s`|<>]{4,300}?))" + _AFTER,
        _KW,
        groups=("code", "v"),
        needs=(":",),
        priority=CONTEXT,
        check=lambda s, m: pair_is_secret(
            m.group("key") or m.group("key2"), s, quoted=m.group("tick") is not None
        ),
    ),
    Rule(
        # <dt>Password</dt><dd>…</dd>, <th>Token</th><td>…</td>, <b>Password:</b> …
        "credential",
        r"(?i)<(?P<tag>dt|th|td|b|strong|label)\b[^>]*>(?P<key>[^<\n]{2,40})</(?P=tag)>"
        r"[ \t]*(?:\r?\n[ \t]*)?(?:<(?:dd|td)\b[^>]*>[ \t]*)?(?P<v>[^\s<>]{4,300}?)"
        r"(?=[.,;:!?)]*(?:[\s<]|$))",
        _KW,
        groups=("v",),
        needs=("<",),
        priority=CONTEXT,
        check=lambda s, m: pair_is_secret(m.group("key"), s, quoted=False),
    ),
]
