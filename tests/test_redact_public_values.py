"""Values that look random but are not secrets pass: XML-DSig's `<SignatureValue>` and
`<DigestValue>` (public, anyone verifies them with the signer's certificate), an id named by
what it identifies under a weak name (`key: build-<random>`), and a table of characters
written as escapes (pygments' `Sk`, a string of Unicode escapes). A password written as escapes
under a password's name, and a signature's `sig=` in a SAS URL, are still masked."""

from __future__ import annotations

import base64
import random
import string

import pytest

from gitimprove.redaction import redact


def _b64(rnd: random.Random, n: int) -> str:
    return base64.b64encode(rnd.randbytes(n)).decode()


@pytest.mark.parametrize(
    "template",
    [
        "<SignatureValue>{s}</SignatureValue>",
        "<ds:SignatureValue>{s}</ds:SignatureValue>",
        "<ds:SignatureValue>\n{s}\n</ds:SignatureValue>",
        "<ds:DigestValue>{d}</ds:DigestValue>",
        '"SignatureValue": "{s}"',
        "<saml:Assertion><ds:Signature><ds:SignedInfo><ds:DigestValue>{d}</ds:DigestValue>"
        "</ds:SignedInfo><ds:SignatureValue>{s}</ds:SignatureValue></ds:Signature>",
    ],
)
def test_an_xml_signature_is_public_and_passes(template: str) -> None:
    for seed in range(25):
        rnd = random.Random(seed)
        text = template.format(s=_b64(rnd, rnd.choice([128, 256])), d=_b64(rnd, 32))
        assert redact(text) == text


@pytest.mark.parametrize("word", ["build", "run", "job", "trace", "deploy", "req"])
@pytest.mark.parametrize("template", ["key: {v}", "cache_key: {v}", "auth = {v}", "{v}"])
def test_an_id_named_by_what_it_identifies_passes_under_a_weak_name(
    word: str, template: str
) -> None:
    for seed in range(10):
        rnd = random.Random(seed)
        alphabet = string.ascii_lowercase + string.digits
        value = f"{word}-" + "".join(rnd.choice(alphabet) for _ in range(36))
        text = template.format(v=value)
        assert redact(text) == text


def test_a_table_of_characters_written_as_escapes_passes() -> None:
    rnd = random.Random(3)
    for name in ("Sk", "Pk", "sk", "Lo", "key"):
        points = sorted(rnd.sample(range(0xA0, 0xFFFF), 12))
        table = "".join(f"\\u{a:04x}-\\u{a + 3:04x}" for a in points)
        text = f"{name} = '\\\\^`\\xa8\\xaf{table}'"
        assert redact(text) == text


def test_secrets_beside_them_are_still_masked() -> None:
    rnd = random.Random(9)
    sig = base64.urlsafe_b64encode(rnd.randbytes(32)).decode().rstrip("=")
    pw = "".join(rnd.choice(string.ascii_letters + string.digits) for _ in range(10)) + "#7"
    escaped = "".join(f"\\x{ord(c):02x}" for c in pw)
    for text, secret in [
        (f"https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sr=b&sig={sig}", sig),
        (f"DB_PASSWORD = '{escaped}'", escaped),
        (f"stripe_sk = 'sk_live_{pw}{pw}'", pw),
    ]:
        out = redact(text)
        assert secret[:8] not in out, out
