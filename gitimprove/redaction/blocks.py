"""Credentials that a block around them makes secret, though their own line names nothing.

- A Kubernetes Secret's `stringData:` and `data:` (base64): every value of the block is
  the Secret's content, whatever its key (`connection: …`, `mykey: <base64>`), except
  fields that describe rather than hold (`username`, `host`, `port`, `url`, …) and values
  that read as plain words; a `data:` value is judged by what its base64 decodes to. The
  document (between `---` lines) must say `kind: Secret`; a ConfigMap's `data:` is left.
- A here-document written into a file named after a secret (`cat <<EOF >
  /run/secrets/db_password`, `tee ~/.vault_pass <<'EOF'`): a body line that is one token is
  the secret. Into an env file (`.env`, `*.env`, `.envrc`): a `NAME=value` line whose value
  reads as random is one, whatever the name (`MAILER=<32 random>`).
- A here-document assigned to a name naming a credential, its body over several lines
  (Ruby `password = <<~EOS`, PHP `$private_key = <<<KEY`, HCL `password = <<EOT`, and a
  Terraform `default = <<-EOT` in `variable "db_password"` or a `sensitive` one): each body
  line that is one token and reads as a value is a secret (under a name that only may name
  one, `key`, `auth`, a token that reads as generated).
- A kubeconfig user's `token:` (`users:` … `user:` / `token: <uuid>`), whatever its shape.
- Erlang and Elixir tuples: `{password, "…"}`, `{:api_key, <<"…">>}`.
"""

from __future__ import annotations

import base64
import binascii
import re

