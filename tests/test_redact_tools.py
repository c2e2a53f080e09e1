"""Tool-output shapes, credentials given as arguments, and encodings that hide them: masked
whole as text and inside a record; ordinary text of the same shapes passes unchanged; the
decoded view is only built for text that holds an encoding's mark."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gitimprove.redaction import redact, redact_blob
from tests.conftest import ROOT
from tests.linear import within_linear_time

PW = "Vq7#mZ2pLx9w"
KEY40 = "h7Rk2Qw9ZpL4xV8nB3mT6yC1fD5gJ0sA2eU4iO7r"
HEX32 = "4c9e1a7f3b2d8e6a0f5c9b1d7e3a2f8c"

# (text, the secret in it): shapes of each class beyond the examples a review named
LEAKS = [
    # tables and cells
    (f"Name,Email,Password\nops,ops@acme.io,{PW}\n", PW),
    (f"| Name | Token |\n|------|-------|\n| ci | {KEY40} |\n", KEY40),
    (f"| client_secret | {KEY40} |", KEY40),
    (f"ADMIN_PASSWORD\t{PW}", PW),
    (f"az storage account keys list\nkey1\t{KEY40}", KEY40),
    (f"heroku config:set STRIPE_SECRET_KEY {KEY40}", KEY40),
    (f"AccessKeyId,SecretAccessKey\nASIAY34FZKBOKMUTVV7A,{KEY40}", KEY40),
    ("//npm.pkg.github.com/:_authToken=8a3c1e2f-4b5d-4e6f-8a7b-9c0d1e2f3a4b", "8a3c1e2f-4b5d"),
    (f"DD_API_KEY={HEX32}", HEX32),
    # arguments in code, SQL, shell
    (f'os.setenv("SMTP_PASSWORD", "{PW}")', PW),
    (f'System.setProperty("db.password", "{PW}");', PW),
    (f'ENV.fetch("API_TOKEN", "{KEY40}")', KEY40),
    (f"process.env.API_SECRET ?? '{KEY40}'", KEY40),
    (f"imap.login('me@acme.io', '{PW}')", PW),
    (f'new UsernamePasswordCredentials("svc", "{PW}")', PW),
    (f'conn = DriverManager.getConnection(url, "sa", "{PW}");', PW),
    (f'pymysql.connect("db.acme.io", "root", "{PW}")', PW),
    (f"CREATE LOGIN app WITH PASSWORD = '{PW}';", PW),
    (f"htpasswd -nb admin {PW}", PW),
    (f"chpasswd <<< 'root:{PW}'", PW),
    (f"redis-cli\n> AUTH default {PW}", PW),
    (f"CONFIG SET masterauth {PW}", PW),
    (f"net user backup {PW} /add", PW),
    (f"printf '%s' '{PW}' | podman login --password-stdin quay.io", PW),
    (f"jdbc:oracle:oci:app/{PW}@db:1521/XE", PW),
    (f"*:*:*:postgres:{PW}", None),
    (f"imaps://bob@acme.io:{PW}@mail.acme.io", PW),
    (f"try {PW} as your wifi password", PW),
    # encodings and wraps
    (f"api_key%3A%20{KEY40}", KEY40),
    (f"secret&equals;{KEY40}", KEY40),
    (f"TOKEN\\x3d{KEY40}", KEY40),
    ('key = "ghp_Qm7Zk2Lp8Xw4R" + "t7Yb6Nc1Vd5Hf0Jg3Ks2AaB9"', "t7Yb6Nc1Vd5H"),
    (f"password: |-\n  {PW}\n", PW),
    # wrapped by a terminal at 80 columns
    (f"{'config:':<69}CLIENT_SECR\nET={KEY40}", KEY40),
    (f"{'connecting to':<74}mysql:\n//root:" + PW + "@db/app", PW),
]

PASS = [
    "mysql -u root -p\nEnter password:",
    "mysql -u root -p\nEnter password: \nWelcome to the MySQL monitor.",
    "mongosh -u admin -p\nEnter password: ****",
    "mysql -u root -p\\nEnter password: ",  # the break JSON-escaped in raw text
    "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf",
    "SecretId: arn:aws:secretsmanager:eu-west-1:123456789012:secret:app/token-Xy12Zq",
    '"ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf"',
    "aws secretsmanager get-secret-value --secret-id "
    "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf",
    "token = eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9"
    "lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "stripe.api_key = 'sk_test_4eC39HqLyjWDarjtT1zdp7dc'",
    "Name,Key,Value\nregion,region,us-east-1\n",
    "| Name | Type | Description |\n| token | str | the session token |",
    "id,token_count,created\n1,4096,2026-01-01",
    "key\tvalue\nmode\tfast",
    'os.environ.get("DB_PASSWORD")',
    'os.environ.get("DB_PASSWORD", "")',
    "auth = (user, password)",
    "requests.get(url, auth=HTTPBasicAuth(user, pw))",
    'logger.info("login", "ok")',
    "docker run -u 1000:1000 image",
    'button.connect("clicked", "on_click")',
    'sqlite3.connect("app.db")',
    'mqtt.connect("broker.local", "1883")',
    "docker exec -u www-data:www-data app php artisan migrate",
    "docker run --user root:root alpine",
    "net use Z: \\\\fs01\\share",
    "src/app.py:12:5:E501:line",
    "50% of tests pass; see https://acme.io/a%20b?q=x%2Cy",
    "Tom &amp; Jerry &#8212; a &lt;b&gt; tag",
    'msg = "Hello, " + "world"',
    "description: >\n  A long folded description of the\n  service.\n",
    "    def run(self) -> None:\n        return self.value",
    "the new one is ready",
    "use it as the default password policy",
    "AUTH required",
    "TIMESTAMP=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)",
    "lib/app/review_token_store.ex lib/app_web/controllers/review_context_controller.ex",
    "GITHUB_TOKEN Permissions\\nSecret source: Actions",
    "requirepass yes",
]


@pytest.mark.parametrize("text,secret", LEAKS)
def test_masked_whole_as_text_and_inside_a_record(text: str, secret: str | None) -> None:
    out = redact(text)
    assert "[REDACTED:" in out, out
    if secret is not None:
        assert secret not in out, out
    assert redact(out) == out
    record = redact_blob(json.dumps({"content": text, "v": 1}).encode()).decode()
    content = json.loads(record)["content"]
    assert "[REDACTED:" in content, record
    if secret is not None:
        assert secret not in content, record


@pytest.mark.parametrize("text", PASS)
def test_ordinary_text_of_these_shapes_passes_unchanged(text: str) -> None:
    assert redact(text) == text
    blob = json.dumps({"content": text}).encode()
    assert redact_blob(blob) == blob


def test_the_decoded_view_is_built_only_for_text_with_an_encodings_mark() -> None:
    probe = (
        "import sys\n"
        "from gitimprove.redaction import redact\n"
        "redact(sys.argv[1])\n"
        "print('gitimprove.redaction.decoded' in sys.modules)\n"
    )
    plain = "Error: token expired for user ci; retry later"
    marked = "password%3DVq7mZ2pLx9w"
    results = [
        subprocess.run(
            [sys.executable, "-c", probe, text],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for text in (plain, marked)
    ]
    assert results == ["False", "True"]


HOSTILE = [
    "password%3D" * 4000,
    '"a" + "b" + ' * 4000,
    "&#61;&amp;" * 5000,
    "\\u003d\\x3d" * 5000,
    "key: >\n  " * 4000,
    ("DB_PASSWO\n" + " " * 4 + "RD") * 600,  # (rules cost ~1,600 steps a character on runs)
    "a,b,secret\n" + "1,2,3\n" * 8000,
    "| token | " * 6000,
    "echo x | " * 5000 + "--password-stdin",
    "htpasswd -b " * 5000,
    "login('a', " * 6000,
]


@pytest.mark.slow  # minutes of CPU in all; CI runs them (-m slow)
@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_new_views_and_shapes_stay_linear_on_hostile_text(text: str) -> None:
    """~40 KB of each shape's worst repetition is masked in a few times what ordinary text of
    its length takes; a backtracking pattern would take minutes."""
    ok, why = within_linear_time(redact, text)
    assert ok, why
