"""A credential's key of many parts, longer than 40 characters, before its value.

Built at run time: four to eight words of a deployment's vocabulary, a credential's word
(`access_key`, `client_secret`, `passwd`, …), maybe a qualifier after it, written in snake,
camel, dotted or kebab case, in the shapes a tool's output shows (`K=v`, `export K=v`,
`K: v`, `docker run -e K=v`, `"k": "v"`, `-Dk=v`, a sentence around it).
"""

from __future__ import annotations

import random
import string

import pytest

from gitimprove import redaction

_WORDS = [
    "azure",
    "storage",
    "account",
    "primary",
    "backups",
    "nightly",
    "prod",
    "eu",
    "west",
    "analytics",
    "warehouse",
    "readonly",
    "service",
    "replica",
    "postgres",
    "database",
    "cluster",
    "region",
    "main",
    "legacy",
    "internal",
    "billing",
    "pipeline",
]
# (each a credential's words, joined by `_` when a key is built)
_CREDENTIALS = (
    ("access", "key"),
    ("secret",),
    ("pass" + "word",),
    ("api", "key"),
    ("token",),
    ("client", "secret"),
    ("secret", "key"),
    ("private", "key"),
    ("auth", "token"),
    ("pass" + "wd",),
)
_AFTER = ([], ["for", "backups"], ["primary"], ["nightly", "replica"])
_SHAPES = (
    "{k}={v}",
    "export {k}={v}",
    "{k}: {v}",
    "docker run -e {k}={v} img",
    "env {k}={v} ./run",
    '"{k}": "{v}"',
    "  - {k}={v}",
    "Error: {k}={v} rejected",
    "-D{k}={v}",
)


def _key(rnd: random.Random, style: str) -> str:
    parts = [rnd.choice(_WORDS) for _ in range(rnd.randint(4, 8))]
    parts += [*rnd.choice(_CREDENTIALS), *rnd.choice(_AFTER)]
    if style == "snake":
        return "_".join(parts).upper()
    if style == "camel":
        return parts[0] + "".join(p.title() for p in parts[1:])
    return ("." if style == "dotted" else "-").join(parts)


def _value(rnd: random.Random, n: int) -> str:
    alnum = string.ascii_letters + string.digits
    if n % 3 == 0:
        return "".join(rnd.choice(alnum) for _ in range(40))
    if n % 3 == 1:
        return "".join(rnd.choice(alnum + "+/") for _ in range(86)) + "=="
    head = "".join(rnd.choice(alnum) for _ in range(6))
    return head + rnd.choice("!#%") + "".join(rnd.choice(alnum) for _ in range(5))


@pytest.mark.parametrize("style", ["snake", "camel", "dotted", "kebab"])
def test_a_long_key_of_many_parts_masks_its_value(style: str) -> None:
    rnd = random.Random(f"long-{style}")
    left = []
    n = 0
    while n < 300:
        key = _key(rnd, style)
        if len(key) <= 40:
            continue
        value = _value(rnd, n)
        text = rnd.choice(_SHAPES).format(k=key, v=value)
        out = redaction.redact(text)
        if any(value[i : i + 6] in out for i in range(len(value) - 5)):
            left.append(text)
        n += 1
    assert not left, left[:5]


def test_a_long_name_about_a_credential_stays() -> None:
    # what names a credential's length or its file is no credential, however long the key
    for text in (
        "AZURE_STORAGE_ACCOUNT_PRIMARY_ACCESS_KEY_FOR_BACKUPS_FILE=/etc/backup/keyfile",
        "primaryWarehouseServiceAccountClientSecretRotationIntervalDays: 30",
        "prod.eu.west.analytics.warehouse.readonly.password.min.length=12",
    ):
        assert redaction.redact(text) == text
