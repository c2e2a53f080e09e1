"""A short password a generator drew, after a credential's key, whatever symbols it holds.

A password generator draws from every printable symbol (`$vUNLjyt`, `~eK`o!@B`, `3&5nkr!Y`,
`39}%8N>;`), and such a password is written unquoted as often as quoted: `PASS=…` in an env
file, `export DB_PW=…`, `pass: …` in YAML, `pwd = …` in an INI file, `--auth …` on a command
line, `- KEY=…` in a docker-compose file. The other context rules end a bare value at the
characters shell and code give a meaning (`&`, `;`, `(`, `<`, `|`) and take a leading `$`, `*`,
`&`, `!` or `~` for a reference, an anchor, a tag or a path, so such a password was cut or
missed. Here a value runs to the blank or the line's end that ends it in these formats, and
is judged by what a generator leaves in it (`drawn`): every class of character at random,
not names joined by operators (`a&b`, `self.key`, `*args`, `$HOME`, `&default`,
`~/.ssh/id_rsa`, `${{ secrets.X }}`).

Under a key that only may name a credential (`key`, `auth`, `pw`, `pwd`, `cred`, a word for
password in another language: `passwort`, `senha`, `wachtwoord`) the value must be drawn;
under one that names it (`password`, `db_pass`) a drawn value is masked whatever its symbols.
"""

from __future__ import annotations

import itertools
import re

from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.keynames import words
from gitimprove.redaction.values import _odd_run

# words for a password, a key or a secret in other languages (ASCII spellings too)
FOREIGN = frozenset(
    [
        "passwort",
        "kennwort",
        "contrasena",
        "contrasenya",
        "senha",
        "wachtwoord",
        "parola",
        "haslo",
        "salasana",
        "losenord",
        "passord",
        "adgangskode",
        "heslo",
        "jelszo",
        "sifre",
        "parool",
        "lozinka",
        "geslo",
        "motdepasse",
        "mdp",
        "geheim",
        "geheimnis",
        "clave",
        "secreto",
        "segredo",
        "segreto",
        "sekret",
        "salaisuus",
        "hemlighet",
        "cle",
        "schluessel",
        "schlussel",
        "chiave",
        "chave",
        "sleutel",
    ]
)
# what a credential's key may end in or hold (lower case), for the prefilter
KEYWORDS = ("pass", "pw", "pwd", "auth", "key", "cred", "secret", "token", "mdp", *sorted(FOREIGN))

_NAME = r"[A-Za-z_][\w.-]{0,80}"
# a sentence going on after a value quoted in it: `put KEY=<value> in the vault`
_PROSE_GOES_ON = r"[ \t]+(?:in|into|to|for|from|on|as|and|then|is|was|with)[ \t]+[a-z]"
# (a quoted value: its escapes are kept; a bare one: up to the blank or line end ending it)
_VALUE = (
    r"""(?:"(?P<dq>(?:[^"\\\n]|\\.){4,80})"(?=[ \t]*(?:[,}\]]|\r?$|\#|;))"""
    r"""|'(?P<sq>[^'\n]{4,80})'(?=[ \t]*(?:[,}\]]|\r?$|\#|;))"""
    r"""|(?P<bare>[^\s"'][^\s]{3,63})(?=[ \t]+\#|[ \t]*\r?$|""" + _PROSE_GOES_ON + "))"
)
_ASSIGNMENT = (
    # (after `{` or `,` only a quoted key: JSON's; `f(a, key=None)` is a call)
    # (a line of a diff or a quoted mail keeps its `+`, `-` or `>` before the key, a log's
    # line its label: `Bash failed: KEY=…`, `stderr: KEY=…`)
    r"(?m)(?:^(?:[+>-]|(?:[A-Za-z][\w ()/-]{0,40}:[ \t]+){1,3})?[ \t]*(?:export[ \t]+|set[ \t]+|-[ \t]+)?"
    r"(?P<kq>[\"']?)|(?<=[{,])[ \t]*(?P<jq>[\"']))"
    r"(?P<key>" + _NAME + r")(?:(?P=kq)|(?P=jq))(?P<sep>[ \t]*[=:][ \t]*)" + _VALUE
)
_FLAG = (
    r"(?<![\w-])--?(?P<key>[A-Za-z][\w-]{0,60})(?P<sep>=|[ \t]+)"
    r"""(?:"(?P<dq>(?:[^"\\\n]|\\.){4,80})"|'(?P<sq>[^'\n]{4,80})'|(?P<bare>[^\s"'-][^\s]{3,63}))"""
    r"(?=\s|$)"
)
# `KEY=value` handed to a program by an option, anywhere on its line: `docker run -e K=v`,
# `--env`, `--build-arg`, Helm's `--set`, Terraform's `-var`, Java's `-DK=v`
_ENV_FLAG = (
    r"(?<![\w-])(?:-e|--env|--build-arg|--set(?:-string)?|--?var|-D)(?:=|[ \t]+|(?<=D))"
    r"(?P<kq>['\"]?)(?P<key>[A-Za-z_][\w.-]{0,80})(?P<sep>=)"
    r"""(?:"(?P<dq>(?:[^"\\\n]|\\.){4,80})"|'(?P<sq>[^'\n]{4,80})'|(?P<bare>[^\s"'][^\s]{3,63}?))"""
    r"(?=(?P=kq)(?:\s|$))"
)

