"""A credential a configuration file keeps under a bare name (`key`, `pass`, `secret`), told by
the section around it (an rclone remote's `type`, a section named for credentials, a login's
other half beside it), and Jasypt's encrypted values. Upstream examples are kept in
tests/fixtures/configs; every secret here is generated, never real."""

from __future__ import annotations

import random
import string
import uuid

import pytest

from gitimprove.redaction import redact
from tests.conftest import ROOT
from tests.masked import assert_masked

FIXTURES = ROOT / "tests" / "fixtures" / "configs"
RNG = random.Random(1403)


def _hex(n: int) -> str:
    return "".join(RNG.choice("0123456789abcdef") for _ in range(n))


def _obscured(n: int = 40) -> str:
    """rclone's obscured passwords: base64 (URL alphabet) of random bytes."""
    return "".join(RNG.choice(string.ascii_letters + string.digits + "-_") for _ in range(n))


def _b64(n: int) -> str:
    return "".join(RNG.choice(string.ascii_letters + string.digits + "+/") for _ in range(n))


def _assert_masked(text: str, secret: str) -> None:
    assert_masked(text, secret, width=len(secret))


def test_rclones_own_example_with_a_real_key_in_place_of_its_placeholder() -> None:
    text = (FIXTURES / "rclone-b2.txt").read_text()
    assert redact(text) == text  # the hex digits in order: a placeholder
    for key in (_hex(40), _hex(32)):
        real = text.replace("0123456789abcdef0123456789abcdef0123456789", key)
        _assert_masked(real, key)
        assert "account = 123456789abc" in redact(real)


SECTIONS = [
    # an rclone remote of a kind that logs in
    ("[b2]\ntype = b2\naccount = {a}\nkey = {s}\n", lambda: _hex(32)),
    ("[store]\ntype = swift\nuser = ops\nkey = {s}\nauth = https://auth.example.com/v1\n", None),
    ("[box]\r\ntype = sftp\r\nhost = files.example.com\r\npass = {s}\r\n", _obscured),
    ("[vault]\ntype = crypt\nremote = b2:bucket/x\npassword = {s}\npassword2 = {o}\n", _obscured),
    ("[azure]\ntype = azureblob\naccount = acct01\nkey = {s}\n", lambda: _b64(86) + "=="),
    ("[mega]\ntype = mega\nuser = me@example.com\npass = {s}\n", _obscured),
    # a section named for credentials, or a login's other half beside the secret
    ("[credentials]\nkey = {s}\n", None),
    ("[api]\nsecret = {s}\n", lambda: _hex(32)),
    ("[remote]\naccount = {a}\nkey = {s}\nendpoint =\n", lambda: _hex(40)),
    ("[service]\nusername = svc\ntoken = {s}\n", None),
    ("[cloud]\n  type = s3\n  key = '{s}'\n", lambda: _hex(32)),
]


@pytest.mark.parametrize(("template", "make"), SECTIONS, ids=range(len(SECTIONS)))
def test_a_bare_name_in_a_credentials_section_is_masked(template: str, make: object) -> None:
    secret = make() if callable(make) else str(uuid.UUID(int=RNG.getrandbits(128)))
    text = template.format(s=secret, a=_hex(12), o=_obscured())
    _assert_masked(text, secret)


ORDINARY = [
    # a digest or an id under `key` where nothing says it is a login's
    "[cache]\nkey = {h}\nttl = 3600\n",
    "[other]\ntype = local\nkey = {h}\n",
    "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n",
    '[remote "origin"]\n\turl = https://github.com/o/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n',
    "[tool.ruff]\nline-length = 100\n",
    "[section]\nkey = value\n",
    # placeholders and references where a credential goes
    "[b2]\ntype = b2\naccount = **ACCOUNT**\nkey = **KEY**\n",
    "[b2]\ntype = b2\naccount = ${{B2_ACCOUNT}}\nkey = ${{B2_KEY}}\n",
    "[enc]\ntype = crypt\nremote = s3:bucket\npassword = <obscured>\n",
    "[sftp]\ntype = sftp\nkey_file = ~/.ssh/id_ed25519\nkey_file_pass =\n",
    "[s3]\ntype = s3\nenv_auth = true\nregion = eu-west-1\n",
]


@pytest.mark.parametrize("text", ORDINARY, ids=range(len(ORDINARY)))
def test_ordinary_sections_pass(text: str) -> None:
    text = text.format(h=_hex(32))
    assert redact(text) == text


def test_jasypts_encrypted_values_are_masked_and_their_markers_kept() -> None:
    text = (FIXTURES / "jasypt-encrypted.properties").read_text()
    out = redact(text)
    assert "ENC([REDACTED:jasypt-encrypted:" in out and "nrmZtkF7" not in out, out
    prefix = (FIXTURES / "jasypt-prefix.yml").read_text()
    assert redact(prefix) == prefix
    # (the ciphertext is written in when the test runs: no value under a password here)
    for template in (
        "spring.datasource.{pw}={enc}",
        "db:\n  {pw}: {enc}\n",
        'mail.{pw} = "{enc}"',
        '<property name="{pw}" value="{enc}"/>',
        "java -Djasypt.encryptor.{pw}=${{JASYPT_KEY}} -Dapi.key={enc} -jar app.jar",
    ):
        cipher = _b64(44)
        _assert_masked(template.format(pw="password", enc=f"ENC({cipher})"), cipher)
    plain = _obscured(14)
    _assert_masked("spring.datasource.{}=DEC({})".format("password", plain), plain)


@pytest.mark.parametrize(
    "text",
    [
        "#define ENC(x) ((x) ^ 0x5a)",
        "value = ENC(x)",
        "ENC(value) wraps a value to encrypt",
        "y = DEC(n)",
        "Wrap encrypted values with ENC() in application.properties",
    ],
)
def test_code_and_prose_about_encrypted_values_pass(text: str) -> None:
    assert redact(text) == text
