"""Secrets written in a language's own string syntax, in configuration formats, across two
short lines, and the ordinary text of the same shapes (digests in prose, a key's public half,
one hex key written two ways) that must pass or keep one marker."""

from __future__ import annotations

import re
import secrets
import string
import subprocess
import sys

import pytest

from gitimprove.redaction import redact
from tests.linear import within_linear_time
from tests.masked import assert_masked

_ALNUM = string.ascii_letters + string.digits
# 36 lower-case letters in no order a word has
_LOWER_RUN = "".join(chr(ord("a") + i * 7 % 26) for i in range(36))


def _token(n: int = 28) -> str:
    """A random token of letters and digits (upper and lower case and digits present)."""
    while True:
        t = "".join(secrets.choice(_ALNUM) for _ in range(n))
        if all(any(f(c) for c in t) for f in (str.isdigit, str.isupper, str.islower)):
            return t


def _password() -> str:
    return _token(7) + secrets.choice("!#%*-_") + _token(6)


def _assert_masked(text: str, secret: str) -> None:
    assert_masked(text, secret, width=8)


def _hashes(text: str) -> set[str]:
    return set(re.findall(r"\[REDACTED:[a-z0-9-]+:([0-9a-f]{4})\]", text))


# --- what must pass ----------------------------------------------------------------------


def test_a_digest_after_a_bare_key_in_prose_passes() -> None:
    for _ in range(5):
        md5 = secrets.token_hex(16)
        for text in (
            f"The cache uses a key: {md5} for this file.",
            f"stored under the key: {md5}",
            f"Key: {md5.upper()}",
            f"key = '{md5}'",
        ):
            assert redact(text) == text, text
    # named as an API key, a secret key or a password, the same digits are one
    md5 = secrets.token_hex(16)
    for text in (f"API key: {md5}", f"secret key: {md5}", f"password: {md5}"):
        assert md5 not in redact(text), text


def test_a_public_key_derived_by_a_pipe_passes_a_private_one_does_not() -> None:
    import base64

    for _ in range(3):
        key = base64.b64encode(secrets.token_bytes(32)).decode()
        for cmd in (
            "wg genkey | tee privatekey | wg pubkey",
            "wg genkey | sudo tee /etc/wireguard/private.key | wg pubkey",
            "openssl genpkey -algorithm x25519 | openssl pkey -pubout",
            "openssl rand -hex 32 | sha256sum",
        ):
            for text in (f"$ {cmd}\n{key}\n", f"{cmd} → {key}"):
                assert redact(text) == text, text
        for text in (f"$ wg genkey\n{key}\n", f"$ wg genkey | tee privatekey\n{key}\n"):
            assert key not in redact(text), text


def test_one_hex_key_with_and_without_0x_gives_one_marker() -> None:
    for _ in range(5):
        key = secrets.token_hex(32)
        text = (
            f"private key: 0x{key}\n"
            f'privateKey="{key}"\n'
            f"PRIVATE_KEY=0X{key.upper()}\n"
            f"--private-key {key}\n"
        )
        out = redact(text)
        assert key not in out and key.upper() not in out, out
        assert len(_hashes(out)) == 1, out


# --- a language's own string syntax --------------------------------------------------

LITERALS = [
    # Rust, C++, C#, Python
    'let token = r"{s}";',
    'let api_key = r#"{s}"#;',
    'const SECRET: &[u8] = br##"{s}"##;',
    'std::string password = R"({s})";',
    'auto token = R"{d}({s}){d}";',
    'var password = @"{s}";',
    'string apiKey = $"{s}";',
    'password = rb"{s}"',
    'client_secret = f"{s}"',
    # Perl, Ruby
    "my $password = q{{{s}}};",
    "my $token = qq({s});",
    "$pass = q/{s}/;",
    "my %cfg = (api_key => qq[{s}]);",
    "password = %q({s})",
    "token = %Q[{s}]",
    "secret = %({s})",
    "config[:api_token] = %q<{s}>",
    # backticks (JavaScript, Go)
    "const password = `{s}`;",
    "apiKey := `{s}`",
    # here-documents with a one-line body
    "password = <<~EOS\n  {s}\nEOS",
    "TOKEN = <<-EOT.strip\n    {s}\n  EOT",
    "$password = <<<EOT\n{s}\nEOT;",
    "$apiKey = <<<'KEY'\n    {s}\n    KEY;",
    'my $secret = <<"END";\n{s}\nEND',
    "  default_token = <<EOT\n  {s}\n  EOT",
    # R's assignments
    'pwd <- "{s}"',
    "pwd <<- '{s}'",
    'db_pwd <- "{s}"',
    # a YAML plain value on the line after its key
    "password:\n  {s}\n",
    "db:\n  api_token:\n    {s}\n  host: db\n",
]


