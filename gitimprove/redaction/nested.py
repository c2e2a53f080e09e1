"""Secrets whose name and value are kept apart by the structure around them.

- a name/value pair split across two fields of one record: `{"key": "DB_PASSWORD", "val":
  "…"}`, AWS SSM / ECS / CloudFormation `{"Name": "api_token", "Value": "…"}`,
  `ParameterKey` / `ParameterValue`, `OptionName` / `Value`, Kubernetes and compose env lists
  (`- name: DB_PASSWORD` then `value: …` on the next line), either field first;
- an SSM parameter of type `SecureString`: its `Value` whatever its name;
- a list under a credential key: `api_keys: ["…", "…"]`, `"tokens": ["…"]`, and a YAML
  block list (`tokens:` then `- …` lines).

JSON escaped inside a JSON string is read by the decoded view (`decoded.py`); these rules
then see the inner record as plain JSON.
"""

from __future__ import annotations

import itertools
import re

from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.values import (
    assignment_is_secret,
    is_value,
    kind_of,
    looks_random,
    password_evidence,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_NAME_FIELD = r"(?:name|key|var|variable|parameter_?(?:name|key)|option_?name|secret_?name|param)"
# a pair rule is tried only just before these words (the start of a field name), not at
# every position of a text
_NAME_WORDS = ("name", "key", "var", "param")
_VALUE_WORDS = ("val", "secret", "data", "content", "plaintext")
_VALUE_FIELD = (
    r"(?:value|val|secret|secret_?string|string_?value|data|contents?|parameter_?value"
    r"|secret_?value|plaintext)"
)
_Q = r"[\"']?"
_KEY = r"(?P<key>[\w./:@-]{1,120})"
_VAL = r"""(?:"(?P<dq>(?:[^"\\\n]|\\.){1,500})"|'(?P<sq>[^'\n]{1,500})'|(?P<bare>[^\s'",;{}\[\]\\]{1,500}))"""
_GROUPS = ("dq", "sq", "bare")
# between the two fields of one record: a separator, perhaps a line break (not into the
# next item of a list: `- name: LOG` / `value: …` / `- name: DB_PASSWORD` pairs nothing)
_BREAK = r"(?:\r?\n|(?:\\r)?\\n)"  # a line break, or one escaped (JSON, a transcript)
_BETWEEN = r"[ \t]*[,;]?[ \t]*(?:" + _BREAK + r"[ \t]*(?!-[ \t]))?"
# other fields of the same record between the two (no brace, no list item's dash, no blank
# line: still one record)
_OTHERS = r"(?:(?!" + _BREAK + r"[ \t]*(?:-[ \t]|" + _BREAK + r"))[^{}]){0,200}?"


def _others(stop: str) -> str:
    """`_OTHERS` that also stops at another field named `stop` (a second name before any
    value starts another pair: this keeps a scan of many names linear)."""
    return (
        r"(?:(?!"
        + _BREAK
        + r"[ \t]*(?:-[ \t]|"
        + _BREAK
        + r"))(?!(?<![\w-])"
        + _Q
        + r"(?i:"
        + stop
        + r")"
        + _Q
        + r"[ \t]*[:=])[^{}]){0,200}?"
    )


def _check_pair(secret: str, m: re.Match[str]) -> bool | str:
    key = m.group("key").rsplit("/", 1)[-1].rsplit(".", 1)[-1].rsplit(":", 1)[-1]
    if not assignment_is_secret(key, secret, quoted=True, env_style=True):
        return False
    return kind_of(key)


def _check_value(secret: str, m: re.Match[str]) -> bool:
    return is_value(secret)


def _field(names: str) -> str:
    return rf"(?<![\w-]){_Q}(?i:{names}){_Q}[ \t]*[:=][ \t]*"


# a credential key opening a list: `api_keys: [`, `"tokens": [`, `tokens:` + `- …` lines
_LIST_KEY = r"(?P<key>[\w.-]{0,60}?(?:pass|pwd|secret|token|key|cred|auth)[\w.-]{0,60})"
# (a bare item's `#` starts a comment only after a blank: `- Xq7#pL` is one item)
_ITEM = r"""(?:"((?:[^"\\\n]|\\.){1,500})"|'([^'\n]{1,500})'|([^\s'",\[\]#][^\s'",\[\]]{0,499}))"""


def _singular(key: str) -> str:
    """The name of one item of a list: `api_keys` holds api keys, `tokens` tokens."""
    return key[:-1] if key[-1:] in "sS" and key[-2:-1] not in "sS" else key


# the key before a list, read back from the start of the match: `api_keys: [`, `tokens:`
_KEY_BEFORE = r"""(?:^|(?<=[\s{,]))(?P<ind>[ \t]*)["']?""" + _LIST_KEY + r"""["']?[ \t]*\Z"""


def _key_before(m: re.Match[str]) -> tuple[str, str] | None:
    """The credential key the list at `m` is the value of, and its line's indentation."""
    line = m.string.rfind("\n", 0, m.start()) + 1
    k = compiled(_KEY_BEFORE, 0).search(m.string[max(line, m.start() - 200) : m.start()])
    return (_singular(k.group("key")), k.group("ind")) if k else None


def _names_only(values: list[str]) -> bool:
    """Two items or more, each a word in lower case (`["node", "import"]`, `[read, write]`):
    a list of names (conditions, scopes, modes), not of passwords."""
    word = compiled(r"[a-z]{2,12}(?:[_-][a-z]{2,12}){0,2}", 0)
    return len(values) >= 2 and all(word.fullmatch(v) for v in values)


def _flow_items(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    found = _key_before(m)
    if found is None:
        return
    key, body, at = found[0], m.group("items"), m.start("items")
    if not compiled(
        r"[ \t]*" + _ITEM + r"(?:[ \t]*,[ \t]*" + _ITEM + r")*[ \t]*,?[ \t]*", 0
    ).fullmatch(body):
        return  # not a list of literals (a comprehension, an index, a call)
    items = list(compiled(_ITEM, 0).finditer(body))
    if _names_only([next(g for g in i.groups() if g is not None) for i in items]):
        return
    for item in items:
        g = next(n for n in (1, 2, 3) if item.group(n) is not None)
        value = item.group(g)
        # a bare item of a list in code is a name (`[listener.fileno(), r]`); a password's
        # characters are not (`tokens: [<letters, digits and # or !>, abc]`)
        if g == 3 and not looks_random(value) and not password_evidence(value):
            continue
        if assignment_is_secret(key, value, quoted=g != 3, env_style=True):
            yield at + item.start(g), at + item.end(g)


def _block_items(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    found = _key_before(m)
    if found is None:
        return
    (key, ind), body, at = found, m.group("items"), m.start("items")
    item_re = compiled(r"(?m)^(?P<lead>[ \t]*)-[ \t]+" + _ITEM + r"[ \t]*\r?$", 0)
    items = list(
        itertools.takewhile(lambda i: i.group("lead").startswith(ind), item_re.finditer(body))
    )
    if _names_only([next(g for g in i.groups()[1:] if g is not None) for i in items]):
        return
    for item in items:
        g = next(n for n in (2, 3, 4) if item.group(n) is not None)  # (1: the lead)
        value = item.group(g)
        if assignment_is_secret(key, value, quoted=g != 4, env_style=True):
            yield at + item.start(g), at + item.end(g)


RULES: list[Rule] = [
    Rule(
        # the name first, then its value: `{"Name": "api_token", "Value": "…"}`
        "credential",
        _field(_NAME_FIELD)
        + _Q
        + _KEY
        + _Q
        + _BETWEEN
        + _others(_NAME_FIELD)
        + _field(_VALUE_FIELD)
        + _VAL,
        _NAME_WORDS,
        groups=_GROUPS,
        priority=CONTEXT,
        check=_check_pair,
        near=18,
    ),
    Rule(
        # the value first, then its name: `{"Value": "…", "Name": "DB_PASSWORD"}`
        "credential",
        _field(_VALUE_FIELD)
        + _VAL
        + _BETWEEN
        + _others(_VALUE_FIELD)
        + _field(_NAME_FIELD)
        + _Q
        + _KEY
        + _Q,
        _VALUE_WORDS,
        groups=_GROUPS,
        priority=CONTEXT,
        check=_check_pair,
        near=16,
    ),
    Rule(
        # SSM: a SecureString parameter's value after its type
        "credential",
        r"(?i)[\"']?type[\"']?[ \t]*[:=][ \t]*[\"']?SecureString[\"']?"
        + _OTHERS
        + r"[\"']?value[\"']?[ \t]*[:=][ \t]*"
        + _VAL,
        ("securestring",),
        groups=_GROUPS,
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        # … and before it (a rule of its own: a value of another record before it must not
        # hide this one)
        "credential",
        r"(?i)[\"']?value[\"']?[ \t]*[:=][ \t]*"
        + _VAL
        + _OTHERS
        + r"[\"']?type[\"']?[ \t]*[:=][ \t]*[\"']?SecureString",
        ("securestring",),
        groups=_GROUPS,
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        # a flow list under a credential key: `api_keys: ["…", "…"]`
        "credential",
        r"[:=][ \t]*\[(?P<items>[^\[\]\n]{1,2000})\]",
        ("pass", "pwd", "secret", "token", "key", "cred", "auth"),
        needs=("[",),
        priority=CONTEXT,
        expand=_flow_items,
    ),
    Rule(
        # a YAML block list under a credential key: `tokens:` then `- …` lines
        "credential",
        r":[ \t]*\r?\n(?P<items>(?:[ \t]*-[ \t]+[^\n]*(?:\n|$)){1,200})",
        ("pass", "pwd", "secret", "token", "key", "cred", "auth"),
        needs=("- ",),
        priority=CONTEXT,
        expand=_block_items,
    ),
]
