"""Credentials in the syntax of one language or file format, where no `key = value` shows.

- SQL: `IDENTIFIED BY "…"` in a `CREATE` / `ALTER` / `GRANT` statement (Oracle, also bare), `IDENTIFIED WITH <plugin> BY '…'` (MySQL),
  `PASSWORD '…'` / `ENCRYPTED PASSWORD '…'` (PostgreSQL); a placeholder (`'<password>'`,
  `:pw`, `?`, `%s`, `${PW}`) is not a secret;
- postfix `sasl_passwd` lines: `[smtp.host]:587 user@host:<pw>`;
- configuration keys that name a credential and take their value after a blank: nslcd /
  pam_ldap `bindpw`, slapd `rootpw`, Redis `requirepass` / `masterauth`, keepalived
  `auth_pass`, sssd `ldap_default_authtok` (a word `values.py` knows as a credential);
- HTML: the `value` of an `<input type="password">`, its attributes in any order;
- PHP's `var_dump` (`["password"]=>` then `string(12) "…"`) and `print_r`
  (`[password] => …`) of an array with a credential key;
- C and C++ initialisation: `std::string secret{"…"}`, `string token("…")`,
  `char password[] = "…"`;
- a password file given as a process substitution (`--vault-password-file <(echo …)`);
- a value written into a file whose name names a secret: `echo '…' > ~/.vault_pass`,
  `printf '%s' … > secrets/api_token`;
- EDN, Clojure and Lisp keyword maps and plists: `{:db-pass "…"}`, `(:password "…")`;
- php-fpm pool settings: `env[DB_PASSWORD] = …`.
"""

from __future__ import annotations

import re

from gitimprove.redaction.engine import CONTEXT, Rule
from gitimprove.redaction.values import assignment_is_secret, is_value, key_strength, kind_of

_LIT = r"""(?:"(?P<dq>(?:[^"\\\n]|\\.){1,500})"|'(?P<sq>(?:[^'\\\n]|\\.){1,500})')"""
_VAL = _LIT[:-1] + r"""|(?P<bare>[^\s"'#;,)]{1,500}))"""
_GROUPS = ("dq", "sq", "bare")
_BIND_KEYS = (
    r"bindpw|rootpw|requirepass|masterauth|auth_pass|ldap_default_authtok|ldap_secret"
    r"|tls_key_pass|sasl_secret|bind_?password"
)

_BIND_KEYWORDS: tuple[str, ...] = (
    "bindpw",
    "rootpw",
    "requirepass",
    "masterauth",
    "auth_pass",
    "authtok",
)
_BIND_KEYWORDS += ("ldap_secret", "tls_key_pass", "sasl_secret", "bind_password", "bindpassword")


def _placeholder(v: str) -> bool:
    return v.startswith(("<", ":", "$", "%", "{", "?", "@", "&")) or v.upper() in (
        "VALUES",
        "EXTERNALLY",
        "GLOBALLY",
        "NULL",
        "RANDOM",
    )


def _check_value(secret: str, m: re.Match[str]) -> bool | str:
    v = secret.strip()
    return not _placeholder(v) and is_value(v) and "password"


def _check_named(secret: str, m: re.Match[str]) -> bool | str:
    key = m.group("key")
    if _placeholder(secret) or not assignment_is_secret(
        key, secret, quoted=m.groupdict().get("bare") is None, env_style=True
    ):
        return False
    return kind_of(key)


def _check_bind(secret: str, m: re.Match[str]) -> bool | str:
    """`bindpw <value>`: a bare value of lower-case letters is a word of a sentence ("the
    bindpw option is …"), not the password."""
    if m.group("bare") is not None and secret.isalpha() and secret.islower():
        return False
    return _check_named(secret, m)


def _check_sasl(secret: str, m: re.Match[str]) -> bool | str:
    return not _placeholder(secret) and len(secret) >= 3 and "password"


def _check_file(secret: str, m: re.Match[str]) -> bool | str:
    return not _placeholder(secret) and is_value(secret) and "credential"


def _check_strong(secret: str, m: re.Match[str]) -> bool | str:
    key = m.group("key")
    if key_strength(key) != "strong":
        return False
    return _check_named(secret, m)


def _check_keyword(secret: str, m: re.Match[str]) -> bool | str:
    """`:db-pass "…"`: a keyword naming a credential (its namespace aside) given a string."""
    key = m.group("key").rsplit("/", 1)[-1].rstrip("*+!?")
    if key_strength(key) is None or _placeholder(secret):
        return False
    if not assignment_is_secret(key, secret, quoted=True, env_style=False):
        return False
    return kind_of(key)


_SECRET_FILE = (
    r"[^\s|;&]*?(?i:vault[_-]?pass|passw(?:or)?d|passphrase|secret|token|api[_-]?key"
    r"|\.pass\b|credentials?)[^\s|;&]*"
)

