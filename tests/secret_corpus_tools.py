"""More fakes for the corpus: tool-output shapes (credentials CSVs and tables, spaced keys,
.npmrc, provider tokens with no keyword), credentials given as arguments in code, SQL and
command lines, and encodings or wraps that hide them (URL encoding, HTML entities, escapes,
string concatenation, indented continuations, YAML block scalars). Generated, never real."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from tests.secret_corpus import ALNUM, B64, HEX, UPPER_ALNUM, Gen


def _uuid(g: Gen) -> str:
    return str(uuid.UUID(int=g.rng.getrandbits(128), version=4))


def _aws_secret(g: Gen) -> str:
    return g.s(B64, 40)


# a line of its own (wherever the fake is put), 80 columns wide with what follows
_STEP = "\ndeploy step 4/9:"


def _cut(secret: str, at: int, sep: str) -> str:
    return secret[:at] + sep + secret[at:]


def families(g: Gen) -> list[tuple[str, Callable[[str], str], str]]:
    t = g.s
    pw = g.password
    akia = "AKIA" + t(UPPER_ALNUM, 16)
    asia = "ASIA" + t(UPPER_ALNUM, 16)
    return [
        # A. tool-output shapes
        (
            "aws-credentials-csv",
            lambda s: f"User name,Password,Access key ID,Secret access key\nci,,{akia},{s}\n",
            _aws_secret(g),
        ),
        (
            "csv-password-column",
            lambda s: f"host;port;user;password\ndb1;5432;app;{s}\ndb2;5432;app;x\n",
            pw(),
        ),
        (
            "tsv-token-column",
            lambda s: f"name\tapi_token\tcreated\ndeploy\t{s}\t2026-01-02\n",
            t(ALNUM, 32),
        ),
        (
            "aws-output-table",
            lambda s: (
                "-----------------------------------------\n"
                f"|  AccessKeyId     |  {asia}  |\n|  SecretAccessKey |  {s}  |\n"
            ),
            _aws_secret(g),
        ),
        (
            "aws-output-text",
            lambda s: f"CREDENTIALS\t{asia}\t2026-03-01T10:00:00Z\t{s}\tSESSIONTOKEN",
            _aws_secret(g),
        ),
        (
            "aws-configure-set",
            lambda s: f"aws configure set aws_secret_access_key {s} --profile ci",
            _aws_secret(g),
        ),
        ("rclone-spaced", lambda s: f"[s3]\ntype = s3\nsecret_access_key {s}\n", _aws_secret(g)),
        ("key-tab-value", lambda s: f"DB_PASSWORD\t{s}\nDB_HOST\tdb.internal", pw()),
        (
            "npmrc-uuid",
            lambda s: f"//registry.npmjs.org/:_authToken={s}\nalways-auth=true",
            _uuid(g),
        ),
        ("netlify-pat", lambda s: f"deploy failed for site acme with {s}", "nfp_" + t(ALNUM, 36)),
        (
            "discord-bot-token",
            lambda s: f"client.run('{s}')",
            "MT" + t(ALNUM, 24) + "." + t(ALNUM, 6) + "." + t(ALNUM, 38),
        ),
        ("datadog-app-key", lambda s: f"dd_app_key: {s}\nsite: datadoghq.eu", t(HEX, 40)),
        (
            "asana-pat",
            lambda s: f"curl -H 'X-Auth: {s}' https://app.asana.com/api/1.0/users/me",
            "2/" + g.digits(16) + "/" + g.digits(16) + ":" + t(HEX, 32),
        ),
        (
            "algolia-admin",
            lambda s: f"client = algoliasearch('K7Q2ZP', '{s}')",
            t(HEX, 32),
        ),
        ("cohere-client", lambda s: f'co = cohere.Client("{s}")', t(ALNUM, 40)),
        (
            "teams-webhook",
            lambda s: f"POST https://acme.webhook.office.com/webhookb2/{s} -> 200",
            _uuid(g) + "@" + _uuid(g) + "/IncomingWebhook/" + t(HEX, 32) + "/" + _uuid(g),
        ),
        *[
            (
                f"prefixed-{p.strip('_-')}",
                lambda s: f"request failed (401) with {s}",
                p + t(ALNUM, 40),
            )
            for p in ("NRAK-", "ntn_", "gsk_", "pcsk_", "tvly-", "rnd_", "lsv2_pt_", "r8_", "xai-")
        ],
        (
            "mapbox-secret",
            lambda s: f"MAPBOX={s}",
            "sk.eyJ1IjoiY" + t(ALNUM, 40) + "." + t(ALNUM, 22),
        ),
        (
            "airtable-pat",
            lambda s: f"Bearer-less call with {s}",
            "pat" + t(ALNUM, 14) + "." + t(HEX, 64),
        ),
        ("launchdarkly-api", lambda s: f"ld: {s}", "api-" + _uuid(g)),
        # B. credentials given as arguments
        ("go-setenv", lambda s: f'os.Setenv("DB_PASSWORD", "{s}")', pw()),
        ("py-environ-default", lambda s: f'os.environ.get("DB_PASSWORD", "{s}")', pw()),
        ("js-env-fallback", lambda s: f'const pw = process.env.DB_PASSWORD || "{s}";', pw()),
        ("php-define", lambda s: f"define('DB_PASSWORD', '{s}');", pw()),
        ("py-environ-set", lambda s: f'os.environ["API_TOKEN"] = "{s}"', t(ALNUM, 32)),
        ("py-basic-auth", lambda s: f"requests.get(url, auth=HTTPBasicAuth('admin', '{s}'))", pw()),
        ("smtp-login", lambda s: f"server.login('alerts@acme.com', '{s}')", pw()),
        ("neo4j-auth-tuple", lambda s: f"GraphDatabase.driver(uri, auth=('neo4j', '{s}'))", pw()),
        ("dotnet-credential", lambda s: f'new NetworkCredential("svc", "{s}")', pw()),
        ("json-user-pass", lambda s: f'{{"user":"svc","pass":"{s}"}}', pw()),
        ("flask-secret-bytes", lambda s: f"app.secret_key = b'{s}'", t(HEX, 32)),
        ("short-pw-key", lambda s: f"pw={s} ./deploy.sh", pw()),
        ("sql-identified-by", lambda s: f"CREATE USER 'app'@'%' IDENTIFIED BY '{s}';", pw()),
        ("sql-with-password", lambda s: f"ALTER ROLE app WITH PASSWORD '{s}';", pw()),
        ("htpasswd-b", lambda s: f"htpasswd -b -c /etc/nginx/.htpasswd admin {s}", pw()),
        ("chpasswd", lambda s: f"echo 'deploy:{s}' | sudo chpasswd", pw()),
        ("redis-auth", lambda s: f"127.0.0.1:6379> AUTH {s}\nOK", pw()),
        ("redis-requirepass", lambda s: f"requirepass {s}\nmaxmemory 2gb", pw()),
        ("psexec", lambda s: f"psexec \\\\web01 -u ACME\\admin -p {s} cmd.exe", pw()),
        (
            "net-use",
            lambda s: f"net use Z: \\\\fs01\\share /user:ACME\\svc {s} /persistent:no",
            pw(),
        ),
        (
            "openssl-k",
            lambda s: f"openssl enc -aes-256-cbc -salt -k {s} -in db.sql -out db.enc",
            pw(),
        ),
        ("httpie-auth", lambda s: f"http -a admin:{s} GET https://api.acme.io/v1/users", pw()),
        (
            "echo-password-stdin",
            lambda s: f"echo '{s}' | docker login --password-stdin -u ci",
            pw(),
        ),
        ("wpa-psk", lambda s: f'network={{\n  ssid="acme"\n  psk="{s}"\n}}', pw()),
        ("jdbc-oracle", lambda s: f"jdbc:oracle:thin:scott/{s}@//db.acme:1521/ORCL", pw()),
        ("pgpass-line", lambda s: f"db.acme.internal:5432:app:appuser:{s}", pw()),
        ("url-email-user", lambda s: f"smtp://alerts@acme.com:{s}@smtp.acme.com:587", pw()),
        ("prose-use-as", lambda s: f"use {s} as the admin password for now", pw()),
        ("prose-new-one", lambda s: f"rotated it, the new one is {s}", t(HEX, 32)),
        # C. encodings and wrapping
        # a terminal wraps at its width (80 here): the line before the break is full
        (
            "indented-continuation",
            lambda s: f"{_STEP:<56}export DB_PASSWORD={s}",
            _cut(pw(), 6, "\n    "),
        ),
        ("yaml-folded", lambda s: f"db:\n  password: >\n    {s}\n  host: db", pw()),
        ("wrapped-key-name", lambda s: f"{_STEP:<72}DB_PASSWO\nRD={s}", pw()),
        ("wrapped-scheme", lambda s: f"{_STEP:<59}DATABASE_URL=postgres:\n//app:{s}@db/app", pw()),
        ("url-encoded-equals", lambda s: f"GET /login?next=%2Fhome&data=password%3D{s}", pw()),
        (
            "url-encoded-url",
            lambda s: f"redirect=postgres%3A%2F%2Fapp%3A{s}%40db%2Fapp",
            t(ALNUM, 14),
        ),
        ("url-encoded-space", lambda s: f"q=the%20password%20is%20{s}", pw()),
        ("html-entity", lambda s: f"<p>password&#61;{s}</p>", pw()),
        ("html-hex-entity", lambda s: f"api_key&#x3a; {s}", t(ALNUM, 32)),
        ("json-unicode-escape", lambda s: f'"cmd": "export PASSWORD\\u003d{s}"', pw()),
        (
            "string-concat",
            lambda s: f'stripe.api_key = "{s}"',
            _cut("sk_live_" + t(ALNUM, 32), 10, '" + "'),
        ),
        (
            "string-concat-single",
            lambda s: f"token = '{s}'",
            _cut("ghp_" + t(ALNUM, 36), 12, "' + '"),
        ),
    ]
