"""Credentials handed to a command without a flag naming them, and declarations that name
them in a language's own syntax (beside `context.py`, `shapes.py`, `positional.py`).

- a password piped or fed to a command that reads one (`echo "<pw>" | sudo -S apt …`,
  `sudo -S <<< "<pw>"`, `echo <pw> | gh secret set X`, `| gcloud secrets create`,
  `| passwd --stdin`), and the value of a GitHub Actions `add-mask` command;
- Windows `cmdkey /pass:<pw>`, `schtasks /rp <pw>`;
- `aws ssm put-parameter` with a `--name` naming a password and its `--value`,
  `dotnet user-secrets set "Stripe:SecretKey" <v>`;
- PHP `new mysqli(host, user, '<pw>', db)`, `new PDO(dsn, user, '<pw>')`;
- a Rust `const API_KEY: &str = "<pw>"`, Ruby `ENV['X_SECRET'] ||= '<pw>'`, a Terraform
  output's `"db_password": {"sensitive": true, "value": "<pw>"}`, an HCL heredoc under a
  credential key.
"""

from __future__ import annotations

import re

from gitimprove.redaction.engine import CONTEXT, Rule
from gitimprove.redaction.values import (
    assignment_is_secret,
    encodes_prose,
    is_identifier_value,
    is_value,
    kind_of,
    looks_random,
    password_evidence,
)

_VAL = r"""(?:"(?P<dq>(?:[^"\\\n]|\\.){1,500})"|'(?P<sq>[^'\n]{1,500})'|(?P<bare>[^\s'"|;&<>]{1,500}))"""
_GROUPS = ("dq", "sq", "bare")
# commands that read a secret from their standard input
_READS_SECRET = (
    r"sudo\b[^\n|;&]*?\s-S\b|sudo\s+--stdin\b|gh\s+secret\s+set\b|"
    r"gcloud\s+secrets\s+(?:create|versions\s+add)\b|passwd\s+--stdin\b|"
    r"kubectl\s+create\s+secret\b[^\n|;&]*--from-file=[\w-]*=?/dev/stdin|"
    # secret stores of hosting platforms that read the value from stdin
    r"(?:npx\s+|bunx\s+)?wrangler\s+(?:pages\s+)?secret\s+put\b|vercel\s+env\s+add\b|"
    r"netlify\s+env:set\b|firebase\s+functions[:]secrets[:]set\b|fly(?:ctl)?\s+secrets\s+import\b|"
    r"supabase\s+secrets\s+set\b|(?:docker|podman|helm\s+registry|oras|crane\s+auth)\s+login\b"
    r"[^\n|;&]*--password-stdin|(?:gh|glab)\s+auth\s+login\b[^\n|;&<]*--(?:with-)?token\b(?![ \t=]+[^\s<-])|"
    r"[\w-]+\b[^\n|;&<]*--(?:password|token|secret|key)-stdin\b"
)

_READERS: tuple[str, ...] = (
    "sudo",
    "gh secret",
    "gcloud secrets",
    "passwd",
    "kubectl",
    "wrangler",
    "vercel",
)
_READERS += ("netlify", "firebase", "secrets", "stdin", "auth login")


def _check_value(secret: str, m: re.Match[str]) -> bool | str:
    return is_value(secret) and not secret.startswith("-") and "password"


def _check_fed(secret: str, m: re.Match[str]) -> bool | str:
    """A value a here-string or a process substitution feeds to any command: a password
    or a token by its characters alone (a digest, base64 of prose, a word pass)."""
    if not is_value(secret) or any(c.isspace() for c in secret) or secret[:1] in "$-{[":
        return False
    if is_identifier_value(secret) or encodes_prose(secret):
        return False
    if all(c in "0123456789abcdefABCDEF" for c in secret):
        return False  # a digest or an id in hex (`sha256sum <<< <md5>`)
    from gitimprove.redaction.layers import decode

    if decode(secret, shortest=8) is not None:
        return False  # base64 of text: judged by what it holds (`layers.py`)
    return (password_evidence(secret) or looks_random(secret)) and "credential"


def _check_named(secret: str, m: re.Match[str]) -> bool | str:
    key = m.group("key")
    if not assignment_is_secret(key, secret, quoted=True, env_style=True):
        return False
    return kind_of(key)