from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.holders import held_value
from gitimprove.redaction.values import (
    assignment_is_secret,
    is_value,
    key_strength,
    kind_of,
    looks_random,
    mixed_case,
    password_evidence,
    random_value,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_SECRET_KIND = r"(?im)(?<![\w-])[\"']?kind[\"']?[ \t]*:[ \t]*[\"']?Secret[\"']?[ \t]*,?[ \t]*\r?$"
_ENTRY = (
    r"(?m)^(?P<ind>[ \t]+)[\"']?(?P<f>[\w.-]{1,253})[\"']?[ \t]*:[ \t]+"
    r"(?:\"(?P<dq>[^\"\n]{1,4000})\"|'(?P<sq>[^'\n]{1,4000})'|(?P<bare>[^\s#\"'|>][^\s]{0,3999}))"
    r"[ \t]*\r?$"
)


def _document(text: str, at: int) -> str:
    """The YAML document holding position `at` (between `---` lines)."""
    starts = [m.end() for m in compiled(r"(?m)^---[^\n]*$", 0).finditer(text, 0, at)]
    start = starts[-1] if starts else 0
    end = compiled(r"(?m)^---", 0).search(text, at)
    return text[start : end.start() if end else len(text)]


def _decoded(value: str) -> str | None:
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return ""  # binary: a key, a keystore


def _k8s_secret(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    text = m.string
    if compiled(_SECRET_KIND, 0).search(_document(text, m.start())) is None:
        return
    encoded = m.group("block") == "data"
    for e in compiled(_ENTRY, 0).finditer(text, m.start("body"), m.end("body")):
        g = "dq" if e.group("dq") is not None else "sq" if e.group("sq") is not None else "bare"
        value = e.group(g)
        start, end = e.span(g)
        if g == "bare":
            value, end = _continued(text, value, end, ":")
        if encoded:
            plain = _decoded(value)
            if plain is None or not (plain == "" or held_value(e.group("f"), plain.strip())):
                continue
        elif not held_value(e.group("f"), value):
            continue
        yield start, end


_REST = r"[ \t]*(?!---|#|- )([^\s'\"]{1,4000})[ \t]*\r?(?:\n|$)"


def _continued(text: str, value: str, end: int, sep: str) -> tuple[str, int]:
    """A value and the lines that go on with it: a line of token characters alone, holding
    no `sep` (`:` in YAML, `=` in an env file), is the rest of a value a terminal broke."""
    for _ in range(20):
        if text[end : end + 1] != "\n" and text[end : end + 2] != "\r\n":
            break
        at = end + (1 if text[end] == "\n" else 2)
        rest = compiled(_REST, 0).match(text, at)
        if rest is None or sep in rest.group(1):
            break
        value += rest.group(1)
        end = rest.end(1)
    return value, end


# a here-document: its command line, its body and its end (`EOF`, `'EOF'`, `<<-END`)
_HEREDOC = (
    r"(?m)^(?P<cmd>[^\n]*?(?<!<)<<-?[ \t]*(?P<q>[\"']?)(?P<tag>[A-Za-z_]\w{0,20})(?P=q)[^\n]*)\r?\n"
    # (its end may have been cut off; a line that starts another here-document ends it, so a
    # `<<` that starts none — `cout << x` — cannot take a later here-document into its body)
    r"(?P<body>(?:(?![ \t]*(?P=tag)\b)(?![^\n]*(?<!<)<<-?[ \t]*[\"']?[A-Za-z_])[^\n]*(?:\n|\Z)){1,200}?)"
    r"(?:[ \t]*(?P=tag)\b|\Z)"
)
_TARGET = r"(?:>>?|\btee(?:[ \t]+-a)?)[ \t]*[\"']?(?P<file>[^\s\"';|&<>]+)"
_SECRET_FILE = (
    r"(?i)(?:vault[_-]?pass|passw(?:or)?d|passphrase|secret|token|api[_-]?key|\.pass$"
    r"|credential|\.pgpass|private[_-]?key)"
)
_ENV_FILE = r"(?i)(?:^|/)(?:\.env(?:\.[\w-]+)?|[\w-]+\.env|\.envrc)$"
_ENV_LINE = r"(?m)^[ \t]*(?:export[ \t]+)?(?P<name>[A-Za-z_]\w{0,80})=(?P<q>[\"']?)(?P<v>[^\s\"']{4,500})(?P=q)[ \t]*\r?$"


def _heredoc(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    target = compiled(_TARGET, 0).search(m.group("cmd"))
    if target is None:
        return
    name = target.group("file")
    body, at = m.group("body"), m.start("body")
    if compiled(_SECRET_FILE, 0).search(name.rsplit("/", 1)[-1]) or "/secrets/" in name:
        for line in compiled(r"(?m)^[ \t]*(?P<t>\S{4,4000})[ \t]*\r?$", 0).finditer(body):
            if is_value(line.group("t")) and not line.group("t").startswith(("-----", "[")):
                yield at + line.start("t"), at + line.end("t")
    elif compiled(_ENV_FILE, 0).search(name):
        for line in compiled(_ENV_LINE, 0).finditer(body):
            v, end = line.group("v"), line.end("v")
            if not line.group("q"):
                v, end = _continued(body, v, end, "=")
            if random_value(v) and "://" not in v:
                yield at + line.start("v"), at + end


# a here-document given to a name: `password = <<~EOS`, `$key = <<<KEY`, `default = <<-EOT`
_ASSIGNED_HEREDOC = (
    r"(?<![\w.$@-])[$@]?(?P<key>[A-Za-z_][\w.-]{0,80})[\"']?[ \t]*(?:=>|:=|=|:)[ \t]*"
    r"<<(?:<|[~-])?[ \t]*(?P<q>[\"']?)(?P<tag>[A-Za-z_]\w{0,30})(?P=q)[^\n]*\r?\n"
    # (its end must be there: a document that only mentions `password = <<~EOS` opens none)
    r"(?P<body>(?:(?![ \t]*(?P=tag)\b)[^\n]*\n){1,200}?)[ \t]*(?P=tag)\b"
)
# the Terraform block around `default = <<EOT`: its name, and whether it says `sensitive`
_HCL_BLOCK = (
    r"(?:variable|output)[ \t]+\"(?P<name>[\w-]{1,100})\"[ \t]*\{(?P<inside>[^{}]{0,2000})$"
)


def _assigned_heredoc(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    key = m.group("key")
    if key in ("default", "value"):
        # a Terraform block's value: the block's name says what it holds
        block = compiled(_HCL_BLOCK, 0).search(m.string, max(0, m.start() - 2000), m.start())
        if block is None:
            return
        sensitive = compiled(r"\bsensitive[ \t]*=[ \t]*true\b", 0).search(block.group("inside"))
        key = "password" if sensitive else block.group("name")
    strength = key_strength(key)
    if strength is None:
        return
    at = m.start("body")
    for line in compiled(r"(?m)^[ \t]*(?P<t>\S{4,4000})[ \t]*\r?$", 0).finditer(m.group("body")):
        token = line.group("t")
        if not is_value(token) or token.startswith(("-----", "{", "[", "<")):
            continue  # (a PEM armour line, a JSON or XML document's line)
        if compiled(r"[A-Za-z_][\w.]*\(", 0).search(token):
            continue  # code: `Rule(`, `needs=(`
        # (under a name naming a credential, letters with digits; else it reads as generated)
        mixed = any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
        if (
            (strength == "strong" and mixed)
            or looks_random(token)
            or password_evidence(token)
            or mixed_case(token)
        ) and assignment_is_secret(key, token, quoted=True, env_style=True) is not False:
            yield at + line.start("t"), at + line.end("t")


# a kubeconfig's user: `users:` / `- name: …` / `  user:` then its fields, indented deeper
_KUBE_USER = (
    r"(?m)^(?P<ind>[ \t]*)user:[ \t]*\r?\n(?P<body>(?:(?P=ind)[ \t]+[^\n]*(?:\n|\Z)){1,60})"
)
_KUBE_TOKEN = r"(?m)^[ \t]+(?:token|password|access-token|id-token|refresh-token):[ \t]+[\"']?(?P<v>[^\s\"']{8,4000})"


def _kube_user(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    """A kubeconfig user's `token:` (a bearer token, whatever its shape: a UUID, a
    bootstrap token `abcdef.0123456789abcdef`) and the like; a reference, and a name with
    no digit whose case is a name's (`token: Punctuation`), pass. (A user's
    mapping holding a `token:` field anywhere else holds one too; the lines around need not
    be there: a terminal's wrap is read in a window of two lines.)"""
    at = m.start("body")
    for f in compiled(_KUBE_TOKEN, 0).finditer(m.group("body")):
        value = f.group("v")
        if not any(c.isdigit() for c in value) and not mixed_case(value):
            continue  # a name (`token: Punctuation`, `PageToken`, `session-cookie-name`)
        if is_value(value):
            yield at + f.start("v"), at + f.end("v")


def _check_tuple(secret: str, m: re.Match[str]) -> bool | str:
    key = m.group("key")
    return assignment_is_secret(key, secret, quoted=True, env_style=True) and kind_of(key)


RULES: list[Rule] = [
    Rule(
        "credential",
        r"(?m)^(?P<ind>[ \t]*)(?P<block>stringData|data)[ \t]*:[ \t]*\r?\n"
        r"(?P<body>(?:(?:(?P=ind)[ \t]+[^\n]*|[ \t]*\r?|(?!---|#|- )[^\s:'\"]{1,4000}\r?)(?:\n|$)){1,500})",
        ("data:",),
        needs=("Secret",),
        priority=CONTEXT,
        expand=_k8s_secret,
    ),
    Rule(
        "credential",
        _HEREDOC,
        ("<<",),
        needs=(">", "tee"),
        priority=CONTEXT,
        expand=_heredoc,
    ),
    Rule(
        "credential",
        _KUBE_USER,
        ("user:",),
        needs=("token", "password"),
        priority=CONTEXT,
        expand=_kube_user,
    ),
    Rule(
        "credential",
        _ASSIGNED_HEREDOC,
        ("<<",),
        needs=("\n",),
        priority=CONTEXT,
        expand=_assigned_heredoc,
    ),
    Rule(
        "credential",
        r"\{[ \t]*:?(?P<key>[A-Za-z_]\w{0,60})[ \t]*,[ \t]*(?:<<)?"
        r"(?:\"(?P<dq>(?:[^\"\\\n]|\\.){1,500})\"|'(?P<sq>[^'\n]{1,500})')(?:>>)?[ \t]*\}",
        ("pass", "pwd", "secret", "token", "key", "cred", "auth"),
        groups=("dq", "sq"),
        needs=("{",),
        priority=CONTEXT,
        check=_check_tuple,
    ),
]