# a password's symbols as a generator draws them (every printable one but `_`, `-`, `.`)
_NAME_SEPARATORS = frozenset("_-.")
# two symbols together that code writes (an operator, a call's brackets, a reference)
_DIGRAPHS = frozenset(
    [
        "&&",
        "||",
        "->",
        "::",
        "<<",
        ">>",
        "==",
        "!=",
        "<=",
        ">=",
        "**",
        "++",
        "--",
        "+=",
        "-=",
        "*=",
        "/=",
        "()",
        "[]",
        "{}",
        "):",
        "),",
        "])",
        ");",
        "].",
        ").",
        "];",
        "]:",
        "],",
        "]]",
        "))",
        "${",
        "$(",
        "{{",
        "}}",
        "=>",
        "..",
        "?.",
        "!!",
        "./",
        "../",
        "//",
        "*/",
        "/*",
        ":/",
        "#{",
        "%{",
        "@{",
        "!(",
        "!$",
        "-$",
        "('",
    ]
)


def _identifier(run: str) -> bool:
    """A name as code writes it: snake case, upper case, camel case of words, a number."""
    from gitimprove.redaction.values import reads_as_names

    if compiled(r"[0-9]+|0[xX][0-9a-fA-F]+|[0-9]+(?:px|em|ms|s|k|kb|mb|gb)", 0).fullmatch(run):
        return True
    return compiled(r"_*[A-Za-z][A-Za-z0-9_]*", 0).fullmatch(run) is not None and reads_as_names(
        run
    )


