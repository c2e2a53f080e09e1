"""gitimprove's own rules, beside gitleaks': credentials recognised by their context.

gitleaks finds provider tokens by their shape; what an agent's tool error or a transcript
holds is often a password with no shape at all, recognisable only by where it stands: after
a `password=` or `"secret":` key (env, JSON, YAML, TOML, code), in `scheme://user:<pw>@host`
or `?token=`, an `Authorization:` header, `mysql -p<pw>`, `--token <value>`, a `.netrc`
line, a Docker `"auth"` entry, or a long random string right after a word like "token".
The checks here keep code such as `token = next_token` or `password: str` untouched.
"""

from __future__ import annotations

import re

from gitimprove.redaction.engine import CONTEXT, SPECIFIC, Rule, compiled, entropy
from gitimprove.redaction.headers import generated
from gitimprove.redaction.values import (
    OBJECTS,
    assignment_is_secret,
    dotted_literal,
    in_ini_section,
    is_value,
    key_strength,
    kind_of,
    looks_random,
    memorable,
    mixed_case,
    names_itself,
    password_evidence,
    public_key_before,
    random_value,
    secret_like,
    words,
)

# --- the checks the rules call -----------------------------------------------------------


# what follows a name in an expression on its line: an operator, a comparison, a keyword
_EXPRESSION_GOES_ON = r"[ \t]+(?:==|!=|<=|>=|[-+*/%<>|&]|\?|if\b|and\b|or\b|else\b|for\b|in\b|is\b)"


def _check_assignment(secret: str, m: re.Match[str]) -> bool | str:
    key, sep = m.group("key"), m.group("sep")
    if key.startswith("-D") and len(key) > 2:
        key = key[2:]  # a JVM system property: `-Ddb_key=…` names `db_key`
    quoted = m.group("dq") is not None or m.group("sq") is not None
    if (
        not quoted
        and m.string[m.end() : m.end() + 1] == "("
        and compiled(r"[A-Za-z_$][\w.$:-]*", 0).fullmatch(secret)
    ):
        return False  # a call: `password = get_password()`
    if not quoted and secret.endswith("-") and m.string[m.end() : m.end() + 1] == ">":
        return False  # a member of an object: `$password = $request->input(…)`
    if compiled(r"\d+(?::\d+)*:?", 0).fullmatch(secret) and compiled(r"\.[A-Za-z]{1,6}$", 0).search(
        key
    ):
        return False  # a source location in a stack trace: `lib/phoenix/token.ex:266:`
    if (
        not quoted
        and compiled(
            r"(?:!!?|&|\*)[\w!-]+|[0-9]{0,3}\*[0-9]{0,3}[A-Za-z][A-Za-z-]*[0-9]{0,2}", 0
        ).fullmatch(secret)
        and not password_evidence(secret.lstrip("!&*"))
        and not looks_random(secret.lstrip("!&*"), min_len=8)
    ):
        # a YAML tag, anchor or alias: `pw: &p <value>`, `token: !!str <v>`; an ABNF
        # repetition of a rule's name: `token = 1*tchar` (`06*Qr2JH7kj` names no rule, and
        # an alias is a chosen name: `*AxzXMcU1v` in an env file is a password)
        return False
    before = m.string[max(0, m.start() - 12) : m.start()]
    if before.endswith("${") and secret.startswith(("?", "+")):
        return False  # `${DB_PASSWORD:?must be set}`: an error message, not a default
    if public_key_before(m.string, m.start()):
        return False  # `pub key: 0x04…`: a public key
    if key.lower() == "key" and compiled(r"(?:[A-Za-z][\w.]*-)+[0-9a-f]{32,}", 0).fullmatch(secret):
        return False  # a cache's key: labels and a digest (`Linux-pip-<sha256>`)
    if sep == ":" and _coordinates(key, secret):
        return False  # a Maven coordinate: `io.jsonwebtoken:jjwt-jackson:0.11.2`
    if (
        key.lower() in ("cookie", "set-cookie")
        and not m.group("kq")
        and sep.strip() == ":"
        and not quoted
        and compiled(r"[\w.-]{1,64}=[^=]", 0).match(secret)
    ):
        return False  # a `Cookie:` header: the cookie rule masks each value, not its name
    env_style = key.isupper() and sep == "="
    if sep.strip() in ("=", ":") and key.lower() in ("pw", "pass", "passwd") and _mixed(secret):
        return "password"  # `pw=<pw>`: a short name, but no prose reads `pass=x9…`
    if key.lower() == "pwd" and quoted and _password_not_path(secret):
        # `pwd <- "…"` (R), `pwd = "…"`: the shell's working directory is a path, and no
        # one quotes it into a variable of that name in code
        return "password"
    if (
        not quoted
        and sep.strip() == "="
        and secret.isalpha()
        and compiled(_EXPRESSION_GOES_ON, 0).match(m.string, m.end()) is not None
    ):
        return False  # `password = generated if x else None`: a name in an expression
    if sep.strip() == ":" and key_strength(key) == "strong" and memorable(secret):
        return "password"  # a memorable password as YAML writes it: a literal
    if (
        not quoted
        and sep.strip() in ("=", ":")
        and key_strength(key) == "strong"
        and kind_of(key) == "password"
        and dotted_literal(key, secret)
        and (in_ini_section(m.string, m.start()) or _literal_line(m, secret))
    ):
        return "password"  # a configuration file's value is a literal: `password = my.pass.word`
    if not assignment_is_secret(key, secret, quoted=quoted, env_style=env_style):
        return False
    return kind_of(key)


