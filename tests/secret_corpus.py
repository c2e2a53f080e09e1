"""Realistic fake secrets, generated (never real ones): one or more per gitleaks rule family
and per context the redactor must understand, each in the text it would appear in.

`corpus()` returns `Fake(family, text, secret)`: `text` is a line as a tool error, a
transcript or an agent would print it, `secret` the part that must never reach git. The
random parts come from a seeded generator, so a failure names the same fake every run.
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


@dataclass(frozen=True)
class Fake:
    family: str
    text: str
    secret: str


class Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        """n random characters, never a run that reads as a word a scanner might allow."""
        while True:
            out = "".join(self.rng.choice(alphabet) for _ in range(n))
            low = out.lower()
            if any(w in low for w in ("xxx", "abc", "test", "fake", "example", "key")):
                continue
            mixed = any(c.isdigit() for c in out) and any(c.isalpha() for c in out)
            if n < 8 or mixed or not any(c.isdigit() for c in alphabet):
                return out

    def digits(self, n: int) -> str:
        return str(self.rng.randint(1, 9)) + "".join(
            self.rng.choice(string.digits) for _ in range(n - 1)
        )

    def password(self) -> str:
        return self.s(ALNUM, 10) + self.rng.choice("!#%+-") + self.s(ALNUM, 5)


def _pem(g: Gen, kind: str) -> str:
    body = "\n".join(g.s(B64, 64) for _ in range(6))
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"


def _families(g: Gen) -> list[tuple[str, Callable[[str], str], str]]:
    """(family, how the secret appears, secret)."""
    t = g.s
    pw = g.password
    sas = base64.b64encode(bytes(g.rng.randrange(256) for _ in range(32))).decode()
    basic = base64.b64encode(f"deploy:{pw()}".encode()).decode()
    docker = base64.b64encode(f"ci-bot:{pw()}".encode()).decode()
    k8s = base64.b64encode(pw().encode()).decode()
    return [
        (
            "aws-access-key-id",
            lambda s: f"export AWS_ACCESS_KEY_ID={s}",
            "AKIA" + t("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
        ),
        ("aws-secret-key", lambda s: f"aws_secret_access_key = {s}", t(B64, 40)),
        ("aws-session", lambda s: f"AWS_SESSION_TOKEN={s}", "IQoJb3JpZ2luX2Vj" + t(B64, 120)),
        ("github-pat", lambda s: f"remote: Invalid username or token {s}", "ghp_" + t(ALNUM, 36)),
        ("github-oauth", lambda s: f"GITHUB_TOKEN: {s}", "gho_" + t(ALNUM, 36)),
        ("github-app", lambda s: f"token={s}", "ghs_" + t(ALNUM, 36)),
        (
            "github-fine-grained",
            lambda s: f"gh auth login --with-token <<< {s}",
            "github_pat_" + t(ALNUM, 22) + "_" + t(ALNUM, 59),
        ),
        ("gitlab-pat", lambda s: f"PRIVATE-TOKEN: {s}", "glpat-" + t(URLSAFE, 20)),
        ("gitlab-runner", lambda s: f"gitlab-runner register --token {s}", "glrt-" + t(ALNUM, 20)),
        (
            "slack-bot",
            lambda s: f"SLACK_BOT_TOKEN={s}",
            f"xoxb-{g.digits(12)}-{g.digits(13)}-{t(ALNUM, 24)}",
        ),
        (
            "slack-user",
            lambda s: f"client = WebClient(token='{s}')",
            f"xoxp-{g.digits(12)}-{g.digits(12)}-{g.digits(13)}-{t(HEX, 32)}",
        ),
        (
            "slack-app",
            lambda s: f"app_token: {s}",
            f"xapp-1-A{t(UPPER_ALNUM, 10)}-{g.digits(13)}-{t(HEX, 64)}",
        ),
        (
            "slack-webhook",
            lambda s: f"curl -X POST {s} -d @msg.json",
            f"https://hooks.slack.com/services/T{t(UPPER_ALNUM, 8)}/B{t(UPPER_ALNUM, 8)}/{t(ALNUM, 24)}",
        ),
        ("stripe", lambda s: f'stripe.api_key = "{s}"', "sk_live_" + t(ALNUM, 99)[:51]),
        ("stripe-restricted", lambda s: f"STRIPE_KEY={s}", "rk_live_" + t(ALNUM, 40)),
        ("stripe-webhook", lambda s: f"endpoint_secret = '{s}'", "whsec_" + t(ALNUM, 32)),
        (
            "gcp-api-key",
            lambda s: f"https://maps.googleapis.com/maps/api/geocode/json?key={s}",
            "AIza" + t(URLSAFE, 35),
        ),
        ("google-oauth-secret", lambda s: f'"client_secret": "{s}"', "GOCSPX-" + t(URLSAFE, 28)),
        ("google-oauth-token", lambda s: f"Authorization: Bearer {s}", "ya29." + t(URLSAFE, 120)),
        (
            "openai",
            lambda s: f"openai.AuthenticationError: Incorrect API key provided: {s}",
            f"sk-proj-{t(URLSAFE, 74)}T3BlbkFJ{t(URLSAFE, 74)}",
        ),
        (
            "openai-legacy",
            lambda s: f"OPENAI_API_KEY={s}",
            f"sk-{t(ALNUM, 20)}T3BlbkFJ{t(ALNUM, 20)}",
        ),
        (
            "anthropic",
            lambda s: f"anthropic.AuthenticationError: invalid x-api-key {s}",
            f"sk-ant-api03-{t(URLSAFE, 93)}AA",
        ),
        (
            "anthropic-admin",
            lambda s: f"ANTHROPIC_ADMIN_KEY={s}",
            f"sk-ant-admin01-{t(URLSAFE, 93)}AA",
        ),
        (
            "huggingface",
            lambda s: f"huggingface-cli login --token {s}",
            "hf_" + t(string.ascii_letters, 34),
        ),
        ("npm", lambda s: f"//registry.npmjs.org/:_authToken={s}", "npm_" + t(ALNUM, 36)),
        ("pypi", lambda s: f"password = {s}", "pypi-AgEIcHlwaS5vcmc" + t(URLSAFE, 70)),
        ("sendgrid", lambda s: f"SENDGRID_API_KEY='{s}'", f"SG.{t(URLSAFE, 22)}.{t(URLSAFE, 43)}"),
        ("twilio", lambda s: f"client = Client('{s}', auth)", "SK" + t(HEX, 32)),
        ("mailchimp", lambda s: f"mailchimp_key: {s}", t(HEX, 32) + "-us12"),
        ("mailgun", lambda s: f"requests.post(url, auth=('api', '{s}'))", "key-" + t(HEX, 32)),
        ("shopify", lambda s: f"X-Shopify-Access-Token: {s}", "shpat_" + t(HEX, 32)),
        ("shopify-secret", lambda s: f"SHOPIFY_SHARED_SECRET={s}", "shpss_" + t(HEX, 32)),
        ("databricks", lambda s: f"databricks configure --token {s}", "dapi" + t(HEX, 32)),
        ("digitalocean", lambda s: f"doctl auth init -t {s}", "dop_v1_" + t(HEX, 64)),
        ("doppler", lambda s: f"DOPPLER_TOKEN={s}", "dp.pt." + t(ALNUM, 43)),
        (
            "discord-webhook",
            lambda s: f"requests.post('{s}', json=payload)",
            f"https://discord.com/api/webhooks/{g.digits(18)}/{t(URLSAFE, 68)}",
        ),
        (
            "telegram",
            lambda s: f"bot = telebot.TeleBot('{s}')",
            f"{g.digits(10)}:AA{t(URLSAFE, 33)}",
        ),
        ("vault", lambda s: f"VAULT_TOKEN={s}", "hvs." + t(URLSAFE, 95)),
        ("square", lambda s: f"square_access_token = '{s}'", "EAAA" + t(URLSAFE, 60)),
        ("square-oauth", lambda s: f"Authorization: Bearer {s}", "sq0atp-" + t(URLSAFE, 22)),
        ("atlassian", lambda s: f"JIRA_API_TOKEN={s}", "ATATT3" + t(URLSAFE, 186)),
        ("linear", lambda s: f"LINEAR_API_KEY={s}", "lin_api_" + t(ALNUM, 40)),
        ("grafana", lambda s: f"Authorization: Bearer {s}", f"glsa_{t(ALNUM, 32)}_{t(HEX, 8)}"),
        ("age", lambda s: f"# created: 2026-01-02\n{s}", "AGE-SECRET-KEY-1" + t(BECH32, 58)),
        (
            "sentry-dsn",
            lambda s: f'sentry_sdk.init(dsn="https://{s}@o4506.ingest.sentry.io/45")',
            t(HEX, 32),
        ),
        ("sentry-user", lambda s: f"SENTRY_AUTH_TOKEN={s}", "sntryu_" + t(HEX, 64)),
        ("pulumi", lambda s: f"pulumi login --access-token {s}", "pul-" + t(HEX, 40)),
        ("postman", lambda s: f"x-api-key: {s}", f"PMAK-{t(HEX, 24)}-{t(HEX, 34)}"),
        ("flyio", lambda s: f"FLY_API_TOKEN={s}", "fo1_" + t(URLSAFE, 43)),
        ("heroku", lambda s: f"HEROKU_API_KEY={s}", "HRKU-AA" + t(URLSAFE, 58)),
        ("new-relic", lambda s: f'newrelic_api_key = "{s}"', "NRAK-" + t(UPPER_ALNUM, 27)),
        (
            "dynatrace",
            lambda s: f"Api-Token {s}",
            f"dt0c01.{t(UPPER_ALNUM, 24)}.{t(UPPER_ALNUM, 64)}",
        ),
        ("notion", lambda s: f"NOTION_TOKEN={s}", f"ntn_{g.digits(11)}{t(ALNUM, 35)}"),
        ("airtable", lambda s: f"airtable base token {s}", f"pat{t(ALNUM, 14)}.{t(HEX, 64)}"),
        (
            "terraform",
            lambda s: f'credentials "app.terraform.io" {{ token = "{s}" }}',
            f"{t(LOWER_ALNUM, 14)}.atlasv1.{t(LOWER_ALNUM, 67)}",
        ),
        ("supabase", lambda s: f"supabase login --token {s}", "sbp_" + t(HEX, 40)),
        (
            "azure-storage",
            lambda s: (
                f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={s};EndpointSuffix=core.windows.net"
            ),
            t(B64, 86) + "==",
        ),
        (
            "azure-sas",
            lambda s: (
                f"https://acme.blob.core.windows.net/c/x.zip?sv=2022-11-02&se=2026-01-01&sp=r&sig={s}"
            ),
            sas.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D"),
        ),
        (
            "azure-ad-client-secret",
            lambda s: f"AZURE_CLIENT_SECRET={s}",
            f"{t(ALNUM, 3)}{g.rng.randint(0, 9)}Q~{t(ALNUM, 34)}",
        ),
        (
            "jwt",
            lambda s: f"Cookie: session={s}",
            f"eyJ{t(URLSAFE, 30)}.eyJ{t(URLSAFE, 60)}.{t(URLSAFE, 43)}",
        ),
        ("private-key-rsa", lambda s: f"cat ~/.ssh/id_rsa\n{s}", _pem(g, "RSA ")),
        ("private-key-openssh", lambda s: f"$ cat deploy_key\n{s}\n$ ", _pem(g, "OPENSSH ")),
        (
            "private-key-json",
            lambda s: '{"type": "service_account", "private_key": "' + s + '\\n"}',
            _pem(g, "").replace("\n", "\\n"),
        ),
        (
            "redis-url",
            lambda s: f"Error 111 connecting to redis://:{s}@cache.internal:6379/0",
            pw(),
        ),
        (
            "postgres-url",
            lambda s: f"psql: FATAL: could not connect to postgres://app:{s}@db.internal:5432/app",
            pw(),
        ),
        (
            "mongodb-url",
            lambda s: f"MONGO_URI=mongodb+srv://svc:{s}@cluster0.ab1cd.mongodb.net/prod",
            pw(),
        ),
        (
            "git-url",
            lambda s: f"git clone https://x-access-token:{s}@github.com/acme/app.git",
            t(ALNUM, 40),
        ),
        ("json-password", lambda s: f'{{"user": "admin", "password": "{s}"}}', pw()),
        ("yaml-password", lambda s: f"database:\n  user: app\n  password: {s}\n", pw()),
        ("env-password", lambda s: f"DB_PASSWORD={s}", pw()),
        ("toml-secret", lambda s: f'[auth]\nclient_secret = "{s}"', t(ALNUM, 32)),
        ("python-kwarg", lambda s: f"conn = psycopg.connect(host='db', password='{s}')", pw()),
        (
            "basic-auth",
            lambda s: f"curl -H 'Authorization: Basic {s}' https://api.internal/v1",
            basic,
        ),
        ("bearer-header", lambda s: f'headers = {{"Authorization": "Bearer {s}"}}', t(ALNUM, 40)),
        ("api-key-header", lambda s: f"X-Api-Key: {s}", t(HEX, 40)),
        ("netrc", lambda s: f"machine api.internal login ci password {s}", pw()),
        ("netrc-multiline", lambda s: f"machine git.internal\n  login ci\n  password {s}\n", pw()),
        (
            "docker-auth",
            lambda s: f'{{"auths": {{"registry.internal": {{"auth": "{s}"}}}}}}',
            docker,
        ),
        ("mysql-flag", lambda s: f"mysql -u root -p{s} -h db app < dump.sql", pw()),
        (
            "password-flag",
            lambda s: f"wget --user=ci --password={s} https://files.internal/a.tgz",
            pw(),
        ),
        ("token-flag", lambda s: f"deploy-cli --token {s} --env prod", t(ALNUM, 32)),
        ("curl-user", lambda s: f"curl -u admin:{s} https://jenkins.internal/api/json", pw()),
        ("sshpass", lambda s: f"sshpass -p '{s}' ssh ci@build.internal", pw()),
        ("cqlsh", lambda s: f"cqlsh db.internal 9042 -u cassandra -p {s}", pw()),
        ("useradd", lambda s: f"useradd -m -p '{s}' deploy", pw()),
        ("snmp-community", lambda s: f"snmpwalk -v2c -c {s} switch01.internal", pw()),
        ("lftp-user", lambda s: f"lftp -u deploy,{s} sftp://files.internal", pw()),
        ("pgpassword", lambda s: f"PGPASSWORD={s} pg_dump -h db app", pw()),
        ("query-token", lambda s: f"GET /v1/items?page=2&access_token={s} HTTP/1.1", t(ALNUM, 40)),
        (
            "k8s-secret",
            lambda s: (
                f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {s}\n"
            ),
            k8s,
        ),
        ("keyword-entropy", lambda s: f"the new deploy token is {s} (valid 24h)", t(ALNUM, 32)),
        ("generic-api-key", lambda s: f'const apiKey = "{s}";', t(ALNUM, 32)),
    ]


def corpus(seed: int = 14) -> list[Fake]:
    from tests import (
        secret_corpus_bounds,
        secret_corpus_calls,
        secret_corpus_commands,
        secret_corpus_files,
        secret_corpus_open,
        secret_corpus_prefixes,
        secret_corpus_program,
        secret_corpus_review,
        secret_corpus_shapes,
        secret_corpus_structures,
        secret_corpus_syntaxes,
        secret_corpus_tools,
    )

    g = Gen(seed)
    found = _families(g) + secret_corpus_shapes.families(g) + secret_corpus_tools.families(g)
    found += secret_corpus_calls.families(g)
    found += secret_corpus_bounds.families(g)
    found += secret_corpus_commands.families(g)
    found += secret_corpus_structures.families(g)
    found += secret_corpus_review.families(g)
    found += secret_corpus_program.families(g)
    found += secret_corpus_syntaxes.families(g)
    found += secret_corpus_files.families(g)
    found += secret_corpus_prefixes.families(g)
    found += secret_corpus_open.families(g)
    return [Fake(family, shape(secret), secret) for family, shape, secret in found]


def windows(secret: str, width: int = 12) -> list[str]:
    """Every `width`-character piece of `secret`: none may survive, even after a cut."""
    if len(secret) <= width:
        return [secret]
    return [secret[i : i + width] for i in range(len(secret) - width + 1)]
