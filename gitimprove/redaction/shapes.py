"""More shapes of a credential recognised by its context (beside `context.py`).

- a name and a value given as two fields: a Kubernetes `env` entry (`- name: DB_PASSWORD` /
  `value: …`), ECS and SSM JSON (`{"Name": "api_key", "Value": "…"}`, `{"Key": "password",
  "Value": …}`), XML attributes (`<add key="Password" value="…"/>`), a plist's
  `<key>Password</key><string>…</string>`;
- an XML element named after a credential (`<password>…</password>`);
- a Dockerfile `ENV DB_PASSWORD <pw>`, fish `set -x TOKEN <token>`, Windows `setx`;
- prose: `the password <pw> is wrong`, `password was '<pw>'`;
- more command lines: `gh secret set X --body …`, `az login -p …`, `sqlplus user/<pw>@db`,
  `openssl … -passin pass:…`, `nuget push -k …`, `zip -P …`, `ldapsearch -w …`.
"""

from __future__ import annotations

import re

from gitimprove.redaction.context import _SAME_COMMAND
from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.values import assignment_is_secret, is_value, kind_of, secret_like

_CRED = (
    r"[\w./:-]{0,60}?(?:pass|pwd|pw|secret|token|key|cred|auth|pin|dsn|cookie|sig)[\w./:-]{0,60}"
)
_Q = r"[\"']?"
_VAL = r"""(?:"(?P<dq>(?:[^"\\\n]|\\.){1,500})"|'(?P<sq>[^'\n]{1,500})'|(?P<bare>[^\s'"<>,;{}\[\]]{1,500}))"""


def _check_pair(secret: str, m: re.Match[str]) -> bool | str:
    key = m.group("key")
    if not assignment_is_secret(key, secret, quoted=True, env_style=True):
        return False
    return kind_of(key)


def _check_prose(secret: str, m: re.Match[str]) -> bool:
    if m.group("word").lower().startswith(("pin", "pass code", "passcode")):
        # a PIN is digits: "we pin numpy==1.26" is not one
        return secret.isdigit() and len(secret) >= 4
    return _check_prose_password(secret, m)


def _check_prose_password(secret: str, m: re.Match[str]) -> bool:
    if m.group("q") is not None:
        return is_value(secret)
    if compiled(r"[&*][A-Za-z_][\w-]*", 0).fullmatch(secret):
        return False  # a YAML anchor or alias (`password: &pw`): the value is elsewhere
    value = secret.strip(".,;:!?)*_~")  # Markdown emphasis and sentence punctuation
    if m.string[m.end() : m.end() + 1] == "(" or len(value) < 4 or not is_value(value):
        return False
    has_letter = any(c.isalpha() for c in value)
    return (has_letter and secret_like(value)) or (value.isdigit() and len(value) >= 6)


def _check_value(secret: str, m: re.Match[str]) -> bool:
    return is_value(secret)


def _not_between_names() -> str:
    # what may stand between a name field and its value field: not another name, not the
    # end of the object (`valueFrom:` is not `value:`)
    return r"(?:(?!\b(?:name|key)\b)[^{}])" + "{0,300}?"


# a conditional expression or a literal of code, which no passphrase of words holds
_CODE_WORDS = r"\bif\b.*\belse\b|\bfor\b.*\bin\b|\b(?:None|True|False|null|nil|lambda)\b"


def _check_passphrase(secret: str, m: re.Match[str]) -> bool | str:
    if compiled(_CODE_WORDS, 0).search(secret):
        return False  # `password = generated if length else None`
    return kind_of(m.group("key")) == "password" and is_value(secret) and "password"


