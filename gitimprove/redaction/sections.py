"""Credentials a configuration file keeps under a bare name, told by the section around them,
and values encrypted for a configuration (Jasypt).

- An INI section of a kind that holds credentials: an rclone remote (`[b2]` with `type = b2`:
  `key = <32 hex>`; `type = swift`: `key = <uuid>`; `type = sftp`: `pass = <obscured>`), or a
  section whose name says so (`[credentials]`, `[auth]`, `[api]`, `[secrets]`), or one that
  names who logs in (`account = …`, `user = …`) beside the secret. There a bare
  `key`, `pass`, `secret` or `token` names the credential itself, so a hex string or a UUID,
  an id elsewhere, is one.
- Jasypt's `ENC(<ciphertext>)` (Spring Boot and its Maven plugin): the ciphertext of a
  secret. It is masked (`ENC(` and `)` stay): the key that decrypts it (the
  `jasypt.encryptor.password`) usually sits in the same repository, environment or command
  line, and the value is only there because the plain one is a secret. The plugin's
  `DEC(<plain text>)`, a value waiting to be encrypted, is the secret itself.
"""

from __future__ import annotations

import re

from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.keynames import key_words, words
from gitimprove.redaction.values import file_path, is_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# rclone's backends that log in with a key, a password or a token
_BACKENDS = words(
    "b2 s3 swift azureblob azurefiles mega webdav sftp ftp smb pcloud koofr jottacloud box "
    "dropbox drive onedrive crypt seafile opendrive putio premiumizeme sharefile storj sugarsync "
    "uptobox zoho hidrive internetarchive filefabric netstorage quatrix qingstor "
    "oracleobjectstorage linkbox protondrive mailru yandex pikpak gcs googlecloudstorage "
    "googlephotos hubic acd amazonclouddrive union chunker compress hasher cache alias "
    "fichier 1fichier filelu gofile imagekit iclouddrive cloudinary pixeldrain ulozto doi"
)
# words of a section's name that say it holds credentials
_SECTION_WORDS = words(
    "credentials credential creds auth authentication secrets secret api apikeys keys tokens "
    "token login account accounts passwords password"
)
# the bare names that hold the credential itself in such a section
_BARE = words("key pass secret token password passwd pw pwd psk passphrase apikey")
# who logs in: the other half of a login
_WHO = words("account user username login client_id access_key_id account_id")
_LINE = r"(?m)^[ \t]*(?P<k>[A-Za-z][\w.-]{0,40})[ \t]*[=:][ \t]*(?P<v>[^\r\n]*?)[ \t]*\r?$"
_RUN = r"[A-Za-z0-9+/=_.~-]{8,500}"


def _header(text: str) -> bool:
    return compiled(r"(?m)^[ \t]*\[[^\]\r\n]{1,80}\][ \t]*\r?$", 0).search(text) is not None


def _section(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    body = m.group("body")
    lines = list(compiled(_LINE, 0).finditer(body))
    kind = next((x.group("v").strip("\"'").lower() for x in lines if x.group("k") == "type"), "")
    named = set(key_words(m.group("name"))) & _SECTION_WORDS
    # (or a login's other half beside it: `account = …` then `key = …`)
    login = any(x.group("k").lower() in _WHO and x.group("v") for x in lines)
    if kind not in _BACKENDS and not named and not login:
        return
    base = m.start("body")
    for x in lines:
        if x.group("k").lower() not in _BARE:
            continue
        value = x.group("v")
        quoted = len(value) > 2 and value[0] in "\"'" and value[-1] == value[0]
        if quoted:
            value = value[1:-1]
        if compiled(_RUN, 0).fullmatch(value) and is_value(value) and not file_path(value):
            start = base + x.start("v") + int(quoted)
            yield start, start + len(value)


def _check_encrypted(secret: str, m: re.Match[str]) -> bool | str:
    if m.group("tag") == "DEC":
        return "password" if is_value(secret) else False
    # (ciphertext is base64 of 16 bytes or more: not `ENC(x)` in code)
    return compiled(r"[A-Za-z0-9+/_-]{16,1000}={0,2}", 0).fullmatch(secret) is not None


RULES: list[Rule] = [
    Rule(
        "credential",
        # a section: its header, then every line up to the next header (at most 200)
        r"(?m)^[ \t]*\[(?P<name>[^\]\r\n]{1,80})\][ \t]*\r?\n"
        r"(?P<body>(?:(?![ \t]*\[)[^\n]*\n){0,200}(?:(?![ \t]*\[)[^\n]+)?)",
        ("key", "pass", "secret", "token", "pw", "psk"),
        needs=("[",),
        gate=_header,
        priority=CONTEXT,
        expand=_section,
    ),
    Rule(
        "jasypt-encrypted",
        # (after `=`, `:`, a blank or a quote: a property's value, not a call named ENC)
        r"(?:(?<=[=:\s\"'>])|^)(?P<tag>ENC|DEC)\((?P<v>[^()\s\"'<>]{4,1000})\)",
        ("enc(", "dec("),
        groups=("v",),
        priority=CONTEXT,
        check=_check_encrypted,
    ),
]
