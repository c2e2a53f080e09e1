"""Shapes left over by the earlier passes: a random value in angle brackets under a
credential's name, and a product's name joined by `+` under a name that only may be one."""

from __future__ import annotations

import random
import string

import pytest

from gitimprove.redaction import redact

_ALNUM = string.ascii_letters + string.digits


# (seeded: the checks read characters, and about one random value in a hundred reads as
# names; the measure over many is in the docs)
_RNG = random.Random(14)


def _random(n: int, symbols: str = "") -> str:
    alphabet = _ALNUM + symbols
    while True:
        v = "".join(_RNG.choice(alphabet) for _ in range(n))
        kinds = (str.isupper, str.islower, str.isdigit)
        if all(any(map(f, v)) for f in kinds) and (not symbols or any(c in symbols for c in v)):
            return v


@pytest.mark.parametrize(
    "template",
    [
        "ssh_key_passphrase: <{}>",
        "db_password=<{}>",
        '  "api_token": <{}>,',
        "DEPLOY_KEY: <{}>",
    ],
)
def test_a_random_value_in_angle_brackets_under_a_credential_name_is_masked(template: str) -> None:
    _RNG.seed(template)
    for _ in range(20):
        for value in (_random(12, "!#%*"), _random(18), _random(14, "@^&")):
            out = redact(template.format(value))
            assert value not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize(
    "text",
    [
        "password: <your-password>",
        "password: <PASSWORD>",
        "psk: <Buffer|string>",
        "token: <YOUR_API_TOKEN_HERE>",
        "api_key: <apiKey2>",
        "key: <Enter>",
        "token=<token>",
        "secret: <secret-name>",
    ],
)
def test_a_placeholder_or_a_type_in_angle_brackets_passes(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    "value", ["Roku+Ultra4K", "Sony+Bravia8K", "Mazda+CX5", "Nokia+Lumia920", "Toyota+Prius2"]
)
def test_a_product_name_joined_by_plus_under_a_weak_name_passes(value: str) -> None:
    for key in ("product_key", "device_key", "sort_key", "db_key"):
        for form in ("{k}: {v}", "{k}={v}", '"{k}": "{v}"'):
            text = form.format(k=key, v=value)
            assert redact(text) == text, text


@pytest.mark.parametrize(
    "template",
    ["tokens: [{}, abc]", "passwords: [{}, hunter]", "api_keys: [{}]", "secrets = [{}, x]"],
)
def test_a_password_as_a_bare_item_of_a_flow_list_is_masked(template: str) -> None:
    _RNG.seed(template)
    for _ in range(20):
        # (a YAML scalar cannot start with `#`, `*`, `!` or `%`: an item starting so is a
        # comment, an alias, a tag or a directive)
        value = _RNG.choice(string.ascii_letters) + _random(11, "#!%*")
        out = redact(template.format(value))
        assert value not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize(
    "text",
    ["tokens: [read, write]", "keys: [listener.fileno(), r]", "key: [C#, F#m7]", "auth: [a#1, b]"],
)
def test_a_flow_list_of_names_passes(text: str) -> None:
    assert redact(text) == text
