"""Ordinary code and records that look like credentials to one rule and are not: each passes
unchanged, while the credential beside it is still masked."""

from __future__ import annotations

import random
import string

import pytest

from gitimprove.redaction import redact


def _secret(seed: int) -> str:
    rnd = random.Random(seed)
    return "".join(rnd.choice(string.ascii_letters + string.digits) for _ in range(18)) + "7aQ"


ORDINARY = [
    # a program's example run writing its output file (`key` in an input's name)
    " *      ./encrypt1 encrypt1-tmpl.xml deskey.bin > encrypt1-res.xml\n",
    "openssl rsa -in server.key -out server-nopass.key > rsa-out.txt",
    # a timestamp after a login word: no `<user>:<password>`
    '<saml:AuthenticationStatement AuthenticationInstant="2002-04-18T16:56:10Z">',
    "authenticated at 2026-11-24T08:41:07.123+01:00 via sso",
    # terminal colours written as escapes under a key
    'key:                    { start: "\\e[33m", end: "\\e[0m" }',
    "token: { start: '\\033[1;31m', end: '\\033[0m' }",
    # a C pointer declared beside a secret's type; packages and their versions
    "\tSecretService *service = NULL;",
    "\tSecretValue *value = secret_item_get_secret(item);",
    "INCS:=$(shell $(PKG_CONFIG) --cflags libsecret-1 glib-2.0)",
    # a media type after a word that may name a login (`console`): not `user / password`
    "'DylanConsoleLexer': ('Dylan session', ('dylan-console',), ('text/x-dylan-console',)),",
    "serve the console (text/x-shellscript) and the portal (application/vnd.api+json)",
    's = socket.socket(socket.AF_UNIX)\ns.bind("build/sock")',
    'server.bind("/run/app/ctl.sock")',
    'sock.bind(("0.0.0.0", 8080))',
    "listener = net.bind('127.0.0.1:9000')",
    # a path whose file name holds a credential word, as a key of a record (Claude Code's
    # file-history snapshot), and times in a block of credentials
    '{"lib/app/review_token_store.ex":{"backupFileName":null,"version":1,'
    '"backupTime":"2026-02-11T21:25:03.459Z"}}',
    '{"src/auth.py": {"backupTime": "2026-02-11T21:08:12.337Z", "version": 2}}',
    '{"api_tokens": {"created": "2026-02-11T21:25:03Z", "expires": "2027-02-11"}}',
    "credentials:\n  rotated: 2026-02-11 21:25:03+01:00\n  at: 21:25:03.459\n",
    # a sentence about the credential under its name: help texts, schemas, docs
    'HELP = {"api_key": "the key the service gave you", "password": "your login password"}',
    'GITHUB_TOKEN: "A personal access token with repo scope"',
    'secret_key: "used to sign cookies"',
    '"client_secret": "The OAuth client secret issued by Google",',
    "DEPLOY_TOKEN = 'set this in the CI settings, not here'",
    # an alphabet written out, a placeholder padded to a key's length
    'const keyStr = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="',
    "api_key = 4b1dXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
    # the code between two literals is no quoted value
    't = e[17:] if e.startswith(b"GITIMPROVE_TOKEN=") else ""',
    "k = 'DB_PASSWORD=' if prod else ''",
    # a CVS root: an access method and a user before the host, no password
    "cvs -d cvs://:pserver:anoncvs@cvs.example.org:/cvsroot co module",
    "CVSROOT=cvs://:ext:dev@cvs.example.org/var/cvs",
    "export CVSROOT=cvs://:gserver:builder@cvs.example.org/src",
    # a type or a placeholder in angle brackets under a credential's name
    "function connect(opts: { psk: <Buffer|string> }): void",
    "interface Options { secret: <Uint8Array>; token: <string> }",
    "  client_secret: <ClientSecret>",
    # a key file's path with a placeholder for a folder, in a prompt
    "Enter passphrase for key '/Users/<user>/.ssh/id_ed25519':",
    "Enter passphrase for key '/home/<name>/.ssh/id_rsa': ",
    "ssh_key: /Users/<you>/.ssh/deploy_key.pem",
    # a list of names under a credential's name (conditions, scopes, modes)
    'secrets: ["node", "import"]',
    "passwords = ['node', 'import', 'require']",
    "token_scopes: [read, write-all]",
    "secret_modes:\n  - strict\n  - lax\n",
    # a name in an expression under a password's name: code, not a passphrase
    '    password = strength == "strong" and kind_of(key) == "password"',
    "    password = generated if length else None",
    "    secret = fallback or default",
    # a highlighter's style table: a token type's path, not a token (Pygments' styles)
    '    Token.Name.Builtin.MusicCommand: "bold #08547A",\n    Token.Keyword: "bold",',
    # a language's keywords listed one a line, one naming a password
    "    'APPSERVER-INFO',\n    'APPSERVER-PASSWORD',\n    'APPSERVER-USERID',\n",
    "    'SYMMETRIC-ENCRYPTION-KEY',\n    'SYMMETRIC-SUPPORT',\n",
    # variants of a token's spelling, and a regular expression's alternatives
    "token_variants = ['+i6t-not-inline', '+i6t-inline', '+i6t-use-option']",
    '_create_tag_line_token(\n    r"(Interface|Title|Notes|"\n    r"SavedVariables|DefaultState|Secure|Author|Version)",\n)',
    # the Cache Directory Tagging Specification's fixed signature
    'f.write("Signature: 8a477f597d28d172789f06886806bc55\\n")',
    # an absolute folder of plain names under a credential's name
    "NAMESPACES = {'app.resources.secrets': ['/srv/build/app/resources/secrets']}",
]


@pytest.mark.parametrize("text", ORDINARY, ids=range(len(ORDINARY)))
def test_ordinary_text_passes_unchanged(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    "template",
    [
        'conn.simple_bind_s("cn=admin,dc=example,dc=org", "{s}")',
        'client.bind_password("{s}")',
        '{{"api_tokens": {{"ci": "{s}", "created": "2026-02-11T21:25:03Z"}}}}',
        'credentials = {{ prod = "{s}", rotated = "2026-02-11" }}',
        '"client_secret": "{s}", "note": "the secret issued by the provider"',
        # (cut in two, or this file's own text would hold a password by that name)
        "pass" + 'word = "correct horse battery staple {s}"',
        # a CVS root that holds a password after its user
        "cvs -d cvs://:pserver:anoncvs:{s}@cvs.example.org:/cvsroot co module",
        # a password in a YAML list holding a `#` (a comment starts only after a blank)
        "passwords:\n  - {s}#x!\n  - other\n",
        '"secrets": ["{s}", "node"]',
        'Token.Password: "{s}"',
        "    'DB-PASSWORD',\n    '{s}',\n",
        "SECRET=/{s}/x9Kq/Zz2",
    ],
)
def test_the_credential_beside_them_is_still_masked(template: str) -> None:
    secret = _secret(len(template))
    out = redact(template.format(s=secret))
    assert secret not in out and "[REDACTED:" in out, out
    assert "2026-02-11" in out or "2026-02-11" not in template
