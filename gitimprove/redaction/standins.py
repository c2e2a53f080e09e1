"""Stand-ins for a token: the placeholders documentation writes where a token goes
(`ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`, `glc_1111…=`, `AKIAXXXXXXXXXXXXXXXX`)
and names in code that merely start with a token's prefix (`GLC_CreateLightmapTexturesIndividual`,
`hf_requiredCharacteristicTypesForDisplayMetadata`). gitleaks lists both among its rules' false
positives; a token's body is random, and neither is.
"""

from __future__ import annotations

import itertools
import re

_SEPARATORS = re.compile(r"[-_.~=/+:]+")
_CAMEL_WORDS = re.compile(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)*|[A-Z]+")
# the 220 commonest letter pairs inside English words (97% of all pairs in Python's own
# documentation; a third of the 676 pairs random letters draw from)
_PAIRS = """ab ac ad ag ai al am an ap ar as at au av ay ba be bi bj bl bo bu by ca cc ce ch ci ck cl
    co cr ct cu da de di do ds du ea ec ed ee ef eg ei el em en ep eq er es et ev ew ex ey fa fe
    ff fi fo fr ft fu ge gi gl gn gr gs gu ha he hi ho ia ib ic id ie if ig il im in io ip ir is
    it iv je ke la ld le lf li ll lo ls lt lu ly ma mb me mi mm mo mp mu na nc nd ne ng ni nl no
    ns nt nu nv ny ob oc od of ol om on oo op or os ot ou ov ow pa pe pi pl po pp pr pt py qu ra
    rd re rg ri rm rn ro rr rs rt ru ry sa sc se sh si sl so sp ss st su sy ta tc te th ti tl to
    tr ts tt tu ty ua ub uc ue ug ui ul um un up ur us ut va ve vi wa we wh wi wo xc xe xp xt yn
    yp ys yt ze"""
COMMON_PAIRS = frozenset(_PAIRS.split())
_HUMPS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+")


def stand_in(token: str, prefix: str = "") -> bool:
    """Whether `token` (found by a provider's rule whose keyword is `prefix`) is a placeholder
    or a name in code, not a token. Without `prefix` (a value found after a credential's key),
    only a provider-like prefix followed by placeholders counts: a password may be words."""
    if prefix and token.lower().startswith(prefix):
        body, names = token[len(prefix) :], True
    else:
        if _filler(token) or _alphabet(token):
            return True
        # a provider-like head (`pplx-`, `glc_`) before the rest
        head = _SEPARATORS.split(token, 1)[0]
        if len(head) > 8 or len(head) == len(token):
            return False
        body, names = token[len(head) :], False
    segments = [s for s in _SEPARATORS.split(body) if s]
    long = [s for s in segments if len(s) > 6]
    if not long or sum(map(len, long)) * 2 < sum(map(len, segments)):
        return False
    return all(_placeholder(s) or (names and _words(s)) for s in long)


def _placeholder(segment: str) -> bool:
    """`xxxxxxxx`, `XXXX`, `11111111`, `####`: one or two characters repeated. (A run of the
    alphabet, `AbCdEfGh…` or `1234567890…`, is a fake a test may stand for a real token:
    masked as one.)"""
    return len(set(segment.lower())) <= 2


def _filler(value: str) -> bool:
    """`4b1dXXXXXXXXXXXXXXXXXXXXXXXX`: a few characters, then one repeated to the length of
    a key (three quarters of it or more)."""
    if len(value) < 12:
        return False
    top = max(set(value), key=value.count)
    if value.count(top) * 4 < len(value) * 3:
        return False
    # (a random run padded by filler, `yyyy…<token>zzzz…`, is a token with glue, not a
    # placeholder: twelve characters or more mixing letters and digits besides the filler)
    rest = "".join(compiled_runs().findall(value.replace(top, " ")))
    return not (
        len(rest) >= 12
        and any(c.isdigit() for c in rest)
        and any(c.isalpha() for c in rest)
        and len(set(rest)) >= 8
    )


def compiled_runs() -> re.Pattern[str]:
    return _RUNS


_RUNS = re.compile(r"[A-Za-z0-9]{12,}")


def _alphabet(value: str) -> bool:
    """`ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/`: an alphabet written
    out in order (base64's, a charset's), a few long runs of consecutive characters."""
    runs = 1 + sum(1 for a, b in itertools.pairwise(value) if ord(b) != ord(a) + 1)
    return len(value) >= 20 and runs * 8 <= len(value)


def _words(segment: str) -> bool:
    """A name made of words (`CreateLightmapTexturesIndividual`, `servingcellpriority`,
    `RANDOMSTRINGHERE`): letters only, cased as words are (not at random), and four in five
    of the letter pairs inside its words common in English. Random letters of a token's
    length pass that about once in a million times."""
    if len(segment) < 12 or not segment.isascii() or not segment.isalpha():
        return False
    if not _CAMEL_WORDS.fullmatch(segment):
        return False
    pairs = [
        w[i : i + 2]
        for w in (h.lower() for h in _HUMPS.findall(segment))
        for i in range(len(w) - 1)
    ]
    return len(pairs) >= 8 and sum(p in COMMON_PAIRS for p in pairs) * 5 >= len(pairs) * 4
