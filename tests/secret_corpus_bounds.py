"""More fakes for the corpus: provider tokens followed by ordinary punctuation (a sentence's
end, parentheses, markdown, XML, a path, a URL, a table cell, a CSV row), and provider
formats gitleaks lacks (Doppler service tokens, Tailscale, Neon, Figma, Buildkite, Vercel,
Cloudflare scoped tokens, Jina), bare and under a credential key. Generated, never real."""

from __future__ import annotations

from collections.abc import Callable

from tests.secret_corpus import ALNUM, HEX, LOWER_ALNUM, UPPER_ALNUM, URLSAFE, Gen


def families(g: Gen) -> list[tuple[str, Callable[[str], str], str]]:
    t = g.s
    doppler = "dp.st.prd." + t(ALNUM, 43)
    return [
        # gitleaks' rules, ended by punctuation
        ("end-paren", lambda s: f"Authenticated with DigitalOcean ({s})", "dop_v1_" + t(HEX, 64)),
        ("end-bold", lambda s: f"rotate **{s}** today", "pul-" + t(HEX, 40)),
        ("end-path", lambda s: f"open /home/u/.gem/{s}.lock: denied", "rubygems_" + t(HEX, 48)),
        ("end-xml", lambda s: f"<authToken>{s}</authToken>", "sntryu_" + t(HEX, 64)),
        (
            "end-url",
            lambda s: f"GET https://api.internal/v1/keys/{s}/rotate 404",
            "dapi" + t(HEX, 32),
        ),
        ("end-git-status", lambda s: f"?? secrets/{s}.txt", "hvs.CAES" + t(HEX, 3) + t(ALNUM, 88)),
        (
            "end-sentence",
            lambda s: f"Error code: 401 - incorrect key {s}.",
            "HRKU-AA" + t(ALNUM, 58),
        ),
        ("end-table", lambda s: f"| grafana | {s}| prod |", f"glsa_{t(ALNUM, 32)}_{t(HEX, 8)}"),
        ("end-csv", lambda s: f"postman,{s},2026-01-01", f"PMAK-{t(HEX, 24)}-{t(HEX, 34)}"),
        ("end-query", lambda s: f"https://x.io/cb?k={s}&next=1", "LTAI" + t(ALNUM, 20)),
        ("end-colon", lambda s: f"{s}: permission denied", "pnu_" + t(ALNUM, 36)),
        ("end-angle", lambda s: f"token=<{s}>", "rdme_" + t(LOWER_ALNUM, 70)),
        ("end-bracket", lambda s: f"keys=[{s}]", "sgp_" + t(HEX, 40)),
        ("end-star", lambda s: f"*{s}*", "shippo_live_" + t(HEX, 40)),
        ("end-pipe", lambda s: f"{s}|cut -c1-4", "ico-" + t(ALNUM, 32)),
        ("end-comma", lambda s: f"scalingo: {s}, region osc-fr1", "tk-us-" + t(URLSAFE, 48)),
        (
            "end-hf-org",
            lambda s: f"(org token {s})",
            "api_org_" + t("abcdefghijkLMNOPQRSTUVWXyz", 34),
        ),
        ("end-pscale", lambda s: f"pscale auth: {s}.", "pscale_tkn_" + t(ALNUM, 43)),
        # formats gitleaks lacks
        ("doppler-service", lambda s: f'token = "{s}"', doppler),
        ("doppler-ruby", lambda s: f":token => '{s}'", "dp.st.dev." + t(ALNUM, 43)),
        ("doppler-go", lambda s: f'\tToken: "{s}",', "dp.st.stg." + t(ALNUM, 43)),
        ("doppler-trailer", lambda s: f"X-Api-Token: {s}", "dp.sa." + t(ALNUM, 43)),
        (
            "tailscale",
            lambda s: f"auth key {s} expired",
            f"tskey-auth-k{t(ALNUM, 10)}CNTRL-{t(ALNUM, 33)}",
        ),
        ("tailscale-api", lambda s: f"({s})", f"tskey-api-k{t(ALNUM, 11)}CNTRL-{t(ALNUM, 33)}"),
        ("neon", lambda s: f"neon answered 401 for {s}.", "napi_" + t(LOWER_ALNUM, 64)),
        (
            "figma",
            lambda s: f"curl -H 'X-Figma-Token: {s}' api.figma.com",
            "figd_" + t(URLSAFE, 40),
        ),
        ("buildkite", lambda s: f"agent registered with {s}", "bkua_" + t(HEX, 40)),
        (
            "vercel",
            lambda s: f"uploading with {s}",
            f"vercel_blob_rw_{t(ALNUM, 16)}_{t(ALNUM, 30)}",
        ),
        ("cloudflare-scoped", lambda s: f"wrangler used {s}", "cfat_" + t(ALNUM, 40)),
        ("jina", lambda s: f"Bearer-less call with {s} failed", "jina_" + t(ALNUM, 60)),
        # handed to a command or declared in a language's own syntax
        ("sudo-pipe", lambda s: f'echo "{s}" | sudo -S apt-get install -y nginx', g.password()),
        ("sudo-herestring", lambda s: f'sudo -S <<< "{s}" systemctl restart app', g.password()),
        ("gh-secret-pipe", lambda s: f"echo {s} | gh secret set DB_PASSWORD", g.password()),
        (
            "gcloud-secret-pipe",
            lambda s: f'echo -n "{s}" | gcloud secrets create db-pass --data-file=-',
            g.password(),
        ),
        ("add-mask", lambda s: f"2026-01-01T10:00:00.1234567Z ::add-mask::{s}", g.password()),
        ("cmdkey", lambda s: f"cmdkey /add:server01 /user:admin /pass:{s}", g.password()),
        ("schtasks", lambda s: f"schtasks /create /tn backup /rp {s} /tr x.bat", g.password()),
        (
            "ssm-put-parameter",
            lambda s: f"aws ssm put-parameter --name /prod/db/password --value {s}",
            g.password(),
        ),
        (
            "dotnet-user-secrets",
            lambda s: f'dotnet user-secrets set "Stripe:SecretKey" "{s}"',
            g.password(),
        ),
        ("rust-const", lambda s: f'const API_KEY: &str = "{s}";', g.password()),
        ("ruby-env-default", lambda s: f"ENV['STRIPE_SECRET'] ||= '{s}'", g.password()),
        (
            "terraform-output",
            lambda s: '{"db_password": {"sensitive": true, "value": "' + s + '"}}',
            g.password(),
        ),
        ("hcl-heredoc", lambda s: f"secret_string = <<EOT\n{s}\nEOT", g.password()),
        (
            "sql-identified-with",
            lambda s: f"ALTER USER 'app'@'%' IDENTIFIED WITH mysql_native_password BY '{s}';",
            g.password(),
        ),
        (
            "php-mysqli",
            lambda s: f"$conn = new mysqli('localhost', 'root', '{s}', 'shop');",
            g.password(),
        ),
        ("php-pdo", lambda s: f'new PDO("mysql:host=db;dbname=app", "app", "{s}")', g.password()),
        (
            "dotted-random",
            lambda s: f'SECRET_KEY = "{s}"',
            f"app.{t(UPPER_ALNUM + 'abcdefgh', 24)}",
        ),
    ]
