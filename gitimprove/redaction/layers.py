"""Secrets inside a base64 layer: decoded, checked, and the whole encoded run masked.

A Kubernetes `.dockerconfigjson` is base64 of `{"auths": {…: {"auth": base64(user:pw)}}}`;
a Secret's `data:` holds base64 of an `.env` file or a JSON config; a CI variable holds
base64 of a credentials file. No rule can read a secret through base64, so each run of
base64 (wrapped over indented lines too, padded with `=` or its URL encoding `%3D`) that
decodes to text is masked by the same rules (and decoded again, for base64 inside JSON
inside base64, up to `_DEPTH` layers); when anything in it is a secret, the whole run is
masked, named by what was found inside. Runs that decode to binary are left to `keys.py`
(DER keys) and everything else passes unchanged.
"""

from __future__ import annotations

import base64
import binascii

from gitimprove.redaction.engine import CONTEXT, RuleSet, Span, compiled

# a run of base64 (standard or URL-safe), possibly wrapped onto indented lines
_RUN = (
    r"(?<![\w+/-])(?P<run>[A-Za-z0-9+/_-]{20,}(?:(?:\r?\n[ \t]*|\\n[ \t]*)[A-Za-z0-9+/_-]{4,})*"
    r"(?:=|%3[Dd]){0,2})(?![\w+/=%-])"
)
_DEPTH = 3
_LIMIT = 1 << 16  # a run longer than this is data (an image), not a credentials file
_depth = 0


def _decode(run: str) -> str | None:
    """The text a run of base64 encodes, or None (not base64, binary, not text)."""
    clean = compiled(r"\\n|\s", 0).sub("", run).replace("%3D", "=").replace("%3d", "=")
    clean = clean.rstrip("=")
    if len(clean) % 4 == 1 or len(clean) > _LIMIT:
        return None
    if "-" in clean or "_" in clean:
        if "+" in clean or "/" in clean:
            return None
        clean = clean.replace("-", "+").replace("_", "/")
    try:
        raw = base64.b64decode(clean + "=" * (-len(clean) % 4), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    printable = sum(c.isprintable() or c in "\n\r\t" for c in text)
    return text if text and printable == len(text) else None


def spans(rs: RuleSet, text: str) -> list[Span]:
    """Runs of base64 in `text` whose decoded text holds a secret, each masked whole."""
    global _depth
    if _depth >= _DEPTH:
        return []
    out: list[Span] = []
    for m in compiled(_RUN, 0).finditer(text):
        run = m.group("run")
        if not (any(c.isdigit() for c in run) and any(c.isupper() for c in run)):
            continue  # a word, a path or an identifier, not base64 of anything
        decoded = _decode(run)
        if decoded is None:
            first = run.split("\n", 1)[0].split("\\n", 1)[0]
            decoded = _decode(first) if first != run else None
            if decoded is None:
                continue
            end = m.start() + len(first)
        else:
            end = m.end()
        _depth += 1
        try:
            found = rs.spans(decoded)
        finally:
            _depth -= 1
        if found:
            best = min(found, key=lambda s: s.priority)
            out.append(Span(m.start(), end, best.kind, min(best.priority, CONTEXT)))
    return out


def may_hold(text: str) -> bool:
    """Whether `text` may hold a run of base64 worth decoding (a cheap test first)."""
    return len(text) >= 20 and compiled(_RUN, 0).search(text) is not None
