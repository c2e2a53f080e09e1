"""A token glued to the text around it, with no separator (URL-encoding, an escape left in a
string, a colour code, a name or a concatenation joined to it, a hex blob around it), and
the ordinary text of the same shapes that must pass: a digest, a base64 blob, a quality
string that happens to hold a provider's prefix."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import secrets
import string
import uuid

import pytest

from gitimprove.redaction import clip, redact, redact_blob

_ALNUM = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_UPPER = string.ascii_uppercase + string.digits


def _s(n: int, alphabet: str = _ALNUM) -> str:
    """`n` random characters of `alphabet`, each of its classes (digit, upper, lower) present."""
    kinds = [f for f in (str.isdigit, str.isupper, str.islower) if any(map(f, alphabet))]
    while True:
        t = "".join(secrets.choice(alphabet) for _ in range(n))
        if all(any(map(f, t)) for f in kinds):
            return t


def _fakes() -> list[str]:
    """One token per provider prefix, built here (prefixes split so no line of this file
    reads as a credential)."""
    return [
        "gh" + "p_" + _s(36),
        "gh" + "s_" + _s(36),
        "github" + "_pat_" + _s(22) + "_" + _s(59),
        "gl" + "pat-" + _s(20),
        "gl" + "rt-" + _s(20),
        "xo" + "xb-" + _s(11, "0123456789") + "-" + _s(12, "0123456789") + "-" + _s(24),
        "xa" + "pp-1-A" + _s(10, _UPPER) + "-" + _s(13, "0123456789") + "-" + _s(64, _HEX),
        "sk" + "_live_" + _s(24),
        "A" + "KIA" + _s(16, _UPPER),
        "A" + "SIA" + _s(16, _UPPER),
        "AI" + "za" + _s(35),
        "GOC" + "SPX-" + _s(28),
        "sk-" + "proj-" + _s(48),
        "sk-" + "ant-api03-" + _s(93) + "AA",
        _s(20) + "T3Blbk" + "FJ" + _s(20),
        "np" + "m_" + _s(36),
        "pypi-" + "AgEIcHlwaS5vcmc" + _s(60),
        "hv" + "s." + _s(90),
        "SG" + "." + _s(22) + "." + _s(43),
        "sh" + "pat_" + _s(32, _HEX),
        "NR" + "AK-" + _s(27, _UPPER),
        "do" + "p_v1_" + _s(64, _HEX),
        "da" + "pi" + _s(32, _HEX),
        _s(32, _HEX) + "-us" + "12",
        _s(10, "0123456789") + ":A" + "A" + _s(33),
        "ATA" + "TT3xFfGF0" + _s(180),
        "EA" + "AA" + _s(60),
        "gl" + "sa_" + _s(32) + "_" + _s(8, _HEX),
        "pu" + "l-" + _s(40, _HEX),
        "PM" + "AK-" + _s(24, _HEX) + "-" + _s(34, _HEX),
        "fo" + "1_" + _s(43),
        "dp" + ".pt." + _s(43),
        "dck" + "r_pat_" + _s(27),
        "EZ" + "AK" + _s(54),
        "psc" + "ale_tkn_" + _s(43),
        "ruby" + "gems_" + _s(48, _HEX),
        "ai" + "o_" + _s(28),
        "r8" + "_" + _s(37),
        "gs" + "k_" + _s(52),
        "hf" + "_" + _s(34),
        "li" + "n_api_" + _s(40),
        "AGE-" + "SECRET-KEY-1" + _s(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"),
        _s(14) + ".atlas" + "v1." + _s(67),
    ]


_GLUES = [
    "x{}x",
    "x{}",
    "{}x",
    "9{}9",
    "_{}_",
    "KEY_{}",
    "token%3D{}%26",
    "\\n{}\\n",
    "\\t{}",
    "\\r\\n{}",
    "\x1b[31m{}\x1b[0m",
    "Bearer{}",
    "deadbeef0123{}cafe42",
    "printf('%s', \"\\n{}\")",
]


def _assert_gone(out: str, secret: str) -> None:
    for i in range(0, len(secret) - 11, 4):
        assert secret[i : i + 12] not in out, (secret, out)


@pytest.mark.parametrize("glue", _GLUES)
def test_a_token_glued_to_its_neighbours_is_masked_on_every_path(glue: str) -> None:
    for fake in _fakes():
        text = "Exit code 1\n" + glue.format(fake)
        for out in (
            redact(text),
            clip(text, 500),
            json.loads(redact_blob(json.dumps({"error": text})))["error"],
        ):
            assert "[REDACTED:" in out, (text, out)
            _assert_gone(out, fake)
        assert redact(redact(text)) == redact(text)


@pytest.mark.parametrize(
    "template",
    [
        "KEY_postgres://admin:{}@db.example.com:5432/app",
        "9redis://:{}@cache:6379/0",
        "x_https://bob:{}@git.example.org/repo.git",
        '{{"password": "\\n{}\\n"}}',
        "Authorization: Bearer \\t{}",
        "machine api.example.com login bob password \\t{}",
        "export APP_SECRET='\\n{}'",
        "mytool --password \\t{} --host x",
    ],
)
def test_a_keyed_secret_glued_to_an_escape_or_a_name_is_masked(template: str) -> None:
    for _ in range(5):
        secret = _s(18)
        text = template.format(secret)
        out = redact(text)
        _assert_gone(out, secret)
        assert "[REDACTED:" in out, out


def test_digests_ids_and_blobs_holding_a_prefix_pass() -> None:
    ordinary = []
    for _ in range(200):
        raw = secrets.token_bytes(64)
        ordinary.append(hashlib.sha1(raw).hexdigest())
        ordinary.append(str(uuid.UUID(bytes=raw[:16])))
        ordinary.append('"integrity": "sha512-' + base64.b64encode(raw).decode() + '"')
    # a prefix inside a base64 blob (an image, a signature) or a digest (a wheel's RECORD)
    blob = base64.b64encode(secrets.token_bytes(300)).decode()
    for prefix in ("EZ" + "AK", "hf" + "_", "AI" + "za", "dap" + "i", "np" + "m_"):
        body = _s(60)
        ordinary.append(f"data:image/png;base64,{blob[:200]}Q{prefix}{body}/{blob[200:]}")
        b64url = _s(5) + prefix + _s(34)
        ordinary.append(f"pkg/mod.py,sha256={b64url},1140")
    # a sequencer's quality string: one class of letters
    ordinary.append(
        "bb_eeeeegfgffhiiiiiiiiiiihiiiiicgaf" + "hf_" + "eefghihhiiiifgghhiiiiihhiigg" * 2
    )
    # a name in code that starts like a token
    ordinary.append("x" + "hf_" + "requiredCharacteristicTypesForDisplayMetadata")
    for text in ordinary:
        assert redact(text) == text, text


def test_a_tool_error_whose_long_word_straddles_the_cut_keeps_its_text_and_marks_the_cut() -> None:
    from gitimprove.memory import deferred

    for fake in _fakes()[:12]:
        for pad in (440, 455, 465):  # the token starts before the cut and ends past it
            word = "y" * pad + fake + "z" * 300  # one word: the token glued inside it
            error = "Exit code 1\nfatal: bad object " + word
            out = deferred.render(
                deferred.joined(["Bash failed: ", deferred.cut(error, 500)], 2000)
            )
            _assert_gone(out, fake)
            assert out.startswith("Bash failed: Exit code 1\nfatal: bad object yyyy"), out
            # the text up to the token is kept, and the cut is marked
            assert out.endswith("]") or out.endswith("\u2026"), out
            assert len(out) <= len("Bash failed: ") + 500


@pytest.mark.parametrize("glue", ["\\n{}\\n", "\\t{}", "\\r\\n{}", 'printf "\\t{}"'])
def test_an_escape_before_a_token_is_not_part_of_it(glue: str) -> None:
    """One secret, one marker: the letter of `\\t` glued before a token is the escape's."""
    import re

    for fake in _fakes():
        alone = set(re.findall(r":([0-9a-f]{4})\]", redact(fake)))
        glued = set(re.findall(r":([0-9a-f]{4})\]", redact(glue.format(fake))))
        assert alone and glued == alone, (fake, redact(glue.format(fake)))