# a configuration file's name, as a command, a listing or a sentence names it (`cat .env`,
# `==> app.properties <==`, `in settings.cfg:`)
_CONFIG_FILE = (
    r"(?i)(?:^|[\s/'\"`(=:])(?:[\w.-]*\.(?:env|cfg|conf|ini|properties|toml|ya?ml|cnf|netrc|pypirc)"
    r"|\.env(?:\.[\w-]+)?|\.netrc|\.pgpass|\.pypirc)(?=$|[\s'\"`):,])"
)
# names Python reserves, which no attribute path of Python code holds (`my.pass.word`)
_RESERVED = words(
    "pass in is not and or if else elif for while def class return import from as with try "
    "except finally raise del global nonlocal lambda yield assert break continue async await"
)


def _literal_line(m: re.Match[str], value: str) -> bool:
    """Whether `key = a.b.c` (or `key: a.b.c`), its key starting a line, is a configuration
    file's line, where a value is a literal, rather than code reading an attribute path
    (`x: builtins.str` is Python's annotation): an env file's (`DB_PASSWORD=a.b.c`, no blank
    around `=`), a line below a configuration file's name (`cat .env`, `==> app.properties
    <==`, `in settings.cfg:`, within the three lines above), or a value no Python code can
    write (`my.pass.word`: `pass` is reserved), nothing after it on the line."""
    text = m.string
    start = m.start("key")
    line = text.rfind("\n", 0, start) + 1
    if compiled(r"[ \t]*(?:export[ \t]+)?", 0).fullmatch(text, line, start) is None:
        return False  # `f(password = …)`: code around the key
    if m.group("key").split(".", 1)[0].lower() in OBJECTS | {"obj", "user", "model"}:
        return False  # `self.password = …`, `config.password = …`: an object's attribute
    end = text.find("\n", m.end())
    rest = text[m.end() : len(text) if end == -1 else end].strip()
    if rest:
        return False  # `password = my.pass.word;`, `… if x else y`: a statement goes on
    sep = m.group("sep")
    if sep == "=" and m.group("key").isupper():
        return True  # an env file's line, or a shell's: the value is a string
    above = text.rfind("\n", 0, max(0, line - 1))
    for _ in range(2):
        above = text.rfind("\n", 0, max(0, above))
    if compiled(_CONFIG_FILE, re.M).search(text, above + 1, line) is not None:
        return True
    return any(p in _RESERVED for p in value.split("."))


def _coordinates(key: str, value: str) -> bool:
    """`group:artifact:version` (Maven, Gradle, Ivy): a dotted lower-case group id
    (`io.jsonwebtoken`), then an artifact's name and a version, joined by `:` (or the
    version by `-`)."""
    return (
        compiled(r"[a-z][a-z0-9_-]{0,40}(?:\.[a-z][a-z0-9_-]{0,40}){1,8}", 0).fullmatch(key)
        is not None
        and compiled(
            r"[A-Za-z][\w.-]{0,80}?[:-]v?[0-9]{1,6}(?:\.[0-9]{1,6}){1,3}(?:[.-][\w.-]{1,40})?"
            r"(?::[\w.-]{1,40}){0,2}",
            0,
        ).fullmatch(value)
        is not None
    )


