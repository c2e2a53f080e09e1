"""A credential in a table drawn with box-drawing bars (psql's unicode borders, rich,
cli-table, `password│<value>` with no blanks) is masked, read row by row without folding the
bars (a Claude Code panel's border is the same `│`); other cells pass. A Wi-Fi network's QR
code text (`WIFI:T:WPA;S:<network>;P:<password>;;`) gives its password away: it is masked.
An open network's code passes."""

from __future__ import annotations

import random
import string

import pytest

from gitimprove.redaction import redact


def _password(rnd: random.Random) -> str:
    alnum = string.ascii_letters + string.digits
    return "".join(rnd.choice(alnum) for _ in range(9)) + rnd.choice("%!#") + "Q7x"


_BARS = ["\u2502", "\u2503", "\u2551", "\u250a", "\u2506", "\u254e"]


@pytest.mark.parametrize("bar", _BARS)
@pytest.mark.parametrize(
    "row",
    [
        "{b} password {b} {p} {b}",
        "{b}password{b}{p}{b}",
        "password{b}{p}",
        "{b} db_password {b} {p} {b} set {b}",
        "{b} API Key {b} {p} {b}",
        "  {b} id {b} 7 {b} secret {b} {p} {b}",
    ],
)
def test_a_credential_in_a_table_drawn_with_box_bars_is_masked(bar: str, row: str) -> None:
    for seed in range(10):
        pw = _password(random.Random(seed))
        out = redact(row.format(b=bar, p=pw))
        assert pw[:8] not in out and pw[-6:] not in out, out


@pytest.mark.parametrize("bar", _BARS)
def test_a_drawn_tables_ordinary_cells_pass(bar: str) -> None:
    for row in (
        "{b} name {b} theme {b}",
        "{b}user{b}bob{b}admin{b}",
        "{b} password {b} ******** {b}",
        "{b} token_count {b} 12345 {b}",
        "{b} password_hash {b} bcrypt {b}",
        "{b} secret_name {b} prod-db {b}",
        "{b} the password is set in the vault, see docs/setup.md {b}",
    ):
        text = row.format(b=bar)
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


_HEADS = [
    ("\u250c\u2500\u2500\u252c\u2500\u2500\u2510", "\u251c\u2500\u2500\u253c\u2500\u2500\u2524"),
    ("\u250f\u2501\u2501\u2533\u2501\u2501\u2513", "\u2521\u2501\u2501\u2547\u2501\u2501\u2529"),
    ("\u2554\u2550\u2550\u2566\u2550\u2550\u2557", "\u2560\u2550\u2550\u256c\u2550\u2550\u2563"),
    ("+------+------+", "+======+======+"),
]


@pytest.mark.parametrize("head_bar", ["\u2502", "\u2503", "\u2551"])
@pytest.mark.parametrize(("top", "rule"), _HEADS)
@pytest.mark.parametrize("column", ["password", "passwd", "api_token", "Secret Key", "pwd"])
def test_a_drawn_tables_header_names_the_column_its_rows_hold(
    head_bar: str, top: str, rule: str, column: str
) -> None:
    """The header row names the credential (`│ user │ password │`) and the rows below hold
    the values, drawn in the same or lighter bars, with a password's symbols (`&`, `#`)."""
    for seed in range(6):
        rnd = random.Random(seed)
        pws = [_password(rnd) + rnd.choice("&#@") + "k2" for _ in range(3)]
        hb, b = head_bar, "\u2502"
        lines = [top, f"{hb} user  {hb} {column} {hb} role {hb}", rule]
        lines += [f"{b} u{n}   {b} {pw} {b} admin {b}" for n, pw in enumerate(pws)]
        out = redact("\n".join(lines) + "\n")
        for pw in pws:
            assert pw[:6] not in out and pw[-5:] not in out, out
        assert "admin" in out and "u2" in out


def test_a_drawn_tables_header_without_a_credential_column_masks_nothing() -> None:
    b = "\u2502"
    text = "\n".join(
        [
            f"{b} name  {b} description           {b}",
            f"{b} token {b} the name of the token {b}",
            f"{b} build {b} v2.3.1+linux          {b}",
        ]
    )
    assert redact(text) == text
