"""Passwords as pwgen draws them, told from names: its default pronounceable ones
(`Ohsh4aiph`, `aeT2ieb7`: units of consonants and vowels in turn, a digit between two of
them, a capital at a unit's start) and its `-s` secure ones (`u89GweY4`: letters and digits
at random). A short value under a key that only may name a credential (`key`, `auth`)
counts as one when it has this shape: a name with a number (`utf8Name`, `base64Url`,
`getV2Api`, `Int32Array`) has consonants together no pwgen unit has, two digits together,
or words a generator does not draw."""

from __future__ import annotations

from functools import lru_cache

from gitimprove.redaction.engine import compiled
from gitimprove.redaction.standins import COMMON_PAIRS

_C, _V, _D, _NF = 1, 2, 4, 8  # consonant, vowel, two letters, never first
# pwgen's units (`pw_phonemes.c`) and their kinds
_UNITS: dict[str, int] = {u: _V for u in "aeiou"}
_UNITS.update({u: _C for u in "bcdfghjklmnpqrstvwxyz" if u != "q"})
_UNITS.update({u: _V | _D for u in ("ae", "ah", "ai", "ee", "ei", "ie", "oh", "oo")})
_UNITS.update({u: _C | _D for u in ("ch", "ph", "qu", "sh", "th")})
_UNITS.update({u: _C | _D | _NF for u in ("gh", "ng")})


def pronounceable_draw(value: str) -> bool:
    """pwgen's default draw: 8 to 20 letters and digits, a digit and a capital among them,
    the letters units of pwgen's table in the order it draws them, not a numbered name."""
    if not 8 <= len(value) <= 20 or not value.isascii() or not value.isalnum():
        return False
    if not any(c.isdigit() for c in value) or not any(c.isupper() for c in value):
        return False
    humps = compiled(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", 0).findall(value)
    if sum(map(_word, humps)) >= 2 and compiled(r"[A-Za-z]+[0-9]+", 0).fullmatch(value):
        return False  # a name of two words, numbered: `SomeValue1` (1 draw in 1,000 at most)
    return _parses(value, 0, 0, False, _C | _V)


@lru_cache(maxsize=4096)
def _parses(value: str, at: int, last: int, last_first: bool, should: int) -> bool:
    """Whether `value[at:]` ends a draw whose last unit had the kinds `last` (0: none since
    the start or a digit) and was the first there (`last_first`), the next unit of a kind in
    `should`."""
    if at == len(value):
        return last != 0 or value[-1].isdigit()
    if value[at].isdigit():  # after a unit that was not the first since the start or a digit
        return last != 0 and not last_first and _parses(value, at + 1, 0, False, _C | _V)
    first = last == 0
    for size in (2, 1):
        unit = value[at : at + size]
        kinds = _UNITS.get(unit.lower(), 0)
        if len(unit) != size or not kinds & should or (first and kinds & _NF):
            continue
        if last & _V and kinds & _V and kinds & _D:
            continue
        if unit[1:] != unit[1:].lower() or (unit[0].isupper() and not (first or kinds & _C)):
            continue  # a capital starts a unit: the first one, or a consonant
        if kinds & _C:
            nxt = _V
        elif last & _V or kinds & _D:
            nxt = _C
        else:
            nxt = _C | _V
        if _parses(value, at + size, kinds, first, nxt):
            return True
    return False


def secure_draw(value: str) -> bool:
    """`pwgen -s`: 8 to 20 letters of both cases and digits at random (`u89GweY4`), not a
    name with a number: names and acronyms (`values.reads_as_names`), a word of four letters
    or more (`k8sNodeV1`, `iPhone14Pro`), a verb before the rest (`getV2Api`), a version
    between words (`gRPCv2Api`), a resolution (`Cam1080p`)."""
    from gitimprove.redaction.values import reads_as_names

    if not 8 <= len(value) <= 20 or not value.isascii() or not value.isalnum():
        return False
    if not all(any(f(c) for c in value) for f in (str.isdigit, str.isupper, str.islower)):
        return False
    if reads_as_names(value):
        return False
    humps = compiled(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", 0).findall(value)
    if any(_word(h) for h in humps) or (humps[0].islower() and _word(humps[0], 3)):
        return False
    return (
        compiled(r"(?<=[A-Za-z])[vV][0-9]+(?=[A-Z][a-z])|[A-Z][a-z]{2}[0-9]{3,4}p", 0).search(value)
        is None
    )


def _word(hump: str, least: int = 4) -> bool:
    """Letters that read as a word: `least` or more, one case (a capital first at most),
    a vowel, every pair of letters common in words."""
    low = hump.lower()
    if len(low) < least or not hump[1:].islower() or not any(c in "aeiouy" for c in low):
        return False
    return all(low[i : i + 2] in COMMON_PAIRS for i in range(len(low) - 1))


def pwgen_draw(value: str) -> bool:
    """A password pwgen could have drawn, by default or with `-s`."""
    return pronounceable_draw(value) or secure_draw(value)