def _password_not_path(value: str) -> bool:
    """A quoted value under `pwd` that is no directory (`"/srv/app"`, `"~/x"`, `"."`,
    `"src"`): digits or symbols beside letters."""
    return (
        (
            _mixed(value)
            or generated(value)
            or (is_value(value) and secret_like(value) and any(c.isalpha() for c in value))
        )
        and not any(c in value for c in "/\\~ ")
        and not value.startswith(".")
    )


def _check_value(secret: str, m: re.Match[str]) -> bool:
    return is_value(secret)


# what documentation writes where a password goes in `user:<password>`: the word for it
_ROLE_WORDS = words(
    "pass pw pwd passwd password passphrase secret token key apikey api_key api-key apitoken "
    "api_token pat"
)


# a CVS root's access method, before its user (`:pserver:anoncvs@host:/cvsroot`)
_CVS_METHOD = (
    r"(?i)(?:pserver|gserver|kserver|server|ext|extssh|ssh|fork|local|sspi)(?:;[^:@]{0,64})?:"
)


def _check_user_password(secret: str, m: re.Match[str]) -> bool:
    """The password of a `user:password` pair (a URL's, curl's `-u`), unless it is a
    placeholder: the word for what goes there (`user:pass`, `username:token`) or the user's
    name again (`test:test`, `guest:guest`)."""
    user = m.group("user").rsplit("@", 1)[0] if m.group("user") else ""
    cvs = compiled(_CVS_METHOD, 0).match(secret)
    if not user and cvs and ":" not in secret[cvs.end() :]:
        return False  # a CVS root (`cvs://:pserver:anoncvs@host`): a method and a user
    if secret.lower() in _ROLE_WORDS or (user and secret.lower() == user.lower()):
        return False
    return is_value(secret)


def check_user_pair(secret: str, m: re.Match[str]) -> bool:
    """A whole `user:password` pair (gitleaks' curl `-u` rule), unless its password is a
    placeholder (the word for it, or the user's name again)."""
    user, _, password = secret.strip("\"'").partition(":")
    user, password = user.strip("\"'"), password.strip("\"'")
    if not password:
        return True  # `-u user:` asks for the password; the rule's own judgement stands
    if password.lower() in _ROLE_WORDS or (user and password.lower() == user.lower()):
        return False
    # (not a reference or a template: `$PASS`, `{pw}`; a random value in braces is one)
    inside = password.strip("{}")
    return is_value(password) or looks_random(inside, min_len=8) or password_evidence(inside)


def _check_random_code(secret: str, m: re.Match[str]) -> bool:
    from urllib.parse import unquote

    value = unquote(secret)
    if looks_random(value) or looks_random(value.replace("/", "")):
        return True
    # (one case and digits scattered: `srmummr563qqfkbxhu03`, a code of lower-case letters)
    return (
        compiled(r"[A-Za-z0-9_-]{16,}", 0).fullmatch(value) is not None
        and any(c.isdigit() for c in value)
        and entropy(value) >= 3.3
        and _uncommon_pairs(value)
    )


def _uncommon_pairs(value: str) -> bool:
    """Letters drawn at random: under three quarters of their neighbouring pairs are pairs words have
    (words: nearly all; random letters: about a third)."""
    from gitimprove.redaction.standins import COMMON_PAIRS

    pairs = [
        run[i : i + 2]
        for run in compiled(r"[a-z]{2,}", 0).findall(value.lower())
        for i in range(len(run) - 1)
    ]
    return len(pairs) >= 4 and 4 * sum(p in COMMON_PAIRS for p in pairs) < 3 * len(pairs)


def _check_query_value(secret: str, m: re.Match[str]) -> bool:
    """A query's credential, unless the value only says its name again
    (`?access_token=ACCESS_TOKEN`, `&api_key=API_KEY`: a placeholder in an API's docs)."""
    return is_value(secret) and not names_itself(m.group("key"), secret)


def _check_netrc(secret: str, m: re.Match[str]) -> bool:
    """A `.netrc` password; a line of its own saying `password <word>.` is prose."""
    if m.group(2) is not None and compiled(r"[A-Za-z]+[.,;:!?]", 0).fullmatch(secret):
        return False
    return is_value(secret)


