"""Ordinary text stays unchanged: the redactor over a large body of real code (the standard
library's own source, on every machine) masks only a few known, justified spans. Each mask
changes stored text, so every one is listed here with the reason it is accepted."""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

import pytest

from gitimprove.redaction import spans

STDLIB = Path(sysconfig.get_paths()["stdlib"])
SKIP_DIRS = {"site-packages", "dist-packages", "__pycache__", "test", "tests", "idlelib"}
# (file, the masked text): accepted, and why
KNOWN = {
    # a documentation example of a password, written as one
    ("urllib/request.py", "geheim$parole"),
    # a C header's identifiers in a test fixture, listed after a `key` name
    ("lib2to3/tests/data/infinite_recursion.py", "RIPEMD160_CTX"),
    ("lib2to3/tests/data/infinite_recursion.py", "RIPEMD160state_st"),
}
# modules whose code once drew false positives: constants, docstring URLs, keyword lists,
# colours, block openers after a value, format templates, `${VAR:?message}`
SAMPLE = [
    "getpass.py",
    "tokenize.py",
    "functools.py",
    "nntplib.py",
    "smtplib.py",
    "ftplib.py",
    "http/client.py",
    "http/cookiejar.py",
    "logging/handlers.py",
    "urllib/request.py",
    "urllib/parse.py",
    "imaplib.py",
    "poplib.py",
    "netrc.py",
    "secrets.py",
    "hashlib.py",
    "hmac.py",
    "ssl.py",
    "email/utils.py",
    "pydoc_data/topics.py",
    "xml/dom/__init__.py",
]


def _masks(files: list[Path]) -> list[tuple[str, str]]:
    out = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        rel = path.relative_to(STDLIB).as_posix()
        out += [(rel, text[s.start : s.end]) for s in spans(text)]
    return out


def _unknown(found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(rel, t) for rel, t in found if not any(rel == k and k2 in t for k, k2 in KNOWN)]


@pytest.mark.slow
def test_the_standard_librarys_most_credential_laden_modules_pass() -> None:
    files = [STDLIB / f for f in SAMPLE if (STDLIB / f).exists()]
    assert len(files) >= 15
    found = _masks(files)
    assert not _unknown(found), _unknown(found)
    assert len(found) <= 1


@pytest.mark.slow
def test_the_whole_standard_library_passes_with_known_exceptions() -> None:
    files = []
    for folder, dirs, names in os.walk(STDLIB):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        files += [Path(folder) / n for n in names if n.endswith((".py", ".txt", ".cfg", ".json"))]
    assert len(files) > 500
    found = _masks(files)
    assert not _unknown(found), _unknown(found)
    assert len(found) <= len(KNOWN) + 2


HEX64 = "3f9a0c4e1b2d7a8c9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d"
ORDINARY = [
    # CI logs: a cache key is names and a digest
    f"Cache restored from key: Linux-pip-{HEX64}",
    f"Cache saved with key: node-cache-Linux-x64-npm-{HEX64}",
    f"  key: ubuntu-22.04-cargo-{HEX64[:40]}",
    # constant names: the value is the key's own word
    'PASSWORD_FIELD = "password"',
    'private static final String PASSWORD_PARAM = "password";',
    'self.password_field = "password1"',
    'const TOKEN_HEADER = "x-auth-token";',
    'SECRET_KEY_SETTING = "secret_key"',
    "API_KEY_ATTR = 'api_key'",
    # variable names as values
    "        self._client_cert_passphrase = password",
    "        self.distribution.password = password",
    "    passwd = password",
    # YAML tags, parameter expansion messages, templates, regexes, colours
    "password: !vault |\n          $ANSIBLE_VAULT;1.1;AES256",
    "db_password: !Ref DbPasswordParameter",
    "DB_PASSWORD=${DB_PASSWORD:?must be set}",
    'API_TOKEN="${API_TOKEN:?set API_TOKEN first}"',
    "credentials = '{0}:{1}'.format(user, passwd).encode()",
    "auth = '%s:%s' % (user, password)",
    'TOKEN_END = r"(?![\\w-])"',
    'TOKEN_RE = r"\\d+[A-Za-z_]\\w*"',
    "    Token: '#cccccc',",
    "    Keyword.Token: '#005',",
    # request ids and public keys
    "idempotency_key: 3f9a0c4e1b2d7a8c9e0f1a2b3c4d5e6f",
    "pub key: 0x04" + HEX64,
    "public_key: 0x02" + HEX64,
    # code across a line break, keyword lists, prose, placeholder URLs
    "            token = Punctuation\n        else:\n            token = Name",
    "        getpass = win_getpass\nelse:\n    getpass = unix_getpass",
    "    'NOPASS', 'ONLY', 'OPEN'",
    "    'CURLOPT_PASSWORD', 'CURLOPT_READDATA',",
    "    identified by 'name'",
    "    key1=value1//key2=value2",
    "    http://username:password@host.com",
    "    https://user:password@example.org/path",
    "                                  password combination.",
    " 'pass': 'The \"pass\" statement\\n'",
    # anonymous FTP's conventional password, an ABNF repetition, an MD5 under a bare `key`
    ">>> ftp.login()  # user anonymous, passwd anonymous@",
    "passwd anonymous@",
    "# token = 1*tchar",
    "key: d41d8cd98f00b204e9800998ecf8427e",
    "Cache restored from key: Linux-pip-3f9a0c4e1b2d7a8c9e0f1a2b3c4d5e6f",
    "api_key: abc123def456",
    "session_key: 3f2a9c0d1e4b5a6c",
]


@pytest.mark.parametrize("text", ORDINARY, ids=range(len(ORDINARY)))
def test_code_and_logs_that_name_credentials_pass_unchanged(text: str) -> None:
    assert not spans(text), [text[s.start : s.end] for s in spans(text)]


STILL_SECRETS = [
    ('PASSWORD_FIELD = "Xk3v9Qp2Lm7R"', "Xk3v9Qp2Lm7R"),
    ("password: !vaultXk3v9Qp2Lm", "vaultXk3v9Qp2Lm"),
    ('DB_PASSWORD="${DB_PASSWORD:-Xk3v9Qp2Lm}"', "Xk3v9Qp2Lm"),
    ("private key: 0x04" + HEX64, HEX64[:20]),
    ("CREATE USER 'app'@'%' IDENTIFIED BY 'Tr0ub4dor-9x';", "Tr0ub4dor-9x"),
    ("ALTER ROLE app IDENTIFIED BY 'Tr0ub4dor-9x'", "Tr0ub4dor-9x"),
    ("api_key = 'Xk3v9Qp2Lm7Rt5Wz8Yb4'", "Xk3v9Qp2Lm7Rt5Wz8Yb4"),
    ("auth = {'user': 'svc', 'pass': 'Xk3v9-Qp2Lm'}", "Xk3v9-Qp2Lm"),
    ("OPTIONS = ['NOPASS', 'ONLY']\nDB_PASSWORD = 'Xk3v9-Qp2Lm'", "Xk3v9-Qp2Lm"),
]


@pytest.mark.parametrize(("text", "secret"), STILL_SECRETS, ids=range(len(STILL_SECRETS)))
def test_the_exemptions_leave_real_secrets_masked(text: str, secret: str) -> None:
    from gitimprove.redaction import redact

    assert secret not in redact(text), redact(text)