def _cut_token(rng: random.Random, prefix: str, body: int) -> str:
    alphabet = string.ascii_letters + string.digits
    while True:
        t = "".join(rng.choice(alphabet) for _ in range(body))
        if all(any(f(c) for c in t) for f in (str.isdigit, str.isupper, str.islower)):
            return prefix + t


# each prefix split in two literals, so these lines read as no token
_CUT = [("ghp_", 36), ("SG.", 66), ("sk-ant-api03-", 95), ("npm_", 36), ("glc_", 60)]


@pytest.mark.parametrize(("prefix", "body"), _CUT)
def test_a_token_the_text_ends_inside_is_masked(prefix: str, body: int) -> None:
    """A producer cut the output inside a token (a tool's output limit, a truncated log):
    what is left of it, 12 characters of its body or more, is masked."""
    rng = random.Random(prefix)
    for _ in range(5):
        token = _cut_token(rng, prefix, body)
        for keep in (len(prefix) + 12, len(token) * 2 // 3):
            for end in ("", "\u2026", " [truncated]", "...\n"):
                text = "Error: request failed, token " + token[:keep] + end
                out = redact(text)
                assert token[len(prefix) : keep] not in out, text


@pytest.mark.parametrize(
    "text",
    [
        "see hf_hub_download_function_names",
        "from module import npm_package_version_string",
        "the call ended at ghp_",
        "AKIA" + "ABCDEFGHIJKL",
    ],
)
def test_a_name_a_text_ends_with_stays(text: str) -> None:
    assert redact(text) == text