@pytest.mark.parametrize("template", LITERALS, ids=range(len(LITERALS)))
def test_a_value_in_a_languages_own_literal_is_masked(template: str) -> None:
    for secret in (_token(), _password(), _token(40)):
        text = template.format(s=secret, d=secrets.choice(["xy", "END", "tok"]))
        _assert_masked(text, secret)
        if "\n" in template:
            _assert_masked(text.replace("\n", "\r\n"), secret)


LITERALS_PASS = [
    'let path = r"C:\\Users\\me";',
    'let re = r#"^\\d{3}-\\d{4}$"#;',
    'std::string doc = R"(hello world)";',
    "my $name = q{hello};",
    "label = %q(Token expired)",
    "const greeting = `hello ${name}`;",
    "query = <<~SQL\n  SELECT 1\nSQL",
    "text = <<~EOS\n  Xk39dkeLw02kdlsQz91\nEOS",
    "pwd <- getwd()",
    'pwd <- "/home/me/project"',
    'pwd = "src"',
    "try:\n    run()\nexcept ValueError:\n    pass\n",
    "password:\n  required: true\n  min_length: 12\n",
    "token:\n  - name\n",
    "The `token` field (`str`) is required.",
    "see `password_policy` (in `settings.py`)",
]


@pytest.mark.parametrize("text", LITERALS_PASS, ids=range(len(LITERALS_PASS)))
def test_ordinary_literals_pass(text: str) -> None:
    assert redact(text) == text


# --- Terraform / HCL blocks ----------------------------------------------------------

HCL = [
    'variable "db" {{\n  type    = string\n  default = "{s}"\n}}',
    'variable "db" {{ default = "{s}" }}',
    'variable "db_password" {{\n  description = "The password"\n  default = "{s}"\n}}',
    'variable "api_token" {{\n  validation {{\n    condition = true\n  }}\n  default = "{s}"\n}}',
    'output "admin_secret" {{\n  value = "{s}"\n}}',
    'resource "aws_db_instance" "main" {{\n  username = "admin"\n  password = "{s}"\n}}',
    'provider "vault" {{\n  token = "{s}"\n}}',
    'locals {{\n  api_key = "{s}"\n}}',
]


@pytest.mark.parametrize("template", HCL, ids=range(len(HCL)))
def test_a_terraform_blocks_value_is_masked(template: str) -> None:
    for secret in (_token(), _password(), _token(40)):
        _assert_masked(template.format(s=secret), secret)


def test_a_sensitive_variable_masks_any_default() -> None:
    word = secrets.choice(["tiger", "falcon", "copper"]) + str(secrets.randbelow(90) + 10)
    text = f'variable "db" {{\n  sensitive = true\n  default   = "{word}"\n}}'
    assert word not in redact(text)


HCL_PASS = [
    'variable "region" {\n  default = "us-east-1"\n}',
    'variable "ami" {\n  default = "ami-0abcdef1234567890"\n}',
    'variable "sg" { default = "sg-0123456789abcdef0" }',
    'variable "cidr" {\n  default = "10.0.0.0/16"\n}',
    'variable "instance_type" {\n  default = "t3.micro"\n}',
    'variable "name" {\n  type = string\n  default = "my-app-2024"\n}',
    'variable "engine_version" {\n  default = "14.7"\n}',
    'variable "db_password" {\n  type = string\n  default = "${var.fallback}"\n}',
    'output "endpoint" {\n  value = "db.internal.example.com"\n}',
    'variable "role" {\n  default = "arn:aws:iam::123456789012:role/deploy"\n}',
]


@pytest.mark.parametrize("text", HCL_PASS, ids=range(len(HCL_PASS)))
def test_ordinary_terraform_passes(text: str) -> None:
    assert redact(text) == text


# --- a value cut into two short lines ------------------------------------------------

