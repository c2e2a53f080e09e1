"""Credentials given to CI systems and to command lines the command table cannot describe.

- Azure DevOps logging commands: `##vso[task.setvariable variable=X;issecret=true]<value>`,
  `##vso[task.setsecret]<value>`, and a `setvariable` whose variable names a credential;
- `buildkite-agent meta-data set "<key naming a credential>" "<value>"`, `buildkite-agent
  secret set`; GitHub Actions `::add-mask::<value>` (also in `piped.py`);
- a value printed into a command that reads a secret from its standard input:
  `printf %s "<tok>" | gh secret set X`, `printf '<pw>' | docker secret create x -`,
  `echo … | docker login --password-stdin`;
- `pulumi config set --secret <key> <value>` (or a key naming a credential), `reg add … /v
  <name> … /d <data>` and PowerShell `Set-ItemProperty -Name <name> -Value <data>` where the
  name names a credential;
- commands whose password flag the table in `commands.py` lacks (`MORE`).
"""

from __future__ import annotations

import re

from gitimprove.redaction.commands import Cmd, _rule
from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.values import assignment_is_secret, is_value, key_strength, kind_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

MORE: tuple[Cmd, ...] = (
    Cmd("rabbitmqadmin", opts="-p --password"),
    Cmd("redis-cli", opts="-a --pass"),
    Cmd("mongosh", opts="-p --password"),
    Cmd("mongo", opts="-p --password"),
    Cmd("mongodump", opts="-p --password"),
    Cmd("mongorestore", opts="-p --password"),
    Cmd("sshpass", opts="-p"),
    Cmd("keytool", opts="-storepass -keypass -srcstorepass -deststorepass"),
)

_VAL = r"""(?:"(?P<dq>(?:[^"\\\n]|\\.){1,500})"|'(?P<sq>[^'\n]{1,500})'|(?P<bare>[^\s'"|;&<>]{1,500}))"""
_GROUPS = ("dq", "sq", "bare")
# commands that read a secret from their standard input
_READERS = (
    r"gh[ \t]+secret[ \t]+set|glab[ \t]+variable[ \t]+(?:set|update)|"
    r"(?:docker|podman)[ \t]+secret[ \t]+create|"
    r"(?:docker|podman|helm[ \t]+registry|nerdctl|buildah|skopeo|oras)[ \t]+login\b[^\n|;&]*(?:--password-stdin)|"
    r"gcloud[ \t]+secrets[ \t]+(?:create|versions[ \t]+add)|"
    r"(?:vault|bao)[ \t]+(?:kv[ \t]+put|write)\b[^\n|;&]*[ \t]-(?:[ \t]|$)|"
    r"aws[ \t]+secretsmanager|az[ \t]+keyvault[ \t]+secret[ \t]+set|"
    r"sudo\b[^\n|;&]*?[ \t]-S\b|passwd[ \t]+--stdin|chpasswd|"
    r"fly(?:ctl)?[ \t]+secrets[ \t]+(?:set|import)|heroku[ \t]+config:set|"
    r"kubectl[ \t]+create[ \t]+secret|op[ \t]+item[ \t]+create|security[ \t]+add-generic-password"
)
_FORMAT = r"""(?:'%s(?:\\n)?'|"%s(?:\\n)?"|%s(?:\\n)?|'%b'|"%b")"""


def _check_value(secret: str, m: re.Match[str]) -> bool | str:
    if secret.startswith(("-", "$", "%", "{", "<")) or not is_value(secret):
        return False
    return "password"


def _check_vso(secret: str, m: re.Match[str]) -> bool | str:
    props = m.group("props") or ""
    value = secret.strip()
    if not is_value(value) or value.startswith(("$(", "$")):
        return False
    if m.group("cmd").lower() == "setsecret" or re.search(r"(?i)issecret\s*=\s*true", props):
        return "credential"
    name = re.search(r"(?i)variable\s*=\s*([^;\]]+)", props)
    if name and assignment_is_secret(name.group(1).strip(), value, quoted=True, env_style=True):
        return kind_of(name.group(1))
    return False


def _check_named(secret: str, m: re.Match[str]) -> bool | str:
    key = m.group("key")
    if m.groupdict().get("flag"):
        return _check_value(secret, m)
    if key_strength(key) is None or not assignment_is_secret(
        key, secret, quoted=True, env_style=True
    ):
        return False
    return kind_of(key)


