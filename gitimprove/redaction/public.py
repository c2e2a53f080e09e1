"""Findings that are public by design: documentation examples, key fingerprints, ARNs."""

from __future__ import annotations

import re

# gitleaks' allowlists name AWS's documentation keys (`AKIAIOSFODNN7EXAMPLE`,
# `wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`); an SSH fingerprint is a public digest
_FINGERPRINT = ("SHA256:", "SHA1:", "SHA512:", "MD5:")
# secrets published as examples, which docs and test fixtures quote everywhere (gitleaks
# allowlists such well-known examples): jwt.io's HS256 example, Stripe's documentation keys
PUBLISHED = (
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "pk_test_TYooMQauvdEDq54NiTphI7jx",
    "sk_test_BQokikJOvBiI2HlWgH4olfQ2",
    # the Cache Directory Tagging Specification's fixed signature (`CACHEDIR.TAG`)
    "8a477f597d28d172789f06886806bc55",
)
# jwt.io's example without its signature, as a line cut in two literals quotes it
_JWT_IO = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi"
    "aWF0IjoxNTE2MjM5MDIyfQ"
)
_ARN = r"arn:aws[\w-]*:[\w-]+:[\w-]*:\d{12}:[^\s\"'<>]*"


def published(secret: str, text: str, start: int) -> bool:
    """A documentation example, a key fingerprint or part of an ARN: public by design."""
    if "EXAMPLE" in secret or any(p in secret for p in PUBLISHED):
        return True
    if len(secret) >= 40 and secret in _JWT_IO:
        return True
    if secret.startswith("eyJ") and _unsigned_jwt(secret):
        return True
    if _in_arn(text, start):
        return True
    return text[max(0, start - 7) : start].upper().endswith(_FINGERPRINT)


def _in_arn(text: str, start: int) -> bool:
    """Whether `start` lies inside an AWS ARN (`arn:aws:secretsmanager:…:secret:prod/db-…`):
    a resource's name, not a credential."""
    at = text.rfind("arn:aws", max(0, start - 200), start)
    if at == -1:
        return False
    return re.compile(_ARN).match(text, at) is not None and not any(
        c.isspace() or c in "\"'<>" for c in text[at:start]
    )


def _unsigned_jwt(token: str) -> bool:
    """A JWT of `"alg": "none"` and no signature (a test fixture's): it proves nothing, so
    it holds no secret."""
    import base64
    import binascii
    import json

    parts = token.split(".")
    if len(parts) != 3 or parts[2]:
        return False
    head = parts[0]
    try:
        header = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (binascii.Error, ValueError):
        return False
    return isinstance(header, dict) and str(header.get("alg", "")).lower() == "none"
