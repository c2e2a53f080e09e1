"""What a command that prints a secret printed: the lines after it in a terminal log.

`aws configure get aws_secret_access_key`, `op item get … --fields password`, `kubectl get
secret … | base64 -d`, `echo $DB_PASSWORD`, `vault kv get -field=password …`, `gcloud auth
print-access-token`, `az storage account keys list`, `heroku auth:token`, `gh auth token`:
such a command's output is the secret itself, with no name beside it. `PRINTS_SECRET` is the
table of these commands (a row is data: the command's words as a regex, and the keywords
that must occur in a text for the rule to be compiled). After a command of the table, the
output lines up to the next prompt or blank line are read:

- a line that is one token (no blank inside) is the secret;
- a line naming a field and its value (`"value": "…"`, `password    …` in a table,
  `"accessToken": "…"`) is a secret when the field is a value or names a credential.

`echo $VAR` (`%VAR%`, `$env:VAR`) / `printenv VAR` count when `VAR` names a credential; `cat <file>` when the
file's name does (`~/.vault_pass`, `db-password.txt`, `/run/secrets/api_token`).
"""

from __future__ import annotations

import re

from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.values import (
    is_value,
    key_strength,
    looks_random,
    mixed_case,
    secret_like,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_S = r"[ \t]+"
_ARGS = r"[^\n]*?"
# a file name that names a secret: `.vault_pass`, `db_password.txt`, `secrets/api_token`
_SECRET_FILE = (
    r"[^\s|;&]*?(?i:vault[_-]?pass|passw(?:or)?d|passphrase|secret|token|api[_-]?key"
    r"|\.pass\b|credentials?|\.pgpass)[^\s|;&]*"
)
# (keywords, command) — keywords lower-case, as the prefilter looks for them
PRINTS_SECRET: tuple[tuple[tuple[str, ...], str], ...] = (
    (("aws configure",), r"aws" + _S + r"configure" + _S + r"get" + _S + r"(?P<var3>[\w.-]+)"),
    (("get-secret-value",), r"aws" + _S + r"secretsmanager" + _S + r"get-secret-value\b"),
    (("get-parameter",), r"aws" + _S + r"ssm" + _S + r"get-parameters?\b"),
    (("get-login-password",), r"aws" + _S + r"ecr(?:-public)?" + _S + r"get-login-password\b"),
    (("get-authorization-token",), r"aws" + _S + r"codeartifact" + _S + r"get-authorization-token"),
    (
        ("op read", "op item", "op get"),
        r"op" + _S + r"(?:read|item" + _S + r"get|get" + _S + r"item)\b",
    ),
    (("kubectl",), r"kubectl\b" + _ARGS + r"(?:get" + _S + r"secrets?\b|create" + _S + r"token\b)"),
    (
        ("echo", "printenv"),
        r"(?:echo(?:[ \t]+-[neE]+)?" + _S + r"[\"']?(?:\$\{?|\$env:|%)(?P<var>\w+)[}%]?[\"']?"
        r"|printenv" + _S + r"(?P<var2>\w+))[ \t]*(?=\r?\n)",
    ),
    (
        ("cat ", "type ", "get-content"),
        r"(?:cat|type|Get-Content)" + _S + r"(?:-\w+[ \t]+)*" + _SECRET_FILE,
    ),
    (
        ("vault",),
        r"vault"
        + _S
        + r"(?:kv"
        + _S
        + r"get|read|print"
        + _S
        + r"token|token"
        + _S
        + r"create|write)\b",
    ),
    (
        ("gcloud",),
        r"gcloud" + _S + r"(?:auth" + _S + r"(?:application-default" + _S + r")?print-"
        r"(?:access|identity)-token|secrets" + _S + r"versions" + _S + r"access)\b",
    ),
    (
        ("az ",),
        r"az"
        + _S
        + r"(?:storage"
        + _S
        + r"account"
        + _S
        + r"(?:keys"
        + _S
        + r"list|show-connection-string)"
        r"|account"
        + _S
        + r"get-access-token|keyvault"
        + _S
        + r"secret"
        + _S
        + r"show|acr"
        + _S
        + r"login"
        r"|cosmosdb" + _S + r"keys" + _S + r"list)\b",
    ),
    (
        ("heroku",),
        r"heroku"
        + _S
        + r"(?:auth:token|authorizations:create|config:get"
        + _S
        + r"(?P<var4>\w+))\b",
    ),
    (("auth token",), r"(?:gh|glab|doctl|fly|flyctl|tea)" + _S + r"auth" + _S + r"token\b"),
    (
        ("pass ", "gopass"),
        r"(?:pass|gopass)(?:" + _S + r"show)?" + _S + r"(?!-)[\w./-]+[ \t]*(?=\r?\n)",
    ),
    (
        ("find-generic-password", "find-internet-password"),
        r"security" + _S + r"find-(?:generic|internet)-password\b" + _ARGS + r"[ \t]-w\b",
    ),
    (("secret-tool",), r"secret-tool" + _S + r"lookup\b"),
    (
        ("bw get", "lpass show", "keepassxc-cli"),
        r"(?:bw" + _S + r"get" + _S + r"(?:password|totp|item)"
        r"|lpass" + _S + r"show|keepassxc-cli" + _S + r"show)\b",
    ),
    (("openssl rand", "pwgen"), r"(?:openssl" + _S + r"rand\b|pwgen\b)"),
    # generators: what they print is a new secret (a key, a password, a random token)
    (
        ("secrets.token", "token_hex", "token_urlsafe", "urandom", "securerandom", "randombytes"),
        r"(?:python[\d.]*|py|ruby|node|deno|bun|perl|php)\b"
        + _ARGS
        + r"(?:secrets\.token_\w+|os\.urandom|SecureRandom\.\w+|randomBytes|random_bytes"
        r"|get_random_secret_key)",
    ),
    (
        ("/dev/urandom", "/dev/random"),
        r"(?:head|cat|tr|od|xxd|dd|base64|openssl|LC_ALL=C)\b[^\n]{0,200}?/dev/u?random\b",
    ),
    (
        ("secret", "key:generate", "keygen", "genkey", "genpsk", "gen-random", "apg", "makepasswd"),
        r"(?:(?:bin/)?(?:rails|rake)"
        + _S
        + r"secret|mix"
        + _S
        + r"phx\.gen\.secret|php"
        + _S
        + r"artisan"
        + _S
        + r"key:generate\b[^\n]*--show|wg"
        + _S
        + r"gen(?:key|psk)|consul"
        + _S
        + r"keygen|nomad"
        + _S
        + r"operator"
        + _S
        + r"(?:keygen|gossip"
        + _S
        + r"keyring"
        + _S
        + r"generate)|gpg2?"
        + _S
        + r"(?:--armou?r"
        + _S
        + r")?--gen-random|apg|makepasswd)\b",
    ),
    (
        ("join-token", "kubeadm", "k3s"),
        r"(?:docker"
        + _S
        + r"swarm"
        + _S
        + r"join-token\b|kubeadm"
        + _S
        + r"token"
        + _S
        + r"(?:create|generate)\b|(?:sudo"
        + _S
        + r")?cat"
        + _S
        + r"/var/lib/rancher/k3s/server/(?:node-)?token\b)",
    ),
    (("doppler",), r"doppler" + _S + r"secrets" + _S + r"get" + _S + r"(?P<var5>\w+)"),
    (
        ("terraform output",),
        r"terraform" + _S + r"output" + _S + r"(?:-[\w=-]+" + _S + r")*(?P<var6>\w+)",
    ),
    (("docker",), r"docker" + _S + r"secret" + _S + r"inspect\b"),
)
# what may come before a command on its line: a prompt, `sudo`, an environment
_STARTS = (
    r"[ \t]*(?:(?:[$#%>][ \t]*|PS[^\n>]{0,200}>[ \t]*|[\w.-]+@[\w.-]+:[^\n$#]{0,200}[$#][ \t]*"
    r"|\([\w.-]+\)[ \t]*|!|(?:[●⏺][ \t]*)?Bash\()?(?:sudo[ \t]+(?:-\S+[ \t]+)*)?(?:[A-Z_]+=\S*[ \t]+)*)"
)
# a line that starts another command: a prompt, a REPL's, a user@host prompt
_PROMPT = r"[ \t]*(?:[$#%>][ \t]|PS[ \t]|>>>|[\w.-]+@[\w.-]+:[^\n]*[$#][ \t]|In[ \t]\[\d+\])"
# the output: lines after the command, up to a blank line or a prompt
_OUTPUT = r"(?P<out>(?:(?!" + _PROMPT + r")[ \t]*\S[^\n]{0,2000}(?:\n|$)){1,60})"
# a field and its value in the output: `"value": "…"`, `password    …`, `Token: …`
_FIELD = (
    r"^[ \t]*[\"']?(?P<name>[\w .-]{1,60}?)[\"']?[ \t]*(?:[:=][ \t]*|[ \t]{2,}|\t)"
    r"[\"']?(?P<value>[^\s\"',]{4,500})[\"']?,?[ \t]*\r?$"
)
_VALUE_FIELDS = frozenset({"value", "values", "secretstring", "secret", "data", "plaintext"})


def _secret_var(m: re.Match[str]) -> bool:
    """`echo $X`, `printenv X`, `aws configure get X`, `terraform output X` print a secret
    when X names a credential."""
    names = [v for k, v in m.groupdict().items() if k.startswith("var") and v is not None]
    return all(key_strength(v) == "strong" for v in names)


def _one_token(token: str) -> bool:
    """A line that is one token is a secret unless it is punctuation, a label, code (a
    trailing `,` `;` `(` …) or a name in lower-case words (`kubectl-secret-output`)."""
    return (
        is_value(token)
        and token[-1] not in ",;([{"
        and token[0] not in ")]}"
        and compiled(
            r"[\[\]{}(),:]+|[A-Z][\w-]*:|[a-z]+(?:[-_.][a-z]+)*|[A-Z]?[a-z]+[.!]?|[A-Z]{2,}[.!]?", 0
        ).fullmatch(token)
        is None
    )


def _token_shaped(token: str) -> bool:
    """What a command printing a token prints: no word, no version (`heroku auth:token`
    then `Done`, `OK` or `v8.1.0` on the next line printed no token)."""
    return (
        len(token) >= 8
        and secret_like(token)
        and any(c.isalpha() for c in token)
        and compiled(r"v?\d+(?:\.\d+)+\w*", 0).fullmatch(token) is None
    ) or mixed_case(token)


def _prints_token(m: re.Match[str]) -> bool:
    """A command of the table that prints a token by its own words (`auth token`,
    `get-login-password`), not a variable's value (`printenv GITHUB_TOKEN` may print any)."""
    command = list(m.string[m.start() : m.start("out")].lower())
    for k, v in m.groupdict().items():
        if k.startswith("var") and v is not None:
            command[m.start(k) - m.start() : m.end(k) - m.start()] = " " * len(v)
    said = "".join(command)
    return any(w in said for w in ("token", "login-password", "rand", "gen", "secret"))


def _named(name: str) -> bool:
    """A field whose value is the secret: a value (`"value"`, `SecretString`) or a name
    naming a credential (`password`, `accessToken`)."""
    flat = name.strip().lower().replace(" ", "").replace("_", "").replace("-", "")
    return flat in _VALUE_FIELDS or key_strength(name.strip()) == "strong"


def _line_secret(line: str, tokens_only: bool = False) -> tuple[int, int] | None:
    """Where the secret is in one output line, if the line is one (with `tokens_only`, a line
    that is one token must look like one)."""
    body = line.rstrip("\r")
    stripped = body.strip()
    if not stripped or "[REDACTED:" in stripped:
        return None
    at = body.index(stripped)
    if not any(c.isspace() for c in stripped):
        token = stripped.strip("\"'")
        if _one_token(token) and (not tokens_only or _token_shaped(token)):
            start = at + stripped.index(token)
            return start, start + len(token)
        return None
    m = compiled(_FIELD, 0).match(body)
    if m is None:
        return None
    name, value = m.group("name").strip(), m.group("value")
    if _named(name) and is_value(value) and (len(value) >= 8 or looks_random(value, min_len=8)):
        return m.start("value"), m.end("value")
    if key_strength(name) == "weak" and looks_random(value):
        return m.start("value"), m.end("value")  # `key1  <88 base64>` in a table
    return None


def _starts_command(m: re.Match[str]) -> bool:
    """Whether the command starts its line, after a prompt or after a label ending in `:`
    (`Bash failed: $ …`): not a word in a sentence or in code."""
    line = m.string.rfind("\n", 0, m.start()) + 1
    before = m.string[line : m.start()]
    return (
        compiled(_STARTS, 0).fullmatch(before) is not None
        or compiled(r"[^\n]*[:$#>%][ \t]*" + _STARTS, 0).fullmatch(before) is not None
        or compiled(r"(?:[^\n]*[ \t])?(?:[●⏺][ \t]*)?Bash\(", 0).fullmatch(before) is not None
    )


# a quoted field value a terminal wrapped onto the next line
_WRAPPED = (
    r"(?m)^[ \t]*\"(?P<name>[\w .-]{1,60})\"[ \t]*:[ \t]*\""
    r"(?P<value>[^\"\s]{1,500}\r?\n[ \t]*[^\"\s]{1,500})\""
)


# a command after a pipe that prints what is derived from its input, not the input: a key's
# public half (`wg genkey | tee key | wg pubkey`, `openssl pkey -pubout`, `ssh-keygen -y`,
# `age-keygen -y`), a digest or a count
_DERIVES = (
    r"\|[ \t]*(?:sudo[ \t]+)?(?:wg[ \t]+pubkey\b|openssl\b[^\n|]*?-pubout\b"
    r"|(?:ssh|age)-keygen\b[^\n|]*?[ \t]-y\b|(?:sha\d*|md5|b2|shasum|cksum)(?:sum)?\b|wc\b"
    r"|openssl[ \t]+dgst\b)"
)


def derives_public(command_line: str) -> bool:
    """Whether a command line's output is derived from the secret it makes (its public
    half, a digest) by a command it pipes into: `wg genkey | tee private | wg pubkey`."""
    return compiled(_DERIVES, 0).search(command_line) is not None


def _output(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    if not _secret_var(m) or not _starts_command(m):
        return
    line = m.string[m.start() : m.start("out")]
    if derives_public(line):
        return
    inline = compiled(r"(?:→|=>|->|#[ \t]*(?:->|=>|→)?)[ \t]*([^\s'\"`]{16,500})", 0).search(line)
    if inline is not None and _token_shaped(inline.group(1).rstrip(".,;)")):
        return  # its output is on its own line (`→ <token>`): the next lines are not it
    for w in compiled(_WRAPPED, 0).finditer(m.string, m.start("out"), m.end("out")):
        if _named(w.group("name")):
            yield w.span("value")
    at = m.start("out")
    tokens_only = _prints_token(m)
    for line in m.group("out").split("\n"):
        # Claude Code shows a tool's output after `⎿`
        k = line.index("⎿") + 1 if line.lstrip().startswith("⎿") else 0
        found = _line_secret(line[k:], tokens_only)
        if found is not None:
            yield at + k + found[0], at + k + found[1]
        at += len(line) + 1


def _rule(keywords: tuple[str, ...], command: str) -> Rule:
    return Rule(
        "command-output",
        r"(?<![\w./-])(?:" + command + r")[^\n]*\n" + _OUTPUT,
        keywords,
        needs=("\n",),
        priority=CONTEXT,
        expand=_output,
    )


# what a command printed, written on its line: `openssl rand -hex 32 → <hex>`,
# `$ openssl rand -hex 32  # <hex>`, "the output of `openssl rand -base64 32`: <b64>"
_SAME_LINE = r"[^\n]{0,40}?[ \t`)]*(?:→|=>|->|#[ \t]*(?:->|=>|→)?|:(?=[ \t]))[ \t]*(?P<tok>[^\s'\"`]{16,500})"


def _same_line(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    tok = m.group("tok").rstrip(".,;)")
    if derives_public(m.string[m.start() : m.start("tok")]):
        return
    if _secret_var(m) and _one_token(tok) and _token_shaped(tok) and "/" not in tok[:1]:
        yield m.start("tok"), m.start("tok") + len(tok)


def _inline_rule(keywords: tuple[str, ...], command: str) -> Rule:
    return Rule(
        "command-output",
        r"(?<![\w./-])(?:" + command + r")" + _SAME_LINE,
        keywords,
        priority=CONTEXT,
        expand=_same_line,
    )


RULES: list[Rule] = [_rule(keywords, command) for keywords, command in PRINTS_SECRET]
RULES += [_inline_rule(keywords, command) for keywords, command in PRINTS_SECRET]