RULES: list[Rule] = [
    Rule(
        # `passphrase: correct horse battery staple` (YAML, prose): words to the line's end
        "password",
        r"(?im)^[ \t-]*[\"']?(?P<key>[\w.-]*pass(?:word|phrase)[\w.-]*)[\"']?[ \t]*[:=][ \t]*"
        r"(?P<v>[A-Za-z]{2,}(?:[ -][A-Za-z]{2,}){3,9})[ \t]*$",
        ("pass",),
        groups=("v",),
        priority=CONTEXT,
        check=_check_passphrase,
    ),
    Rule(
        "credential",
        r"(?i)"
        + _Q
        + r"\b(?:name|key|parametername|parameter_name|variable)"
        + _Q
        + r"\s*[:=]\s*"
        + _Q
        + r"(?P<key>"
        + _CRED
        + r")"
        + _Q
        + _not_between_names()
        + _Q
        + r"\bvalue"
        + _Q
        + r"\s*[:=]\s*"
        + _VAL,
        ("name", "key", "variable"),
        groups=("dq", "sq", "bare"),
        needs=("value", "Value", "VALUE"),
        priority=CONTEXT,
        check=_check_pair,
    ),
    Rule(
        "credential",
        r"(?i)<key>\s*(?P<key>" + _CRED + r")\s*</key>\s*<string>(?P<dq>[^<>\n]{1,500})</string>",
        ("<key>",),
        groups=("dq",),
        priority=CONTEXT,
        check=_check_pair,
    ),
    Rule(
        "credential",
        r"(?i)<(?P<key>" + _CRED.replace("/", "") + r")(?:\s[^<>]{0,200})?>"
        r"\s*(?:<!\[CDATA\[(?P<cd>[^\n]{1,500}?)\]\]>|(?P<dq>[^<>\n]{1,500}?))\s*</(?P=key)>",
        ("<",),
        groups=("cd", "dq"),
        needs=("</",),
        priority=CONTEXT,
        check=_check_pair,
    ),
    Rule(
        "credential",
        r"(?i)(?<![\w-])(?:(?-i:ENV)|setx|set[ \t]+-[a-zA-Z]+)[ \t]+(?P<key>[A-Za-z_][\w.-]*)"
        r"[ \t]+" + _VAL,
        ("env", "setx", "set "),
        needs=("ENV", "setx", "SETX", "Setx", "set ", "set\t", "SET ", "Set "),
        groups=("dq", "sq", "bare"),
        priority=CONTEXT,
        check=_check_pair,
    ),
    Rule(
        "password",
        r"(?i)\b(?P<word>password|passwd|passphrase|pass ?code|pwd|pin)\b"
        r"(?:[ \t]+for[ \t]+[^\s:]{1,64})?"
        r"(?:[ \t]+(?:is|was|of|to|set[ \t]+to|changed[ \t]+to|reset[ \t]+to))?[ \t]*:?[ \t]+"
        r"(?:(?P<q>[\"'`])(?P<qv>[^\"'`\n]{3,100})(?P=q)|(?P<bv>[A-Za-z0-9!@#$%^&*_+~.-]{4,100}))",
        ("pass", "pwd", "pin"),
        groups=("qv", "bv"),
        priority=CONTEXT,
        check=_check_prose,
    ),
    Rule(
        "cli-password",
        r"(?i)(?:\bgh[ \t]+secret[ \t]+set\b" + _SAME_COMMAND + r"\s(?:-b|--body)"
        r"|az[ \t]+login\b" + _SAME_COMMAND + r"\s(?:-p|--password)"
        r"|nuget(?:\.exe)?[ \t]+push\b" + _SAME_COMMAND + r"\s(?:-k|-ApiKey|--api-key)"
        r"|(?:zip|unzip|7z|7za)\b" + _SAME_COMMAND + r"\s-P"
        r"|ldap(?:search|modify|add|delete|passwd)\b" + _SAME_COMMAND + r"\s-w"
        r"|(?<![\w-])-pass(?:in|out)?[ \t]+pass:)"
        r"(?:=|[ \t]*)(?:\"(?P<dq>[^\"\n]+)\"|'(?P<sq>[^'\n]+)'|(?P<bare>[^\s'\"|;&`]+))",
        ("gh", "az", "nuget", "zip", "7z", "ldap", "-pass"),
        needs=("gh ", "gh\t", "az ", "az\t", "nuget", "zip", "7z", "ldap", "-pass"),
        groups=("dq", "sq", "bare"),
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        "cli-password",
        r"(?i)\b(?:sqlplus|sqlldr|expdp|impdp|rman|dgmgrl|conn(?:ect)?)[ \t]+(?:-\w+[ \t]+)*"
        r"[\"']?[\w$#.-]+/(?P<bare>[^\s@/'\"]{1,128})(?=@|[ \t]+as[ \t]|[\"']?\s|[\"']?$)",
        ("sqlplus", "sqlldr", "expdp", "impdp", "rman", "dgmgrl", "conn"),
        groups=("bare",),
        priority=CONTEXT,
        check=_check_value,
    ),
]
