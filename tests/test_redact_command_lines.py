"""Credentials on command lines of tools that take them behind a flag, a position or a
scheme of their own: `<tool> login -u <user> -p <pw>`, `twine upload -p`, `cf auth <user>
<pw>`, `vault operator unseal <key>`, `az keyvault secret set --value`, `db2 connect … using
<pw>`, an `Authorization:` header with any scheme (`Splunk <uuid>`), an ODBC braced value
(`Pwd={…}`), a value fed by a here-string or a process substitution (`<<< <pw>`,
`--password-file=<(echo <pw>)`). Variables, flags without a value, words, digests and base64
of prose pass."""

from __future__ import annotations

import random
import string
import uuid

import pytest

from gitimprove.redaction import redact

_ALNUM = string.ascii_letters + string.digits


def _password(rnd: random.Random) -> str:
    head = "".join(rnd.choice(_ALNUM) for _ in range(rnd.randint(5, 8)))
    return head + rnd.choice("#%!@*") + "".join(rnd.choice(_ALNUM) for _ in range(5)) + "7"


def _token(rnd: random.Random) -> str:
    return "".join(rnd.choice(_ALNUM) for _ in range(rnd.randint(24, 40))) + "Qz4"


PASSWORDS = [
    "twine upload -u __token__ -p {p} dist/*",
    "cf login -a api.run.io -u dev -p {p}",
    "cf auth dev {p}",
    "oc login -u dev -p {p} https://api.example.io:6443",
    "podman login -u bot -p {p} registry.example.io",
    "buildah login -p {p} registry.example.io",
    "oras login -u bot -p {p} registry.example.io",
    "crane auth login registry.example.io -u bot -p {p}",
    "helm registry login registry.example.io -u bot -p {p}",
    "az acr login -n reg -u bot -p {p}",
    "hdbsql -u SYSTEM -p {p} -d HXE",
    "cypher-shell -u neo4j -p {p}",
    "p4 -u bot -P {p} sync",
    "db2 connect to sample user db2inst1 using {p}",
    "pdftk in.pdf output out.pdf user_pw {p}",
    "az keyvault secret set --vault-name kv --name db --value {p}",
    "databricks secrets put --scope s --key k --string-value {p}",
    "Driver={{ODBC Driver 18}};Server=db;Uid=svc;Pwd={{{p}}};",
    "DRIVER={{SQL Server}};UID=sa;PWD={{{p};x=y}};Encrypt=yes",
    "op signin --raw <<< {p}",
    "smbpasswd -a svc <<< '{p}'",
    "ansible-vault decrypt --vault-password-file <(echo {p}) site.yml",
    'rsync -a rsync://svc@host/mod --password-file=<(printf "%s" "{p}") .',
]
TOKENS = [
    "vault operator unseal {t}",
    "snyk auth {t}",
    "doctl auth init -t {t}",
    "codecov -t {t}",
    "tailscale up --authkey {t}",
    "netlify deploy --auth {t}",
    "terraform login <<< {t}",
    "gcloud secrets versions add api --data-file=<(echo -n {t})",
    "Authorization: Splunk {u}",
    "-H 'authorization: GenieKey {u}'",
    "Authorization: SharedKey acct:{t}=",
]


@pytest.mark.parametrize("template", PASSWORDS + TOKENS)
def test_a_credential_on_such_a_command_line_is_masked(template: str) -> None:
    for seed in range(6):
        rnd = random.Random(seed)
        p, t, u = _password(rnd), _token(rnd), str(uuid.UUID(int=rnd.getrandbits(128)))
        out = redact(template.format(p=p, t=t, u=u))
        for s in (p, t, u):
            if s in template.format(p=p, t=t, u=u):
                assert s[:6] not in out and s[-5:] not in out, out


@pytest.mark.parametrize(
    "text",
    [
        "oc login -u dev -p",
        "cf auth dev",
        "vault operator unseal",
        "snyk auth",
        "p4 -P $P4PASSWD sync",
        "twine upload -p $PYPI_TOKEN dist/*",
        "db2 connect to sample",
        "codecov -t ${CODECOV_TOKEN}",
        'conn = "Driver={x};Pwd={password};"',
        "Pwd={0};Uid={1}",
        "Password={env:DB_PW}",
        "PWD={DB_PASSWORD}",
        "Authorization: required for this endpoint",
        "authorization: pending review-board-2",
        'Authorization: Digest username="svc", realm="x"',
        "authorization: Bearer ${TOKEN}",
        "base64 -d <<< SGVsbG8gd29ybGQsIHRoaXMgaXMgZmluZQ==",
        "sha256sum <<< 3f2a9c0d1e4b5a6c3f2a9c0d1e4b5a6c",
        "bc <<< 2+3",
        'grep -c x <<< "$out"',
        "wc -l <(echo hello)",
        "diff <(echo abc) <(echo abd)",
        "jq . <<< '{\"a\": 1}'",
        "tr a-z A-Z <<< helloWorld",
        "xargs <<< main-branch-v2",
        "docker run -u 1000 -p 8080:80 nginx",
    ],
)
def test_ordinary_command_lines_pass(text: str) -> None:
    assert redact(text) == text