SPLIT = [
    "API_KEY={head}\n{tail}\nNEXT=1\n",
    "export DB_PASSWORD={head}\n{tail}\n",
    "password: {head}\n{tail}\nhost: db\n",
    "  token: {head}\n  {tail}\n",
    "client_secret={head}\r\n{tail}\r\n",
    "ERROR auth failed for SECRET_KEY={head}\n{tail}\n",
]


@pytest.mark.parametrize("template", SPLIT, ids=range(len(SPLIT)))
def test_a_value_cut_into_two_short_lines_is_masked_whole(template: str) -> None:
    pieces = [
        (_token(12), _token(12)),
        (_token(9), _token(21)),
        (_password(), _token(8)),
        (secrets.token_hex(10), secrets.token_hex(6)),
        (secrets.token_hex(24), secrets.token_hex(8)),
    ]
    for head, tail in pieces:
        text = template.format(head=head, tail=tail)
        out = redact(text)
        assert head not in out and tail not in out, (text, out)
        # one marker, hashed over the whole secret, and the lines after it survive
        assert len(_hashes(out)) == 1, out
        assert out.splitlines()[1:] == text.splitlines()[2:], out
        whole = template.replace("{head}\n{tail}", "{head}{tail}")
        whole = redact(
            whole.replace("{head}\r\n{tail}", "{head}{tail}").format(head=head, tail=tail)
        )
        assert _hashes(whole) == _hashes(out), (whole, out)


SPLIT_PASS = [
    "API_KEY={s}\nmake\n",
    "API_KEY={s}\nOK\n",
    "TOKEN={s}\nDone.\n",
    "TOKEN={s}\nREADME.md\n",
    "TOKEN={s}\n2026-11-23\n",
    "TOKEN={s}\nv1.2.3\n",
    "TOKEN={s}\n7f3a2b1\n",
    "TOKEN={s}\nnpm test\n",
    "TOKEN={s}\n./run.sh\n",
    "TOKEN={s}\nDEBUG_MODE\n",
    "TOKEN={s}\nHelloWorld\n",
    "TOKEN={s}\n--verbose\n",
    "TOKEN={s}\nNEXT=value2\n",
    "TOKEN={s}\n----------\n",
    "password: {s}\nusername_field\n",
    "TOKEN={s}\nabc123\n",
    "TOKEN={s}\n3f9a0c4e1b2d7a8c9e0f1a2b3c4d5e6f7a8b9c0d\n",
    "TOKEN={s}\nDownloading\n",
]


@pytest.mark.parametrize("template", SPLIT_PASS, ids=range(len(SPLIT_PASS)))
def test_a_line_of_its_own_after_a_secret_stays(template: str) -> None:
    secret = _token(24)
    text = template.format(s=secret)
    out = redact(text)
    assert secret not in out
    assert out.splitlines()[1:] == text.splitlines()[1:], out


def test_a_hex_value_takes_only_a_hex_tail() -> None:
    head = secrets.token_hex(10)
    text = f"TOKEN={head}\nG0 {_token(8)}\n"
    assert redact(text).splitlines()[1] == text.splitlines()[1]
    text = f"TOKEN={head}\nQz81Xk39dkeLw\n"
    assert redact(text).splitlines()[1] == "Qz81Xk39dkeLw"


# --- values held under a container's name, in any language's dict ------------------

CONTAINERS = [
    'credentials = {{"prod": "{s}"}}',
    "SECRETS = {{'prod': '{s}', 'dev': 'x'}}",
    'credentials: {{prod: "{s}"}}',
    'secrets => {{ "prod" => "{s}" }}',
    'tokens = {{ github = "{s}" }}',
]


@pytest.mark.parametrize("template", CONTAINERS, ids=range(len(CONTAINERS)))
def test_a_value_in_a_dict_under_a_credential_container_is_masked(template: str) -> None:
    for secret in (_token(), _token(40)):
        _assert_masked(template.format(s=secret), secret)


def test_descriptive_fields_under_a_container_pass() -> None:
    for text in (
        'tokens = {"type": "service_account", "name": "bob"}',
        "credentials = {'username': 'admin', 'url': 'https://example.com'}",
    ):
        assert redact(text) == text


# --- keyword maps, cookies, headers --------------------------------------------------

