"""Credentials in data whose key does not sit right beside them, or is abbreviated.

- Perl and Ruby fat commas: `pass => "…"`, `:pw => '…'` (a short key is enough there: `=>`
  builds a hash, it is not prose);
- name/value objects with any field names: `{"param": "client_secret", "val": "…"}`,
  `{"field": "password", "data": "…"}`: one field names a credential, another holds it;
- values nested under a key naming credentials: `{"credentials": {"prod": "…"}}`,
  `secrets:` / `  github: …` (YAML), at any depth, except descriptive fields (`type`,
  `project_id`, `url`);
- abbreviated key names: `stripe_sk`, `STRIPE_RK`, `pk_live`, `db_pw`, `smtp_psw`;
- GraphQL variables with a default: `query ($token: String = "…")`.
"""

from __future__ import annotations

import re

from gitimprove.redaction.calls import credential_like
from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.values import (
    assignment_is_secret,
    escapes_table,
    is_identifier_value,
    is_value,
    key_strength,
    key_words,
    kind_of,
    looks_random,
    words,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# fields that name what another field holds, and fields that hold it
_NAMING = words(
    "name key param parameter field id label var variable setting property attr title k"
)
_HOLDING = words(
    "value val v data content secret_value string_value stringvalue secretstring default text "
    "plaintext plain raw"
)
# fields under a credentials key that describe it rather than hold it
_DESCRIBING = words(
    "type kind name names id ids project project_id projectid client_id clientid client_email "
    "user username user_name login email account url uri host hostname endpoint region zone "
    "scope scopes audience issuer path file description note created updated expires expiry "
    "provider domain tenant tenant_id subscription version format auth_uri token_uri port"
)
# abbreviations naming a secret key: Stripe `sk_`/`rk_`, a live publishable key's secret
# twin, `pw`/`psw`/`pword`
_ABBREV = words("sk rk psk psw pswd pword pw passwd")


def _abbreviated(key: str) -> bool:
    parts = key_words(key)
    if not parts or key_strength(key) is not None:
        return False
    if parts[-1] in _ABBREV or (len(parts) > 1 and parts[0] in ("sk", "rk")):
        return True
    return "pk" in parts and any(p in ("live", "prod") for p in parts)


def _secret(value: str) -> bool:
    return is_value(value) and credential_like(value) and not is_identifier_value(value)


def _check_fat(secret: str, m: re.Match[str]) -> bool | str:
    key = m.group("key")
    strength = key_strength(key)
    if strength == "strong" or _abbreviated(key):
        return assignment_is_secret(key, secret, quoted=True, env_style=True) or (
            _secret(secret) and kind_of(key)
        )
    return strength == "weak" and _secret(secret) and kind_of(key)


def _check_abbrev(secret: str, m: re.Match[str]) -> bool | str:
    key = m.group("key")
    if not _abbreviated(key) or escapes_table(secret):
        return False
    return (looks_random(secret, min_len=12) or _secret(secret)) and "credential"


_STR = r'"((?:[^"\\\n]|\\.){0,500})"'
_PAIR = r'"([\w.-]{1,60})"[ \t]*:[ \t]*' + _STR


def _object_pairs(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    """A flat object with one field naming a credential and another holding it."""
    pairs = list(compiled(_PAIR, 0).finditer(m.string, m.start(), m.end()))
    named = None
    for p in pairs:
        if p.group(1).lower() in _NAMING and key_strength(p.group(2)) == "strong":
            named = p.group(2)
    if named is None:
        return
    for p in pairs:
        value = p.group(2)
        if p.group(1).lower() in _HOLDING and assignment_is_secret(
            named, value, quoted=True, env_style=True
        ):
            yield p.span(2)


def _nested_json(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    """`"credentials": {…}`: the string values in it, except descriptive fields."""
    body = m.start("body")
    for p in compiled(_PAIR, 0).finditer(m.string, body, m.end()):
        if _held(p.group(1), p.group(2)):
            yield p.span(2)


def _held(field: str, value: str) -> bool:
    if key_strength(field) == "strong":  # a named field is read by the assignment rules
        return False
    return held_value(field, value)


def held_value(field: str, value: str) -> bool:
    """A value held in a block of credentials: not a field describing them (`type`,
    `username`, `url`), and a value that reads as a credential."""
    if field.lower() in _DESCRIBING or key_words(field)[-1:] in (["id"], ["name"], ["url"]):
        return False
    if compiled(_DATE_TIME, 0).fullmatch(value.strip()):
        return False  # when it was made or expires: `"created": "2026-02-11T21:25:03.459Z"`
    return _secret(value) or looks_random(value, min_len=12)


# a date, a time of day or both (ISO 8601 and its common variants)
_DATE_TIME = (
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?)?(?:Z|[+-]\d{2}:?\d{2})?"
    r"|\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?"
)


_YAML_LINE = (
    r"(?m)^[ \t]+(?:- )?(?P<f>[\w.-]{1,60})[ \t]*:[ \t]+"
    r"(?:\"(?P<dq>[^\"\n]{1,500})\"|'(?P<sq>[^'\n]{1,500})'|(?P<bare>[^\s#\"'][^\s]{0,499}))"
    r"(?:[ \t]+#[^\n]*)?[ \t]*\r?$"
)


def _nested_yaml(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    for line in compiled(_YAML_LINE, 0).finditer(m.string, m.start("body"), m.end()):
        g = "dq" if line.group("dq") else "sq" if line.group("sq") else "bare"
        if _held(line.group("f"), line.group(g)):
            yield line.span(g)


# a key naming credentials, as a container: `credentials`, `secrets`, `api_keys`, `tokens`
def _container(m: re.Match[str]) -> bool:
    return _names_container(m.group("key"))


def _names_container(key: str) -> bool:
    """`credentials`, `secrets`, `api_keys`, `tokens`, `auth`: a key holding credentials
    (a plural names what each of its values is)."""
    # (composer's auth.json: `"github-oauth": {"github.com": …}`, `"bearer": {host: …}`)
    if key_strength(key) is not None or key_words(key)[-1:] in (
        ["keys"],
        ["auth"],
        ["oauth"],
        ["bearer"],
    ):
        return True
    return key.endswith("s") and key_strength(key[:-1]) == "strong"


# a TOML table whose name names credentials, at any depth: `[credentials.prod]`,
# `[[secrets]]`, `[servers.alpha.auth]`; its `key = value` lines up to the next table
_TOML_TABLE = (
    r"(?m)^(?:[^\n]*[ \t])?\[\[?(?P<name>[\w.\- \"']{1,200})\]\]?[ \t]*(?:#[^\n]*)?\r?\n"
    r"(?P<body>(?:(?![ \t]*\[)[^\n]*(?:\n|$)){1,200})"
)
_TOML_LINE = (
    r"(?m)^[ \t]*[\"']?(?P<f>[\w.-]{1,60})[\"']?[ \t]*=[ \t]*"
    r"(?:\"(?P<dq>(?:[^\"\\\n]|\\.){1,500})\"|'(?P<sq>[^'\n]{1,500})')[ \t]*(?:#[^\n]*)?\r?$"
)


def _toml_table(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    parts = [p.strip(" \"'") for p in m.group("name").split(".")]
    if not any(_names_container(p) for p in parts if p):
        return
    for line in compiled(_TOML_LINE, 0).finditer(m.string, m.start("body"), m.end("body")):
        g = "dq" if line.group("dq") is not None else "sq"
        if _held(line.group("f"), line.group(g)):
            yield line.span(g)


# an inline table under a credentials key: `credentials = { prod = "…", ci = "…" }`
# (a TOML inline table's `k = "…"`, a Python dict's `"k": "…"`, a JavaScript or Ruby
# object's `k: "…"`, a Ruby hash's `"k" => "…"`)
_INLINE_PAIR = r"""["']?(?P<f>[\w.-]{1,60})["']?[ \t]*(?:=>|=|:)[ \t]*(?:"(?P<dq>(?:[^"\\\n]|\\.){0,500})"|'(?P<sq>[^'\n]{0,500})')"""


def _inline_table(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    if not _names_container(m.group("key")):
        return
    for p in compiled(_INLINE_PAIR, 0).finditer(m.string, m.start("body"), m.end("body")):
        g = "dq" if p.group("dq") is not None else "sq"
        if _held(p.group("f"), p.group(g)):
            yield p.span(g)


def _nested_json_rule(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    return _nested_json(m) if _container(m) else ()


def _nested_yaml_rule(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    return _nested_yaml(m) if _container(m) else ()


_KW = ("pass", "pwd", "pw", "secret", "token", "key", "cred", "auth", "sk", "rk", "pk")
RULES: list[Rule] = [
    Rule(
        # Perl / Ruby / PHP hash: `pass => "…"`, `:pw => '…'`, `'db_pass' => "…"`
        "password",
        r"(?<![\w$])[:\"']?(?P<key>[A-Za-z_][\w-]{0,60})[\"']?[ \t]*=>[ \t]*"
        r"(?:\"(?P<dq>(?:[^\"\\\n]|\\.){1,500})\"|'(?P<sq>(?:[^'\\\n]|\\.){1,500})')",
        _KW,
        groups=("dq", "sq"),
        needs=("=>",),
        priority=CONTEXT,
        check=_check_fat,
    ),
    Rule(
        "credential",
        r"\{[^{}\n]{0,2000}\}",
        ("param", "name", "key", "field", "label", "var", "setting", "property", "attr"),
        needs=('"',),
        priority=CONTEXT,
        expand=_object_pairs,
    ),
    Rule(
        "credential",
        r"\"(?P<key>[\w.-]{1,60})\"[ \t]*:[ \t]*(?P<body>\{(?:[^{}]|\{[^{}]*\}){0,4000}\})",
        ("secret", "token", "cred", "key", "pass", "auth"),
        needs=("{",),
        priority=CONTEXT,
        expand=_nested_json_rule,
    ),
    Rule(
        "credential",
        # (the key holds a keyword: a match at an outer key would hide a nested one)
        r"(?m)^(?P<ind>[ \t]*)(?:[^\n]*?[ \t])?(?:- )?"
        r"(?P<key>[\w.-]{0,60}?(?i:secret|token|cred|key|pass|auth)[\w.-]{0,60})[ \t]*:[ \t]*\r?\n"
        r"(?P<body>(?:(?:(?P=ind)[ \t]+[^\n]*|[ \t]*\r?)(?:\n|$)){1,200})",
        ("secret", "token", "cred", "key", "pass", "auth"),
        priority=CONTEXT,
        expand=_nested_yaml_rule,
    ),
    Rule(
        "credential",
        _TOML_TABLE,
        ("secret", "token", "cred", "key", "pass", "auth"),
        needs=("[",),
        priority=CONTEXT,
        expand=_toml_table,
    ),
    Rule(
        "credential",
        r"(?<![\w/\\.-])[\"']?(?P<key>[\w.-]{1,60})[\"']?[ \t]*(?:=>|=|:)[ \t]*(?P<body>\{[^{}\n]{1,2000}\})",
        ("secret", "token", "cred", "key", "pass", "auth"),
        needs=("{",),
        priority=CONTEXT,
        expand=_inline_table,
    ),
    Rule(
        # stripe_sk = "…", STRIPE_RK: …, "pk_live": "…", db_pw=…
        "credential",
        r"(?<![\w-])[\"']?(?P<key>[A-Za-z][\w.-]{0,60})[\"']?[ \t]*(?:=|:)[ \t]*"
        r"(?:\"(?P<dq>[^\"\n]{6,500})\"|'(?P<sq>[^'\n]{6,500})'|(?P<bare>[^\s\"',;()\[\]{}]{6,500})(?![(\[]))",
        ("sk", "rk", "pk", "psw", "pword", "pw"),
        groups=("dq", "sq", "bare"),
        priority=CONTEXT,
        check=_check_abbrev,
    ),
    Rule(
        # GraphQL: `($token: String = "…")`
        "credential",
        r"\$(?P<key>[A-Za-z_]\w{0,60})[ \t]*:[ \t]*[\w!\[\]]+[ \t]*=[ \t]*\"(?P<v>(?:[^\"\\\n]|\\.){1,500})\"",
        ("$",),
        groups=("v",),
        needs=("=",),
        priority=CONTEXT,
        check=lambda s, m: (
            assignment_is_secret(m.group("key"), s, quoted=True, env_style=True)
            and kind_of(m.group("key"))
        ),
    ),
]
