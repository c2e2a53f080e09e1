"""Passwords drawn as pwgen draws them (pwgen 2.08, `pw_phonemes.c` and `pw_rand.c`), for
tests: its default pronounceable passwords (`Ohsh4aiph`: alternating consonant and vowel
units, at least one digit and one capital) and its `-s` secure ones (8 characters of
letters and digits, at least one digit and one capital). Seeded, so a failure names the
same password every run."""

from __future__ import annotations

import random
import string

CONSONANT, VOWEL, DIPHTHONG, NOT_FIRST = 1, 2, 4, 8
# pwgen's table of units, with its flags
ELEMENTS: tuple[tuple[str, int], ...] = (
    ("a", VOWEL),
    ("ae", VOWEL | DIPHTHONG),
    ("ah", VOWEL | DIPHTHONG),
    ("ai", VOWEL | DIPHTHONG),
    ("b", CONSONANT),
    ("c", CONSONANT),
    ("ch", CONSONANT | DIPHTHONG),
    ("d", CONSONANT),
    ("e", VOWEL),
    ("ee", VOWEL | DIPHTHONG),
    ("ei", VOWEL | DIPHTHONG),
    ("f", CONSONANT),
    ("g", CONSONANT),
    ("gh", CONSONANT | DIPHTHONG | NOT_FIRST),
    ("h", CONSONANT),
    ("i", VOWEL),
    ("ie", VOWEL | DIPHTHONG),
    ("j", CONSONANT),
    ("k", CONSONANT),
    ("l", CONSONANT),
    ("m", CONSONANT),
    ("n", CONSONANT),
    ("ng", CONSONANT | DIPHTHONG | NOT_FIRST),
    ("o", VOWEL),
    ("oh", VOWEL | DIPHTHONG),
    ("oo", VOWEL | DIPHTHONG),
    ("p", CONSONANT),
    ("ph", CONSONANT | DIPHTHONG),
    ("qu", CONSONANT | DIPHTHONG),
    ("r", CONSONANT),
    ("s", CONSONANT),
    ("sh", CONSONANT | DIPHTHONG),
    ("t", CONSONANT),
    ("th", CONSONANT | DIPHTHONG),
    ("u", VOWEL),
    ("v", CONSONANT),
    ("w", CONSONANT),
    ("x", CONSONANT),
    ("y", CONSONANT),
    ("z", CONSONANT),
)


def phonemes(rng: random.Random, size: int = 8) -> str:
    """pwgen's default draw (`pw_phonemes` with digits and capitals)."""
    while True:
        out = ""
        need_upper = need_digit = True
        prev = 0
        should_be = VOWEL if rng.randrange(2) else CONSONANT
        first = True
        while len(out) < size:
            unit, flags = ELEMENTS[rng.randrange(len(ELEMENTS))]
            if not flags & should_be or (first and flags & NOT_FIRST):
                continue
            if prev & VOWEL and flags & VOWEL and flags & DIPHTHONG:
                continue
            if len(unit) > size - len(out):
                continue
            if (first or flags & CONSONANT) and rng.randrange(10) < 2:
                unit = unit[0].upper() + unit[1:]
                need_upper = False
            out += unit
            if len(out) >= size:
                break
            if not first and rng.randrange(10) < 3:
                out += str(rng.randrange(10))
                need_digit = False
                first, prev = True, 0
                should_be = VOWEL if rng.randrange(2) else CONSONANT
                continue
            if should_be == CONSONANT:
                should_be = VOWEL
            elif prev & VOWEL or flags & DIPHTHONG or rng.randrange(10) > 3:
                should_be = CONSONANT
            else:
                should_be = VOWEL
            prev, first = flags, False
        if not need_upper and not need_digit:
            return out[:size]


def secure(rng: random.Random, size: int = 8) -> str:
    """`pwgen -s`: letters and digits at random, at least one digit and one capital."""
    alphabet = string.digits + string.ascii_uppercase + string.ascii_lowercase
    while True:
        out = "".join(rng.choice(alphabet) for _ in range(size))
        if any(c.isdigit() for c in out) and any(c.isupper() for c in out):
            return out