def _mixed(value: str) -> bool:
    return is_value(value) and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _check_flag_value(secret: str, m: re.Match[str]) -> bool:
    """`--password=x` always; `--token VALUE` when VALUE is not a plain word; a password of
    dotted names given with `=` (a shell passes it as written: no attribute path there)."""
    flag = m.group("flag").lower()
    if flag.endswith(("bypass", "compass")):
        return False
    if (
        m.group("sep") == "="
        and kind_of(flag) == "password"
        and "[REDACTED:" not in secret
        and dotted_literal(flag, secret)
    ):
        return True
    if not is_value(secret):
        return False
    spaced = m.group("sep") != "="
    quoted = m.group("q") is not None
    return quoted or not spaced or secret_like(secret) or looks_random(secret) or mixed_case(secret)


def _check_random(secret: str, m: re.Match[str]) -> bool:
    return random_value(secret)


# a token that identifies, not authenticates: a trace's, a span's or a request's id
_IDENTIFIES = r"(?i)\b(?:trace|span|request|correlation|parent|commit|sync)[ _-]?(?:id[ _-]?)?$"


def _check_prose(secret: str, m: re.Match[str]) -> bool:
    """A random value after a credential word, unless a word before it says the value is
    an identifier (`trace token <32 hex>`, `request token …`)."""
    before = m.string[max(0, m.start() - 24) : m.start()].rstrip()
    if compiled(_IDENTIFIES, 0).search(before) and compiled(r"[0-9a-fA-F-]+", 0).fullmatch(secret):
        return False
    return random_value(secret)


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


_SCHEMES = frozenset(
    [
        "basic",
        "bearer",
        "token",
        "digest",
        "negotiate",
        "ntlm",
        "otp",
        "apikey",
        "api-key",
        "sso-key",
        "key",
    ]
)


def _uuid(value: str) -> bool:
    return (
        compiled(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}", 0).fullmatch(value)
        is not None
    )


def _check_header(secret: str, m: re.Match[str]) -> bool:
    """An `Authorization:` value: a token has digits, base64 of user:password, a JWT, or
    reads as generated (`pZZPKC!Bb3V9i`)."""
    if not is_value(secret):
        return False
    scheme = (m.group("scheme") or "").lower()
    if scheme and scheme not in _SCHEMES:
        # a scheme of its own (`Splunk <uuid>`, `GenieKey …`): a random value, not prose
        return looks_random(secret) or generated(secret) or _uuid(secret)
    return (
        any(c.isdigit() for c in secret)
        or _check_basic(secret, m)
        or secret.count(".") == 2
        or generated(secret)
        or _user_pair(secret, m)
    )


def _user_pair(secret: str, m: re.Match[str]) -> bool:
    """`user:password` sent as it is (`Authorization: Basic <user>:<password>`,
    unencoded): a name, then a password that is no placeholder (`check_user_pair`)."""
    user, colon, password = secret.partition(":")
    return (
        bool(colon)
        and compiled(r"[A-Za-z][\w.@-]{0,63}", 0).fullmatch(user) is not None
        and len(password) >= 6
        and check_user_pair(secret, m)
    )


def _check_bearer(secret: str, m: re.Match[str]) -> bool:
    return is_value(secret) and (
        looks_random(secret) or secret.count(".") == 2 or generated(secret)
    )


# --- the rules ---------------------------------------------------------------------------

