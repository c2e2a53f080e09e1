"""What the redaction tests assert of a secret they draw: masked as raw text and inside a
stored JSON record, nothing of it left, and masking again changes nothing."""

from __future__ import annotations

import json
import random
import string

from gitimprove.redaction import redact, redact_blob

ALNUM = string.ascii_letters + string.digits


def pieces(secret: str, width: int) -> list[str]:
    """Every run of `width` characters of `secret` (the whole of a shorter one)."""
    return [secret[i : i + width] for i in range(max(1, len(secret) - width + 1))]


def assert_masked(text: str, secret: str, *, width: int = 6) -> None:
    """`secret` in `text` becomes a marker, as raw text and as a JSON record's string, and
    no `width` characters of it are left in either."""
    out = redact(text)
    assert "[REDACTED:" in out, (text, out)
    left = [p for p in pieces(secret, width) if p in out]
    assert not left, (text, out, left)
    assert redact(out) == out
    record = redact_blob(json.dumps({"content": text}).encode()).decode()
    content = json.loads(record)["content"]
    left = [p for p in pieces(secret, width) if p in content]
    assert not left, (text, record, left)


def drawn(rng: random.Random, n: int, symbols: str) -> str:
    """A password of `n` characters: a digit, both cases and at least one of `symbols`
    inside it (none at either end)."""
    while True:
        out = "".join(rng.choice(ALNUM + symbols) for _ in range(n))
        if (
            any(c in symbols for c in out[1:-1])
            and any(c.isdigit() for c in out)
            and any(c.isupper() for c in out)
            and any(c.islower() for c in out)
            and out[0] not in symbols
            and out[-1] not in symbols
        ):
            return out