MORE = [
    '(def config {{:db-pass "{s}"}})',
    '{{:api/token "{s}", :user "bob"}}',
    '(list :password "{s}")',
    "< set-cookie: session={s}; Path=/; HttpOnly",
    "Set-Cookie: __Host-sid={s}; Secure; SameSite=Lax",
    "> Cookie: theme=dark; _session_id={s}",
    "> authorization: Bearer {s}\n> accept: */*",
    'proxy_set_header Authorization "Bearer {s}";',
    'RequestHeader set Authorization "Bearer {s}"',
    "X-Api-Key: {s}",
]


@pytest.mark.parametrize("template", MORE, ids=range(len(MORE)))
def test_keyword_maps_cookies_and_headers_are_masked(template: str) -> None:
    for secret in (_token(), _password(), _token(40)):
        _assert_masked(template.format(s=secret), secret)


def test_a_password_of_letters_and_a_symbol_is_masked_where_a_token_is() -> None:
    letters = string.ascii_letters
    for _ in range(5):
        pw = "".join(secrets.choice(letters) for _ in range(6)) + "!"
        pw += "".join(secrets.choice(string.ascii_uppercase) for _ in range(2))
        pw += "".join(secrets.choice(string.ascii_lowercase) for _ in range(4))
        for text in (
            f"Authorization: Bearer {pw}",
            f"Set-Cookie: sessionid={pw}; Path=/",
            f'pwd <- "{pw}"',
            f'variable "db" {{\n  default = "{pw}"\n}}',
        ):
            _assert_masked(text, pw)


MORE_PASS = [
    "Set-Cookie: theme=dark; Path=/; Max-Age=3600",
    "Cookie: lang=en; theme=dark; _ga=GA1.2.1234567890.1700000000",
    "Authorization: Bearer YourTokenHere",
    "Authorization: Bearer $TOKEN",
    '-H "Authorization: Bearer $(gcloud auth print-access-token)"',
    '{:password-field "password"}',
    "{:token-type :bearer}",
    "(defn login [{:keys [password]}] (check password))",
]


@pytest.mark.parametrize("text", MORE_PASS, ids=range(len(MORE_PASS)))
def test_ordinary_cookies_headers_and_keywords_pass(text: str) -> None:
    assert redact(text) == text


# --- time: linear in the worst inputs these patterns can be given ---------------------

