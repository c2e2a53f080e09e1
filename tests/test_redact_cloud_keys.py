"""Cloud access key ids behind a provider's fixed prefix are masked wherever they stand,
with no variable name beside them: Volcengine's and Kingsoft Cloud's (`AKLT`, `AKTP` for an
STS key, then a base64 body), JD Cloud's (`JDC_`), Yandex Cloud's (`YCAJ`) and Alibaba
Cloud's STS ids (`STS.N`). Words with the same letters pass."""

from __future__ import annotations

import base64
import random
import string

import pytest

from gitimprove.redaction import redact

_ALNUM = string.ascii_letters + string.digits


def _volcengine(rnd: random.Random) -> str:
    # the documented shape: `AKLT` and the base64 of a 32-hex id, unpadded (43 characters)
    body = base64.b64encode(f"{rnd.getrandbits(128):032x}".encode()).decode().rstrip("=")
    return rnd.choice(["AKLT", "AKTP"]) + body


def _kingsoft(rnd: random.Random) -> str:
    while True:
        body = "".join(rnd.choice(_ALNUM) for _ in range(20))
        if any(c.isdigit() for c in body):
            return "AKLT" + body


def _jdcloud(rnd: random.Random) -> str:
    while True:
        body = "".join(rnd.choice(string.digits + "ABCDEF") for _ in range(28))
        if any(c.isdigit() for c in body):
            return "JDC_" + body


SHAPES = [
    "{k}",
    "ak: {k}",
    "error: InvalidAccessKeyId {k} (403)",
    "volc configure --ak {k}",
    "client = Client(\"{k}\", region='cn-beijing')",
    '{{"id": "{k}"}}',
]


def _yandex(rnd: random.Random) -> str:
    while True:
        body = "".join(rnd.choice(_ALNUM + "_-") for _ in range(21))
        if any(c.isdigit() for c in body[:20]) and body[-1] not in "_-":
            return "YCAJ" + body


def _yandex_secret(rnd: random.Random) -> str:  # `YC` and 38: a static key's secret
    while True:
        body = "".join(rnd.choice(_ALNUM + "_-") for _ in range(38))
        if all(any(f(c) for c in body) for f in (str.isdigit, str.isupper, str.islower)):
            return "YC" + body


def _alibaba_sts(rnd: random.Random) -> str:
    while True:
        body = "".join(rnd.choice(_ALNUM) for _ in range(rnd.randint(24, 32)))
        if any(c.isdigit() for c in body) and any(c.isupper() for c in body):
            return "STS.N" + body


@pytest.mark.parametrize(
    "make", [_volcengine, _kingsoft, _jdcloud, _yandex, _yandex_secret, _alibaba_sts]
)
@pytest.mark.parametrize("shape", SHAPES)
def test_a_clouds_access_key_id_is_masked_without_a_name_beside_it(make, shape: str) -> None:
    for seed in range(8):
        key = make(random.Random(seed))
        out = redact(shape.format(k=key))
        assert key[4:14] not in out and key[-8:] not in out, out
        assert "[REDACTED:" in out


@pytest.mark.parametrize(
    "text",
    [
        "AKLTOOLKIT_SETTINGS_FOR_THE_BUILDER",
        "see docs/AKLTGuide.md for the setup",
        "JDC_CONFIG_PATH_IS_NOT_SET_IN_THE_ENV",
        "AKLT",
        "YCAJ_DEFAULT_PROFILE_NAME",
        "STS.Next is called after the session ends",
        "YCbCrColorSpaceConversionEnabledForVideo1",
        "kYCbCr420BiPlanarVideoRangeFullRange8Bit",
        "YCbCr420BiPlanarVideoRangeFullRange8Bit",
        "YCbCr_420_888_TO_RGB_ConversionHelper_v2",
    ],
)
def test_words_with_the_prefix_pass(text: str) -> None:
    assert redact(text) == text
