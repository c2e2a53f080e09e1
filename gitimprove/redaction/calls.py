"""Credentials given to a call, a statement or a script rather than assigned to a name.

- a call whose name says it takes a credential (`setPassword("…")`, `.password("…")`,
  `keyring.set_password("svc", "user", "…")`, `ldap.simple_bind_s(dn, "…")`,
  `SetAuthToken("…")`, `new PasswordAuthentication("bob", "….toCharArray())`,
  `smtp.PlainAuth("", "me@acme.io", "…", "smtp.acme.io")`): the string literals that read
  as a credential (service, user and host names, addresses and paths are not masked);
- a credential-named binding given a wrapped literal: `let password = String::from("…")`,
  `token := []byte("…")`, `secret = SecretStr("…")`;
- PowerShell `ConvertTo-SecureString "…" -AsPlainText`;
- `ssh-keygen -N "…"` / `-P "…"`, an expect script's `send "…\\r"` after a password prompt;
- SQL `INSERT INTO t (…, password, …) VALUES (…, '…', …)`: each column is mapped to its
  value, and a credential-named column's value is masked (a password hash too).
"""

from __future__ import annotations

import re

from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.values import (
    assignment_is_secret,
    is_value,
    key_strength,
    key_words,
    looks_random,
    mixed_case,
    secret_like,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# words in a callee's name that say it takes a credential
_CALL_WORDS = (
    "password|passwd|passphrase|passcode|pwd|pass|secret|token|credential|creds|auth|bind|"
    "login|logon|signin|securestring|apikey|api_key|privatekey|private_key"
)
_CALLEE = (
    r"(?i)(?<![\w$])(?P<fn>(?:new[ \t]+)?[A-Za-z_$][\w$]*(?:(?:\.|::|->|\?\.)[A-Za-z_$][\w$]*)*)"
    r"(?:<[\w<>, ]{0,60}>)?\("
)
_LITERAL = r"""[bruf]{0,2}(?:"(?P<dq>(?:[^"\\\n]|\\.){0,500})"|'(?P<sq>(?:[^'\\\n]|\\.){0,500})')"""
# a call that reads or checks a setting by name takes no credential (`get_secret("prod/db")`)
_READERS = (
    "get",
    "fetch",
    "load",
    "read",
    "lookup",
    "describe",
    "list",
    "delete",
    "remove",
    "has",
    "is",
    "find",
    "require",
    "tokeniz",
    "count",
    "validate_name",
)
_NOT_CREDENTIAL = (
    r"(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?"  # an IP address
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # an e-mail address
    r"|[\w-]+(?:\.[\w-]+)+(?::\d+)?"  # a host name, a dotted name
    r"|[\w-]+:\d{2,5}"  # host:port
    r"|[A-Za-z]+=[^,=]+(?:,[ ]?[A-Za-z]+=[^,=]+)+"  # an LDAP DN
    r"|[a-z][a-z0-9+.-]*://\S*"  # a URL
    r"|[\w.~-]*/[\w./-]*\.[A-Za-z]{1,5}"  # a path to a file
    r"|[A-Za-z]+(?:[-_.][A-Za-z]+)*[-_.]?v?\d+(?:\.\d+)*"  # a name with a version: `gpt-4`
    # an artifact and its version (a Maven coordinate's tail): `keycloak-core:24.0.1`
    r"|[A-Za-z][\w.-]{0,80}:v?\d{1,6}(?:\.\d{1,6}){1,3}(?:[.:-][\w.-]{1,40})?"
)


# calls that take a pattern, a path or a name, not a credential
_NOT_WRAPPERS = (
    r"(?:^|[.:])(?:compile|Regex|Pattern|Path|getenv|get|env|environ|format|join|open|lookup|"
    r"fetch|read|load|resolve|name|Name|Symbol|gettext|_)$"
)


def credential_like(value: str) -> bool:
    """A string that reads as a password or a token: no spaces, not a host, a path, an
    address, a DN or a versioned name, and not a plain word."""
    v = value
    if len(v) < 6 or any(c.isspace() for c in v) or not is_value(v) or "{" in v:
        return False
    if compiled(_NOT_CREDENTIAL, 0).fullmatch(v):
        return False
    if not any(c.isalpha() for c in v) and not v.isdigit():
        return False
    return secret_like(v) or looks_random(v) or mixed_case(v)


def _callee_may_wrap(fn: str) -> bool:
    last = compiled(r"[A-Za-z_$][\w$]*$", 0).search(fn)
    return not (last and last.group(0).lower().lstrip("_").startswith(_READERS))


# a store of credentials (`keychain.set(…)`, `keytar.setPassword(…)`, `Keyring.add(…)`) and
# the methods that put one into it
_STORES = r"(?i)key_?chain|keyring|keytar|keystore|cred(?:ential)?_?(?:store|manager|locker)|"
_STORES += r"secret_?(?:store|storage|manager)|vault|wallet|safe_?storage|locksmith"
_PUTS = ("set", "add", "save", "store", "put", "write", "create", "update", "upsert", "insert")


def _callee_name(fn: str) -> str:
    """The called function's own name: `simple_bind_s` of `conn.simple_bind_s`."""
    last = compiled(r"[A-Za-z_$][\w$]*$", 0).search(fn)
    return last.group(0) if last else fn


def _callee_takes_credential(fn: str) -> bool:
    name = _callee_name(fn)
    low = name.lower().lstrip("_")
    if low.startswith(_READERS):
        return False
    owner = fn[: len(fn) - len(name)]
    if low.startswith(_PUTS) and compiled(_STORES, 0).search(owner):
        return True  # `keychain.set('svc', 'acct', '…')`
    return compiled(_CALL_WORDS, re.I).search(name) is not None and not (
        low.startswith("author") or "bypass" in low or "compass" in low or "passthrough" in low
    )


def _binds_only(fn: str) -> bool:
    """Whether the callee names a credential only by `bind` (`sock.bind(path)`,
    `ldap.simple_bind_s(who, password)`)."""
    words = compiled(_CALL_WORDS, re.I).findall(_callee_name(fn))
    return {w.lower() for w in words} == {"bind"}


def _call_args(text: str, start: int) -> Iterable[tuple[int, int, bool]]:
    """The string literals of the call whose `(` ends at `start`, up to its `)`: (start,
    end, last) with `last` true for the last one."""
    found: list[tuple[int, int]] = []
    depth = 0
    pos = start
    stop = min(len(text), start + 1000)
    literal = compiled(_LITERAL, 0)
    while pos < stop:
        c = text[pos]
        if c in "\"'" or (c in "bruf" and pos + 1 < stop and text[pos + 1] in "\"'"):
            m = literal.match(text, pos)
            if m is None:
                return
            g = "dq" if m.group("dq") is not None else "sq"
            found.append(m.span(g))
            pos = m.end()
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                break
            depth -= 1
        elif c in ";{}" and depth == 0:
            return
        pos += 1
    for n, (a, b) in enumerate(found):
        yield a, b, n == len(found) - 1


def _credential_call(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    if not _callee_takes_credential(m.group("fn")):
        return
    text = m.string
    args = list(_call_args(text, m.end()))
    if _binds_only(m.group("fn")):  # a socket's bind takes one address; LDAP's, who and a secret
        args = args[1:]
    for a, b, last in args:
        value = text[a:b].removesuffix("\\r").removesuffix("\\n")
        if _named_otherwise(text, a):
            continue  # `usernamePassword(credentialsId: '<uuid>')`: the name says what it is
        if credential_like(value) and (last or "/" not in value):
            yield a, a + len(value)


def _named_otherwise(text: str, at: int) -> bool:
    """Whether the argument whose literal starts at `at` is named (`name: '…'`, `name='…'`)
    by a name that names no credential (`credentialsId`, `usernameVariable`): an id or the
    name of a variable, not the secret the call takes."""
    m = compiled(r"(?<![\w$])([A-Za-z_$][\w$]{0,60})[ \t]*(?::|=)[ \t]*[bruf]?[\"']$", 0).search(
        text, max(0, at - 80), at
    )
    return m is not None and key_strength(m.group(1)) is None


def _check_wrapped(secret: str, m: re.Match[str]) -> bool | str:
    key = m.group("key")
    fn = m.group("fn")
    if compiled(_NOT_WRAPPERS, re.I).search(fn) or not _callee_may_wrap(fn):
        return False
    if not credential_like(secret):
        return False
    if not assignment_is_secret(key, secret, quoted=True, env_style=True):
        return False
    return (
        "password"
        if any(w.startswith("pass") or w == "pw" for w in key_words(key))
        else ("credential")
    )


def _check_literal(secret: str, m: re.Match[str]) -> bool:
    value = secret.rstrip("\\")  # `send "<pw>\\r"` written in a string of a string
    return is_value(value) and " " not in value.strip()


def _keygen(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    """`ssh-keygen … -N <new passphrase> … -P <old passphrase>`: every such option's value."""
    option = compiled(
        r"(?<=\s)-[NP][ \t]*(?:\"(?P<dq>[^\"\n]+)\"|'(?P<sq>[^'\n]+)'|(?P<bare>[^\s'\"|;&`<>-][^\s'\"|;&`]*))",
        0,
    )
    for o in option.finditer(m.string, m.start("args"), m.end("args")):
        g = next(g for g in ("dq", "sq", "bare") if o.group(g) is not None)
        if _check_literal(o.group(g), o):
            yield o.span(g)


def _insert_values(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    """`INSERT INTO t (a, password, c) VALUES (1, '…', 3), (…)`: the credential columns'
    values in every row."""
    columns = [c.strip().strip('`"[]') for c in m.group("cols").split(",")]
    table = m.group("table").strip('`"[]').rsplit(".", 1)[-1]
    wanted = [n for n, c in enumerate(columns) if _column_is_secret(c, table)]
    if not wanted:
        return
    text = m.string
    value = compiled(r"""'((?:[^'\\\n]|\\.|'')*)'|"((?:[^"\\\n]|\\.)*)"|[^,()'"\s]+""", 0)
    row = compiled(r"\s*,?\s*\(", 0)
    pos = m.end()
    for _ in range(200):
        cells: list[tuple[int, int, bool]] = []
        while pos < len(text):
            c = compiled(r"\s*", 0).match(text, pos)
            pos = c.end() if c else pos
            v = value.match(text, pos)
            if v is None:
                break
            quoted = v.group(1) is not None or v.group(2) is not None
            g = 1 if v.group(1) is not None else 2 if v.group(2) is not None else 0
            cells.append((*v.span(g), quoted))
            pos = v.end()
            sep = compiled(r"\s*(,|\))", 0).match(text, pos)
            if sep is None or sep.group(1) == ")":
                pos = sep.end() if sep else pos
                break
            pos = sep.end()
        for n in wanted:
            if n < len(cells):
                a, b, quoted = cells[n]
                if quoted and is_value(text[a:b]):
                    yield a, b
        nxt = row.match(text, pos)
        if nxt is None or "," not in text[pos : nxt.end()]:
            return
        pos = nxt.end()


# columns that hold the credential a table is named for (`api_keys (user_id, key)`)
_HOLDS = ("key", "value", "val", "secret", "token", "password", "pass", "pw", "pin", "credential")


def _column_is_secret(column: str, table: str = "") -> bool:
    parts = key_words(column)
    if not parts:
        return False
    if table and parts[-1] in _HOLDS and key_strength(table.rstrip("s") or table) is not None:
        return True  # `INSERT INTO api_keys (user_id, key)`: the key the table stores
    if any(p in ("password", "passwd", "pwd", "passphrase", "secret", "token") for p in parts):
        return parts[-1] not in ("id", "ids", "type", "expires", "expiry", "at", "count", "length")
    return key_strength(column) == "strong"


_CALL_KEYWORDS = tuple(
    w
    for w in _CALL_WORDS.split("|")
    if w not in ("passwd", "passphrase", "passcode", "api_key", "private_key")
)

RULES: list[Rule] = [
    Rule(
        "credential",
        _CALLEE,
        (*_CALL_KEYWORDS, "keychain", "keyring", "keytar", "keystore", "vault", "wallet", "store"),
        needs=("'", '"'),
        priority=CONTEXT,
        expand=_credential_call,
    ),
    Rule(
        # `let password = String::from("…")`, `token := []byte("…")`, `pw = SecretStr("…")`
        "credential",
        r"(?i)(?<![\w.-])(?P<key>[\w.-]{0,120}?(?:pass|pwd|pw|secret|token|key|cred)[\w.-]{0,80})"
        r"[\"']?[ \t]*(?::=|=|:)[ \t]*(?:new[ \t]+)?(?P<fn>\[\][\w.]*|[A-Za-z_][\w.:<>]*)[ \t]*\("
        r"[ \t]*" + _LITERAL + r"(?:\.\w+\(\))?[ \t]*\)",
        ("pass", "pwd", "pw", "secret", "token", "key", "cred"),
        groups=("dq", "sq"),
        needs=("(",),
        priority=CONTEXT,
        check=_check_wrapped,
    ),
    Rule(
        # `echo "<pw>" | sudo -S …`: a password on sudo's standard input
        "cli-password",
        r"(?i)\b(?:echo|printf)[ \t]+(?:-[ne]+[ \t]+)?(?:\"(?P<dq>[^\"\n]+)\"|'(?P<sq>[^'\n]+)'"
        r"|(?P<bare>[^\s'\"|;&`<>]+))[ \t]*\|[ \t]*sudo\b(?:[ \t]+-\w+)*?[ \t]+-\w*S",
        ("sudo",),
        groups=("dq", "sq", "bare"),
        priority=CONTEXT,
        check=_check_literal,
    ),
    Rule(
        "password",
        r"(?i)\bConvertTo-SecureString\b(?:[ \t]+-String)?[ \t]+(?:\"(?P<dq>[^\"\n]{1,500})\""
        r"|'(?P<sq>[^'\n]{1,500})')",
        ("convertto-securestring",),
        groups=("dq", "sq"),
        priority=CONTEXT,
        check=_check_literal,
    ),
    Rule(
        "cli-password",
        r"\bssh-keygen\b(?P<args>(?:[^\n|;&\\]|\\(?![nr])){1,1000})",
        ("ssh-keygen",),
        priority=CONTEXT,
        expand=_keygen,
    ),
    Rule(
        # expect: a prompt asking for a secret, then `send "<secret>\r"`
        "password",
        r"(?i)\bexpect\b[^\n]{0,200}?(?:assword|assphrase|asscode|\bpin\b|token|secret)"
        r"[^\n]{0,100}?(?:\n[ \t]*|;[ \t]*)(?:exp_)?send(?:[ \t]+-[\w-]+)*[ \t]+(?:--[ \t]+)?"
        r"(?:\"(?P<dq>(?:[^\"\\\n]|\\(?![rn])|\\[rn](?!\"))+?)(?:\\[rn])*\""
        r"|'(?P<sq>[^'\n]+?)(?:\\[rn])*'|(?P<bare>[^\s\"'\\;]+))",
        ("expect",),
        groups=("dq", "sq", "bare"),
        needs=("send",),
        priority=CONTEXT,
        check=_check_literal,
    ),
    Rule(
        "password",
        r"(?is)\b(?:insert|replace)(?:[ \t]+(?:or[ \t]+\w+|ignore))?[ \t]+into[ \t]+(?P<table>[\w.`\"\[\]]+)"
        r"\s*\((?P<cols>[^()]{1,2000})\)\s*values\s*\(",
        ("insert", "replace"),
        needs=("(",),
        priority=CONTEXT,
        expand=_insert_values,
    ),
]
