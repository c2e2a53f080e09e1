"""gitleaks' own true-positive samples (tests/fixtures/gitleaks-samples, its current
version) as fakes of the corpus: each sample as gitleaks wrote it, and the secret its rules
find in it written again in the syntaxes text carries secrets in (env, JSON, YAML, an
`Authorization:` header, a URL's password, a query, a CLI flag, a `.netrc` line, prose),
one syntax a secret in turn. `Fake.secret` is what gitleaks' rule finds (for a `user:password`
pair, the password)."""

from __future__ import annotations

import json
import re

from tests.conftest import ROOT
from tests.secret_corpus import Fake

SAMPLES = json.loads(
    (ROOT / "tests" / "fixtures" / "gitleaks-samples" / "samples.json").read_text()
)["true_positives"]

SYNTAXES = {
    "env": "export SERVICE_API_KEY={s}",
    "json": '{{"api_key": "{s}"}}',
    "yaml": "service:\n  api_key: {s}",
    "header": "Authorization: Bearer {s}",
    "url": "https://deploy:{s}@git.example.org/team/repo.git",
    "query": "GET https://api.example.org/v1/items?access_token={s}",
    "flag": "tool login --api-key {s}",
    "netrc": "machine api.example.org login deploy password {s}",
    "prose": "the api key for the service is {s}",
}
# what documentation and gitleaks' tests use for "no secret here", and shapes a key's name
# must come with (a hex digest or a UUID under a key that names no password is an id;
# docs/secrets.md)
_NOT_ALONE = re.compile(
    r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}|[0-9a-f]{8,64}|[0-9A-F]{8,64}"
)


def _password(secret: str) -> str:
    """The password of a `user:password` pair (curl's `-u`), else the secret."""
    user, colon, password = secret.partition(":")
    if colon and re.fullmatch(r"[\"'{]?[\w.@{}-]{0,64}[\"'}]?", user) and len(password) >= 6:
        return password.strip("\"'{}")
    return secret


def gitleaks_fakes() -> list[Fake]:
    from tests.test_redact_gitleaks_samples import NOT_SECRETS, _secrets

    out: list[Fake] = []
    turn = 0
    for sample in SAMPLES:
        text = sample["text"]
        if any(k in text for k in NOT_SECRETS):
            continue
        family = "gitleaks-" + sample["rule_file"].removesuffix(".go")
        for secret in sorted(s for s in _secrets(text) if s != "password"):
            value = _password(secret)  # (a user's name is no secret)
            out.append(Fake(family, text, value))
            if _NOT_ALONE.fullmatch(value) or len(value) < 8 or "\n" in value:
                continue
            names = list(SYNTAXES)
            if "/" in value or " " in value:
                names.remove("prose")  # (prose ends a value at a slash: a path)
            name = names[turn % len(names)]
            turn += 1
            out.append(Fake(f"{family}-{name}", SYNTAXES[name].format(s=value), value))
    return out
