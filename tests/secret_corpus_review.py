"""More fakes for the corpus: credentials laid out by markup, given in argument lists,
connection strings, CI logging commands and odd commands, nested or abbreviated in data,
told in sentences (in English and in other languages), provider tokens that need no keyword,
and wallet seed phrases. Generated, never real."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from tests.secret_corpus import ALNUM, HEX, Gen


def seed_words(g: Gen, n: int) -> str:
    from gitimprove.redaction.formats import bip39_words

    known = sorted(bip39_words())
    while True:
        words = [g.rng.choice(known) for _ in range(n)]
        if words != sorted(words):
            return " ".join(words)


def families(g: Gen) -> list[tuple[str, Callable[[str], str], str]]:
    t = g.s
    pw = g.password
    tok = t(ALNUM, 32)
    hexu = str(uuid.UUID(int=g.rng.getrandbits(128)))
    return [
        # markup
        ("md-bold-label", lambda s: f"**Password:** {s}", pw()),
        (
            "md-table-row",
            lambda s: f"| Key | Value |\n|---|---|\n| API token | {s} |\n",
            t(ALNUM, 30),
        ),
        ("md-inline-code", lambda s: f"Set `DB_PASSWORD` to `{s}` in the env.", pw()),
        ("md-definition", lambda s: f"Admin password\n: {s}\n", pw()),
        # argument lists
        (
            "argv-python",
            lambda s: f"subprocess.run(['twine', 'upload', '--password', '{s}'])",
            pw(),
        ),
        (
            "argv-attached",
            lambda s: f"subprocess.run(['mysql', '-u', 'root', '-p{s}', 'app'])",
            pw(),
        ),
        ("argv-json", lambda s: f'"args": ["serve", "--api-key", "{s}"]', t(ALNUM, 28)),
        ("argv-cmdline", lambda s: f"deploy\0--token\0{s}\0--verbose\0", t(ALNUM, 30)),
        # connection strings
        ("go-mysql-dsn", lambda s: f'sql.Open("mysql", "app:{s}@tcp(db:3306)/shop")', pw()),
        (
            "oracle-ezconnect",
            lambda s: f"conn = oracledb.connect('scott/{s}@//db:1521/ORCL')",
            pw(),
        ),
        # CI and commands
        (
            "azure-vso-secret",
            lambda s: f"##vso[task.setvariable variable=deployKey;issecret=true]{s}",
            t(ALNUM, 32),
        ),
        (
            "buildkite-meta-data",
            lambda s: f'buildkite-agent meta-data set "api-token" "{s}"',
            t(ALNUM, 31),
        ),
        ("printf-stdin", lambda s: f'printf %s "{s}" | gh secret set NPM_TOKEN', t(ALNUM, 36)),
        ("rabbitmqadmin-p", lambda s: f"rabbitmqadmin -u admin -p {s} list vhosts", pw()),
        ("pulumi-secret", lambda s: f"pulumi config set --secret dbPassword {s}", pw()),
        (
            "reg-add-data",
            lambda s: f"reg add HKLM\\Software\\Acme /v ApiToken /t REG_SZ /d {s} /f",
            t(ALNUM, 29),
        ),
        ("mysql-set-password", lambda s: f"SET PASSWORD FOR 'app'@'%' = '{s}';", pw()),
        (
            "sql-insert-table",
            lambda s: f"INSERT INTO api_keys (owner, key) VALUES ('ci', '{s}');",
            tok,
        ),
        # code and data
        ("perl-fat-comma", lambda s: f'my %db = (user => "app", pass => "{s}");', pw()),
        ("param-val-object", lambda s: f'{{"param": "client_secret", "val": "{s}"}}', t(ALNUM, 34)),
        ("nested-credentials", lambda s: f'{{"credentials": {{"prod": "{s}"}}}}', t(ALNUM, 30)),
        ("nested-yaml", lambda s: f"secrets:\n  staging: {s}\n", t(ALNUM, 30)),
        ("abbreviated-key", lambda s: f'{{"stripe_sk": "{s}"}}', t(ALNUM, 32)),
        # prose
        ("prose-short-word", lambda s: f"the pass is {s}", pw()),
        ("prose-login-pair", lambda s: f"log in (admin / {s}) and check", pw()),
        ("prose-value-first", lambda s: f"I tried {s} as the password but no luck", pw()),
        ("prose-pointed", lambda s: f"that one expired, use this one instead: {s}", t(ALNUM, 32)),
        ("ansible-var-prose", lambda s: f'msg: "mysql_root_password is {s}"', pw()),
        ("german", lambda s: f"Das Passwort ist {s}", pw()),
        ("chinese", lambda s: f"数据库密码是{s}。", pw()),
        ("russian", lambda s: f"Пароль: {s}", pw()),
        # provider tokens
        ("sonarqube", lambda s: f"export SQ={s}", "squ_" + t(HEX, 40)),
        ("hubspot", lambda s: f"auth: {s}", "pat-na1-" + hexu),
        ("telnyx", lambda s: f"key={s}", "KEY" + t("0123456789ABCDEF", 32) + "_" + t(ALNUM, 22)),
        (
            "zapier",
            lambda s: f"POST {s}",
            f"https://hooks.zapier.com/hooks/catch/{g.digits(7)}/{t(HEX, 7)}/",
        ),
        ("yandex", lambda s: f"YC: {s}", "AQVN" + t(ALNUM, 35)),
        ("contentful", lambda s: f"cfpat {s}", "CFPAT-" + t(ALNUM, 43)),
        ("seed-12", lambda s: f"my recovery phrase: {s}", seed_words(g, 12)),
        ("seed-24-lines", lambda s: f"backup:\n{s}\n", seed_words(g, 24).replace(" ", "\n")),
    ]