WORST = [
    ('k = "' + "ab1" * 60 + "\n  " + "cd2" * 60 + "\n") * 150,
    '="a\n' * 15_000,
    ("[s]\ntype = b2\nkey = " + "ab" * 20 + "\n\n") * 1_500,
    "[" * 60_000,
    "[a]\n" + "x" * 60_000,
    ("[x]\n" + " [\n" * 3) * 5_000,
    "x=ENC(" * 10_000,
    "p: DEC(" + "a" * 60_000,
    "io.jsonweb" + "token" + ":jjwt-" + "1.2-" * 15_000,
    ("img/x-xoxb-" + "ab12" * 4 + ".png " + "key: " + "aB3!" * 3 + "\n") * 2_000,
    "<<" * 30_000,
    "x = <<EOF" * 6_000,
    "password = <<~" + "A" * 60_000,
    "API_TOKEN=<<" + "A" * 60_000,
    'token = r#"' * 6_000,
    'secret = R"(' * 6_000,
    "password = q{" * 5_000,
    "token = %q(" * 5_000,
    "password = `" * 10_000,
    "token:\n" * 8_000,
    "password:\n  " * 5_000,
    ("API_KEY=" + _token(11) + "\n" + _token(12) + "\n") * 2_000,
    "Cookie: " + "a" * 60_000,
    "Set-Cookie: " + ("sid=" + _token(19) + "; ") * 2_500,
    'variable "x" {' * 4_000,
    'variable "x" {\n' * 4_000,
    'variable "db" {\n' + '  default = "a\n' * 4_000,
    ":password " * 6_000,
    'credentials: {"a": ' * 3_000,
    "a" * 60 + ": {" + "x" * 60_000,
    # a provider-like prefix before a long run that a `+` ends (the body must back off)
    (" ab_cd_ef_" + "Ab1-" * 50 + "+") * 300,
    " a_" + "b1_" * 20_000,
    # cookies in code and in curl's arguments
    "curl" + " -b '" * 15_000,
    "cookie('" * 8_000,
    "res.cookie('sid', '" + "a" * 60_000,
    ".set('Cookie', ['" + "sid=" * 15_000,
    # links: a code's query key repeated, a bot's id without its token
    "?code=" * 10_000,
    "#access_token=" + "a/" * 30_000,
    ("/bot" + "1" * 10 + ":AA") * 4_000,
    # a Wi-Fi code's fields, never closed; a box-drawn table's rule
    "WIFI:" + "T:\\;" * 20_000,
    "WIFI:" + "S:" + "a" * 60_000,
    "\u2502 password " * 6_000,
    "Authorization: Bearer " + "!" * 60_000,
    "$ wg genkey | " * 4_000,
    "0x" + "f" * 60_000,
    "DEPLOY_KEY: " + "C:\\" * 20_000,
    "db_key = '%s'" % ("aB3!" * 15_000),
    "key: " + "Ctrl+" * 12_000,
    "name,password\n" + "a." * 30_000 + " = 1\n",
    "token = " + "1*" * 30_000,
    "x" * 60_000 + " = <<EOT\n",
    "password = <<EOT\n" + "a\n" * 30_000,
    "password = <<~EOS\n" * 4_000,
    'variable "db_password" {\n  default = <<-EOT\n' * 2_000,
    "users:\n" + "- name: a\n  user:\n" * 5_000,
    "users:\n  user:\n" + "    token: " * 6_000,
    "https://u:" + "@a" * 30_000,
    "db:5432:a:b:-" + "-" * 60_000,
    # a provider's prefix glued anywhere, before a run that never ends or a body that fails
    # late; escapes glued to what follows; a scheme glued to a name
    "AK" + "IAAK" * 15_000,
    "dapi" + "0" * 60_000,
    "a" * 60_000 + "-us1",
    ("1234567890:A" + "A" * 20 + "!") * 2_000,
    ("x" + "gh" + "p_" + "aB3" * 12 + "+") * 1_500,
    "0" * 19 + "T3Blbk" + "FJ" * 30_000,
    "\\n" * 30_000,
    "password = '" + "\\t" * 30_000,
    "KEY_" * 15_000 + "https://",
    "_a" * 30_000 + "://u:p@h",
    "password: <" + "a" * 60_000,
    "key=<" * 12_000,
    "a_" * 30_000 + "secret: <abcdefghi>",
    ("\\t" + "ab_cd_" + "Ab1" * 9) * 2_000,
    "<auth-user-pass>\n" * 8_000,
    "<auth-user-pass>\na\n" + "b" * 60_000,
    "java -D" + "a" * 60_000,
    "-Dsig=" * 8_000,
    "AKLT/" * 12_000,
    "AKTP" + "a" * 60_000 + "1",
    "JDC_" * 15_000,
    "YCAJ-" * 12_000,
    "STS.N" + "a" * 60_000,
    "login a/" * 8_000,
    "login a a a a/" * 5_000,
    "recovery codes " * 4_000,
    ("backup codes\n" + "1234 5678\n" * 20) * 280,
    ("scratch codes:\n" + "a1-" * 66 + "\n") * 300,
    "\u2502" * 60_000,
    "password\u2502" * 6_000,
    ("a\u2503" * 300 + "\n") * 100,
    # base64 decoded where it stands: runs beside the decoder's words, never decoded
    ("echo QUJD" + "RA" * 10 + " | " * 20 + "\n") * 600,
    "base64 -d <<< " * 4_000 + "QUJD" * 10,
    ("atob('" + "QUJD" * 6 + "' " + "echo " * 10) * 600,
    "\u2502 user \u2502 password \u2502\n" + "\u2502 a \u2502 b&c \u2502\n" * 4_000,
    # a comment after a line naming a credential: many comment marks, long unbroken words
    ("password: x" + " //" + "aB3!" * 30 + " #" * 40 + "\n") * 250,
    "token " + "a // " * 12_000,
    "YC" + "a1B" * 20_000,
    "YC-" * 20_000,
    "<(echo " * 8_000,
    "secret a a a a (" * 5_000,
    "token [" + "aB3!" * 15_000,
    "recovery codes\n" * 4_000,
    ("backup codes:\n" + "a1b2c3d4e5\n" * 3) * 1_500,
    "<<< '" * 10_000,
    "Pwd={" * 12_000,
    "Pwd={" + "}}" * 30_000,
    "Authorization: " + "a " * 30_000,
    # a short value's runs read against a name's shape (`_scattered`): long runs of humps
    ("key: " + "aB" * 6 + "#" + "AbC" * 4000 + "\n") * 5,
    "key: " + "iAbCDEFgHI1!" * 5_000,
    # a CVS root's method, an angle-bracket type, a path's placeholder folder
    "cvs://:pserver;" + "a" * 60_000 + "@h",
    ("psk: <" + "a." * 40 + "\n") * 700,
    "ssh_key: /Users/" + "<u>/" * 15_000 + "k.pem",
    # list items holding `#`, a list of names
    ("passwords:\n" + "  - a" + "#" * 400 + "\n") * 150,
    "tokens: [" + "ab, " * 15_000 + "x#",
    # a drawn password's value to a line's end, a JSON key after `{` or `,`, a flag's value
    ("pass: " + "a&" * 40 + "\n") * 800,
    '{"pass": "' * 8_000,
    ',"key":' * 8_000,
    "--pass " * 8_000,
    "- KEY=" * 10_000,
    # a key of many parts before its credential's word (120 characters, then 80)
    ("x" * 119 + "token" + "y" * 90 + " ") * 280,
    # Mailgun's key glued to words, its hex cut short
    "apikey-" + "key-0123456789abcdef" * 3_000,
    # a provider's prefix before a long run of lower-case letters that capitals end (a
    # stand-in check reading it as words in CamelCase must not try every split of the run)
    ("gh" + "u_" + _LOWER_RUN + "\nPATH=/usr/bin\n") * 1_500,
    # a provider's prefix before long runs the text does not end with (a cut token's rule)
    ("gh" + "p_" + "aB3" * 100 + "\n") * 200,
    "gh" + "p_" * 30_000,
]


