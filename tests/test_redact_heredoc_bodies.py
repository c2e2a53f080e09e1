"""A here-document whose body sets or holds secrets over several lines: written into an env
file or a config (each assignment judged as its own line), or assigned to a name naming a
credential (Ruby, PHP, HCL, a Terraform variable's `default`): each body line that is one
token is masked. A body of ordinary lines under other names passes."""

from __future__ import annotations

import random
import string

import pytest

from gitimprove.redaction import redact
from tests.masked import assert_masked

RNG = random.Random(2614)


@pytest.fixture(autouse=True)
def _same_fakes() -> None:
    """Each test draws the same fakes whatever ran before it (in this process or not)."""
    RNG.seed(2614)


def _password(n: int = 12) -> str:
    while True:
        t = "".join(RNG.choice(string.ascii_letters + string.digits + "!#%+@^*=") for _ in range(n))
        kinds = all(any(f(c) for c in t) for f in (str.isdigit, str.isupper, str.islower))
        if kinds and t[0] not in "*!&" and any(not c.isalnum() for c in t):
            return t


def _token(n: int = 28) -> str:
    while True:
        t = "".join(RNG.choice(string.ascii_letters + string.digits) for _ in range(n))
        if any(c.isdigit() for c in t) and any(c.isupper() for c in t):
            return t


def _assert_masked(text: str, *secrets: str) -> None:
    for secret in secrets:
        assert_masked(text, secret)


BODIES = [
    "cat <<EOF > .env\nDB_PASSWORD={a}\nAPI_TOKEN={b}\nEOF\n",
    "cat > .env <<'EOF'\nexport DB_PASSWORD='{a}'\nexport API_TOKEN='{b}'\nEOF\n",
    "cat <<-EOF >> config/.env\n\tDB_PASSWORD={a}\n\tAPI_TOKEN={b}\n\tEOF\n",
    "ssh host 'tee .env' <<EOF\nDB_USER=app\nDB_PASSWORD={a}\nSECRET_TOKEN={b}\nEOF\n",
    "cat <<EOF > config.yml\ndatabase:\n  password: {a}\n  token: {b}\nEOF\n",
    "password = <<~EOS\n  {a}\n  {b}\nEOS\n",
    "$private_key = <<<KEY\n{b}\n{a}\nKEY;\n",
    'my $secret = <<"END";\n{a}\n{b}\nEND\n',
    'resource "x" "y" {{\n  password = <<EOT\n{a}\n{b}\nEOT\n}}\n',
    'variable "db_password" {{\n  default = <<-EOT\n    {a}\n    {b}\n    EOT\n}}\n',
    'variable "db" {{\n  sensitive = true\n  default   = <<-EOT\n    {a}\n    {b}\n    EOT\n}}\n',
    "API_TOKEN=$(cat <<EOF\n{b}\nEOF\n)\nDB_PASSWORD=$(cat <<EOF\n{a}\nEOF\n)\n",
    "cat <<EOF > .env.production\nSTRIPE_SECRET={b}\nSESSION_SECRET=*{a}\nEOF\n",
]


@pytest.mark.parametrize("template", BODIES, ids=range(len(BODIES)))
def test_a_here_document_body_over_several_lines_loses_its_secrets(template: str) -> None:
    for _ in range(3):
        a, b = _password(), _token()
        _assert_masked(template.format(a=a, b=b), a, b)


WRAPPED = [
    ("cat <<EOF > .env\n", "API_TOKEN=", "\nEOF\n"),
    ('variable "api_token" {\n', '  default = "', '"\n}\n'),
    ('variable "db" {\n  sensitive = true\n', '  default = "', '"\n}\n'),
    ("secret = <<EOT\n", "", "\nEOT\n"),
]


@pytest.mark.parametrize(("head", "lead", "tail"), WRAPPED, ids=range(len(WRAPPED)))
def test_a_value_wrapped_by_a_terminal_inside_a_here_document_or_a_block_is_masked(
    head: str, lead: str, tail: str
) -> None:
    for width in (80, 120):
        secret = _token(width + 30)
        line = lead + secret
        text = head + line[:width] + "\n" + line[width:] + tail
        _assert_masked(text, secret)


PASS = [
    "cat <<EOF > .env\nDB_HOST=localhost\nDB_PORT=5432\nLOG_LEVEL=debug\nEOF\n",
    "description = <<~EOS\n  Rotates the password every night.\n  See the runbook.\nEOS\n",
    "password_policy = <<EOT\nminimum_length\nrequire_symbols\nEOT\n",
    'variable "region" {\n  default = <<-EOT\n    us-east-1\n    EOT\n}\n',
    "token = <<~EOS\n  identifier\n  punctuation\nEOS\n",
    'secret = <<EOF\n{\n  "rotation": 30\n}\nEOF\n',
    "key = <<~TXT\n  deploy-prod\n  build-2024\nTXT\n",
    'cat <<EOF | kubectl apply -f -\napiVersion: v1\nkind: ConfigMap\ndata:\n  mode: "fast"\nEOF\n',
]


@pytest.mark.parametrize("text", PASS, ids=range(len(PASS)))
def test_ordinary_here_documents_pass(text: str) -> None:
    assert redact(text) == text
