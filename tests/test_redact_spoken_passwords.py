"""Passwords made to be spoken under a bare `key`, `auth` or `token`: pwgen's pronounceable
ones (`Ohsh4aiph`) and passphrases of words (`correct-horse-battery-staple`). Names and ids
under the same keys stay (`user_id`, `NEWLINE`, `oauth2`, `gRPCv2Api`, `utf8Mode`,
`node-modules-cache`)."""

from __future__ import annotations

import random

import pytest

from gitimprove.redaction import redact
from gitimprove.redaction.keynames import words

_RNG = random.Random(1419)
# pwgen's phonemes: vowels and consonants, one or two letters each
_VOWELS = ["a", "e", "i", "o", "u", "ae", "ah", "ai", "ee", "ei", "ie", "oh", "oo"]
_CONSONANTS = ["b", "c", "ch", "d", "f", "g", "gh", "h", "j", "k", "l", "m", "n", "ng"]
_CONSONANTS += ["p", "ph", "qu", "r", "s", "sh", "t", "th", "v", "w", "x", "y", "z"]
# words a passphrase generator draws (a diceware list's sort)
_WORDS = sorted(
    words(
        """
    correct horse battery staple orbit maple tundra quartz ember falcon harbor pixel lunar
    cobalt velvet crane meadow pepper violin walnut canyon lantern thistle juniper saddle
    marble puzzle ribbon anchor blossom cactus dragon glacier hammock island jigsaw kettle
    """
    )
)


def _pwgen(length: int = 8) -> str:
    """A pronounceable password as pwgen draws one: phonemes, one capital, one digit."""
    while True:
        out, vowel = "", _RNG.random() < 0.5
        while len(out) < length:
            out += _RNG.choice(_VOWELS if vowel else _CONSONANTS)
            vowel = not vowel
        out = out[:length]
        at = _RNG.randrange(2, length - 2)
        out = out[:at] + str(_RNG.randrange(10)) + out[at + 1 :]
        cap = _RNG.choice([i for i, c in enumerate(out) if c.isalpha()])
        out = out[:cap] + out[cap].upper() + out[cap + 1 :]
        if out[at - 1].isalpha() and out[at - 2].isalpha():
            return out


def _passphrase() -> str:
    return "-".join(_RNG.sample(_WORDS, _RNG.randint(4, 6)))


_PLACES = ["token: {p}", "auth={p}", "key: {p}", "KEY={p}", '"token": "{p}"', "  auth: '{p}'"]


@pytest.mark.parametrize("place", _PLACES)
def test_pronounceable_passwords_and_passphrases_are_masked(place: str) -> None:
    drawn = [_pwgen(_RNG.choice([8, 8, 8, 10, 12])) for _ in range(100)]
    missed = [p for p in drawn if p in redact(place.format(p=p))]
    # (a draw whose letters before the digit read as a stem a name numbers may pass)
    assert len(missed) <= 10, missed[:10]
    phrases = [_passphrase() for _ in range(50)]
    missed = [p for p in phrases if p in redact(place.format(p=p))]
    assert not missed, missed[:5]


@pytest.mark.parametrize(
    "value",
    [
        "user_id",
        "NEWLINE",
        "oauth2",
        "gRPCv2Api",
        "utf8Mode",
        "Win32Api",
        "IPv6Addr",
        "M1Max",
        "sha256Sum",
        "base64Url",
        "node-modules-cache-key",
        "github-actions-bot-token",
        "release-build-linux-amd",
        "the-end-of-line",
        "OAuth2Token",
        "self.frame.code.path",
        "default_user_agent_string",
        "Log4jConfig",
    ],
)
def test_names_and_ids_under_the_same_keys_stay(value: str) -> None:
    # (under `token`, letters and a digit are a token's already, whatever they name)
    for place in [p for p in _PLACES if "token" not in p]:
        text = place.format(p=value)
        assert redact(text) == text
