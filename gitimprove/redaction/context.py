"""gitimprove's own rules, beside gitleaks': credentials recognised by their context.

gitleaks finds provider tokens by their shape; what an agent's tool error or a transcript
holds is often a password with no shape at all, recognisable only by where it stands: after
a `password=` or `"secret":` key (env, JSON, YAML, TOML, code), in `scheme://user:<pw>@host`
or `?token=`, an `Authorization:` header, `mysql -p<pw>`, `--token <value>`, a `.netrc`
line, a Docker `"auth"` entry, or a long random string right after a word like "token".
The checks here keep code such as `token = next_token` or `password: str` untouched.
"""

from __future__ import annotations

import itertools
import re

from gitimprove.redaction.engine import CONTEXT, SPECIFIC, Rule, compiled, entropy


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- what a value must look like ---------------------------------------------------------

_NOT_VALUES = _words(
    "none null nil true false undefined str string bytes int integer bool boolean number float "
    "any object optional required redacted hidden masked your_token your_password your_api_key"
)
# compiled on first use (importing this module must stay cheap for the hooks)
_REFERENCE = r"""^(?:
        \$\{?[A-Za-z_][\w.]*\}?                     # $TOKEN ${TOKEN}
      | \$\{\{.*\}\}|\{\{.*\}\}|\$\(.*\)            # ${{ secrets.X }}, {{ .Values.x }}, $(cmd)
      | %[A-Za-z_]\w*%|@[A-Za-z_]\w*@               # %TOKEN% @TOKEN@
      | \{[A-Za-z_][\w.\[\]'"]*(?:![rsa])?(?::[^{}]*)?\}  # a format field: {password}
      | <[^<>]*>|\[[^\[\]]*\]                       # <your-token> [REDACTED]
      | [A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+  # settings.SECRET_KEY, os.environ
      | \d{1,5}(?:\.\d+)?                           # a count, a port, a size
    )$"""
_PLACEHOLDER = r"^(?:[*x#.\-_]+|x{3,}|\*{3,}|\.{3,}|…)$"
# a value that says it is not a real one (`dev-only-secret-not-for-production`, `changeme`)
_SAYS_FAKE = _words(
    "placeholder example examples dummy fake sample changeme replaceme your insert todo fixme "
    "xxx xxxx redacted"
)
_SAYS_FAKE_PHRASES = ("not-for-production", "not_for_production", "dev-only", "test-only")


def is_value(value: str) -> bool:
    """Not a reference, placeholder, type name or earlier marker."""
    v = value.strip().rstrip(".,:").removesuffix('\\"').removesuffix("\\'")
    default = compiled(r"\$\{[A-Za-z_]\w*:?[-=?+](.*)\}", 0).fullmatch(v)
    if default:  # ${TOKEN:-fallback}: only the fallback can be a secret
        return is_value(default.group(1))
    return (
        len(v) >= 4
        and any(c.isalnum() for c in v)
        and v.lower() not in _NOT_VALUES
        and not compiled(_REFERENCE, re.X).match(v)
        and not compiled(_PLACEHOLDER, re.I).match(v)
        and "[REDACTED:" not in v
        and not _says_fake(v)
    )


def _says_fake(value: str) -> bool:
    low = value.lower()
    if any(p in low for p in _SAYS_FAKE_PHRASES):
        return True
    return any(w in _SAYS_FAKE for w in compiled(r"[a-z]+", 0).findall(low))


def looks_random(value: str, *, min_len: int = 16) -> bool:
    """A long string that is not a word, a path or an identifier: letters mixed with digits,
    switching between them often, with high entropy (an API key, a hex or base64 secret)."""
    if len(value) < min_len or value.count("/") > 2:
        return False
    if not any(c.isdigit() for c in value) or not any(c.isalpha() for c in value):
        return False
    kinds = ["d" if c.isdigit() else "u" if c.isupper() else "l" for c in value if c.isalnum()]
    switches = sum(1 for a, b in itertools.pairwise(kinds) if a != b)
    return switches * 5 >= len(kinds) and entropy(value) >= 3.0


