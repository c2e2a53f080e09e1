"""Short passwords a generator drew, under a key that only may name one, written unquoted.

Generated at run time (seeded): 8 characters from three generators (Python's `secrets` with
`!@#$%^&*`, pwgen's pronounceable letters with one symbol, KeePass' every printable symbol),
under weak and foreign key names (`pass`, `pw`, `pwd`, `auth`, `key`, `cred`, `passwort`,
`senha`, ...), in the formats an agent's tool output shows them: env, `export`, YAML, INI,
command-line flags, JSON, TOML, a docker-compose list, `docker run -e K=v` and `java -DK=v`
mid-line, a diff's `+`/`-` line, a log line after its label. Code under the same key names stays as
it is (`key = self._key_from_fd(fd)`, `auth: *defaults`, `PWD=$HOME/src`).
"""

from __future__ import annotations

import json
import random
import string

import pytest

from gitimprove import redaction

_SYMBOLS = "!@#$%^&*"
_PRINTABLE = string.punctuation


def _secrets_like(rnd: random.Random) -> str:
    alphabet = string.ascii_letters + string.digits + _SYMBOLS
    return "".join(rnd.choice(alphabet) for _ in range(8))


def _pwgen_like(rnd: random.Random) -> str:
    chars = [rnd.choice("bcdfghjkmnprstvwxz" if n % 2 == 0 else "aeiou") for n in range(8)]
    chars[rnd.randrange(8)] = rnd.choice(string.digits)
    n = rnd.randrange(8)
    chars[n] = chars[n].upper() if chars[n].isalpha() else rnd.choice(string.ascii_uppercase)
    chars[rnd.randrange(8)] = rnd.choice(_PRINTABLE)
    return "".join(chars)


def _keepass_like(rnd: random.Random) -> str:
    alphabet = string.ascii_letters + string.digits + _PRINTABLE
    return "".join(rnd.choice(alphabet) for _ in range(8))


GENERATORS = {"secrets": _secrets_like, "pwgen": _pwgen_like, "keepass": _keepass_like}
KEYS = [
    "pass",
    "pw",
    "auth",
    "pwd",
    "key",
    "cred",
    "passwort",
    "kennwort",
    "contrasena",
    "senha",
    "mot_de_passe",
    "wachtwoord",
    "haslo",
    "salasana",
    "losenord",
    "geheim",
    "db_pass",
    "adminPw",
    "mysql_pwd",
    "redis_auth",
    "app_key",
    "smtp_cred",
]


def _formats(key: str, value: str) -> dict[str, str]:
    up = key.upper()
    return {
        "env": f"{up}={value}",
        "export": f"export {up}={value}",
        "yaml": f"{key}: {value}",
        "ini": f"{key} = {value}",
        "flag": f"tool --{key} {value} --verbose",
        "flag=": f"tool --{key}={value} --verbose",
        "json": json.dumps({key: value}),
        "toml": f"{key} = {json.dumps(value)}",
        "compose": f"    environment:\n      - {up}={value}\n      - DEBUG=1",
        # handed to a program mid-line, and lines of a diff or a quoted mail
        "docker-e": f"docker run --rm -e {up}={value} -p 8080:80 app:1.2",
        "java-D": f"java -Dapp.{key}={value} -jar app.jar",
        "diff+": f"+{up}={value}",
        "diff-yaml": f"-  {key}: {value}",
        "quoted-mail": f"> {up}={value}",
        "labelled": f"Bash failed: stderr: {up}={value}",
    }


def _left(secret: str, out: str) -> bool:
    return any(secret[n : n + 4] in out for n in range(len(secret) - 3))


def _misses(generator: str, n: int, *, only_hard: bool) -> tuple[int, int, list[str]]:
    rnd = random.Random(f"generated-{generator}")
    missed = total = 0
    examples: list[str] = []
    while total < n:
        secret = GENERATORS[generator](rnd)
        if only_hard and not (secret[0] in "$~!*&@" or "&" in secret):
            continue
        key = KEYS[total % len(KEYS)]
        for text in _formats(key, secret).values():
            total += 1
            if _left(secret, redaction.redact(text)):
                missed += 1
                examples.append(text)
    return missed, total, examples


