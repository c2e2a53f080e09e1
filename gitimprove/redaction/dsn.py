"""Passwords in connection strings and SQL statements that the URL and key=value rules miss.

- a Go MySQL DSN, `user:<pw>@tcp(db:3306)/app` (also `@unix(/path)/`, `@/app`, and any
  `@<protocol>(<address>)`);
- an Oracle EZConnect string, `app/<pw>@//db:1521/ORCLPDB1` or `app/<pw>@db:1521/SVC`
  (a `//` or a port says it is one: `owner/repo2@v1` is a reference, not a login);
- MySQL `SET PASSWORD [FOR …] = '<pw>'` (or `= PASSWORD('<pw>')`), SQL Server
  `CREATE|ALTER LOGIN … WITH PASSWORD = '<pw>'`;
- an ODBC connection string's value in braces, `Pwd={<pw>}` (`}}` stands for `}`), which
  holds any character a password has (`;`, `=`, blanks); a template (`Pwd={password}`,
  `{0}`) is none;
- an ADO.NET or ODBC connection string's bare password holding `;` or `,`
  (`Server=db;User Id=sa;Password=ab;c,1!;`): a `;` ends it only before the next
  `<key>=` or at the string's end, so what follows a `;` that starts no pair is still the
  password (the string must name a connection's key: `Server=`, `Data Source=`, `Uid=`, …).
"""

from __future__ import annotations

import re

from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.values import is_value


def _check_pw(secret: str, m: re.Match[str]) -> bool | str:
    if secret.startswith(("$", "%", "{", "<")) or not is_value(secret):
        return False
    return "password"


def _check_braced(secret: str, m: re.Match[str]) -> bool | str:
    """A braced ODBC value under a password's name holds the password, unless it is a
    template's field: a name in lower case or capitals (`{password}`, `{DB_PASSWORD}`), a
    number (`{0}`), a lookup (`{env:DB_PW}`)."""
    if compiled(r"[a-z_][a-z0-9_.]{0,40}|[A-Z_][A-Z0-9_.]{0,40}|\d{1,3}|\w+:[\w.]+", 0).fullmatch(
        secret
    ):
        return False
    return "password" if is_value(secret.replace(" ", "")) else False


# the keys a connection string holds beside its password
_CONNECTION_KEY = (
    r"(?i)(?:^|[;\"'\s])(?:server|data[ \t]+source|database|initial[ \t]+catalog|user[ \t]*id|"
    r"uid|user|driver|dsn|host|port|address|addr|provider|network[ \t]+address|"
    r"integrated[ \t]+security|encrypt|trustservercertificate)[ \t]*="
)


def _check_connection(secret: str, m: re.Match[str]) -> bool | str:
    """A password holding `;` or `,` in a connection string: its line names another of a
    connection's keys, and the value is no template (`{0}`, `$(DB_PW)`, `%s`)."""
    text = m.string
    start = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", m.end())
    line = text[start : len(text) if end == -1 else end]
    if not compiled(_CONNECTION_KEY, 0).search(line.replace(m.group(0), " ")):
        return False
    return _check_pw(secret, m)


def _check_dsn(secret: str, m: re.Match[str]) -> bool | str:
    # a password, not a `host:port` before `@`: `db:3306@tcp(` does not occur, a number does
    if secret.isdigit() and len(secret) <= 5:
        return False
    return _check_pw(secret, m)


RULES: list[Rule] = [
    Rule(
        "dsn-password",
        r"(?<![\w/:.@-])[\w.$-]{1,64}:(?P<v>[^\s\"'`@/:(]{1,200})"
        r"@(?:[a-z][\w-]{1,20}\((?:[^()\s]{0,200})\)|/)",
        ("@tcp(", "@tcp6(", "@unix(", "@udp(", "@cloudsql", "@/"),
        groups=("v",),
        priority=CONTEXT,
        check=_check_dsn,
    ),
    Rule(
        "oracle-password",
        r"(?<![\w/:.@$#-])[A-Za-z][\w$#]{0,127}/(?P<v>[^\s\"'`@/]{1,200})"
        r"@(?://[\w.-]+(?::\d{1,5})?|[\w.-]+:\d{1,5})(?:/[\w.$-]+)?(?:\b|$)",
        ("@//", "@"),
        groups=("v",),
        needs=("@",),
        priority=CONTEXT,
        check=_check_pw,
    ),
    Rule(
        "password",
        r"(?i)\bset[ \t]+password\b(?:[ \t]+for[ \t]+[^=\n;]{1,200}?)?[ \t]*=[ \t]*"
        r"(?:(?:old_)?password[ \t]*\([ \t]*)?(?:'(?P<sq>(?:[^'\\\n]|\\.|''){1,200})'"
        r"|\"(?P<dq>(?:[^\"\\\n]|\\.){1,200})\")",
        ("set password",),
        groups=("sq", "dq"),
        priority=CONTEXT,
        check=_check_pw,
    ),
    Rule(
        "password",
        r"(?i)\b(?:create|alter)[ \t]+(?:login|user|role|application[ \t]+role)\b[^;\n]{0,200}?"
        r"\bwith\b[^;\n]{0,100}?\bpassword[ \t]*=[ \t]*N?(?:'(?P<sq>(?:[^'\n]|''){1,200})'"
        r"|\"(?P<dq>[^\"\n]{1,200})\")",
        ("password",),
        groups=("sq", "dq"),
        priority=CONTEXT,
        check=_check_pw,
    ),
    Rule(
        "password",
        r"(?i)(?:^|[;\s\"'])(?:pwd|password|passwd)[ \t]*=[ \t]*\{(?P<v>(?:[^}\n]|\}\}){1,256})\}",
        ("pwd=", "password=", "passwd=", "pwd =", "password =", "passwd ="),
        groups=("v",),
        priority=CONTEXT,
        check=_check_braced,
        whole=True,
    ),
    Rule(
        "password",
        r"(?i)(?:(?<=[;\"'\s])|^)(?:password|pwd)[ \t]*=[ \t]*"
        r"(?P<v>[^\s\"'{;,][^\s\"']*?[;,][^\s\"']*?[^\s\"';,])"
        r"(?=;[ \t]*[A-Za-z][\w \t]{0,40}=|;?[ \t]*(?:[\"']|\r?\n|\Z))",
        ("pwd=", "password=", "pwd =", "password ="),
        groups=("v",),
        needs=(";",),
        priority=CONTEXT,
        check=_check_connection,
        whole=True,
    ),
]
