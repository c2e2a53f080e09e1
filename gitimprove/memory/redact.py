"""Mask secrets before anything captured is stored (DESIGN §10).

Patterns follow gitleaks' default rules for the common providers, plus private key blocks,
passwords in URLs, `KEY=value` credentials and JWTs. A match becomes `[REDACTED:<kind>]`.
Compiled lazily, on first use, to keep the hook start-up light.
"""

from __future__ import annotations

import re

_RULES: list[tuple[str, str]] = [
    (
        "private-key",
        r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY( BLOCK)?-----[\s\S]*?(?:-----END[ A-Z0-9_-]{0,100}PRIVATE KEY( BLOCK)?-----|\Z)",
    ),
    ("anthropic", r"\bsk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_\-]{20,}"),
    (
        "openai",
        r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}|\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b|\bsk-[A-Za-z0-9]{40,}\b",
    ),
    ("github", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{60,}\b"),
    ("gitlab", r"\bglpat-[A-Za-z0-9_\-]{20,}\b"),
    ("aws-access-key", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    ("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    (
        "slack",
        r"\bxox[baprs]-[0-9A-Za-z\-]{10,}\b|https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]{20,}",
    ),
    ("stripe", r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{20,}\b"),
    ("npm", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("huggingface", r"\bhf_[A-Za-z0-9]{30,}\b"),
    ("twilio", r"\bSK[0-9a-fA-F]{32}\b"),
    ("sendgrid", r"\bSG\.[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}\b"),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ("url-password", r"(?<=://)[^\s:/@'\"]{1,64}:[^\s@/'\"]{1,128}(?=@)"),
    ("bearer", r"(?i)(?<=\bbearer )[A-Za-z0-9_\-.=+/]{16,}"),
]
# KEY=value / KEY: value where the key names a credential; the value is masked, the key kept.
_ASSIGN = (
    r"(?i)\b([A-Za-z0-9_.\-]*(?:password|passwd|pwd|secret|token|api[_\-]?key|access[_\-]?key|"
    r"private[_\-]?key|client[_\-]?secret|auth[_\-]?key|credentials?)[A-Za-z0-9_.\-]*)"
    r"(\s*[:=]\s*)(['\"]?)([^\s'\"&;,()]{4,})\3(?!\()"
)

_REFERENCE = re.compile(
    r"^(?:[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+|\$\{?[A-Za-z_]\w*\}?|\d{1,12})$"
)
# A pattern is compiled and run only when its cheap hint occurs in the text: hooks redact
# short error messages, and compiling every pattern each time costs them milliseconds.
_HINTS = {
    "private-key": ("PRIVATE KEY",),
    "anthropic": ("sk-ant-",),
    "openai": ("sk-",),
    "github": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab": ("glpat-",),
    "aws-access-key": ("A3T", "AKIA", "ASIA", "ABIA", "ACCA"),
    "google-api-key": ("AIza",),
    "slack": ("xox", "hooks.slack.com"),
    "stripe": ("_live_", "_test_"),
    "npm": ("npm_",),
    "huggingface": ("hf_",),
    "twilio": ("SK",),
    "sendgrid": ("SG.",),
    "jwt": ("eyJ",),
    "url-password": ("://",),
    "bearer": ("earer",),
}
_ASSIGN_HINTS = ("pass", "pwd", "secret", "token", "key", "credential")
_cache: dict[str, re.Pattern[str]] = {}


def _compiled(kind: str, pattern: str) -> re.Pattern[str]:
    found = _cache.get(kind)
    if found is None:
        found = _cache[kind] = re.compile(pattern)
    return found


def _patterns() -> tuple[list[tuple[str, re.Pattern[str]]], re.Pattern[str]]:
    """Every pattern, compiled (for tests and tools)."""
    return [(kind, _compiled(kind, p)) for kind, p in _RULES], _compiled("assign", _ASSIGN)


def _assign_sub(m: re.Match[str]) -> str:
    key, sep, quote, value = m.group(1), m.group(2), m.group(3), m.group(4)
    if value.startswith("[REDACTED") or value.lower() in (
        "none",
        "null",
        "true",
        "false",
        "****",
        "xxxx",
    ):
        return m.group(0)
    if re.fullmatch(r"\d+(?::\d+)*:?", value) and re.search(r"\.[A-Za-z]{1,6}$", key):
        return m.group(0)  # a source location in a stack trace: `lib/phoenix/token.ex:266:`
    if not any(c.isalnum() for c in value) or _REFERENCE.match(value):
        return m.group(0)  # a placeholder (`:...`), a reference (`env.API_KEY`, `$TOKEN`), a count
    env_style = key.isupper() and "=" in sep
    secret_like = any(not (c.isalpha() or c in "._") for c in value)
    if not (quote or env_style or secret_like):
        return m.group(0)  # ordinary code: `pwd = os.getcwd`, `token = next_token`
    return f"{m.group(1)}{m.group(2)}{m.group(3)}[REDACTED:credential]{m.group(3)}"


def redact(text: str) -> str:
    if not text:
        return text
    for kind, pattern in _RULES:
        if any(h in text for h in _HINTS[kind]):
            text = _compiled(kind, pattern).sub(f"[REDACTED:{kind}]", text)
    lower = text.lower()
    if any(h in lower for h in _ASSIGN_HINTS):
        text = _compiled("assign", _ASSIGN).sub(_assign_sub, text)
    return text


def redact_obj(value: object) -> object:
    """Redact every string inside a JSON-like value."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_obj(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_obj(v) for v in value]
    return value
