"""More fakes for the corpus: the files users paste whole, each with a secret in the place
that file keeps it (.npmrc, pip.conf, .pypirc, Maven settings.xml, docker config.json,
kubeconfig, .pgpass, rclone.conf, .s3cfg, .git-credentials, Spring and .NET settings, JDBC
URLs, .env with `export`, GitHub Actions beside `${{ secrets.X }}`), short passwords under
names that only may name a credential, and here-documents spread over several lines.
Generated, never real."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

from tests.secret_corpus import ALNUM, B64, HEX, Gen

# a generated password's symbols where it may stand bare (no shell or YAML syntax)
_SYMBOLS = "!#%+=?^~"


# yarn's key for a user and a password (named apart, so this file holds no assignment)
_YARN_IDENT = "npmAuthIdent"


def _short(g: Gen, n: int = 10) -> str:
    """A short generated password: letters of both cases, digits and a symbol or two."""
    while True:
        out = "".join(g.rng.choice(ALNUM + _SYMBOLS) for _ in range(n))
        classes = (str.isupper, str.islower, str.isdigit)
        kinds = all(any(f(c) for c in out) for f in classes) and any(c in _SYMBOLS for c in out)
        if kinds and out[0].isalnum() and "xxx" not in out.lower():
            return out


def _uuid(g: Gen) -> str:
    return "-".join(g.s(HEX, n) for n in (8, 4, 4, 4, 12))


def families(g: Gen) -> list[tuple[str, Callable[[str], str], str]]:
    t = g.s
    pw = g.password
    auth = base64.b64encode(f"ci-bot:{pw()}".encode()).decode()
    npm_password = base64.b64encode(pw().encode()).decode()
    key_data = base64.b64encode(
        (
            "-----BEGIN RSA PRIVATE KEY-----\n" + t(B64, 64) + "\n-----END RSA PRIVATE KEY-----\n"
        ).encode()
    ).decode()
    return [
        # 1. package managers' and registries' files
        (
            "npmrc-auth-token-uuid",
            lambda s: (
                f"registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={s}\n"
            ),
            _uuid(g),
        ),
        (
            "npmrc-auth",
            lambda s: f"//nexus.corp/repository/npm/:_auth={s}\nalways-auth=true\n",
            auth,
        ),
        (
            "npmrc-password",
            lambda s: f"//npm.corp/:username=ci\n//npm.corp/:_password={s}\n",
            npm_password,
        ),
        (
            "pip-conf-index-url",
            lambda s: f"[global]\nindex-url = https://ci:{s}@pypi.corp.io/simple\n",
            pw(),
        ),
        (
            "pypirc-password",
            lambda s: f"[corp]\nrepository = https://upload.corp\nusername = ci\npassword = {s}\n",
            _short(g),
        ),
        (
            "maven-settings-password",
            lambda s: (
                f"<servers>\n  <server>\n    <id>corp</id>\n    <username>ci</username>\n"
                f"    <password>{s}</password>\n  </server>\n</servers>"
            ),
            _short(g),
        ),
        (
            "docker-config-auths",
            lambda s: json.dumps({"auths": {"ghcr.io": {"auth": s}}, "credsStore": "desktop"}),
            base64.b64encode(f"ci:{_short(g)}".encode()).decode(),
        ),
        # 2. cluster and database clients
        (
            "kubeconfig-token-uuid",
            lambda s: f"users:\n- name: ci\n  user:\n    token: {s}\n",
            _uuid(g),
        ),
        (
            "kubeconfig-client-key-data",
            lambda s: f"users:\n- name: admin\n  user:\n    client-key-data: {s}\n",
            key_data,
        ),
        ("pgpass-line-short", lambda s: f"db.corp.io:5432:app:app_user:{s}\n", _short(g)),
        ("rclone-pass", lambda s: f"[files]\ntype = sftp\nuser = ci\npass = {s}\n", t(ALNUM, 42)),
        (
            "s3cfg-secret-key",
            lambda s: (
                f"[default]\naccess_key = AKIA{t('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}"
                f"\nsecret_key = {s}\n"
            ),
            t(B64, 40),
        ),
        ("s3cfg-gpg-passphrase", lambda s: f"[default]\ngpg_passphrase = {s}\n", _short(g)),
        ("git-credentials", lambda s: f"https://ci-bot:{s}@git.corp.io\n", _short(g)),
        # 3. application settings and connection strings
        (
            "spring-properties",
            lambda s: f"spring.datasource.username=app\nspring.datasource.password={s}\n",
            _short(g),
        ),
        (
            "appsettings-connection-string",
            lambda s: json.dumps(
                {"ConnectionStrings": {"Db": f"Server=db;Database=app;User Id=sa;Password={s};"}}
            ),
            _short(g),
        ),
        (
            "jdbc-query-password",
            lambda s: f"jdbc:mysql://db:3306/app?user=app&password={s}&useSSL=true",
            _short(g),
        ),
        ("jdbc-semicolon-password", lambda s: f"jdbc:sqlserver://db;user=sa;password={s};", pw()),
        ("env-export", lambda s: f"export API_TOKEN={s}  # prod\n", t(ALNUM, 32)),
        (
            "actions-literal-beside-secrets",
            lambda s: (
                "env:\n  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n"
                f"  DB_PASSWORD: {s}\n  REGION: eu-west-1\n"
            ),
            _short(g),
        ),
        ("yarnrc-auth-ident", lambda s: f'{_YARN_IDENT}: "ci:{s}"\n', _short(g)),
        (
            "composer-auth-json",
            lambda s: json.dumps({"github-oauth": {"github.com": s}, "bearer": {"repo.corp": s}}),
            _short(g, 12),
        ),
        (
            "openvpn-auth-user-pass",
            lambda s: f"<auth-user-pass>\nci\n{s}\n</auth-user-pass>\n",
            _short(g),
        ),
        ("jvm-system-property", lambda s: f"java -Ddb_key={s} -jar app.jar", _short(g, 16)),
        # 4. generated passwords under names that only may name one (16 characters: a
        # shorter one is judged by its runs, `tests/test_redact_short_keyed.py`)
        ("deploy-key-short", lambda s: f"DEPLOY_KEY: {s}", _short(g, 16)),
        ("db-key-quoted", lambda s: f'db_key = "{s}"', _short(g, 16)),
        ("wordpress-auth-key", lambda s: f"define('AUTH_KEY', '{s}');", _short(g, 16)),
        ("wordpress-salt", lambda s: f"define( 'LOGGED_IN_SALT', '{s}' );", _short(g, 16)),
        ("yaml-alias-like", lambda s: f"DEPLOY_KEY=*{s}\n", _short(g, 16)),
        # 5. here-documents over several lines
        (
            "heredoc-env-body",
            lambda s: f"cat <<EOF > .env\nDB_USER=app\nDB_PASSWORD={s}\nLOG_LEVEL=info\nEOF\n",
            _short(g),
        ),
        (
            "heredoc-assigned-lines",
            lambda s: f"password = <<~EOS\n  {s}\n  {s[::-1]}\nEOS\n",
            _short(g, 12),
        ),
        (
            "terraform-default-heredoc",
            lambda s: f'variable "db_password" {{\n  default = <<-EOT\n    {s}\n    EOT\n}}\n',
            _short(g, 12),
        ),
    ]