def secret_like(value: str) -> bool:
    """An unquoted value that is not just letters (code names a variable that way)."""
    return any(not (c.isalpha() or c in "._-") for c in value)


# --- key names ---------------------------------------------------------------------------

_CAMEL = r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+"
_STRONG = _words(
    "password passwd passphrase pwd pw pass secret secrets token apikey credential credentials "
    "creds privatekey clientsecret accesstoken authtoken refreshtoken bearertoken sessiontoken "
    "accountkey masterkey signingkey secretkey accesskey encryptionkey sharedaccesskey"
)
_PAIRS = _words(
    "api_key access_key secret_key private_key client_secret account_key master_key "
    "signing_key encryption_key shared_access_key auth_token session_key session_secret"
)
# (not "session": a session id names a session, it grants nothing)
_WEAK = _words("key auth sig signature cookie dsn salt")
# a key naming something about the credential, not the credential itself
_ABOUT = _words(
    "length len size name names id ids type types file files path paths dir url uri endpoint "
    "field prompt policy hint label count counts max min timeout expiry expires expiration ttl "
    "format env var header mode enabled required rule rules regex pattern hash hashed strength "
    "reset changed manager helper provider source index kind class prefix suffix limit version "
    "algorithm algo scheme usage budget tokenizer tokens location ref store storage chars "
    "charset alphabet"
)
_NOT_SECRET_FIRST = _words("csrf xsrf public publishable next page continuation")


def key_strength(key: str) -> str | None:
    """'strong' when the key names a credential (`DB_PASSWORD`, `clientSecret`, `api-key`),
    'weak' when it may (`key`, `auth`, `sig`), None otherwise (`author`, `token_count`)."""
    words = [w.lower() for w in compiled(_CAMEL, 0).findall(key)]
    if not words or words[-1] in _ABOUT or words[0] in _NOT_SECRET_FIRST:
        return None
    if words in (["pass"], ["pw"]):
        return "weak"  # "tests pass: 42/42" is prose; `db_pass = x` names a password
    if any(w in _STRONG or w.endswith(("password", "passwd", "token", "secret")) for w in words):
        return "strong"
    joined = "_" + "_".join(words) + "_"
    if any(f"_{p}_" in joined for p in _PAIRS):
        return "strong"
    if words[-1] in _WEAK or words[0] in _WEAK:
        return "weak"
    return None


def kind_of(key: str) -> str:
    low = key.lower()
    return "password" if any(w in low for w in ("pass", "pwd", "pw")) else "credential"


def assignment_is_secret(key: str, value: str, *, quoted: bool, env_style: bool) -> bool:
    """Whether `key <op> value` assigns a credential: a weak key needs a random-looking
    value; a strong one any real value, unless it is unquoted code (`token = next_token`)."""
    strength = key_strength(key)
    if strength is None or not is_value(value):
        return False
    if strength == "weak":
        return looks_random(value)
    return quoted or env_style or secret_like(value) or looks_random(value)


# --- the checks the rules call -----------------------------------------------------------


def _check_assignment(secret: str, m: re.Match[str]) -> bool | str:
    key, sep = m.group("key"), m.group("sep")
    quoted = m.group("dq") is not None or m.group("sq") is not None
    if not quoted and m.string[m.end() : m.end() + 1] == "(":
        return False  # a call: `password = get_password()`
    if compiled(r"\d+(?::\d+)*:?", 0).fullmatch(secret) and compiled(r"\.[A-Za-z]{1,6}$", 0).search(
        key
    ):
        return False  # a source location in a stack trace: `lib/phoenix/token.ex:266:`
    env_style = key.isupper() and sep == "="
    if not assignment_is_secret(key, secret, quoted=quoted, env_style=env_style):
        return False
    return kind_of(key)


def _check_value(secret: str, m: re.Match[str]) -> bool:
    return is_value(secret)