RULES: list[Rule] = [
    Rule(
        "password",
        r"\b(?:echo|printf)(?:[ \t]+-[neE]+)*(?:[ \t]+(?:'%s(?:\\n)?'|\"%s(?:\\n)?\"|%s))?[ \t]+"
        + _VAL
        + r"[ \t]*\|[ \t]*(?:"
        + _READS_SECRET
        + r")",
        _READERS,
        groups=_GROUPS,
        needs=("|",),
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        "password",
        # a here-string fed to a command that reads a secret: `sudo -S <<< "…"`,
        # `gh auth login --with-token <<< …`, `… --password-stdin <<< …`
        r"\b(?:" + _READS_SECRET + r")[^\n<]*<<<[ \t]*" + _VAL,
        _READERS,
        groups=_GROUPS,
        needs=("<<<",),
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        "credential",
        # fed to any command, by a here-string or a process substitution: `op signin <<<
        # …`, `terraform login <<< …`, `--password-file=<(echo …)`, `--data-file=<(echo -n …)`
        r"(?:<<<|<\([ \t]*(?:echo|printf)(?:[ \t]+-[neE]+)*(?:[ \t]+(?:'%s'|\"%s\"))?)[ \t]*"
        + _VAL,
        ("<<<", "<("),
        groups=_GROUPS,
        priority=CONTEXT,
        check=_check_fed,
    ),
    Rule(
        # PHP: the password is the third argument (`new mysqli(host, user, '…', db)`,
        # `new PDO(dsn, user, '…')`, `mysqli_connect(host, user, '…')`)
        "password",
        r"(?i)\b(?:new[ \t]+(?:mysqli|PDO)|mysqli_connect|mysqli_real_connect)[ \t]*\("
        r"(?:[ \t]*(?:\$?\w+|\"[^\"\n]*\"|'[^'\n]*'),){2}[ \t]*"
        r"(?:\"(?P<dq>(?:[^\"\\\n]|\\.){1,500})\"|'(?P<sq>[^'\n]{1,500})')",
        ("mysqli", "pdo"),
        groups=("dq", "sq"),
        needs=("(",),
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        "credential",
        r"[:]{2}add-mask[:]{2}([^\s\"'`]{3,500})",
        ("add-mask",),
        priority=CONTEXT,
        check=lambda s, m: is_value(s),
    ),
    Rule(
        "password",
        r"(?i)\b(?:cmdkey\b[^\n]*?/pass:|schtasks\b[^\n]*?[ \t]/rp[ \t]+)" + _VAL,
        ("cmdkey", "schtasks"),
        groups=_GROUPS,
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        "credential",
        r"(?i)\bput-parameter\b[^\n|;&]*?--name[ =][\"']?(?P<key>[\w/.:-]+)[\"']?"
        r"[^\n|;&]*?--value[ =]" + _VAL,
        ("put-parameter",),
        groups=_GROUPS,
        priority=CONTEXT,
        check=_check_named,
    ),
    Rule(
        "credential",
        r"(?i)\buser-secrets[ \t]+set[ \t]+[\"']?(?P<key>[\w:.-]+)[\"']?[ \t]+" + _VAL,
        ("user-secrets",),
        groups=_GROUPS,
        priority=CONTEXT,
        check=_check_named,
    ),
    Rule(
        "credential",
        r"\b(?:const|static)[ \t]+(?:mut[ \t]+)?(?P<key>\w+)[ \t]*:[ \t]*&(?:'static[ \t]+)?str"
        r"[ \t]*=[ \t]*\"(?P<dq>(?:[^\"\\\n]|\\.){1,500})\"",
        ("&str", "&'static str"),
        groups=("dq",),
        priority=CONTEXT,
        check=_check_named,
    ),
    Rule(
        "credential",
        r"\bENV\[[\"'](?P<key>\w+)[\"']\][ \t]*\|\|=[ \t]*" + _VAL,
        ("env[",),
        groups=_GROUPS,
        priority=CONTEXT,
        check=_check_named,
    ),
    Rule(
        "credential",
        r"\"(?P<key>[\w.-]+)\"[ \t]*:[ \t]*\{[^{}\n]{0,200}?\"value\"[ \t]*:[ \t]*"
        r"\"(?P<dq>(?:[^\"\\\n]|\\.){1,500})\"",
        ("value",),
        groups=("dq",),
        needs=("{",),
        priority=CONTEXT,
        check=_check_named,
    ),
    Rule(
        "credential",
        # (the key starts a word and is taken whole: a long run of word characters is
        # no longer tried from each of its positions)
        r"(?<![\w.-])(?P<key>[\w.-]++)[ \t]*=[ \t]*<<-?(?P<tag>[A-Z_]++)\r?\n[ \t]*(?P<bare>[^\s]{1,500})"
        r"[ \t]*\r?\n[ \t]*(?P=tag)\b",
        ("<<",),
        groups=("bare",),
        priority=CONTEXT,
        check=_check_named,
    ),
]
