"""A Wi-Fi network's QR code text (`WIFI:T:WPA;S:<network>;P:<password>;;`) gives its
password away: it is masked. An open network's code passes."""

from __future__ import annotations

import random
import string

import pytest

from gitimprove.redaction import redact


def _password(rnd: random.Random) -> str:
    alnum = string.ascii_letters + string.digits
    return "".join(rnd.choice(alnum) for _ in range(9)) + rnd.choice("%!#") + "Q7x"


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