def _check_flag_value(secret: str, m: re.Match[str]) -> bool:
    """`--password=x` always; `--token VALUE` when VALUE is not a plain word."""
    if not is_value(secret):
        return False
    spaced = m.group("sep") != "="
    quoted = m.group("q") is not None
    return quoted or not spaced or secret_like(secret) or looks_random(secret)


def _check_random(secret: str, m: re.Match[str]) -> bool:
    return is_value(secret) and looks_random(secret)


def _check_basic(secret: str, m: re.Match[str]) -> bool:
    """`Basic <base64 of user:password>`."""
    import base64
    import binascii

    try:
        decoded = base64.b64decode(secret + "=" * (-len(secret) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    text = decoded.decode("latin-1")
    return ":" in text and text.isascii() and text.isprintable()


def _check_private_key(secret: str, m: re.Match[str]) -> bool:
    body = secret[secret.find("-----", 5) :]
    return compiled(r"[A-Za-z0-9+/=]{16}").search(body) is not None


def _check_header(secret: str, m: re.Match[str]) -> bool:
    """An `Authorization:` value: a token has digits, base64 of user:password, or a JWT."""
    if not is_value(secret):
        return False
    return any(c.isdigit() for c in secret) or _check_basic(secret, m) or secret.count(".") == 2


def _check_bearer(secret: str, m: re.Match[str]) -> bool:
    return is_value(secret) and (looks_random(secret) or secret.count(".") == 2)


# --- the rules ---------------------------------------------------------------------------

_KEY = (
    r"[\w.-]{0,40}?(?:pass(?:word|wd|phrase)?|pwd|pw|secret|token|api[_.-]?key|apikey|"
    r"access[_.-]?key|private[_.-]?key|secret[_.-]?key|client[_.-]?secret|credentials?|creds|"
    r"auth|sig|signature|cookie|dsn|salt|key)[\w.-]{0,40}"
)
# a bare value ends at an escape sequence (`\n` of text that is itself JSON-escaped)
_VALUE = (
    r"""(?:"(?P<dq>(?:[^"\\\n]|\\.){1,500})"|'(?P<sq>[^'\n]{1,500})'"""
    r"""|(?P<bare>(?:[^\s'"`,;&()<>{}\[\]|\\]|\\(?![nrt"\\])){1,500}))"""
)
_QUOTED_OR_BARE = r"""\s*(?:"([^"\n]+)"|'([^'\n]+)'|([^\s'"|;&`]+))"""
_URL = r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,30}://"
# the rest of one shell command: not past a newline (nor an escaped one), a pipe or `;`
_SAME_COMMAND = r"(?:[^\n|;&\\]|\\(?![nr]))*?"

RULES: list[Rule] = [
    Rule(
        "private-key",
        r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[A-Za-z0-9+/=\s]|\\[nrt]|[A-Za-z]+-[A-Za-z]+:[^\n\\]*)*"
        r"(?:-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----)?",
        ("-----begin",),
        priority=SPECIFIC,
        flags=re.ASCII | re.IGNORECASE,
        check=_check_private_key,
    ),
    Rule(
        "url-password",
        _URL + r"[^\s:/?#@'\"<>\[\]]{0,128}:([^\s@/'\"<>]{1,256})@",
        ("://",),
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        "url-token",
        _URL + r"([A-Za-z0-9_.~+-]{16,256})@[\w.-]",
        ("://",),
        priority=CONTEXT,
        check=_check_random,
    ),
    Rule(
        "url-credential",
        r"(?i)[?&;](?:access_?token|api_?key|apikey|auth|auth_?token|client_?secret|key|"
        r"password|passwd|pwd|secret|sig|signature|token|x-amz-signature|x-amz-credential|"
        r"x-amz-security-token|x-goog-signature|code_verifier)=([^&\s#'\"<>]{6,})",
        tuple(f"{k}=" for k in _words("token key sig signature secret password passwd pwd auth")),
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        "auth-header",
        r"(?i)\b(?:proxy-)?authorization\\?[\"']?\s*[:=]\s*\\?[\"']?"
        r"(?:(?:basic|bearer|token|digest|negotiate|ntlm|otp|apikey|api-key|sso-key|key)\s+)?"
        r"([A-Za-z0-9._~+/=:-]{8,})",
        ("authorization",),
        priority=CONTEXT,
        check=_check_header,
    ),
    Rule(
        "bearer-token",
        r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{16,})",
        ("bearer",),
        priority=CONTEXT,
        check=_check_bearer,
    ),
    Rule(
        "basic-auth",
        r"(?i)\bbasic\s+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])",
        ("basic",),
        priority=CONTEXT,
        check=_check_basic,
    ),
    Rule(
        "netrc-password",
        r"(?im)(?:\bmachine[ \t]+\S+|^[ \t]*default)"
        r"(?:\s+(?:login|account|port|protocol)\s+\S+)*\s+password[ \t\r\n]+(\S+)"
        r"|^[ \t]*password[ \t]+(\S+)[ \t]*$",
        ("machine", "default", "password"),
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        "docker-auth",
        r"\\?\"(?:auth|identitytoken|registrytoken)\\?\"\s*:\s*\\?\"([A-Za-z0-9+/=_.~-]{8,})\\?\"",
        ('"auth', "identitytoken", "registrytoken"),
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        "cli-password",
        r"(?i)\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump|mongo|"
        r"mongosh|mongodump|mongorestore)\b" + _SAME_COMMAND + r"\s-p" + _QUOTED_OR_BARE,
        ("mysql", "mariadb", "mongo"),
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        "cli-password",
        r"(?i)\b(?:sshpass\s+-p|redis-cli\b"
        + _SAME_COMMAND
        + r"\s-a|sqlcmd\b"
        + _SAME_COMMAND
        + r"\s-P|"
        r"docker\s+login\b"
        + _SAME_COMMAND
        + r"\s-p|smbclient\b"
        + _SAME_COMMAND
        + r"\s-U\s*[^\s%]+%)"
        + _QUOTED_OR_BARE,
        ("sshpass", "redis-cli", "sqlcmd", "docker", "smbclient"),
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        "cli-password",
        r"(?i)\b(?:curl|wget)\b" + _SAME_COMMAND + r"\s(?:-u|--user|--auth|-a)(?:=|[ \t]*)"
        r"[\"']?[^\s:'\"]+:([^\s'\"]+)",
        ("curl", "wget"),
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        "cli-password",
        r"(?i)(?<![\w-])--?(?:[\w-]*[-_])?(?:password|passwd|pass|pwd|token|secret|api-?key|"
        r"access-?key|secret-?key|auth-?token|client-?secret|private-?token)"
        r"(?P<sep>=|[ \t]+)(?:(?P<q>[\"'])(?P<qv>[^\"'\n]{4,})(?P=q)|(?P<bv>[^\s'\"|;&<>()`]{4,}))",
        ("--", "-pass", "-pwd", "-token", "-secret", "-key"),
        groups=("qv", "bv"),
        priority=CONTEXT,
        check=_check_flag_value,
    ),
    Rule(
        "credential",
        r"(?i)(?<![\w.-])(?P<kq>\\?[\"']?)(?P<key>" + _KEY + r")(?P=kq)"
        r"(?P<sep>[ \t]*(?::=|=>|=|:)[ \t]*)\\?" + _VALUE,
        tuple(_words("pass pwd pw secret token key auth cred sig cookie dsn salt")),
        groups=("dq", "sq", "bare"),
        priority=CONTEXT,
        check=_check_assignment,
    ),
    Rule(
        "credential",
        r"(?i)\b(?:password|passwd|passphrase|secret|token|api[ _-]?key|access[ _-]?key|"
        r"credential)s?(?:\s+(?:is|was|of)\s+|\s*[:=]\s*|\s+)[\"'`]?([A-Za-z0-9+/_.~=-]{16,})",
        ("pass", "secret", "token", "key", "credential"),
        priority=CONTEXT,
        check=_check_random,
    ),
]
