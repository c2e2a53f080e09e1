"""More fakes for the corpus: credentials given to setter, login and bind calls in several
languages, to shell tools and scripts (ssh-keygen, expect, SQL INSERT), in markup and data
shapes (CDATA, keys of words, Markdown tables, YAML anchors, password hashes, a service
account's key id), told in prose, and under layered encodings. Generated, never real."""

from __future__ import annotations

import string
from collections.abc import Callable
from urllib.parse import quote

from tests.secret_corpus import ALNUM, HEX, Gen

CRYPT = "./" + string.ascii_letters + string.digits


def _twice(s: str) -> str:
    return quote(quote(s, safe=""), safe="")


def families(g: Gen) -> list[tuple[str, Callable[[str], str], str]]:
    t = g.s
    pw = g.password
    return [
        # A. calls
        ("setter-call", lambda s: f'dataSource.setPassword("{s}");', pw()),
        ("keyring-set", lambda s: f'keyring.set_password("smtp", "ops", "{s}")', pw()),
        ("ldap-bind", lambda s: f'conn.simple_bind_s("cn=admin,dc=acme,dc=io", "{s}")', pw()),
        (
            "securestring",
            lambda s: f'$p = ConvertTo-SecureString "{s}" -AsPlainText -Force',
            pw(),
        ),
        ("rust-string-from", lambda s: f'let db_password = String::from("{s}");', pw()),
        ("builder-password", lambda s: f'Client.builder().user("ci").password("{s}")', pw()),
        ("auth-token-setter", lambda s: f'cfg.SetAuthToken("{s}")', t(ALNUM, 32)),
        # B. tools and scripts
        ("ssh-keygen-N", lambda s: f'ssh-keygen -t ed25519 -N "{s}" -f deploy', pw()),
        ("ssh-keygen-P", lambda s: f"ssh-keygen -p -f deploy -P {s} -N ''", pw()),
        ("expect-send", lambda s: f'expect "*assword:*"\nsend "{s}\\r"', pw()),
        (
            "sql-insert",
            lambda s: f"INSERT INTO users (id, login, password) VALUES (7, 'ops', '{s}');",
            pw(),
        ),
        # C. markup and data
        ("cdata", lambda s: f"<password><![CDATA[{s}]]></password>", pw()),
        ("spaced-key-json", lambda s: f'{{"Admin Password": "{s}"}}', pw()),
        ("spaced-key-ini", lambda s: f"Secret Key = {s}", t(ALNUM, 32)),
        (
            "markdown-table",
            lambda s: f"| user | password |\n|---|---|\n| ops | {s} |\n",
            pw(),
        ),
        ("yaml-anchor", lambda s: f"db_password: &dbpw {s}\nreplica: *dbpw\n", pw()),
        (
            "shadow-sha512",
            lambda s: f"ops:$6${t(CRYPT, 16)}${s}:19700:0:99999:7:::",
            t(CRYPT, 86),
        ),
        ("bcrypt-hash", lambda s: f'"password_hash": "$2b$12${s}"', t(CRYPT, 53)),
        ("htpasswd-apr1", lambda s: f"ops:$apr1${t(CRYPT, 8)}${s}", t(CRYPT, 22)),
        (
            "gcp-key-id",
            lambda s: f'{{"type": "service_account", "private_key_id": "{s}"}}',
            t(HEX, 40),
        ),
        # D. prose
        ("prose-passcode", lambda s: f"the passcode for the vault is {s}", pw()),
        ("prose-set-to", lambda s: f"I set the secret key to {s} yesterday", t(ALNUM, 32)),
        ("prose-login-with", lambda s: f"login with admin / {s}", pw()),
        ("prose-creds", lambda s: f"creds are ops/{s}", pw()),
        # E. layered encodings
        (
            "double-url-encoded",
            lambda s: f"next=%2Fcb%253Fpassword%253D{_twice(s)}",
            t(ALNUM, 24),
        ),
    ]
