"""A provider's token whose prefix no rule knows yet: lower-case words and `_` or `-`
(`tgp_v1_`, `ory_pat_`, `sb_secret_`), then a long body of random letters of both cases and
digits. New providers pick new prefixes every year; the body's randomness is what they share.

Not a token: a name in code (`test_parseHTTP2ResponseForUTF8Input`, the body reads as
words), a digest after its algorithm (`sha512-<base64>`, an npm lock file's integrity), a
payment provider's object id (`pi_3MtwBw…`, public in URLs and receipts), an API's handle
for a request, a run or a completion (`chatcmpl-…`, `req_…`, `batch_…`), or any value
under a key naming an id (`"id": …`, `x-request-id: …`).
"""

from __future__ import annotations

import re

from gitimprove.redaction.keynames import words

# a digest's algorithm names what follows as a hash, not a credential
_DIGESTS = words("md5 sha sha1 sha224 sha256 sha384 sha512 sha3 blake2b blake2s blake3 xxh64 crc32")
# Stripe's (and its imitators') object ids: a payment, a customer, a checkout session
_OBJECT_IDS = words(
    "pi ch cus txn evt acct cs in ii sub si price prod seti pm src tok po py ba card file link "
    "plink promo cpn dp re tr trr ipi sess"
)


# words that name an id, not a credential: an API's objects and a request's or a run's
# handle (`chatcmpl-…`, `req_…`, `run_…`, `batch_…`, `trace_…`)
_ID_WORDS = words(
    "id uuid guid ulid req request run trace span batch job task chatcmpl cmpl compl gen msg "
    "message evt event conv resp response call file thread asst step build item obj doc order "
    "inv commit rev node pod instance container image snap vol log cache tmp temp test ref "
    "upload chunk blob"
)
# a value under a key naming an id (`"id": …`, `run_id=…`, `x-request-id: …`)
_ID_KEY = r"(?i)(?:\b|_)(?:id|ids|uuid|guid)[\"']?[ \t]*[:=][ \t]*[\"']?$"
_HEX = frozenset("0123456789abcdefABCDEF")
# a digest's name before it (`sha256=<base64url>` in a wheel's RECORD, `integrity: …`)
_DIGEST_BEFORE = r"(?i)(?:sha\d*|md5|blake\w*|digest|hash|integrity|checksum|fingerprint)[\"']?[ \t]*[=:][ \t]*[\"']?$"


def check_prefixed(secret: str, m: re.Match[str]) -> bool:
    from gitimprove.redaction.engine import compiled
    from gitimprove.redaction.values import looks_random, reads_as_names

    if compiled(_DIGEST_BEFORE, 0).search(m.string, max(0, m.start() - 40), m.start()):
        return False
    prefix = m.group(1).lower()
    parts = [w for w in re.split(r"[_-]", prefix) if w]
    if parts[0] in _DIGESTS or parts[0] in _ID_WORDS:
        return False
    if compiled(_ID_KEY, 0).search(m.string, max(0, m.start() - 40), m.start()):
        return False
    if parts[0] in _OBJECT_IDS and prefix in (
        f"{parts[0]}_",
        f"{parts[0]}_test_",
        f"{parts[0]}_live_",
    ):
        return False  # `pi_<id>`, `cs_test_<id>`
    body = m.group(2)
    if not any(c.isdigit() for c in body):
        return False
    if not (any(c.isupper() for c in body) and any(c.islower() for c in body)):
        return False
    core = body.replace("_", "").replace("-", "")
    if sum(c in _HEX for c in core) * 10 >= len(core) * 9:
        # hex digits of both cases (a digest or an id printed so, or gitleaks' own
        # near-misses of a hex token): random base62 has a third of its letters hex
        return False
    # every run between separators judged alone: a name joined by `_` reads as names, a
    # digest after names (`node-cache-Linux-x64-npm-<sha256>`) is one case of hex; the
    # random runs (both cases, reading as no name) must make most of the body
    runs = [r for r in re.split(r"[_-]", body) if len(r) >= 8]
    random = [r for r in runs if r != r.lower() and r != r.upper() and not reads_as_names(r)]
    if 2 * sum(map(len, random)) < len(core):
        return False
    return looks_random(core, min_len=28) and not _printable_base64(body)


def _printable_base64(body: str) -> bool:
    """Base64 of text (`YmVkcm9jay5hbWF6b25hd3Mu…`, "bedrock.amazonaws."): a name spelled
    in base64, not random bytes (20 random bytes are all printable once in 10^8)."""
    import base64
    import binascii

    clean = body.rstrip("=")
    clean = clean[: len(clean) - len(clean) % 4]
    try:
        data = base64.urlsafe_b64decode(clean)
    except (binascii.Error, ValueError):
        return False
    return all(32 <= b < 127 for b in data)


_KNOWN: list[str] = []  # the prefixes other rules name, filled on first use
_RUN = r"(?<![\w.+/-])(?!(?<=\\)[ntr])(?:[a-z][a-z0-9]{1,11}[_-]){1,3}[A-Za-z0-9][\w-]{27}"


def gate(text: str) -> bool:
    """Whether the text holds a long run after a prefix no other rule names: only then is
    the rule worth compiling (`ghp_…` is the GitHub rule's)."""
    from gitimprove.redaction.engine import compiled
    from gitimprove.redaction.providers import RULES

    if not _KNOWN:
        _KNOWN.extend(
            k for r in RULES if r.id != "prefixed-token" for k in r.keywords if len(k) >= 4
        )
    for m in compiled(_RUN).finditer(text):
        low = m.group(0).lower()
        if not any(map(low.startswith, _KNOWN)):
            return True
    return False
