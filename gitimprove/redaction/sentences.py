"""Credentials in sentences the connector rules of `prose.py` do not reach.

- a short credential word: "pass is …", "pw was …" (with a value that is no plain word:
  "the pass is valid" names none);
- a user and a password apart from their login word: "log in (admin / …)", "wifi: AcmeGuest
  / …", "VPN — bob / …";
- the value before its name: "I tried … as the password", "with "…" — that is the root
  password", "… is the new token";
- a token pointed at: "use this one instead: …", "here is the new one: …", "this key …
  works", "the token … expired" (a random-looking token only: entropy, letters and digits);
- a variable naming a credential in a sentence: Ansible's "mysql_root_password is …".
"""

from __future__ import annotations

import re

from gitimprove.redaction.calls import credential_like
from gitimprove.redaction.engine import CONTEXT, Rule
from gitimprove.redaction.keynames import words
from gitimprove.redaction.values import (
    is_identifier_value,
    is_value,
    key_strength,
    kind_of,
    looks_random,
    password_evidence,
)

# a token pointed at: no dots (a sentence's full stop, or a line joined after it)
_T = r"(?P<v>[A-Za-z0-9_+/=~-]{16,200})(?![\w+/=~-])"
# a value in prose: no blanks, quotes or brackets; trailing punctuation is not part of it
_V = r"(?P<v>[^\s\"'`,;()\[\]{}<>]{4,200}?)(?=[.,;:!?)\]]*(?:[\s\"'`]|$))"
_Q = r"[\"'`“”‘’]?"
_NOUN = r"(?:password|passphrase|passcode|passwd|pass|pw|pwd|pin|token|secret|api[ _-]?key|key|credential)"


def _credential(value: str) -> bool:
    v = value.rstrip(".,;:!?)*_~")
    return credential_like(v) and not is_identifier_value(v)


def _random(value: str) -> bool:
    v = value.rstrip(".,;:!?)*_~")
    return is_value(v) and looks_random(v) and not is_identifier_value(v)


def _check_short(secret: str, m: re.Match[str]) -> bool | str:
    v = secret.rstrip(".,;:!?)*_~")
    has_other = any(not c.isalpha() for c in v)
    return _credential(v) and has_other and "password"


# a media type's first half, written against its second: `text/x-…`, `application/vnd.…`
_MEDIA_TYPES = words("text application image audio video multipart message font model chemical")


def _check_pair(secret: str, m: re.Match[str]) -> bool | str:
    v = secret.rstrip(".,;:!?)*_~")
    if v.isdigit() or len(v) < 4 or not is_value(v) or is_identifier_value(v):
        return False
    if "/" in v:
        return False  # a path goes on (`spotter-plugin/hooks/hooks.json`)
    if m.group("user").lower() in _MEDIA_TYPES and m.string[m.end("user")] == "/":
        return False  # a media type: `console', ('text/x-dylan-console',)`
    if v.isalpha() and (v.islower() or v.isupper() or v.istitle()):
        return False  # `read / write`, `Yes / No`
    return "password"


def _check_before(secret: str, m: re.Match[str]) -> bool | str:
    noun = m.group("noun").lower()
    if not _credential(secret):
        return False
    return "password" if noun.startswith("p") else "credential"


def _check_named(secret: str, m: re.Match[str]) -> bool | str:
    key = m.group("key")
    if key_strength(key) != "strong" or not _credential(secret):
        return False
    return kind_of(key)


# a word before `token` / `key` that names an identifier, not a credential: `trace token
# <hex>`, `request token … took 3ms`, `cache key v2-deps-…`, `public key …`
_ID_KINDS = words(
    """trace tracing span request correlation causation idempotency idempotence page paging
    pagination cursor continuation resume next sync change etag cache sort primary partition
    foreign row range hash lookup dedup dedupe deduplication object bucket index map dict
    public host fencing lock build job run commit event message transaction tx nonce
    progress cancellation version revision"""
)


def _pointed_at(secret: str, m: re.Match[str]) -> bool | str:
    """A random token right after a credential noun, unless a word before the noun makes
    it an identifier's name (`trace token`, `cache key`)."""
    if not _random(secret):
        return False
    text, at = m.string, m.start()
    head = text[max(0, at - 40) : at].rstrip(" \t-_")
    before = re.split(r"[^A-Za-z]", head)[-1].lower() if head else ""
    return before not in _ID_KINDS and "credential"


def _check_bracketed(secret: str, m: re.Match[str]) -> bool | str:
    """A bracketed value that reads as a password or a key by its characters alone."""
    if not credential_like(secret):
        return False
    if not (password_evidence(secret) or looks_random(secret)):
        return False
    return "password" if "pass" in m.group().lower()[:12] else "credential"


