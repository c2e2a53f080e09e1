"""Credentials given as arguments rather than assigned: in code, SQL and command lines.

- code that names a credential in a string and gives its value next to it:
  `os.Setenv("DB_PASSWORD", "…")`, `os.environ.get("DB_PASSWORD", "…")`,
  `process.env.DB_PASSWORD || "…"`, `define('DB_PASSWORD', '…')`,
  `os.environ["API_TOKEN"] = "…"`, `app.secret_key = b'…'`;
- a call or tuple that takes a user and a password: `HTTPBasicAuth('admin', '…')`,
  `server.login(user, '…')`, `auth=('neo4j', '…')`, `NetworkCredential("svc", "…")`;
- SQL `IDENTIFIED BY '…'`, `WITH PASSWORD '…'`;
- command lines: `htpasswd -b file user …`, `user:…` piped into `chpasswd`, redis `AUTH …` /
  `requirepass …`, `psexec -p …`, `net use … /user:X …`, `openssl enc -k …`,
  `-a user:…` / `--auth user:…` (httpie and others), `echo … | … --password-stdin`,
  wpa_supplicant `psk="…"`;
- connection strings: `jdbc:oracle:thin:user/…@…`, `.pgpass` lines `host:port:db:user:…`;
- prose: `use … as the admin password`, `the new one is <random>`.
"""

from __future__ import annotations

import re