RULES: list[Rule] = [
    Rule(
        "password",
        r"(?i)\b(?:CREATE|ALTER|GRANT|CONNECT)\b[^;\n]{0,300}?\bIDENTIFIED(?:[ \t]+WITH[ \t]+['\"]?\w+['\"]?)?[ \t]+(?:BY|AS)[ \t]+"
        r"(?:PASSWORD[ \t]+)?" + _VAL,
        ("identified",),
        groups=_GROUPS,
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        "password",
        r"(?i)\b(?:ENCRYPTED[ \t]+|UNENCRYPTED[ \t]+)?PASSWORD[ \t]+" + _LIT,
        ("password '", 'password "'),
        groups=("dq", "sq"),
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        # postfix sasl_passwd: `[host]:port user:password` or `host:port user:password`
        "password",
        r"(?m)(?<![\w.\[-])(?:\[[\w-]+(?:\.[\w-]+)+\](?::\d{1,5})?|[\w-]+(?:\.[\w-]+)+:\d{1,5})"
        r"[ \t]+[^\s:\[\]]{1,100}:(?P<bare>\S{1,200})(?!\S)",
        ("]:", ":25", ":465", ":587", ":2525", "smtp", "sasl"),
        groups=("bare",),
        priority=CONTEXT,
        check=_check_sasl,
    ),
    Rule(
        # a configuration key whose value follows a blank or `=` (nslcd, slapd, redis, sssd)
        "password",
        r"(?im)(?<![\w.-])(?P<key>"
        + _BIND_KEYS
        + r")(?:[ \t]*[=:][ \t]*|[ \t]+)"
        + _VAL
        + r"(?![^\s#])",
        _BIND_KEYWORDS,
        groups=_GROUPS,
        priority=CONTEXT,
        check=_check_bind,
    ),
    Rule(
        # <input type="password" … value="…">, the value before or after the type
        "password",
        r"(?i)<input\b(?=[^<>]*\btype[ \t]*=[ \t]*[\"']?password\b)[^<>]*?\bvalue[ \t]*=[ \t]*"
        + _LIT,
        ("<input",),
        groups=("dq", "sq"),
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        # PHP var_dump: ["password"]=> then string(12) "…" on the next line
        "credential",
        r"\[[\"'](?P<key>[\w.-]{1,80})[\"']\][ \t]*=>[ \t]*\r?\n?[ \t]*string\(\d+\)[ \t]*"
        r"\"(?P<dq>[^\n]{1,500})\"[ \t]*\r?$",
        ("=>",),
        groups=("dq",),
        flags=re.ASCII | re.MULTILINE,
        priority=CONTEXT,
        check=_check_strong,
    ),
    Rule(
        # PHP print_r: [password] => …
        "credential",
        r"(?m)(?<![\w\]])\[(?P<key>[\w.-]{1,80})\][ \t]*=>[ \t]*(?P<bare>[^\s]{1,500})(?!\S)",
        ("=>",),
        groups=("bare",),
        priority=CONTEXT,
        check=_check_strong,
    ),
    Rule(
        # C / C++ initialisation: std::string secret{"…"}, string token("…"), char pw[] = "…"
        "credential",
        r"\b(?:(?:std::)?(?:w?string|string_view)|QString|String|auto|(?:const[ \t]+)?char"
        r"(?:[ \t]*\*)?|wchar_t(?:[ \t]*\*)?)[ \t&*]+(?P<key>[A-Za-z_]\w*)(?:\[\d*\])?[ \t]*"
        r"(?:=[ \t]*(?:(?:std::)?(?:w?string|string_view)|QStringLiteral|QString)?[ \t]*[{(]?|[{(])"
        r"[ \t]*(?:u8|L|u|U)?\"(?P<dq>(?:[^\"\\\n]|\\.){1,500})\"",
        ("string", "char", "auto"),
        groups=("dq",),
        needs=('"',),
        priority=CONTEXT,
        check=_check_strong,
    ),
    Rule(
        # a password file given as a process substitution: `--vault-password-file <(echo …)`
        "password",
        r"(?i)(?<![\w-])--?[\w-]*(?:pass|secret|token|key)[\w-]*[ \t=]+<\([ \t]*"
        r"(?:echo|printf)(?:[ \t]+-[neE]+)*(?:[ \t]+(?:'%s'|\"%s\"|%s))?[ \t]+"
        + _VAL
        + r"[ \t]*\)",
        ("<(",),
        groups=_GROUPS,
        priority=CONTEXT,
        check=_check_file,
    ),
    Rule(
        # echo '…' > ~/.vault_pass: what is written into a file named after a secret
        "credential",
        r"\b(?:echo|printf)(?:[ \t]+-[neE]+)*(?:[ \t]+(?:'%s(?:\\n)?'|\"%s(?:\\n)?\"))?[ \t]+"
        + _VAL
        + r"[ \t]*(?:>>?|\|[ \t]*(?:sudo[ \t]+)?tee(?:[ \t]+-a)?)[ \t]*"
        + _SECRET_FILE,
        ("echo", "printf"),
        groups=_GROUPS,
        needs=(">", "tee"),
        priority=CONTEXT,
        check=_check_file,
    ),
]
RULES += [
    Rule(
        # EDN, Clojure and Lisp keyword maps and plists: `{:db-pass "…"}`, `(:password "…")`,
        # `:api/token "…"` (a keyword, a blank or a comma, the value)
        "credential",
        r"(?<![\w:-]):(?P<key>[A-Za-z][\w.*+!?-]{0,80}(?:/[A-Za-z][\w.*+!?-]{0,80})?)[ \t,]+"
        + _LIT,
        ("pass", "pwd", "secret", "token", "key", "cred", "auth", "pin"),
        groups=("dq", "sq"),
        needs=(":",),
        priority=CONTEXT,
        check=_check_keyword,
    ),
]
RULES += [
    Rule(
        # php-fpm pool settings: `env[DB_PASSWORD] = …`, `php_admin_value[…] = …`
        "credential",
        r"(?m)(?:^|(?<=[ \t]))(?:env|php_(?:admin_)?(?:value|flag))\[(?P<key>[\w.-]{1,80})\][ \t]*=[ \t]*"
        + _VAL,
        ("env[", "php_value[", "php_admin_value["),
        groups=_GROUPS,
        priority=CONTEXT,
        check=_check_named,
    ),
]
