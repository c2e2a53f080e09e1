"""A token's shape inside a longer name or blob: judged by what stands around it.

Mailgun's `key-<32 hex>` glued to a word (`apikey-…`, `xkey-…`) is a key when a credential
is spoken of near it, and a digest when it is a part of a longer name (`cache-key-<md5>`,
`sort-key-…`); a provider's prefix inside a base64 blob (`…+hf_<60>…`) or a longer id of
the same letters (awscli's `ACCA<17>` service credential ids) is no token. Values are built
at run time.
"""

from __future__ import annotations

import base64
import random
import string

import pytest

from gitimprove import redaction

_RND = random.Random("blob-context")


def _hex() -> str:
    return "".join(_RND.choice("0123456789abcdef") for _ in range(32))


def _alnum(n: int) -> str:
    return "".join(_RND.choice(string.ascii_letters + string.digits) for _ in range(n))


def _mailgun(glue: str) -> str:
    return glue + "key-" + _hex()


@pytest.mark.parametrize(
    "shape",
    [
        "{k}",
        "MAILGUN_API_KEY={k}",
        # (curl's `-u api:<key>`, split so this file reads as no credential)
        "curl -s --user 'api:" + "x{k}' https://api.mailgun.net/v3/mg.example.com/messages",
        "POST https://api.mailgun.net/v3/domains: using {k}",
        "mailgun: sending with {k}",
        "the token is {k}",
        "secret={k}",
    ],
)
@pytest.mark.parametrize("glue", ["", "api", "secret", "x", "mg_x", "private"])
def test_a_mailgun_key_glued_to_a_word_is_masked_in_a_credentials_context(
    shape: str, glue: str
) -> None:
    if glue in ("x", "mg_x", "private") and shape == "{k}":
        pytest.skip("no context: judged in the next test")
    key = _mailgun(glue)
    body = key[-36:]  # `key-<32 hex>`
    out = redaction.redact(shape.format(k=key))
    assert body[4:] not in out, out


@pytest.mark.parametrize(
    "text",
    [
        "cache-key-{h}",
        "Cache restored from key: Linux-pip-cache-key-{h}",
        "sort-key-{h}",
        "restore-cache-key-{h} not found",
        "partition-key-{h}",
        "xkey-{h}",
        "monkey-{h}",
    ],
)
def test_a_key_word_inside_a_longer_name_is_no_mailgun_key(text: str) -> None:
    line = text.format(h=_hex())
    assert redaction.redact(line) == line


def test_a_provider_prefix_inside_a_base64_blob_is_no_token() -> None:
    for _ in range(40):
        blob = base64.b64encode(_RND.randbytes(120)).decode()
        cut = _RND.randrange(10, len(blob) - 10)
        for text in (
            blob[:cut] + "+hf_" + _alnum(60) + blob[cut:],
            "+hf_" + _alnum(60),
            '"data": "' + blob[:cut] + "/hf_" + _alnum(50) + '=="',
        ):
            assert redaction.redact(text) == text


def test_a_delimited_token_beside_a_base64_sign_is_masked() -> None:
    for _ in range(20):
        token = "hf_" + _alnum(34)
        for text in (f"x=+{token}", f"see /{token}", token, f"HF_TOKEN={token}"):
            assert token[3:] not in redaction.redact(text), text


def test_a_longer_id_of_an_aws_key_s_letters_is_no_key() -> None:
    letters = string.ascii_uppercase + string.digits
    for _ in range(40):
        long_id = "ACCA" + "".join(_RND.choice(letters) for _ in range(17))
        for text in (
            f'"ServiceSpecificCredentialId": "{long_id}",',
            f"aws iam reset-service-specific-credential --service-specific-credential-id {long_id}",
        ):
            assert redaction.redact(text) == text
        key = "AKIA" + "".join(_RND.choice(letters) for _ in range(16))
        for text in (key, f"KEY_{key}secret", f'"AccessKeyId": "{key}"'):
            assert key not in redaction.redact(text), text