from gitimprove.redaction.context import _SAME_COMMAND
from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.headers import generated
from gitimprove.redaction.values import (
    assignment_is_secret,
    is_value,
    key_strength,
    key_words,
    kind_of,
    looks_random,
    random_value,
    secret_like,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# (`salt`: WordPress' `define('LOGGED_IN_SALT', '…')` beside its `AUTH_KEY`)
_NAME = r"#?[\w.-]{0,120}?(?:pass|pwd|pw|secret|token|key|cred|auth|psk|salt)[\w.-]{0,80}"
_QSTR = r"""(?:"(?P<dq>(?:[^"\\\n]|\\.){1,500})"|'(?P<sq>[^'\n]{1,500})')"""
_STR = r"[bru]{0,2}" + _QSTR
_ANY_STR = r"""(?:"[^"\n]{0,200}"|'[^'\n]{0,200}')"""
_ARG = r"""["']?(?P<bare>[^\s'"|;&`<>]+)["']?"""


def _check_named(secret: str, m: _KeyMatch) -> bool | str:
    key = m.group("key")
    if compiled(r"[A-Z][A-Z_-]*[A-Z]", 0).fullmatch(secret):
        # a list of constant names: `'NOPASS', 'ONLY'`, `'CURLOPT_READDATA'`, a language's
        # keywords (`'APPSERVER-PASSWORD', 'APPSERVER-USERID'`)
        return False
    if looks_random(key, min_len=8):
        return False  # an id, not a name: `"requestId": "req_01…NPwCb", "type"`
    after = m.m.string[m.m.end() : m.m.end() + 8].lstrip()
    if after.startswith(":"):
        return False  # `{"name": "API_KEY", "value": …}`: the next string is a key
    if m.group("sep") == "," and not (key.isupper() or _setter_before(m)):
        if _pair(m) and is_value(secret) and (generated(secret) or looks_random(secret)):
            # `('password', '…')` alone in brackets (a form's fields, an OrderedDict's
            # items, a repr) given a generated value: a name and its value
            return _named_pair(key, secret)
        return False  # `("gcp-api-key", r"…")` is a list, not a name and its value
    if key_words(key) in (["pass"], ["pw"], ["passwd"], ["psk"]):
        # `{"pass": "pass", "fail": "fail"}` counts outcomes; `"pass": "<pw>"` names one
        return is_value(secret) and secret_like(secret) and " " not in secret and "password"
    if not assignment_is_secret(key, secret, quoted=True, env_style=True):
        return False
    return kind_of(key)


def _pair(m: _KeyMatch) -> bool:
    """Whether the name and its value are the whole of a bracketed pair: `('k', 'v')`."""
    text = m.m.string
    before = text[max(0, m.m.start() - 4) : m.m.start()].rstrip()
    after = text[m.m.end() : m.m.end() + 4].lstrip()
    return before.endswith(("(", "[")) and after.startswith((")", "]"))


def _named_pair(key: str, secret: str) -> bool | str:
    if key_strength(key) != "strong":
        return False
    return assignment_is_secret(key, secret, quoted=True, env_style=True) and kind_of(key)


def _setter_before(m: _KeyMatch) -> bool:
    """Whether the name is the first argument of a call that sets or reads a setting."""
    before = m.m.string[max(0, m.m.start() - 40) : m.m.start()]
    return (
        compiled(
            r"(?i)(?:env|get|set|define|put|config|secret|param|var|fill|type|send_?keys|input)\w*\s*\(\s*$",
            0,
        ).search(before)
        is not None
    )


def _check_pair(secret: str, m: re.Match[str]) -> bool:
    return (
        is_value(secret)
        and " " not in secret.strip()
        and "://" not in secret
        and not compiled(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", 0).fullmatch(secret)
    )


def _check_sql(secret: str, m: re.Match[str]) -> bool:
    """`IDENTIFIED BY '…'` in a statement about a user or a role (`CREATE USER`, `ALTER
    ROLE`, `GRANT … TO`, `'app'@'%'`), not in prose that says what a thing is identified
    by."""
    start = m.string.rfind(";", max(0, m.start() - 300), m.start()) + 1
    before = m.string[max(start, m.start() - 300) : m.start()]
    said = compiled(r"(?i)\b(?:user|role|login|grant|alter|create)\b|'@'|@'|\bwith\b", 0)
    return _check_pair(secret, m) and (
        m.group(0).lower().startswith("with") or said.search(before) is not None
    )


def _check_arg(secret: str, m: re.Match[str]) -> bool:
    return is_value(secret.strip("'\"")) and not secret.startswith(("-", "/"))


def _check_pgpass(secret: str, m: re.Match[str]) -> bool:
    """The line's last field is the password; one followed by more text must look like one."""
    at_end = m.string[m.end() : m.end() + 80].lstrip(" \t\r")[:1] in ("", "\n")
    if secret.startswith("-"):
        # the field is a password, which may start with `-` (`-3gC1EIjsIm=`): one that
        # reads as an option (`--verbose`) is none
        rest = secret.lstrip("-")
        ok = is_value(rest) and any(c.isdigit() for c in rest) and secret_like(rest)
        return ok and (at_end or looks_random(rest))
    return _check_arg(secret, m) and (at_end or secret_like(secret) or looks_random(secret))


def _check_user_pass(secret: str, m: re.Match[str]) -> bool:
    # `-u 1000:1000` and `-u www-data:www-data` are a uid:gid or a user:group
    return is_value(secret) and not secret.isdigit() and secret_like(secret)


def _check_prose(secret: str, m: re.Match[str]) -> bool:
    value = secret.rstrip(".,;:!?)")
    return (
        is_value(value)
        and (looks_random(value) or secret_like(value))
        and any(c.isdigit() for c in value)
    )


def _check_random(secret: str, m: re.Match[str]) -> bool:
    return random_value(secret.rstrip(".,;:!?)"))


def _htpasswd(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    """`htpasswd -b [-c] file user <pw>`, `htpasswd -nb user <pw>`."""
    flags = m.group("f")
    if "b" not in flags:
        return []
    group = "c" if "n" not in flags else "b"
    if m.group(group) is None or not is_value(m.group(group)):
        return []
    return [m.span(group)]


RULES: list[Rule] = [
    Rule(
        # a name in a string (or an env lookup, or a Ruby symbol as an index:
        # `config[:api_token] = "…"`) and the value right after it
        "credential",
        r"(?i)(?:(?P<q>[\"'])(?P<key>" + _NAME + r")(?P=q)|(?:(?:\benv|\benviron|\bgetenv)"
        r"[.\[(]|\[:)\s*(?P<key2>"
        + _NAME
        + r"))\s*[\])]?\s*(?P<sep>,|\|\||\?\?|\bor\b|:=|=>|=(?!=)|:)"
        r"\s*" + _STR,
        ("pass", "pwd", "pw", "secret", "token", "key", "cred", "auth", "psk", "salt"),
        groups=("dq", "sq"),
        needs=("'", '"'),
        priority=CONTEXT,
        check=lambda s, m: _check_named(s, _KeyMatch(m)),
    ),
    Rule(
        # `app.secret_key = b'…'`: a bytes or raw literal assigned to a credential name
        "credential",
        r"(?i)(?<![\w.-])(?P<key>" + _NAME + r")\s*=\s*[bBrR]{1,2}" + _QSTR,
        ("pass", "pwd", "secret", "token", "key", "cred", "auth"),
        groups=("dq", "sq"),
        needs=("'", '"'),
        priority=CONTEXT,
        check=lambda s, m: _check_named(s, _KeyMatch(m)),
    ),
    Rule(
        # a user and a password given to something that logs in
        "password",
        r"(?i)\b(?P<fn>(?:[A-Za-z_][\w.]{0,60}?)?(?:auth|login|logon|credentials?|signin|"
        r"authenticate)\w{0,30})\s*(?:=\s*)?[(\[]\s*(?:new\s+\w+\s*\(\s*)?"
        + _ANY_STR
        + r"\s*,\s*"
        + _STR
        + r"\s*[)\],]",
        ("auth", "login", "logon", "credential", "signin"),
        groups=("dq", "sq"),
        needs=("'", '"'),
        priority=CONTEXT,
        check=lambda s, m: (
            _check_pair(s, m)
            and bool(
                {"auth", "login", "logon", "credential", "credentials", "signin", "authenticate"}
                & set(key_words(m.group("fn")))
            )
        ),
    ),
    Rule(
        # `DriverManager.getConnection(url, "sa", "<pw>")`, `pymysql.connect("db", "root", …)`
        "password",
        r"(?i)\b(?:[A-Za-z_][\w.]{0,60}?)?(?:getConnection|connect)\s*\(\s*(?:[^,()\n]{1,200},\s*)?"
        + _ANY_STR
        + r"\s*,\s*"
        + _STR
        + r"\s*\)",
        ("connect",),
        groups=("dq", "sq"),
        needs=("'", '"'),
        priority=CONTEXT,
        check=lambda s, m: _check_pair(s, m) and secret_like(s),
    ),
    Rule(
        "password",
        r"(?i)\b(?:identified\s+(?:with\s+\w+\s+)?by(?:\s+password)?|with\s+(?:encrypted\s+)?password(?:\s*=)?)"
        r"\s*'(?P<sq>[^'\n]{1,200})'",
        ("identified", "password"),
        groups=("sq",),
        needs=("'",),
        priority=CONTEXT,
        check=_check_sql,
    ),
    Rule(
        "cli-password",
        r"\bhtpasswd(?P<f>(?:[ \t]+-[A-Za-z]+)+)[ \t]+(?P<a>[^\s|;&\[-][^\s|;&]*)"
        r"[ \t]+(?P<b>[^\s|;&`<>]+)(?:[ \t]+(?P<c>[^\s|;&`<>]+))?",
        ("htpasswd",),
        priority=CONTEXT,
        expand=_htpasswd,
    ),
    Rule(
        "cli-password",
        r"(?i)\b(?:echo|printf)[ \t]+(?:-[ne]+[ \t]+)?[\"']?[\w.@-]+:(?P<bare>[^\s'\"|]+)[\"']?"
        r"[ \t]*\|[ \t]*(?:sudo[ \t]+)?chpasswd|\bchpasswd[ \t]*<<<[ \t]*[\"']?[\w.@-]+:"
        r"(?P<b2>[^\s'\"]+)",
        ("chpasswd",),
        groups=("bare", "b2"),
        priority=CONTEXT,
        check=_check_arg,
    ),
    Rule(
        "cli-password",
        r"(?m)(?:(?:^[ \t]*|>[ \t]*)AUTH[ \t]+(?:[^\s\"']+[ \t]+)?(?=[^\n]*$)"
        r"|(?i:\b(?:requirepass|masterauth))[ \t]+)" + _ARG,
        ("auth", "requirepass", "masterauth"),
        groups=("bare",),
        needs=("AUTH", "requirepass", "masterauth", "REQUIREPASS", "MASTERAUTH"),
        priority=CONTEXT,
        check=_check_arg,
    ),
    Rule(
        "cli-password",
        r"(?i)(?:\bpsexec(?:64)?(?:\.exe)?\b" + _SAME_COMMAND + r"\s-p"
        r"|\bopenssl\b" + _SAME_COMMAND + r"\s-k"
        r"|\bnet[ \t]+use\b" + _SAME_COMMAND + r"[ \t]/u(?:ser)?:[^\s]+"
        r"|\bnet[ \t]+user[ \t]+[^\s/]+)[ \t]+(?!/)" + _ARG,
        ("psexec", "openssl", "net "),
        groups=("bare",),
        priority=CONTEXT,
        check=_check_arg,
    ),
    Rule(
        "cli-password",
        r"(?<!\S)(?:-a|--auth|-u|--user|--basic-auth|--credentials?)(?:=|[ \t]+)[\"']?"
        r"[\w.@-]+:(?P<bare>[^\s'\"@\\]+)[\"']?(?=\s|$)",
        ("-a", "--auth", "-u", "--user", "--basic-auth", "--credential"),
        groups=("bare",),
        priority=CONTEXT,
        check=_check_user_pass,
    ),
    Rule(
        "cli-password",
        r"(?i)\b(?:echo|printf)[ \t]+(?:-[ne]+[ \t]+)?" + _ARG + r"[ \t]*\|[^\n|;]{0,200}?"
        r"--password-stdin",
        ("password-stdin",),
        groups=("bare",),
        priority=CONTEXT,
        check=_check_arg,
    ),
    Rule(
        "password",
        r"(?i)\b(?:wpa_)?psk[ \t]*=[ \t]*(?:\"(?P<dq>[^\"\n]{8,63})\"|(?P<bare>[0-9a-f]{64})\b)",
        ("psk",),
        groups=("dq", "bare"),
        priority=CONTEXT,
        check=_check_arg,
    ),
    Rule(
        "password",
        r"(?i)\bjdbc:oracle:(?:thin|oci8?):@?[\w$#.-]+/(?P<bare>[^\s@/'\"]{1,128})@",
        ("jdbc:oracle",),
        groups=("bare",),
        priority=CONTEXT,
        check=_check_arg,
    ),
    Rule(
        # a .pgpass line: hostname:port:database:username:password
        "password",
        # (also a diff's line, `+host:…`, and one quoted as a string: `"host:…"`)
        r"(?m)(?:^[+>-]?|(?<=[ \t\"'`]))(?:\*|(?:[\w-]+\.)*[A-Za-z][\w-]*):(?:\d{1,5}|\*):"
        r"[\w*.-]+:[\w*.@-]+:(?P<bare>(?:[^\s\"'`\\]|\\(?![nrt])){4,200}?)"
        # (what may follow it on a line quoted from a query or a shell: `&user=`, `|next`;
        # a literal escape or a quote ends it, as in a string of code)
        r"(?:&[A-Za-z_][A-Za-z_.-]*=\S*|[|;][a-z][a-z0-9_-]{2,}\S*)?"
        r"(?:\\[nrt]|[\"'`;])?(?=[\s\\\"'`]|$)",
        # (PostgreSQL's port and the usual others: a second server, pgbouncer, Supabase's
        # pooler, managed databases)
        (":5432:", ":*:", ":3306:", ":6432:", ":5433:", ":5434:", ":6543:", ":15432:", ":25060:"),
        groups=("bare",),
        priority=CONTEXT,
        check=_check_pgpass,
        # (the last field runs to the line's end or its quote: `&`, `;` and `|` are the
        # password's unless a field's or a command's name follows them)
        whole=True,
    ),
    Rule(
        "password",
        r"(?i)\b(?:use|using|try|with)[ \t]+[\"'`]?(?P<bare>[^\s\"'`]{6,100})[\"'`]?[ \t]+as[ \t]+"
        r"(?:the[ \t]+|a[ \t]+|your[ \t]+|my[ \t]+)?(?:[\w-]+[ \t]+){0,2}"
        r"(?:password|passphrase|passwd|token|secret|api[ _-]?key|pin)\b",
        ("pass", "token", "secret", "key", "pin"),
        groups=("bare",),
        needs=(" as ",),
        priority=CONTEXT,
        check=_check_prose,
    ),
    Rule(
        "credential",
        r"(?i)\b(?:new|old|current|temporary|temp|rotated|fresh|replacement|real)[ \t]+"
        r"(?:one|value|key|token|password|secret|credential)[ \t]+(?:is|was|:)[ \t]*[\"'`]?"
        r"(?P<bare>[A-Za-z0-9+/_.~=-]{16,})",
        ("new", "old", "current", "temp", "rotated", "fresh", "replacement", "real"),
        groups=("bare",),
        priority=CONTEXT,
        check=_check_random,
    ),
]


class _KeyMatch:
    """A match whose `key` group is whichever of `key` / `key2` matched."""

    def __init__(self, m: re.Match[str]) -> None:
        self.m = m

    def group(self, name: str) -> str:
        if name == "key":
            return self.m.group("key") or self.m.groupdict().get("key2") or ""
        return self.m.groupdict().get(name) or ""