_KEY = (
    r"[\w.-]{0,120}?(?:pass(?:word|wd|phrase)?|pwd|pw|secret|token|api[_.-]?key|apikey|"
    r"access[_.-]?key|private[_.-]?key|secret[_.-]?key|client[_.-]?secret|credentials?|creds|"
    r"auth|sig|signature|cookie|dsn|salt|key|pin|passcode)[\w.-]{0,80}"
)
# a bare value ends at an escape sequence (`\n` of text that is itself JSON-escaped)
# a type annotation before a quoted literal: `password: str = "…"`, `val pw: String = "…"`,
# `const token: string = '…'`, `const SECRET: &[u8] = b"…"`
_TYPED = r"""(?P<typed>:[ \t]*&?(?:'static[ \t]+)?[A-Za-z_\[][\w.<>\[\]?|]{0,40}[ \t]*=(?![=>])(?=[ \t]*\\?["']))"""
_VALUE = (
    r"""(?:"(?P<dq>(?:[^"\\\n]|\\.){1,500})"|'(?P<sq>[^'\n]{1,500})'"""
    r"""|(?P<bare>(?:[^\s'"`,;&()<>{}\[\]|\\]|\\(?![nrt"\\])){1,500}))"""
)
# (a flag's value is on its line, also when the line break is escaped: `mysql -p` then
# `Enter password:` is a prompt)
_QUOTED_OR_BARE = r"""[ \t]*(?:"([^"\n]+)"|'([^'\n]+)'|((?:[^\s'"|;&`\\]|\\(?![nrt]))+))"""
# (a scheme glued to a name or a number before it, `KEY_postgres://`, `9https://`, still
# starts one)
_URL = r"(?<![a-zA-Z])[a-zA-Z][a-zA-Z0-9+.-]{1,30}://"
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
        # (the user may be an e-mail address: `smtp://alerts@acme.com:<pw>@host`)
        # (a password pasted with an `@` of its own, unencoded, ends at the last `@` before
        # the host)
        _URL + r"(?P<user>[^\s:/?#@'\"<>\[\]]{0,128}(?:@[\w-]+(?:\.[\w-]+)+)?):"
        # (a base64 password keeps its `/` unencoded too: not a port and a path, `:8080/a@b`)
        # (the first `@` before a host ends it: `…@registry.npmjs.org/@types`)
        r"(?P<pw>(?![0-9]{1,5}(?:/|$))[^\s'\"<>]{1,1024}?)@(?=[\w.-]{1,253}(?::[0-9]{1,5})?(?![\w.@-]))",
        ("://",),
        groups=("pw",),
        priority=CONTEXT,
        check=_check_user_password,
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
        # (`#access_token=…`: OAuth's implicit flow hands the token over in the fragment)
        r"(?i)[?&;#](?P<key>access_?token|api_?key|apikey|auth|auth_?token|client_?secret|key|"
        r"password|passwd|pwd|secret|sig|signature|token|x-amz-signature|x-amz-credential|"
        r"x-amz-security-token|x-goog-signature|code_verifier|refresh_?token|id_?token)"
        r"=(?P<v>[^&\s#'\"<>]{6,})",
        tuple(f"{k}=" for k in words("token key sig signature secret password passwd pwd auth")),
        groups=("v",),
        priority=CONTEXT,
        check=_check_query_value,
    ),
    Rule(
        # a one-time code in a link (an OAuth redirect's `code`, a reset or a magic link's):
        # whoever has the link has the account; a random value only (`?code=200` is a status)
        "url-code",
        r"(?i)[?&;#](?P<key>code|auth_?code|reset_?code|otp|magic|login_?token|reset_?token)"
        r"=(?P<v>[^&\s#'\"<>]{16,512})",
        ("code=", "otp=", "magic=", "token="),
        groups=("v",),
        priority=CONTEXT,
        check=_check_random_code,
    ),
    Rule(
        "auth-header",
        r"(?i)\b(?:proxy-)?authorization\\?[\"']?\s*[:=]\s*\\?[\"']?"
        # (any scheme: `Bearer`, `Splunk`, `GenieKey`, `SSWS`, next year's)
        r"(?:(?P<scheme>[A-Za-z][\w.-]{0,24})[ \t]+)?"
        # (a value holds any symbol a generated password does, `&` and `?` inside too: it
        # ends at a blank, a quote, `;`, `,`, `|`, a bracket, or a query's `&<name>=`)
        r"(?P<v>(?:[A-Za-z0-9._~+/=:!#$%*@^-]|[&?](?![A-Za-z_][\w.-]*=)){7,}"
        r"[A-Za-z0-9._~+/=:!#$%*@^-])",
        ("authorization",),
        groups=("v",),
        priority=CONTEXT,
        check=_check_header,
        whole=True,
    ),
    Rule(
        "bearer-token",
        r"(?i)\bbearer\s+((?:[A-Za-z0-9._~+/=!#$%*@^-]|[&?](?![A-Za-z_][\w.-]*=)){11,}"
        r"[A-Za-z0-9._~+/=!#$%*@^-])",
        ("bearer",),
        priority=CONTEXT,
        check=_check_bearer,
        whole=True,
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
        check=_check_netrc,
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
        r"mongosh|mongodump|mongorestore)\b" + _SAME_COMMAND + r"\s(?-i:-p)" + _QUOTED_OR_BARE,
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
        + r"\s(?-i:-P)|"
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
        # cqlsh / useradd / usermod `-p <pw>`; lftp `-u user,<pw>` (snmp tools' community
        # string is in `commands.py`, which knows its well-known defaults)
        r"\b(?:(?:cqlsh|useradd|usermod)\b"
        + _SAME_COMMAND
        + r"\s-p(?=[ \t])|lftp\b"
        + _SAME_COMMAND
        + r"\s-u[ \t]+[^\s,]+,)"
        + _QUOTED_OR_BARE,
        ("cqlsh", "useradd", "usermod", "lftp"),
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        "cli-password",
        r"(?i)\b(?:curl|wget)\b" + _SAME_COMMAND + r"\s(?:-u|--user|--auth|-a)(?:=|[ \t]*)"
        r"[\"']?(?P<user>[^\s:'\"]+):(?P<pw>[^\s'\"]+)",
        ("curl", "wget"),
        groups=("pw",),
        priority=CONTEXT,
        check=_check_user_password,
    ),
    Rule(
        "cli-password",
        r"(?i)(?<![\w-])--?(?P<flag>(?:[\w-]*[-_]|[a-z]{1,12})?(?:password|passwd|pass|pwd|token|"
        r"secret|api-?key|"
        r"access-?key|secret-?key|auth-?token|client-?secret|private-?token))"
        r"(?P<sep>=|[ \t]+)(?:(?P<q>[\"'])(?P<qv>[^\"'\n]{4,})(?P=q)|(?P<bv>[^\s'\"|;&<>()`]{4,}))",
        ("--", "-pass", "-pwd", "-token", "-secret", "-key", "storepass", "keypass"),
        groups=("qv", "bv"),
        priority=CONTEXT,
        check=_check_flag_value,
    ),
    Rule(
        "credential",
        # (also a JVM system property: `-Ddb_key=…`)
        r"(?i)(?:(?<![\w.-])|(?<=\s-D)|(?<=^-D))(?P<kq>\\?[\"']?)(?P<key>" + _KEY + r")(?P=kq)"
        r"(?P<sep>[ \t]*(?:"
        + _TYPED
        + r"|::?=|\?=|\+=|=>|=|:|<<?-(?=[ \t]*[\"']))[ \t]*)(?:[&!][\w!-]{1,40}[ \t]+|\((?=(?:\"[^\"\n]*\"|'[^'\n]*')[ \t]*\)))?\\?"
        + _VALUE,
        tuple(words("pass pwd pw secret token key auth cred sig cookie dsn salt pin")),
        groups=("dq", "sq", "bare"),
        priority=CONTEXT,
        check=_check_assignment,
    ),
    Rule(
        "credential",
        r"(?i)\b(?:password|passwd|passphrase|secret|token|api[ _-]?key|access[ _-]?key|"
        r"credential)s?(?:\s+(?:is|was|of)\s+|\s*[:=]\s*|[ \t]+)[\"'`]?([A-Za-z0-9+/_.~=-]{16,})",
        ("pass", "secret", "token", "key", "credential"),
        priority=CONTEXT,
        check=_check_prose,
    ),
]


