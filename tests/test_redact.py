"""Redaction: a corpus of realistic fake secrets is fully masked; real transcripts lose nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitimprove.redaction import redact

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "claude-transcripts"

# Fake secrets in the shapes the providers issue (none of them is real).
SECRETS = {
    "anthropic": "sk-ant-api03-Xq3vT8kR2mN5pL9wY4zB7cD1fG6hJ0aS-8uE3iO5tQ2rW7yU1pA4sD6fG9hJ2kL5zX8cV0bN3mQwerty-AA",
    "openai": "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH",
    "github": "ghp_1aB2cD3eF4gH5iJ6kL7mN8oP9qR0sT1uV2wX3y",
    "github-pat": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ012",
    "aws": "AKIAZ7EXAMPLEQW3RT5Y",
    "google": "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "slack": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "stripe": "sk_live_51HxYzAbCdEfGhIjKlMnOpQrStUv",
    "gitlab": "glpat-AbCdEfGhIjKlMnOpQrSt",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSJ9.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "huggingface": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
}
CONTEXTS = [
    "export KEY={s}",
    "curl -H 'Authorization: Bearer {s}' https://api.example.com",
    "config = {{'api': '{s}'}}",
    "Error: invalid credentials {s} rejected",
]


@pytest.mark.parametrize("kind", sorted(SECRETS))
@pytest.mark.parametrize("context", CONTEXTS)
def test_provider_tokens_are_masked(kind: str, context: str) -> None:
    secret = SECRETS[kind]
    out = redact(context.format(s=secret))
    assert secret not in out
    assert secret[-12:] not in out
    assert "[REDACTED:" in out


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("postgres://admin:S3cr3t-Pa55@db.internal:5432/app", "S3cr3t-Pa55"),
        ("https://deploy:tok3n_value@git.example.com/repo.git", "tok3n_value"),
        ("DB_PASSWORD=correct-horse-battery", "correct-horse-battery"),
        (
            "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ),
        ('password: "hunter22"', "hunter22"),
        ("client_secret = 'x9f8e7d6c5b4'", "x9f8e7d6c5b4"),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAz1b2\n-----END RSA PRIVATE KEY-----",
            "MIIEowIBAAKCAQEAz1b2",
        ),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n",
            "b3BlbnNzaC1rZXktdjEAAAA",
        ),
    ],
)
def test_credentials_are_masked(text: str, secret: str) -> None:
    assert secret not in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "pwd = os.getcwd()",
        "token = next_token",
        "def login(password): return check(password)",
        "client_secret: env.AUTH0_CLIENT_SECRET",
        "TOKEN=$GITHUB_TOKEN",
        "total_tokens: 19831",
        "see https://example.com/docs and run `pytest -q`",
        "git push origin main",
    ],
)
def test_ordinary_code_is_untouched(text: str) -> None:
    assert redact(text) == text


def _texts(obj: dict) -> list[str]:  # type: ignore[type-arg]
    c = (obj.get("message") or {}).get("content")
    out = [c] if isinstance(c, str) else []
    for b in c if isinstance(c, list) else []:
        if isinstance(b, dict):
            out += [b[k] for k in ("text", "thinking") if isinstance(b.get(k), str)]
            if isinstance(b.get("content"), str):
                out.append(b["content"])
    return out


def test_real_transcripts_lose_nothing() -> None:
    assert FIXTURES.is_dir(), f"{FIXTURES} is missing"
    blocks = 0
    for path in sorted(FIXTURES.glob("*/*.jsonl")):
        for line in path.read_text().splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            for text in _texts(obj):
                blocks += 1
                assert redact(text) == text, f"{path.name}: {text[:120]!r}"
    assert blocks > 700


def test_a_source_location_is_no_credential() -> None:
    trace = "(phoenix 1.8.3) lib/phoenix/token.ex:266: Phoenix.Token.get_endpoint_key_base/1"
    assert redact(trace) == trace
    assert redact("password: 1234:5678") == "password: [REDACTED:credential]"