RULES: list[Rule] = [
    Rule(
        "password",
        r"(?i)\b(?:pass|pw|pword|pswd|psw)\b[ \t]+(?:(?:is|was)(?:[ \t]+now)?|=|:|is[ \t]+set[ \t]+to)"
        r"[ \t]*" + _Q + _V,
        ("pass", "pw", "psw"),
        groups=("v",),
        priority=CONTEXT,
        check=_check_short,
    ),
    Rule(
        # log in (admin / …), wifi: AcmeGuest / …, VPN — bob / …
        "password",
        r"(?i)\b(?:log(?:ged)?[ -]?(?:in|on)|sign(?:ed)?[ -]?in|wi-?fi|wlan|ssid|vpn|network|"
        r"router|portal|console|dashboard|admin(?:istrator)?|account|login|creds?|credentials?)"
        r"\b[^\n/]{0,24}?(?:[ \t]*[(:\[=]|[ \t]+[—–-]|[—–])[ \t]*"
        + _Q
        + r"(?P<user>[\w.@\\+-]{1,40})"
        + _Q
        + r"[ \t]*/[ \t]*"
        + _Q
        + _V,
        (
            "log",
            "sign",
            "wifi",
            "wi-fi",
            "wlan",
            "ssid",
            "vpn",
            "network",
            "router",
            "portal",
            "console",
            "dashboard",
            "admin",
            "account",
            "cred",
        ),
        groups=("v",),
        needs=("/",),
        priority=CONTEXT,
        check=_check_pair,
    ),
    Rule(
        # I tried … as the password; set … for the API key
        "credential",
        r"(?i)\b(?:tried|try|trying|used|use|using|typed|entered|enter|set|gave|give|put|paste[d]?)"
        r"[ \t]+"
        + _Q
        + _V
        + _Q
        + r"[ \t]+(?:as|for)[ \t]+(?:(?:the|my|our|your|their|a|an|its)[ \t]+)?"
        r"(?:[\w-]+[ \t]+){0,2}?(?P<noun>" + _NOUN + r")\b",
        (
            "password",
            "passphrase",
            "passcode",
            "pass",
            "pw",
            "pin",
            "token",
            "secret",
            "key",
            "cred",
        ),
        groups=("v",),
        priority=CONTEXT,
        check=_check_before,
    ),
    Rule(
        # with "…" — that is the root password; … (that's the API token); … is the new token
        "credential",
        r"(?i)(?<![^\s\"'`“‘(])"
        + _Q
        + _V
        + _Q
        + r"[ \t]*(?:[—–,;:(-][ \t]*)?(?:(?:that|this|it|which)(?:'s|’s|[ \t]+is"
        r"|[ \t]+was|[ \t]+being)|is|was)[ \t]+(?:the|my|our|your|their|his|her)[ \t]+"
        r"(?:[\w-]+[ \t]+){0,2}?(?P<noun>" + _NOUN + r")\b",
        (
            "password",
            "passphrase",
            "passcode",
            "pass",
            "pw",
            "pin",
            "token",
            "secret",
            "key",
            "cred",
        ),
        groups=("v",),
        priority=CONTEXT,
        check=_check_before,
    ),
    Rule(
        # use this one instead: …; here is the new one: …; try this: …
        "credential",
        r"(?i)\b(?:use|try|here(?:'s|[ \t]+is)|new|updated|rotated|regenerated|correct|"
        r"another|instead)\b[^\n:]{0,40}?:[ \t]*" + _Q + _T,
        (
            "use",
            "try",
            "here",
            "new",
            "updated",
            "rotated",
            "regenerated",
            "correct",
            "another",
            "instead",
        ),
        groups=("v",),
        needs=(":",),
        priority=CONTEXT,
        check=lambda s, m: _random(s) and "credential",
    ),
    Rule(
        # this key … works; the token … expired; my PAT … (a random token right after)
        "credential",
        r"(?i)\b(?:key|token|secret|pat|api[ _-]?key|access[ _-]?key|password)[ \t]+" + _Q + _T,
        ("key", "token", "secret", "pat", "password"),
        groups=("v",),
        priority=CONTEXT,
        check=_pointed_at,
    ),
    Rule(
        # "mysql_root_password is …", "the db_password was set to …"
        "password",
        r"(?i)(?<![\w$])(?P<key>[A-Za-z][\w.-]{0,60}_(?:password|passwd|pass|pwd|secret|token|"
        r"api_?key|key)\w*)[ \t]+(?:is|was|=|equals|becomes|(?:is|was)?[ \t]*set[ \t]+to)[ \t]+"
        + _Q
        + _V,
        ("pass", "pwd", "secret", "token", "key"),
        groups=("v",),
        priority=CONTEXT,
        check=_check_named,
    ),
    Rule(
        # a value in brackets a few words after the word naming it: "the secret you gave
        # (<pw>) was rejected", "token [<value>] expired"
        "credential",
        r"(?i)\b(?:password|passphrase|passwd|secret|token|api[ \t]key|credentials?)\b"
        r"(?:[ \t]+[A-Za-z']{1,12}){0,4}[ \t]*[(\[][\"'`]?(?P<v>[^\s()\[\]\"'`]{8,128})[\"'`]?[)\]]",
        ("password", "passphrase", "passwd", "secret", "token", "api key", "credential"),
        groups=("v",),
        priority=CONTEXT,
        check=_check_bracketed,
    ),
]
