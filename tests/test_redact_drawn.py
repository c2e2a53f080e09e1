"""A credential in a table drawn with box-drawing characters (psql's unicode borders, rich,
cli-table) is masked as in one drawn with `|`; a Wi-Fi network's QR code text
(`WIFI:T:WPA;S:<network>;P:<password>;;`) gives its password away. Other cells and an
open network's code pass."""

from __future__ import annotations

import random
import string

import pytest

from gitimprove.redaction import redact


def _password(rnd: random.Random) -> str:
    alnum = string.ascii_letters + string.digits
    return "".join(rnd.choice(alnum) for _ in range(9)) + rnd.choice("%!#") + "Q7x"


@pytest.mark.parametrize("bar", ["\u2502", "\u2503", "\u2551", "\u250a", "\u2506"])
def test_a_password_in_a_table_drawn_with_box_characters_is_masked(bar: str) -> None:
    for seed in range(10):
        pw = _password(random.Random(seed))
        for row in (f"{bar} password {bar} {pw} {bar}", f"{bar} db_password {bar} {pw} {bar}"):
            assert pw[:8] not in redact(row) and pw[-6:] not in redact(row), row


def test_a_drawn_tables_ordinary_cells_pass() -> None:
    for text in ("\u2502 name \u2502 theme \u2502", "\u2503 user \u2503 bob \u2503 admin \u2503"):
        assert redact(text) == text


@pytest.mark.parametrize(
    "template",
    [
        "WIFI:T:WPA;S:HomeNet;P:{p};;",
        "WIFI:S:Office 2G;T:WPA2;P:{p};H:false;;",
        "qrencode 'WIFI:T:WPA;S:Cafe;P:{p};;' -o wifi.png",
    ],
)
def test_a_wifi_qr_codes_password_is_masked(template: str) -> None:
    for seed in range(10):
        pw = _password(random.Random(seed))
        out = redact(template.format(p=pw))
        assert pw[:8] not in out and pw[-6:] not in out, out


def test_an_open_networks_qr_code_passes() -> None:
    text = "WIFI:T:nopass;S:Guest;;"
    assert redact(text) == text