def _reference(value: str) -> bool:
    """A reference, a path, an anchor, a tag, a template or an address, not a value."""
    v = value
    if compiled(r"\$\{[^}]*\}.*|\$\([^)]*\).*|\{\{.*\}\}|%[A-Za-z_]\w*%|<[^<>]*>", 0).fullmatch(v):
        return True
    if compiled(r"(?:~[\w.-]*)?/.*|\.{1,2}/.*|[A-Za-z]:\\.*", 0).fullmatch(v):
        return True  # a path: `~/.ssh/id_rsa`, `/etc/x`, `./run`, `C:\x`
    if "://" in v or compiled(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", 0).fullmatch(v):
        return True  # a URL, an e-mail address
    # `$HOME`, `*default`, `&anchor`, `!Ref`, `!!str`, `@decorator`, `~user`, `%s`, `-x`,
    # each before a name (and, in code, what follows it: `$HOME/bin`, `*args,`, `&self.x`)
    m = compiled(
        r"(?:\$|\*{1,2}|&{1,2}|!{1,2}|@|~|%|-{1,2}|\+|\^)([A-Za-z_][\w]*)(.*)", 0
    ).fullmatch(v)
    if m is None or not _identifier(m.group(1)) or _odd_run(m.group(1)):
        return False
    if v[0] == "$" and m.group(2).startswith("/"):
        return True  # a path under a variable's: `$HOME/src`
    if v[0] != "$" and not _plain_name(m.group(1)):
        return False  # `@AnjIpAs`, `!uRipes6`: no anchor's, tag's or decorator's name
    # (a shell variable joins others and a path: `$HOME/bin`, `$A:$B`; an anchor, a tag or
    # a decorator is a name alone, or names joined by `.`: `&self.x`, `@types/node`)
    return _code(m.group(2), "$/:.-" if v[0] == "$" else "/.:-")


def _plain_name(name: str) -> bool:
    """A name as YAML anchors, tags and decorators are written: lower case words (`default`,
    `my-anchor`, `base_2`), upper case, or capitalised words of three letters or more
    (`GetAtt`, `Override`, `defaultValue`)."""
    if compiled(r"[a-z][a-z0-9_-]*|[A-Z][A-Z0-9_]*", 0).fullmatch(name):
        return True
    humps = compiled(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+", 0).findall(name)
    return "".join(humps) == name and all(len(h) >= 3 or h.isdigit() for h in humps)


def _code(rest: str, joins: str = "/.:-,") -> bool:
    """What may follow a name: nothing, or names joined by `joins`."""
    if not rest:
        return True
    runs = compiled(r"[A-Za-z0-9_]+", 0).findall(rest)
    symbols = compiled(r"[^A-Za-z0-9_]+", 0).findall(rest)
    return all(map(_identifier, runs)) and all(c in joins for s in symbols for c in s)


# one symbol between two names in code: an operator, a separator, a bracket
_INFIX = frozenset(".&|*+-/%^<>=,:?@()[]{}")


def _operators(symbols: str) -> bool:
    if len(symbols) == 1:
        return symbols in _INFIX
    return all(symbols[i : i + 2] in _DIGRAPHS for i in range(len(symbols) - 1))


def _code_shape(value: str) -> bool:
    """Code cut at a blank: a call or an attribute of a name (`b64encode(pw`, `rest.split`,
    `ENC(`), an index or a slice (`[0]`, `[::-1]`), a template's field (`{name}`, `{{`),
    brackets closed one after another (`}))`, `)]`)."""
    if compiled(r"%[qQwWiIrsx]?[(\[{<|!/]", 0).match(value):
        return True  # Ruby's literal: `%q(…)`, `%w[…]` (its rules read what it holds)
    for m in compiled(
        r"([A-Za-z_][A-Za-z0-9_]{1,40})[(\[]|\.([A-Za-z_][A-Za-z0-9_]{1,40})", 0
    ).finditer(value):
        name = m.group(1) or m.group(2)
        if "_" in name.strip("_") or _identifier(name):
            return True  # (`_key_from_fd(`: snake case is a name)
    for m in compiled(
        r"(?:^|(?<=[^A-Za-z0-9_]))([A-Za-z_][A-Za-z0-9_]{2,40})=[A-Za-z0-9]", 0
    ).finditer(value):
        if _identifier(m.group(1)):
            return True  # a name and its value inside: `key1=value1//key2=value2`
    if compiled(r"(?:^|[(\[{=,])[rbfuRBFU]{0,2}[\"']", 0).search(value) and len(value) > 8:
        return True  # a literal opened in code: `b'PYTHONCASEOK'`, `(r"%s\\x"`
    return (
        compiled(
            r"\[[\w:.+-]{0,12}\]|\{[A-Za-z_][\w.]{0,40}\}|[)\]}][)\]}\"']|\{\{|\}\}", 0
        ).search(value)
        is not None
    )


def drawn(value: str, *, named: bool = False) -> bool:
    """Whether `value` is a password a generator drew: 6 to 64 printable characters, no
    blank, three classes of character at the least (upper case, lower case, digits, symbols),
    and something no code and no name holds: a run of letters and digits that reads as no
    name, two symbols together that are no operator, a bracket left open, or a symbol at
    the end that ends no expression. Names joined by operators (`a&b`, `x[i]+y`), a
    reference, a path, an anchor or a tag are not drawn."""
    from gitimprove.redaction.values import _odd_run, reads_as_names

    if not 6 <= len(value) <= 64 or not value.isascii() or not value.isprintable():
        return False
    if any(c.isspace() for c in value) or not any(c.isalnum() for c in value):
        return False
    if "..." in value:
        return False  # a placeholder: `0x...`, `sk-...`
    symbols = [c for c in value if not c.isalnum()]
    classes = sum(
        (
            any(c.isupper() for c in value),
            any(c.islower() for c in value),
            any(c.isdigit() for c in value),
            bool(symbols),
        )
    )
    if compiled(r"0[xX][0-9a-fA-F]+|#(?:[0-9a-fA-F]{3,4}){1,2}", 0).fullmatch(value):
        return False  # a number in hex, a colour
    core = value.rstrip(",;")
    if core != value and _code(core):
        return False  # a name before a list's or a statement's end: `FuncSignature,`
    if classes == 2 and not symbols:
        return _drawn_alnum(value)
    if classes < 2 or _reference(value):
        return False
    if _code_shape(value):
        return False
    if compiled(r"[vV]?[0-9]+(?:[.:_-][0-9A-Za-z]+)*|0[xX][0-9a-fA-F]+", 0).fullmatch(value):
        return False  # a version, a time, a date
    runs = compiled(r"[A-Za-z0-9]+", 0).findall(value)
    odd = 0  # runs of letters and digits no name has
    for run in runs:
        if run.isdigit() or (run.isalpha() and len(run) == 1):
            continue
        if _odd_run(run) or not _identifier(run):
            odd += 1
        elif compiled(r"[0-9]+[A-Za-z]{2,}", 0).fullmatch(run) and not compiled(
            r"[0-9]+(?:st|nd|rd|th|px|em|ms|kb|mb|gb|bit|fps|hz|d|x|k|p)", re.I
        ).fullmatch(run):
            odd += 1  # digits before letters: `5nkr`, `4wca` (not `2nd`, `1080p`)
    tells = 0  # signs in the symbols
    plain = [s for s in compiled(r"[^A-Za-z0-9]+", 0).findall(value)]
    if any(not _operators(s) for s in plain):
        tells += 1  # `}%`, `>;`, `!@`: two symbols no operator is
    if any(value.count(a) != value.count(b) for a, b in ("()", "[]", "{}")):
        tells += 1  # a bracket left open or closed alone
    if value[-1] in "!#$%&*+,-/:;<=>?@\\^`|~" and value[-1] not in _NAME_SEPARATORS:
        tells += 1
    if value[0] in "#%),.:;=>?]^`|}":
        tells += 1  # no name, number or expression starts so
    if compiled(r"[A-Za-z0-9][!#$~;`'\"\\][A-Za-z0-9]|[)\]}][A-Za-z0-9]", 0).search(value):
        tells += 1  # a symbol between two names that joins none in code: `en!Fjey`, `x#y`
    if all(c in _NAME_SEPARATORS for c in symbols):
        # names and numbers joined by `_`, `-` or `.` (`build-2024.1`, `My_Key1`) are
        # drawn only when a run reads as no name
        return classes >= 3 and any(
            _odd_run(r) or not reads_as_names(r) for r in runs if len(r) >= 3
        )
    if len({c for c in symbols if c not in "._-/:@,"}) >= 2:
        tells += 1  # symbols of several kinds: `zert&d%9`, `f|q1&j:6`
    if classes >= 3:
        return named or odd + tells >= 1
    # (one case and symbols: both its letters and its symbols show it: `n>lt]&r@`)
    return odd >= 1 and tells >= 1


def _drawn_alnum(value: str) -> bool:
    """Letters and digits of one case (`zs9u4nvv`, `UVHPK68G`), or letters of both cases
    only (`HlEZHXvG`), 8 or more: drawn when digits stand inside letters or cases switch at
    random, and the letters read as no names (a hex id or a version is none)."""
    from gitimprove.redaction.values import reads_as_names

    if len(value) < 8 or compiled(r"[0-9a-f]+|[0-9A-F]+", 0).fullmatch(value):
        return False
    if reads_as_names(value):
        return False
    if value.isalpha():
        switches = sum(1 for a, b in itertools.pairwise(value) if a.isupper() != b.isupper())
        return switches >= 3
    return compiled(r"[A-Za-z][0-9]+[A-Za-z]", 0).search(value) is not None


_NAMING = frozenset(("pass", "pw", "pwd", "passwd", "cred", "creds"))


def _weak_word(word: str) -> bool:
    """`cred`, `pwd`, `pw`, `ADMINPW`, `DBPWD`: a word that may name a password."""
    return word in ("cred", "pwd", "pw") or (len(word) > 3 and word.endswith(("pw", "pwd")))


def _a_name(value: str) -> bool:
    """What the other context rules take for a name under a key that only may name a
    credential: names and numbers (`strength2Check`, `UserProfile#2`, `Build#1042+Linux`),
    products and models joined by a symbol (`Mac@M2Pro`, `Roku+Ultra4K`), an expression
    (`a*X+b=Y1`), an id named by what it identifies (`build-<random>`), a hash or a UUID."""
    from gitimprove.redaction import values

    core = value.lstrip("$~!*&@")
    return (
        values.reads_as_names(value)
        or values.reads_as_names(core)
        or values._model_names(core)
        or values._expression(core)
        or values.named_id(value)
        or values.is_identifier_value(value)
        or values.short_hex(value)
        or not values.is_value(core)
    )


# a password's symbols no name, version, path or product holds (`}`, `%`, `>`, `;`, `"`)
_ODD_SYMBOLS = frozenset("!\"$%'()*,;<=>?[\\]^`{|}~&")


def _weakly_drawn(value: str) -> bool:
    """Under a key that only may name a credential, more than a drawn value's shape: what
    the other rules call a password (`values.password_evidence`), letters and digits of one
    case drawn at random (`zs9u4nvv`), a sign shell and YAML give a meaning first or an `&`
    inside (`$vUNLjyt`, `~eK`o!@B`, `3&5nkr!Y`), or a symbol no name holds (`39}%8N>;`)."""
    from gitimprove.redaction import values

    core = value.lstrip("$~!*&@")
    if value.isalnum():
        mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
        one_case = not (mixed and any(c.isdigit() for c in value))
        return values.password_evidence(value) or (one_case and _drawn_alnum(value))
    return (
        values.password_evidence(core)
        or value[0] in "$~!*&@"
        or "&" in value
        or any(c in _ODD_SYMBOLS for c in value)
    )


# the letters a name of code writes before a number: `utf8`, `sha256`, `win32`, `ipv6`
_NUMBERED_STEMS = words(
    "utf sha md crc int uint float base win ipv ec oauth py python vec mp h x v s3 arm amd "
    "gen ver rev col row api http tls ssl rsa aes des x86 level step phase log k i l"
)


def _pronounceable(value: str) -> bool:
    """A password pwgen drew (`pronounced.py`: `Ohsh4aiph`, `vong8Ok8`, `u89GweY4`), or a
    pronounceable one like it (`aeNg3pho`): 8 to 12
    letters and one digit between them, one or two capitals, none beside another (no
    acronym: `gRPCv2Api`, `IPv6Addr`), two letters or more on each side of the digit (not
    `M1Max`, `Vec3f`), the letters before it no stem a name numbers (`utf8Mode`,
    `Log4jConfig`)."""
    from gitimprove.redaction.pronounced import pwgen_draw

    if pwgen_draw(value):  # (its units in the order pwgen draws them, digits and all)
        return True
    m = compiled(r"([A-Za-z]{2,11})([0-9])([A-Za-z]{2,11})", 0).fullmatch(value)
    if m is None or not 8 <= len(value) <= 12:
        return False
    upper = sum(c.isupper() for c in value)
    return (
        1 <= upper <= 2
        and compiled(r"[A-Z]{2}", 0).search(value) is None
        and m.group(1).lower() not in _NUMBERED_STEMS
        and not any(m.group(1).lower().endswith(stem) for stem in ("utf", "sha", "md", "ipv"))
    )


# the words of names that a passphrase of words does not draw: what code, builds and
# services name things with (`node-modules-cache`, `github-actions-bot`)
_NAME_WORDS = words(
    """
    app apps api auth bot build builds cache cached ci cd client cluster config configs data
    database db default deploy deployment dev develop docker env file files git github gitlab
    hook hooks id ids image images key keys lib libs local main master node npm pip prod
    production python release repo runner secret secrets server service services stage
    staging test tests token tokens tool tools user users web worker workers module modules
    deps package packages lock yarn pnpm cargo gradle maven linux windows macos ubuntu bucket
    storage backup backups log logs name names primary access admin account bearer oauth
    session sessions refresh type value values object string list map set get put post
    delete update create remove add action actions workflow workflows job jobs step steps
    run runs check checks lint docs site page home index core common shared util utils
    helper helpers handler manager provider store state redis postgres mysql mongo sql
    queue topic stream event events message messages email mail push notification
    notifications public private internal external read write only version versions latest
    stable nightly beta alpha legacy new old next prev current temp tmp dist out src
    source target bin assets static media upload uploads download downloads artifact
    artifacts report reports result results metric metrics guard agent agents memory
    signal signals experiment experiments note notes loop the and for with from line
    newline char chars text word words end start begin close open error errors warning
    """
)


def _passphrase(value: str) -> bool:
    """A passphrase of words (`correct-horse-battery-staple`): four words or more of 3 to
    9 lower-case letters joined by `-`, none repeated and none a word that names things in
    code, builds or services (`node-modules-cache-key` is a name; words joined by `.` or `_`
    are an attribute path or a name in code: `self.frame.code.path`)."""
    parts = value.split("-")
    return (
        len(parts) >= 4
        and all(compiled(r"[a-z]{3,9}", 0).fullmatch(p) for p in parts)
        and len(set(parts)) == len(parts)
        and not any(p in _NAME_WORDS for p in parts)
    )


def _check(secret: str, m: re.Match[str]) -> bool | str:
    from gitimprove.redaction.keynames import key_strength, key_words, kind_of

    key = m.group("key")
    parts = key_words(key)
    strength = key_strength(key)
    foreign = any(w in FOREIGN for w in parts) or "".join(parts) in FOREIGN
    if strength is None and not foreign and not any(_weak_word(w) for w in parts):
        return False
    text, line = m.string, m.string.rfind("\n", 0, m.start()) + 1
    if secret[-1] in "`'\"" and secret[-1] in text[line : m.start()]:
        return False  # the end of a code span or a string around the assignment (`k=v`)
    after = text[m.end() : m.end() + 2].strip(" \t")
    if (secret.endswith(";") and after[:1] not in ("", "\r", "\n")) or compiled(
        r"[|;][a-z][a-z0-9_-]{2,}$|&[A-Za-z_][A-Za-z_.-]*=", 0
    ).search(secret):
        # a pipe, a command or a query's next field after it: `v|next`, `v&user=` (a
        # command's or a field's name reads as one: `nCtt&n6k=faqD@`, `%ioD;kHI` are drawn)
        return False
    if compiled(r"\{[^{}\s]{0,40}\}", 0).search(secret):
        return False  # a template's field: `{0};Uid={1}`, `{env:DB_PW}`
    # (`pass`, `pw`, `pwd`, `cred` alone are weak names in prose; at a line's start, as a
    # JSON key or a flag, before a drawn value, they name a password or a credential)
    named = (
        foreign
        or (strength == "strong" and kind_of(key) == "password")
        or any(w in _NAMING for w in parts)
    )
    # (a pronounceable password or a passphrase of words: no name has their shape, and
    # `drawn` reads their letters as names)
    if _pronounceable(secret) or _passphrase(secret):
        return "password" if kind_of(key) == "password" else "credential"
    if not named and (_a_name(secret) or not _weakly_drawn(secret)):
        return False
    # (under a key naming a password, every class of character is enough: `R7&acane`)
    if not drawn(secret, named=named):
        return False
    return "password" if foreign or kind_of(key) == "password" else "credential"


RULES: list[Rule] = [
    Rule(
        "credential",
        _ASSIGNMENT,
        KEYWORDS,
        groups=("dq", "sq", "bare"),
        needs=("=", ":"),
        priority=CONTEXT,
        check=_check,
        whole=True,
    ),
    Rule(
        "credential",
        _ENV_FLAG,
        KEYWORDS,
        groups=("dq", "sq", "bare"),
        needs=("=",),
        priority=CONTEXT,
        check=_check,
        whole=True,
    ),
    Rule(
        "credential",
        _FLAG,
        KEYWORDS,
        groups=("dq", "sq", "bare"),
        needs=("-",),
        priority=CONTEXT,
        check=_check,
        whole=True,
    ),
]