_SWITCH = r"""(?i)(?<=[ \t])/(?P<opt>[vd])[ \t]+""" + _VAL


def _reg_add(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    """`reg add … /v <name> … /d <data>`: the data, when the name names a credential."""
    name = data = None
    for o in compiled(_SWITCH, 0).finditer(m.string, m.start(), m.end()):
        g = next(g for g in _GROUPS if o.group(g) is not None)
        if o.group("opt").lower() == "v":
            name = o.group(g)
        else:
            data = o
            data_group = g
    if (
        name is not None
        and data is not None
        and _check_named_key(name, data.group(data_group), False)
    ):
        yield data.span(data_group)


def _check_named_key(key: str, value: str, secret: bool) -> bool | str:
    if value.startswith(("$", "%", "{", "<", "-")) or not is_value(value):
        return False
    if secret:
        return "credential"
    if key_strength(key) is None:
        return False
    return assignment_is_secret(key, value, quoted=True, env_style=True) and kind_of(key)


RULES: list[Rule] = [
    *(_rule(cmd.words[0], [cmd]) for cmd in MORE),
    Rule(
        "credential",
        r"(?i)##vso\[task\.(?P<cmd>setvariable|setsecret)\b(?P<props>[^\]\n]*)\]"
        r"[ \t]*(?P<v>[^\s\"'`\\]{1,1000})",
        ("##vso[task.setvariable", "##vso[task.setsecret"),
        groups=("v",),
        flags=re.MULTILINE,
        priority=CONTEXT,
        check=_check_vso,
    ),
    Rule(
        "credential",
        r"\bbuildkite-agent[ \t]+(?:meta-data|secret)[ \t]+set[ \t]+"
        r"(?:\"(?P<key>[^\"\n]{1,100})\"|'(?P<key2>[^'\n]{1,100})'|(?P<key3>[^\s\"']{1,100}))"
        r"[ \t]+" + _VAL,
        ("buildkite-agent",),
        groups=_GROUPS,
        priority=CONTEXT,
        check=lambda s, m: _check_named_key(
            m.group("key") or m.group("key2") or m.group("key3"), s, "secret" in m.group(0)[:40]
        ),
    ),
    Rule(
        "password",
        r"\b(?:printf|echo)(?:[ \t]+-[neE]+)*(?:[ \t]+--)?(?:[ \t]+"
        + _FORMAT
        + r")?[ \t]+"
        + _VAL
        + r"[ \t]*\|[ \t]*(?:[\w./-]+=[^\s]*[ \t]+)*(?:sudo[ \t]+(?:-\w+[ \t]+)*)?(?:"
        + _READERS
        + r")",
        ("printf", "echo"),
        groups=_GROUPS,
        needs=("|",),
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        "credential",
        r"\b(?:pulumi|esc)[ \t]+config[ \t]+set\b(?P<flag>(?:[ \t]+-[\w-]+)*[ \t]+--secret)?"
        r"(?:[ \t]+-[\w-]+)*[ \t]+(?P<key>[\w.:/-]+)[ \t]+(?:--[\w-]+[ \t]+)*" + _VAL,
        ("pulumi", "esc config"),
        groups=_GROUPS,
        priority=CONTEXT,
        check=_check_named,
    ),
    Rule(
        # reg add <key> /v <name> [/t REG_SZ] /d <data>, in any order after the key
        "credential",
        r"(?i)\breg(?:\.exe)?[ \t]+add\b[^\n|&]*",
        ("reg add", "reg.exe add"),
        priority=CONTEXT,
        expand=_reg_add,
    ),
    Rule(
        "credential",
        r"(?i)\b(?:set|new)-itemproperty\b[^\n|;]*?[ \t]-name[ \t]+"
        r"(?:\"(?P<key>[^\"\n]+)\"|'(?P<key2>[^'\n]+)'|(?P<key3>[^\s\"']+))"
        r"[^\n|;]*?[ \t]-value[ \t]+" + _VAL,
        ("itemproperty",),
        groups=_GROUPS,
        priority=CONTEXT,
        check=lambda s, m: _check_named_key(
            m.group("key") or m.group("key2") or m.group("key3"), s, False
        ),
    ),
]
