"""More fakes for the corpus: the families and shapes a hostile review found getting
through (NuGet, Okta, Docker Hub, Twilio auth tokens, unnamed AWS session tokens, PuTTY and
headless PEM keys; colour codes, name/value pairs, compound key names, passphrases, prose,
XML / Dockerfile / CLI shapes, lookalike and invisible characters, wrapped tokens, JSON
numbers). Generated, never real."""

from __future__ import annotations

import base64
import string
from collections.abc import Callable

from tests.secret_corpus import ALNUM, B64, HEX, LOWER_ALNUM, URLSAFE, Gen


def _b64_lines(g: Gen, n: int, width: int = 64) -> str:
    raw = bytes(g.rng.randrange(256) for _ in range(n * width * 3 // 4))
    text = base64.b64encode(raw).decode()
    return "\n".join(text[i : i + width] for i in range(0, len(text), width))


def _split(secret: str, at: int, sep: str) -> str:
    return secret[:at] + sep + secret[at:]


def families(g: Gen) -> list[tuple[str, Callable[[str], str], str]]:
    t = g.s
    pw = g.password
    sid = "AC" + t(HEX, 32)
    ppk_private = _b64_lines(g, 3)
    return [
        (
            "nuget-key",
            lambda s: f"nuget push Acme.1.0.nupkg -k {s} -s https://api.nuget.org/v3/index.json",
            "oy2" + t(LOWER_ALNUM, 43),
        ),
        (
            "nuget-apikey-flag",
            lambda s: f"nuget push Acme.nupkg -ApiKey {s} -NonInteractive",
            t(HEX, 32),
        ),
        (
            "okta-ssws",
            lambda s: f"curl -H 'Authorization: SSWS {s}' https://acme.okta.com/api/v1/users",
            "00" + t(URLSAFE, 40),
        ),
        (
            "dockerhub-pat",
            lambda s: f"echo {s} | docker login -u acme --password-stdin",
            "dckr_pat_" + t(URLSAFE, 27),
        ),
        ("twilio-auth-arg", lambda s: f"client = Client('{sid}', '{s}')", t(HEX, 32)),
        (
            "twilio-auth-curl",
            lambda s: f"curl -X POST https://api.twilio.com/2010-04-01/Accounts -u {sid}:{s}",
            t(HEX, 32),
        ),
        (
            "aws-session-unnamed",
            lambda s: f"An error occurred (ExpiredToken) for session {s}",
            "IQoJb3JpZ2luX2Vj" + t(B64, 240),
        ),
        (
            "putty-ppk",
            lambda s: (
                "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\n"
                f"Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAI{t(B64, 38)}\n{t(B64, 20)}\n"
                f"Private-Lines: 3\n{s}\nPrivate-MAC: {t(HEX, 64)}"
            ),
            ppk_private,
        ),
        (
            "pem-headless-tail",
            lambda s: f"...key.pem (cut)\n{s}",
            _b64_lines(g, 4) + "\n-----END RSA PRIVATE KEY-----",
        ),
        (
            "pem-body-only",
            lambda s: f"the middle of the key file:\n{s}\n(truncated)",
            _b64_lines(g, 6),
        ),
        ("ansi-password", lambda s: f"\x1b[32mPASSWORD\x1b[0m={s}", pw()),
        ("k8s-env-pair", lambda s: f"env:\n  - name: DB_PASSWORD\n    value: {s}\n", pw()),
        (
            "ecs-pair",
            lambda s: f'"environment": [{{"name": "API_KEY", "value": "{s}"}}]',
            t(ALNUM, 24),
        ),
        ("ssm-pair", lambda s: f'{{"Key": "password", "Value": "{s}"}}', pw()),
        ("sshpass-env", lambda s: f"SSHPASS={s} sshpass -e ssh ci@build.internal", pw()),
        ("dbpass-env", lambda s: f"export DBPASS={s}", pw()),
        ("adminpwd", lambda s: f"ADMINPWD: {s}", pw()),
        ("mysql-pwd-env", lambda s: f"MYSQL_PWD={s} mysql -u root app", pw()),
        (
            "passphrase-letters",
            lambda s: f"password: {s}",
            "".join(g.rng.choice(string.ascii_lowercase) for _ in range(22)),
        ),
        ("prose-password", lambda s: f"the password {s} is wrong, try again", t(LOWER_ALNUM, 11)),
        ("prose-quoted", lambda s: f"the password was '{s}' before the rotation", pw()),
        ("xml-password", lambda s: f"<connection><password>{s}</password></connection>", pw()),
        ("dockerfile-env", lambda s: f"ENV DB_PASSWORD {s}", pw()),
        (
            "gh-secret-set",
            lambda s: f"gh secret set DEPLOY_TOKEN --body {s} --repo acme/app",
            t(ALNUM, 32),
        ),
        ("az-login", lambda s: f"az login -u ci@acme.com -p {s}", pw()),
        ("sqlplus", lambda s: f"sqlplus scott/{s}@orcl @migrate.sql", t(ALNUM, 12)),
        ("mysql-quoted-p", lambda s: f"mysql -h db -P 3306 -u root -p'{s}' app", pw()),
        ("fullwidth-equals", lambda s: f"PASSWORD\uff1d{s}", pw()),
        ("fullwidth-colon", lambda s: f"api_key\uff1a{s}", t(ALNUM, 24)),
        (
            "soft-hyphen-token",
            lambda s: f"remote: Invalid token {s}",
            _split("ghp_" + t(ALNUM, 36), 18, "\u00ad"),
        ),
        (
            "zero-width-token",
            lambda s: f"stripe.api_key = {s}",
            _split("sk_live_" + t(ALNUM, 40), 20, "\u200b"),
        ),
        (
            "wrapped-newline",
            lambda s: f"error: authentication failed for {s}",
            _split("glpat-" + t(URLSAFE, 20), 14, "\n"),
        ),
        (
            "wrapped-continuation",
            lambda s: f"export STRIPE_KEY={s}",
            _split("sk_live_" + t(ALNUM, 40), 24, "\\\n"),
        ),
        ("json-pin", lambda s: f'{{"user": "ops", "pin": {s}}}', g.digits(8)),
        ("json-password-number", lambda s: f'{{"password": {s}, "user": "ops"}}', g.digits(9)),
    ]