def _check_bracketed(secret: str, m: re.Match[str]) -> bool:
    """A random value in angle brackets under a credential's name: the brackets hold the
    value (`ssh_key_passphrase: <random characters>`), not a placeholder (`<your-password>`)."""
    from gitimprove.redaction.values import (
        _generated_word,
        looks_random,
        password_evidence,
        reads_as_names,
    )

    if password_evidence(secret) or looks_random(secret) or _generated_word(secret):
        return True
    # (a placeholder is words, a number after them at most: `<your-password>`, `<apiKey2>`;
    # digits inside letters or a password's symbol beside a digit are none's)
    # (one number inside a type's name is the type's: `Uint8Array`)
    inside = len(compiled(r"(?<=[A-Za-z])[0-9]+(?=[A-Za-z])", 0).findall(secret))
    if inside >= 2 or (inside and not reads_as_names(secret)):
        return True
    if any(c in "!@#$%^&*+=?~" for c in secret) and any(c.isdigit() for c in secret):
        return True
    classes = sum(any(map(f, secret)) for f in (str.isupper, str.islower, str.isdigit))
    return len(secret) >= 8 and classes >= 2 and not reads_as_names(secret)


RULES.append(
    Rule(
        "credential",
        rf"(?i)(?<![\w.-]){_KEY}[\"']?[ \t]*[:=][ \t]*<(?P<ang>[^\s<>|'\"]{{6,128}})>",
        ("pass", "pwd", "pw", "secret", "token", "key", "cred", "auth", "sig", "salt", "pin"),
        groups=("ang",),
        needs=("<",),
        priority=CONTEXT,
        check=_check_bracketed,
        whole=True,
    )
)
