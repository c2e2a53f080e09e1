"""More fakes for the corpus: secrets kept apart from their names by structure (JSON inside
JSON, name/value fields, SSM SecureString values, lists under a credential key), printed by
a command on the lines after it, provider formats that need no keyword, and shapes of one
language or file format (SQL, postfix, LDAP, HTML, PHP dumps, C++, Makefiles, stdin secret
stores, prose). Generated, never real."""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.secret_corpus import ALNUM, B64, HEX, LOWER_ALNUM, UPPER_ALNUM, URLSAFE, Gen


def _uuid(g: Gen) -> str:
    return "-".join(g.s(HEX, n) for n in (8, 4, 4, 4, 12))


def families(g: Gen) -> list[tuple[str, Callable[[str], str], str]]:
    t = g.s
    pw = g.password
    return [
        # 1. nested encodings
        (
            "json-in-json",
            lambda s: json.dumps({"SecretString": json.dumps({"username": "app", "password": s})}),
            pw(),
        ),
        (
            "json-in-json-twice",
            lambda s: json.dumps({"body": json.dumps({"inner": json.dumps({"api_token": s})})}),
            t(ALNUM, 32),
        ),
        ("key-val-fields", lambda s: f'{{"key":"DB_PASSWORD","val":"{s}"}}', pw()),
        ("name-value-fields", lambda s: f'{{"Name": "api_token", "Value": "{s}"}}', t(ALNUM, 28)),
        ("k8s-env-list", lambda s: f"env:\n  - name: SMTP_PASSWORD\n    value: {s}\n", pw()),
        (
            "ssm-securestring",
            lambda s: f'{{"Name": "/prod/db", "Type": "SecureString", "Value": "{s}"}}',
            pw(),
        ),
        ("secret-flow-list", lambda s: f'api_keys: [ "{s}" ]', t(ALNUM, 32)),
        ("secret-block-list", lambda s: f"tokens:\n  - {s}\nretries: 2\n", t(ALNUM, 32)),
        # 2. output of a command that prints a secret
        (
            "aws-configure-get-output",
            lambda s: f"$ aws configure get aws_secret_access_key\n{s}\n$ ",
            t(B64, 40),
        ),
        ("op-item-output", lambda s: f"$ op item get prod-db --fields password\n{s}\n", pw()),
        (
            "kubectl-secret-output",
            lambda s: (
                f"$ kubectl get secret db -o jsonpath='{{.data.password}}' | base64 -d\n{s}\n"
            ),
            pw(),
        ),
        ("echo-secret-var-output", lambda s: f"$ echo $DB_PASSWORD\n{s}\n", pw()),
        ("vault-field-output", lambda s: f"$ vault kv get -field=password secret/db\n{s}\n", pw()),
        ("heroku-token-output", lambda s: f"$ heroku auth:token\n {s}\n", _uuid(g)),
        (
            "az-keys-output",
            lambda s: (
                f'$ az storage account keys list -n st\n[\n  {{\n    "value": "{s}"\n  }}\n]\n'
            ),
            t(B64, 86) + "==",
        ),
        # 3. provider tokens without a keyword
        ("posthog-personal", lambda s: f"ph = {s}", "phx_" + t(ALNUM, 43)),
        ("bitbucket-app-password", lambda s: f"remote: {s}", "ATBB" + t(ALNUM, 32) + t(HEX, 8)),
        ("google-refresh-token", lambda s: f'"rt": "{s}"', "1//0" + t(URLSAFE, 90)),
        ("crates-io-token", lambda s: f"cargo login {s}", "cio" + t(ALNUM, 32)),
        ("nvidia-api-key", lambda s: f"NVIDIA={s}", "nvapi-" + t(URLSAFE, 64)),
        ("fireworks-api-key", lambda s: f"fireworks {s}", "fw_" + t(ALNUM, 24)),
        ("cerebras-api-key", lambda s: f"Cerebras(api={s})", "csk-" + t(LOWER_ALNUM, 48)),
        ("gcs-hmac-id", lambda s: f"access id {s}", "GOOG1E" + t(UPPER_ALNUM, 55)),
        (
            "fcm-server-key",
            lambda s: f"key={s}",
            "AAAA" + t(URLSAFE, 7) + ":APA91b" + t(URLSAFE, 134),
        ),
        ("consul-token-uuid", lambda s: f"export CONSUL_HTTP_TOKEN={s}", _uuid(g)),
        ("postmark-token-uuid", lambda s: f"X-Postmark-Server-Token: {s}", _uuid(g)),
        # 4. config and language shapes
        ("xfreerdp-password", lambda s: f"xfreerdp /v:10.1.2.3 /u:ops /p:{s} /cert:ignore", pw()),
        ("oracle-identified-by", lambda s: f'CREATE USER app IDENTIFIED BY "{s}";', pw()),
        ("postfix-sasl-passwd", lambda s: f"[smtp.acme.io]:587 relay@acme.io:{s}", pw()),
        ("nslcd-bindpw", lambda s: f"bindpw {s}\n", pw()),
        ("makefile-conditional", lambda s: f"PASSWORD ?= {s} # local only\n", pw()),
        ("html-password-input", lambda s: f'<input type="password" value="{s}">', pw()),
        (
            "php-var-dump",
            lambda s: f'  ["password"]=>\n  string({len(s)}) "{s}"\n',
            pw(),
        ),
        ("php-print-r", lambda s: f"    [db_password] => {s}\n", pw()),
        ("cpp-brace-init", lambda s: f'std::string secret{{"{s}"}};', pw()),
        ("wrangler-stdin", lambda s: f"echo {s} | wrangler secret put API_KEY", t(ALNUM, 24)),
        ("prose-now", lambda s: f"the db password changed, it's now {s}", t(ALNUM, 14)),
    ]