# the share (per cent) a generator's passwords may leave, a little above what is measured
LEFT = {"secrets": 12, "pwgen": 24, "keepass": 18}
HARD_LEFT = {"secrets": 7, "pwgen": 21, "keepass": 23}


@pytest.mark.parametrize("generator", sorted(GENERATORS))
def test_drawn_passwords_under_weak_keys_are_masked(generator: str) -> None:
    # (measured at 1,800 over the fifteen formats: secrets 10%, pwgen 21%, keepass 15% left;
    # 24%, 36%, 37% before a diff's `+`/`-`/`>` line, a log's label and a `-e K=v`
    # mid-line were read;
    # what is left is mostly under `key` and `auth`, where names and ids must pass)
    missed, total, examples = _misses(generator, 1800, only_hard=False)
    assert missed * 100 < total * LEFT[generator], (missed, total, examples[:8])


@pytest.mark.parametrize("generator", sorted(GENERATORS))
def test_passwords_starting_with_a_shell_or_yaml_sign_are_masked(generator: str) -> None:
    # the symbols shell and YAML give a meaning: `$` `~` `!` `*` `&` `@`, or `&` inside
    # (measured: secrets 5%, pwgen 18%, keepass 20% left; before: 32%, 41%, 42%)
    missed, total, examples = _misses(generator, 900, only_hard=True)
    assert missed * 100 < total * HARD_LEFT[generator], (missed, total, examples[:8])


@pytest.mark.parametrize(
    "text",
    [
        "key = self._key_from_fd(fd)",
        "def lookup(caps, MIMEtype, key=None):",
        "auth: *defaults",
        "key: &default",
        "pwd: !Ref BuildDir",
        "PWD=$HOME/src",
        "KEY=$API_KEY",
        "key: ~/.ssh/id_rsa",
        "export PASS=${DB_PASSWORD:?unset}",
        "key: ${{ runner.os }}",
        '        Token:                      "#d8dee9",',
        "CmpKey = Tuple[",
        "    sig: FuncSignature,",
        "    key: _KeyType,",
        "            key1=value1//key2=value2//...",
        "            key = (key,)",
        "_DD_SIGNATURE = 0x08074b50",
        "tool --gpg-key=nightly.gpg gnome-nightly",
        "key = a&b",
        "auth = x|y",
        "key: v1.2.3-rc1",
        "pass: 12:30",
        "key = items[::-1]",
        "key: ctrl+shift+p",
        "auth: localhost:8080/api-v1",
        "cred = get_credentials()",
        # options mid-line and lines of a diff holding code or references
        "docker run -e HOME=/root -e KEY=$KEY img",
        "cmake -DCMAKE_BUILD_TYPE=Release -DPASS_THROUGH=ON ..",
        "docker run -e AUTH_MODE=oauth2 -e PYTHONPATH=src img",
        "docker build --build-arg TOKEN_FILE=/run/secrets/gh .",
        "helm upgrade x --set auth.enabled=true --set image.tag=v1.2.3 .",
        "java -Dfile.encoding=UTF-8 -Dkey.store=conf/app.jks -jar a.jar",
        "terraform apply -var key_name=deployer-key -var 'region=us-east-1'",
        'docker run -e TOKEN=${TOKEN} -e PASSWORD="$DB_PASSWORD" img',
        "+KEY_PATH=~/.ssh/id_rsa",
        "-    password: ${DB_PASSWORD}",
        "+        self.key = key",
        "-    key=lambda x: x[1],",
        "+credentials = load_credentials(path)",
        "> password: see the vault",
    ],
)
def test_code_under_weak_keys_stays(text: str) -> None:
    assert redaction.redact(text) == text
