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

import binascii

from gitimprove.redaction.engine import CONTEXT, RuleSet, Span, compiled
from gitimprove.redaction.values import looks_random, password_evidence

# a run of base64 (standard or URL-safe), possibly wrapped onto other (indented) lines: a
# long piece, with a short one before it and any after it (a wrap may cut anywhere)
_BREAK = r"(?:\r?\n[ \t]*|\\n[ \t]*)"
_RUN = (
    r"(?<![\w+/-])(?P<run>(?:[A-Za-z0-9+/_-]{1,19}" + _BREAK + r")?[A-Za-z0-9+/_-]{16,}"
    r"(?:" + _BREAK + r"[A-Za-z0-9+/_-]+)*(?:=|%3[Dd]){0,2})(?![\w+/=%-])"
)
_SHORT_RUN = r"(?<![\w+/=%-])[A-Za-z0-9+/_-]{8,15}={0,2}(?![\w+/=%-])"
_DECODER_WORDS = ("base64", "b64", "atob", "decode")
_DEPTH = 3
_LIMIT = 1 << 16  # a run longer than this is data (an image), not a credentials file
_depth = 0


def decode(run: str, shortest: int = 20) -> str | None:
    """The text a run of base64 encodes, or None (not base64, binary, not text)."""
    clean = compiled(r"\\n|\s", 0).sub("", run).replace("%3D", "=").replace("%3d", "=")
    clean = clean.rstrip("=")
    if len(clean) < shortest or len(clean) % 4 == 1 or len(clean) > _LIMIT:
        return None
    if "-" in clean or "_" in clean:
        if "+" in clean or "/" in clean:
            return None
        clean = clean.replace("-", "+").replace("_", "/")
    try:
        # (binascii, not base64: importing `base64` costs a hook over a millisecond)
        raw = binascii.a2b_base64(clean + "=" * (-len(clean) % 4), strict_mode=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    printable = sum(c.isprintable() or c in "\n\r\t" for c in text)
    return text if text and printable == len(text) else None


# what decodes the run it stands beside, on the same line: the run was written to be read
# (`echo <run> | base64 -d`, `base64 --decode <<< <run>`, `b64decode("<run>")`, `atob('…')`)
_DECODER_BEFORE = (
    r"(?:\bbase64[ \t]+(?:-[a-zA-Z]*[dD][a-zA-Z]*|--decode)(?:[ \t]+-\S{1,10})*[ \t]*<<<[ \t]*"
    r"|(?:b64decode|decodebytes|decodestring|\batob|decode64|FromBase64String|base64_decode"
    r"|DecodeString|Decoder\(\)\.decode|Base64\.decode|base64\.decode|Buffer\.from)"
    r"[ \t]*\([ \t]*b?)[\"']?$"
)
_DECODER_AFTER = (
    r"[\"']?(?:[ \t]*\|[ \t]*(?:base64|openssl[ \t]+(?:base64|enc)|basenc|b64)\b[^\n|;&]{0,40}?"
    r"(?:[ \t]-[a-zA-Z]*[dD]\b|--decode\b|[ \t]-decode\b)"
    r"|[ \t]*,[ \t]*[\"']base64[\"'])"
)


def _decoded_here(text: str, start: int, end: int) -> bool:
    """Whether the run at text[start:end] is decoded right there, by its command or call."""
    line_start = text.rfind("\n", 0, start) + 1
    before = text[max(line_start, start - 120) : start]
    if compiled(_DECODER_BEFORE, 0).search(before):
        return True
    if not compiled(r"\b(?:echo|printf)\b", 0).search(before):
        return False
    return compiled(_DECODER_AFTER, 0).match(text, end, min(len(text), end + 80)) is not None


def _credential(decoded: str) -> bool:
    """Decoded text that is a credential on its own: one token reading as a password or a
    key, or `user:password` (what HTTP Basic auth and a registry's `auth` encode)."""
    value = decoded.strip()
    if not 6 <= len(value) <= 512 or any(c.isspace() for c in value) or "://" in value:
        return False
    user, sep, pw = value.partition(":")
    if sep and user and pw and ":" not in pw and compiled(r"[\w.@+-]{1,64}", 0).fullmatch(user):
        if pw.isdigit() or pw.lower() == user.lower() or (pw.isalpha() and pw.islower()):
            return False  # a port, the user's name again, a word (`guest:guest`, `user:pass`)
        return len(pw) >= 6 or password_evidence(pw)
    return password_evidence(value) or looks_random(value, min_len=12)


def spans(rs: RuleSet, text: str) -> list[Span]:
    """Runs of base64 in `text` whose decoded text holds a secret, each masked whole."""
    if _depth >= _DEPTH:
        return []
    out: list[Span] = []
    for m in compiled(_RUN, 0).finditer(text):
        run = m.group("run")
        if not (any(c.isdigit() for c in run) and any(c.isupper() for c in run)):
            continue  # a word, a path or an identifier, not base64 of anything
        found = _inside(rs, text, _pieces(run, m.start()))
        if found is not None:
            out.append(found)
        elif _decoded_here(text, m.start(), m.end()):
            out.extend(_decoded_credential(text, m.start(), m.end()))
    lower = text.lower()
    if any(w in lower for w in _DECODER_WORDS):
        # a short password's base64 (under 16 characters), where a decoder stands beside it
        for m in compiled(_SHORT_RUN, 0).finditer(text):
            if _decoded_here(text, m.start(), m.end()):
                out.extend(_decoded_credential(text, m.start(), m.end()))
    return out


def _decoded_credential(text: str, start: int, end: int) -> list[Span]:
    """The run at text[start:end], decoded where it stands, when it encodes a credential;
    and what the decoder printed: the credential itself, on a line below."""
    decoded = decode(text[start:end], shortest=8)
    if decoded is None or not _credential(decoded):
        return []
    out = [Span(start, end, "encoded-credential", CONTEXT)]
    plain = decoded.strip()
    at = text.find(plain, end)
    while at != -1:
        out.append(Span(at, at + len(plain), "encoded-credential", CONTEXT))
        at = text.find(plain, at + len(plain))
    return out


def _pieces(run: str, at: int) -> list[tuple[int, int]]:
    """Where the lines of a wrapped run are (line breaks and indentation left out)."""
    out = []
    pos = 0
    for b in compiled(_BREAK, 0).finditer(run):
        out.append((at + pos, at + b.start()))
        pos = b.end()
    out.append((at + pos, at + len(run)))
    return out


def _inside(rs: RuleSet, text: str, pieces: list[tuple[int, int]]) -> Span | None:
    """The run, when what it encodes holds a secret: all its lines, else without a word
    joined before or after it (`type:` on the next line)."""
    global _depth
    n = len(pieces)
    for a, b in ((0, n), (0, n - 1), (1, n), (1, n - 1)):
        if b <= a or (n == 1 and (a, b) != (0, 1)):
            continue
        decoded = decode("".join(text[s:e] for s, e in pieces[a:b]))
        if decoded is None:
            continue
        _depth += 1
        try:
            found = rs.spans(decoded)
        finally:
            _depth -= 1
        if not found:
            return None
        best = min(found, key=lambda s: s.priority)
        return Span(pieces[a][0], pieces[b - 1][1], best.kind, min(best.priority, CONTEXT))
    return None