@pytest.mark.slow  # minutes of CPU in all; CI runs them (-m slow)
@pytest.mark.parametrize("text", WORST, ids=range(len(WORST)))
def test_the_worst_inputs_take_linear_time(text: str) -> None:
    """Each input is about 50-70 KB built to make a backtracking pattern explode (a
    quadratic pattern takes minutes on these); linear, each takes a few times what ordinary
    text of its length takes."""
    ok, why = within_linear_time(redact, text)
    assert ok, why


def test_a_lower_case_run_that_capitals_end_is_read_in_time() -> None:
    """A token's body of lower-case letters that a line break joins to a capitalised word
    (`env` output: the next line's `PATH=`): reading it as words in CamelCase once tried
    every split of the run, about four times as long per two letters (hours at 36)."""
    text = "".join(f"GH_TOKEN=gh{k}_{_LOWER_RUN}\nPATH=/usr/bin\n" for k in "uspo")
    code = "import sys; from gitimprove.redaction import redact; print(redact(sys.stdin.read()))"
    try:
        out = subprocess.run(
            [sys.executable, "-c", code], input=text, capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        pytest.fail("redacting four short lines took over a minute")
    assert out.returncode == 0, out.stderr
    assert _LOWER_RUN not in out.stdout and out.stdout.count("PATH=/usr/bin") == 4


# --- commands reading a secret, pairs, pool settings -----------------------------------

FED = [
    "gh auth login --with-token <<< {s}",
    'docker login -u bob --password-stdin <<< "{s}"',
    "echo {s} | gh auth login --with-token",
    "export PGPASSWORD=$(cat <<EOF\n{s}\nEOF\n)",
    "API_TOKEN=\"$(cat <<'EOF'\n{s}\nEOF\n)\"",
    "[('user', 'bob'), ('password', '{s}')]",
    "OrderedDict([('api_key', '{s}'), ('x', 1)])",
    "env[DB_PASSWORD] = {s}",
    "  env[API_KEY] = '{s}'",
]


@pytest.mark.parametrize("template", FED, ids=range(len(FED)))
def test_a_secret_fed_to_a_command_or_paired_with_its_name_is_masked(template: str) -> None:
    for secret in (_token(), _password(), _token(40)):
        _assert_masked(template.format(s=secret), secret)


FED_PASS = [
    "gh auth login --with-token < token.txt",
    'cat <<< "hello"',
    "X=$(cat <<EOF\nhello\nEOF\n)",
    "('password', 'password')",
    "[('name', 'Password'), ('type', 'string')]",
    "env[PATH] = /usr/local/bin:/usr/bin",
    "env[DB_PASSWORD] = $DB_PASSWORD",
]


@pytest.mark.parametrize("text", FED_PASS, ids=range(len(FED_PASS)))
def test_ordinary_commands_and_pairs_pass(text: str) -> None:
    assert redact(text) == text
