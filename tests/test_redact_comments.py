"""A credential's value in a comment at the end of the line that names the credential
(`key: password  # value <pw>` under a `secretKeyRef`, `DB_PASSWORD=${DB_PASSWORD}  # <pw>`,
`token = load()  // old: <token>`) is masked; comments of words, tool directives, paths,
versions and names pass."""

from __future__ import annotations

import random
import string

import pytest

from gitimprove.redaction import redact

_ALNUM = string.ascii_letters + string.digits


def _secrets(seed: int) -> list[str]:
    rnd = random.Random(seed)
    pw = (
        "".join(rnd.choice(_ALNUM) for _ in range(6))
        + rnd.choice("!#%@")
        + "k2Q"
        + rnd.choice("&$*")
    )
    token = "".join(rnd.choice(_ALNUM) for _ in range(rnd.randint(18, 40))) + "x9Z"
    return [pw, token]


LINES = [
    "          valueFrom:\n            secretKeyRef:\n              name: db\n"
    "              key: password  # value {s}",
    "              key: password # {s}",
    "  secretKeyRef: {{name: db, key: api-token}}  # = {s}",
    "password: ${{DB_PASSWORD}}  # default {s}",
    "DB_PASSWORD=${{DB_PASSWORD}}  # {s}",
    "api_token: !vault |  # was: {s}",
    "    passwordSecretRef: db  # value is {s}",
    "const token = getToken(); // old: {s}",
    "  - name: API_SECRET  # prod {s}",
]


@pytest.mark.parametrize("template", LINES, ids=range(len(LINES)))
def test_a_credentials_value_in_a_comment_beside_its_name_is_masked(template: str) -> None:
    for seed in range(8):
        for secret in _secrets(seed):
            out = redact(template.format(s=secret))
            assert secret[:6] not in out and secret[-5:] not in out, out


@pytest.mark.parametrize(
    "line",
    [
        "key: password  # value comes from the secret",
        "key: password  # value the one in vault",
        "password: str  # noqa: S105",
        "token = next_token  # type: ignore[assignment]",
        "api_key: ${API_KEY}  # see docs/setup.md",
        "secret: foo  # v1.2.3-rc1",
        "PASSWORD_FIELD = 'password'  # pylint: disable=C0103",
        "token = tokens[0]  # first_token",
        "key: password # TODO",
        "password_hash = hash(pw)  # sha256",
        "token_count: 12  # tokens_per_request",
        "secretName: db-creds  # prod-cluster-01",
        "name: web  # Zx81Qm4rT7pLw2Nd",
    ],
)
def test_ordinary_comments_beside_credential_names_pass(line: str) -> None:
    assert redact(line) == line


@pytest.mark.parametrize(
    "template",
    [
        "The secret you gave ({s}) was rejected",
        "token [{s}] expired",
        "the password you typed ('{s}') is wrong",
        "api key (`{s}`) revoked",
    ],
)
def test_a_value_in_brackets_a_few_words_after_its_name_is_masked(template: str) -> None:
    for seed in range(8):
        for secret in _secrets(seed):
            out = redact(template.format(s=secret))
            assert secret[:6] not in out and secret[-5:] not in out, out


@pytest.mark.parametrize(
    "line",
    [
        "the token (see docs) expired",
        "password (default: admin)",
        "secret (sha256) digest",
        "token counts (tokens_per_second) rose",
        "the secret key (SECRET_KEY) is read from env",
        "password hashing (bcrypt) is used",
        "the secret store (vault-prod-01) answered",
        "credentials (user_id) missing",
    ],
)
def test_words_in_brackets_after_a_credential_word_pass(line: str) -> None:
    assert redact(line) == line
