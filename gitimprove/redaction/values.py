"""What names a credential and what looks like one: the judgments the context rules share.

A key names a credential strongly (`DB_PASSWORD`, `clientSecret`, `SSHPASS`, `ADMINPWD`), weakly
(`key`, `auth`, `sig`: only a random-looking value counts) or not at all (`author`,
`token_count`, `page_token`, `nextPageToken`: a pagination cursor grants nothing). A value is
a credential's only when it is not a reference (`$TOKEN`, `{{ .Values.x }}`), a placeholder,
a type name, a path, a UUID or hash (under anything but a password or secret), a lexer's
token name (`token: 'identifier'`) or base64 of ordinary prose.
"""

from __future__ import annotations

import itertools
import re

from gitimprove.redaction.engine import compiled, entropy

# re-exported: the context rules import these from here
from gitimprove.redaction.keynames import (
    ABOUT as ABOUT,
)
from gitimprove.redaction.keynames import (
    NOT_SECRET_ANY as NOT_SECRET_ANY,
)
from gitimprove.redaction.keynames import (
    NOT_SECRET_FIRST as NOT_SECRET_FIRST,
)
from gitimprove.redaction.keynames import (
    head_words as head_words,
)
from gitimprove.redaction.keynames import (
    key_strength as key_strength,
)
from gitimprove.redaction.keynames import (
    key_words as key_words,
)
from gitimprove.redaction.keynames import (
    kind_of as kind_of,
)
from gitimprove.redaction.keynames import (
    names_credential as names_credential,
)
from gitimprove.redaction.keynames import (
    names_itself as names_itself,
)
from gitimprove.redaction.keynames import (
    words as words,
)
from gitimprove.redaction.standins import COMMON_PAIRS

# --- what a value must look like ---------------------------------------------------------

_NOT_VALUES = words(
    "none null nil true false undefined str string bytes int integer bool boolean number float "
    "any object optional required redacted hidden masked your_token your_password your_api_key "
    # anonymous FTP's conventional password (ftplib: `passwd anonymous@`): public by design
    "anonymous anonymous@"
)
# compiled on first use (importing this module must stay cheap for the hooks)
_REFERENCE = r"""^(?:
        \$\{?[A-Za-z_][\w.]*\}?                     # $TOKEN ${TOKEN}
      | \$\{\{.*\}\}|\{\{.*\}\}|\$\(.*\)            # ${{ secrets.X }}, {{ .Values.x }}, $(cmd)
      | %[A-Za-z_]\w*%|@[A-Za-z_]\w*@               # %TOKEN% @TOKEN@
      | (?:0x)?\{[A-Za-z_][\w.\[\]'"]*(?:![rsa])?(?::[^{}]*)?\}  # a format field: {password}
      | (?P<q>["']?)\{[A-Za-z_][\w.]*[(\[][^{}]*\}(?P=q)  # an f-string's call or item: {quote(pw)}, "{a.split(".")[2]}"
      | <{1,2}[^<>]*>{1,2}|\[[^\[\]]*\]                 # <your-token> [REDACTED] <<Event>>
      | [A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+  # settings.SECRET_KEY, os.environ
      | \d{1,5}(?:\.\d+)?                           # a count, a port, a size
      | ![A-Za-z][\w:./-]*                          # a YAML tag: !vault, !Ref, !env_var
      | (?:\{[\w.]*(?::[^{}]*)?\}|%[sdr]|[^\w{}\s])+   # a template: '{0}:{1}', '%s:%s'
      | \#(?:[0-9a-fA-F]{3}){1,2}(?:[0-9a-fA-F]{2})?  # a colour: #cccccc
    )$"""
_PLACEHOLDER = r"^(?:[*x#.\-_]+|x{3,}|\*{3,}|\.{3,}|…)$"
# a value that says it is not a real one (`dev-only-secret-not-for-production`, `changeme`)
_SAYS_FAKE = words(
    "placeholder example examples dummy fake sample changeme replaceme your insert todo fixme "
    "xxx xxxx redacted username password passwd value values"
)
_SAYS_FAKE_PHRASES = ("not-for-production", "not_for_production", "dev-only", "test-only")


def is_value(value: str) -> bool:
    """Not a reference, placeholder, type name or earlier marker."""
    v = value.strip().rstrip(".,:").removesuffix('\\"').removesuffix("\\'")
    default = compiled(r"\$\{[A-Za-z_]\w*:?([-=?+])(.*)\}", 0).fullmatch(v)
    if default:  # ${TOKEN:-fallback}: only the fallback can be a secret
        # (`${TOKEN:?message}` is an error message, `${TOKEN:+word}` a word used when set)
        return default.group(1) in "-=" and is_value(default.group(2))
    return (
        len(v) >= 4
        and any(c.isalnum() for c in v)
        and v.lower() not in _NOT_VALUES
        and not (compiled(_REFERENCE, re.X).match(v) and not _random_part(v) and not _tagged(v))
        and not compiled(_PLACEHOLDER, re.I).match(v)
        and "[REDACTED:" not in v
        and not _says_fake(v)
        and not compiled(_PATH, 0).fullmatch(v)
        and not file_path(v)
        and not compiled(r"(?i)(?:sha1|sha256|sha384|sha512|md5):", 0).match(v)
        and not encodes_prose(v)
        and not compiled(_PATTERN, 0).search(v)
        and not compiled(_ALTERNATION, 0).fullmatch(v)
        and not compiled(_SPLICE, 0).fullmatch(v)
        # the code between two string literals, read as one quoted value:
        # `startswith(b"API_TOKEN=") else ""` holds no value `) else `, nor
        # `'DB_PASSWORD=' if prod else ''` a value ` if prod else `
        and not compiled(_BETWEEN_LITERALS, 0).match(value)
        # a Ruby symbol (`token: :bearer`) or the rest of a path (`Token::Kind`)
        and not compiled(r":[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*", 0).fullmatch(v)
        # a terminal's colour written as an escape (`key: { start: "\e[33m" }`), a C
        # pointer or address declared (`SecretService *service`), a package and its
        # version (`--cflags libsecret-1 glib-2.0`)
        and not compiled(_ESCAPES, 0).fullmatch(v)
        and not compiled(r"[*&]{1,2}[A-Za-z_]\w*", 0).fullmatch(v)
        # a type or a placeholder opened in angle brackets (`psk: <Buffer|string>`)
        and not (
            compiled(r"<[A-Za-z_][\w.]{0,64}>?", 0).fullmatch(v) and reads_as_names(v.strip("<>"))
        )
        and not compiled(
            r"[a-z][a-z0-9+.]*(?:-[a-z][a-z0-9+.]*)*-[0-9]+(?:\.[0-9]+){1,3}", 0
        ).fullmatch(v)
    )


# terminal escapes in the notations source and configurations write them in
_ESCAPES = r"(?:(?:\\{1,2}(?:e|033|x1[bB]|u001[bB])|\x1b)\[[0-9;]{0,20}[A-Za-z])+"


# code splicing a variable into a string: `"' + pw + '"`, `" . $pw . "`, `" & pw & "`
# (or a qualified name: `std::string`)
_SPLICE = r"""[ \t]*['"]?[ \t]*(?:\+|\.|&)[ \t]*[\w.$\[\]():-]+[ \t]*(?:\+|\.|&)[ \t]*['"]?[ \t]*"""
_SPLICE += r"|[A-Za-z_]\w*(?:::[A-Za-z_]\w*)+"


# what follows a string literal in code: a bracket closing, or an operator or a keyword
# after a blank (a value taken from one literal's end to the next one's start)
_BETWEEN_LITERALS = (
    r"\s*[)\]}][,;]?(?:\s|\\[nrt])|\s+(?:if|else|and|or|in|is|for|\+|\.|%|\|\||&&|\?|:)\s"
)


# alternatives of names in a regular expression: `enCN|frFR|deDE|itIT`, `LoadWith|Author|`
_ALTERNATION = r"[(?:|]*(?:[A-Za-z]+\|){2,}[A-Za-z]*\)*"
# a regular expression's syntax: `(?![\w-])`, `\d+`: a pattern, not a password
_PATTERN = r"\(\?(?:[:!=]|<[=!])|\\[wdsWDS][*+?{\])]|\[\^?\\[wdsWDS]"


def _tagged(value: str) -> bool:
    """A YAML tag's shape (`!Ref`, `!vault`) holding a generated password after its `!`:
    a password that starts with `!`, no tag's name."""
    return value.startswith("!") and password_evidence(value)


def _random_part(value: str) -> bool:
    """A dotted value with a random part is a token (`dp.st.prd.<43 random>`), not an
    attribute path (`settings.SECRET_KEY`, `os.environ`), which reads as one by its dots."""
    return "." in value and (
        any(looks_random(p) for p in value.split(".")) or _dotted_password(value)
    )


def _dotted_password(value: str) -> bool:
    """A generated password holding a dot (`shiaZHx5Y.O8D6L1`, `tR7.uQ2wZk9x`,
    `GpW.Luq.IA1`), not an attribute path: its first part names no object (neither a
    lower-case name, `self`, `k8s`, `x509`, nor names, `Secrets`, `QtCore`), nor do its
    parts read as names together (`Foo.Bar.Baz`), and the whole reads as a password with
    the dot for its symbol."""
    head = value.split(".", 1)[0]
    if compiled(r"[a-z0-9_]+", 0).fullmatch(head) or reads_as_names(head):
        return False
    if reads_as_names(value.replace(".", "_")):
        return False
    return password_evidence(value.replace(".", "!"))


# an absolute path (`PWD=/home/me/app`, `OLDPWD=/tmp`): a directory, not a password
_PATH = r"(?:~|/(?:bin|etc|home|opt|tmp|usr|var|srv|mnt|root|Users|workspace|app|src|data)\b)[\w ./@+<>-]*"
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
# git ids and SHA-256 digests, also after names (a CI cache key: `Linux-pip-<sha256>`)
# (an MD5 digest after names too: a cache key `Linux-pip-<md5>`)
_HASH = r"[0-9a-f]{7,12}|(?:[\w.]+-)+[0-9a-f]{32}|(?:[\w.]+-)*(?:[0-9a-f]{40}|[0-9a-f]{64})|[0-9A-F]{40}|[0-9A-F]{64}"


def is_identifier_value(value: str) -> bool:
    """A UUID or a hash (git ids, SHA-256): an identifier when no password names it."""
    return compiled(_UUID, 0).fullmatch(value) is not None or (
        compiled(_HASH, 0).fullmatch(value) is not None
    )


# a Windows path (a drive's letter, a colon, then backslashes, also escaped in JSON, or
# slashes) or a UNC share: where a key is kept, not the key
_WIN_PATH = r"(?:[A-Za-z]:(?:\\{1,2}|/)|\\{1,4}[\w.$-]{1,64}\\{1,2})[\w .$@()~+\\/-]{0,400}"
# a segment of a path, and the name of a file with its extension
# (a placeholder may stand for a folder: `/Users/<user>/.ssh`)
_SEGMENT = r"[\w.@+~-]{0,128}|<[\w.-]{1,40}>"
_EXTENSION = r"[\w.@+~-]{1,128}\.[a-z][a-z0-9]{0,4}"


def file_path(value: str) -> bool:
    """A path to a file, not a secret: a Windows or UNC path, or a path of plain names
    ending in a file's extension (`./certs/key2.pem`, `keys/prod/deploy.key`). A secret
    holding `/` (base64) has no extension after its last one."""
    if compiled(_WIN_PATH, 0).fullmatch(value):
        return True
    if "\\" in value:  # names between backslashes, the drive cut off: `fs01\keys\id_rsa2`
        parts = compiled(r"\\{1,2}", 0).split(value)
        return len(parts) >= 3 and all(
            compiled(r"[\w .$@~+-]{1,128}", 0).fullmatch(p) for p in parts
        )
    if "/" not in value or len(value) > 512:
        return False
    if compiled(r"(?:/[\w.@+~-]{1,64}){3,}/?", 0).fullmatch(value) and all(
        reads_as_names(p) for p in value.split("/") if p
    ):
        return True  # an absolute folder of plain names: `/opt/app/lib/secrets`
    *folders, name = value.split("/")
    return compiled(_EXTENSION, 0).fullmatch(name) is not None and all(
        compiled(_SEGMENT, 0).fullmatch(f) for f in folders
    )


def encodes_prose(value: str) -> bool:
    """Base64 of ordinary text (words and spaces), not of a key or a password."""
    if len(value) < 16 or not compiled(r"[A-Za-z0-9+/]+={0,2}", 0).fullmatch(value):
        return False
    import base64
    import binascii

    clean = value.rstrip("=")
    clean = clean[: len(clean) - len(clean) % 4]
    try:
        text = base64.b64decode(clean, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    letters = sum(c.isalpha() for c in text)
    return " " in text.strip() and text.isprintable() and letters >= 0.6 * len(text)


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
    # (words and numbers switch too: `SalesResults-1.2`, `build10MutableMapping`)
    return switches * 5 >= len(kinds) and entropy(value) >= 3.0 and not reads_as_names(value)


# a password's symbols, not a name's, a path's or a number's separators (`-`, `_`, `.`, `/`, `:`)
_PASSWORD_SYMBOLS = frozenset("!@#$%^&*+=?~")
# a key binding: `Ctrl+Shift+F5`, `Win+S3`
_KEY_BINDING = r"(?i)(?:(?:ctrl|control|alt|shift|cmd|command|meta|super|win|option|opt|mod|fn)[+-]){1,6}\S{1,12}"


# the pieces of a product's or a model's name: capitals, a word, digits
_PIECE = r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+"


def _model_name(part: str) -> bool:
    """A product's or a model's name (`iOS17`, `iPadOS`, `M2Pro`, `S24Ultra`, `GPT4o`,
    `R2D2`): capitals, digits and words that are said (a vowel, or `i` before a capital),
    a lower-case letter alone only after a number (`4o`)."""
    pieces = compiled(_PIECE, 0).findall(part)
    if not pieces or "".join(pieces) != part or len(pieces) > 6:
        return False
    for n, p in enumerate(pieces):
        if p.isdigit() or p.isupper():
            continue
        if n == 0 and p == "i" and len(pieces) > 1:
            continue  # `iOS`, `iPad`
        if len(p) == 1 and n > 0 and pieces[n - 1].isdigit() and n == len(pieces) - 1:
            continue  # `GPT4o`
        low = p.lower()
        if len(p) < 3 or not any(c in "aeiouy" for c in low):
            return False
        pairs = [low[i : i + 2] for i in range(len(low) - 1)]
        rare = sum(q not in COMMON_PAIRS for q in pairs)
        if rare > (len(pairs) >= 3) and not _brand(low, rare):
            return False  # a word (`Pro`, `Mac`, `Galaxy`, `Xbox`), not `Uxj`
    return True


def _brand(low: str, rare: int) -> bool:
    """A brand's word with pairs words seldom have (`galaxy`, `xbox`, `pixel`): four
    letters or more, a vowel in four, no three consonants together, half its pairs rare at
    most."""
    vowels = sum(c in "aeiouy" for c in low)
    return (
        len(low) >= 4
        and rare * 2 <= len(low)
        and vowels * 4 >= len(low)
        and compiled(r"[b-df-hj-np-tv-xz]{3}", 0).search(low) is None
    )


def _model_names(value: str) -> bool:
    """Names of products or models joined by a symbol (`iOS17+iPadOS`, `Mac@M2Pro`,
    `R2D2+C3PO`): two or three parts, each a model's name, with a digit in one."""
    parts = compiled(r"[+@&/]", 0).split(value)
    return (
        2 <= len(parts) <= 3
        and all(len(p) >= 2 and not p.isdigit() for p in parts)
        and all(_model_name(p) for p in parts)
        and any(c.isdigit() for c in value)
    )


def password_evidence(value: str) -> bool:
    """A password someone generated or disguised, told from a name or a number by its
    characters (`pJn6wp5@s90HMl`, `x7k!p2q#m9`): 8 to 64 characters with no blank, letters
    and digits with a password's symbols (`!@#$%^&*+=?~`), and runs of letters and digits
    that read as no name: one such run beside mixed case, or two, or mixed case in runs of
    two or three characters between symbols (`e@8r?I^j`). A name, a number, a
    version, a key binding (`Ctrl+Shift+F5`), an expression of names (`A*B+C=D1`), an
    e-mail address, a path, a URL, a pair (`sid=s%3A…`) or code is none. A long value
    (WordPress' salts: 32 or more) may hold blanks when a fifth of it is symbols."""
    if not value.isascii() or not value.isprintable() or not 8 <= len(value) <= 128:
        return False
    if not any(c.isdigit() for c in value) or not any(c.isalpha() for c in value):
        return False
    if value.isalnum():
        return _generated_word(value)
    if not any(c in _PASSWORD_SYMBOLS for c in value) or "://" in value or file_path(value):
        return False
    if " " in value:
        return _salt(value)
    if len(value) >= 32 and _salt(value):
        return True  # (WordPress' salts: 64 of letters, digits and any symbol)
    if len(value) > 64 or "\\" in value or value.count("/") > 1:
        return False
    if compiled(r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}", 0).fullmatch(value):
        return False  # an e-mail address
    pair = compiled(r"[a-z_][a-z0-9_.-]{2,64}(?==)|[A-Z_][A-Z0-9_.-]{2,64}(?==)", 0).match(value)
    # a name and its value: a cookie's `connect.sid=…`, a query's `page=2` (a name is said
    # aloud: `TWH4=` is no name)
    name = pair.group() if pair else ""
    said = any(c in _VOWELS or c in "_.-" for c in name)
    if said and not any(_odd_run(r) for r in _runs(name)):
        return False
    if compiled(_KEY_BINDING, 0).fullmatch(value):
        return False
    if compiled(r"[A-Za-z_][\w.]{0,64}[\[(]|[{}]|%\(", 0).search(value):
        return False  # code or a template: `arr[0]+arr[1]`, `{name}`, `%(id)d`
    if _expression(value):
        return False  # `a*X+b=Y1`, `2x+3y=Z7`, `Math.PI*r^2`
    if compiled(r"[vV]?[0-9]{1,9}(?:\.[0-9]{1,9}){1,4}(?:[-+][\w.+-]{0,48})?", 0).fullmatch(value):
        return False  # a version: `2.0.1+build.5`
    if _scattered(value):
        return True  # (`XV5#4wca`, `cYseu5#2`: short, every class, a run no name is)
    if _model_names(value):
        return False
    # (a dotted number is one run: `Go@1.21+Rc1` names a version)
    runs = _runs(compiled(r"[0-9]+(?:\.[0-9]+)+", 0).sub("0", value))
    odd = sum(1 for r in runs if len(r) >= 2 and _odd_run(r))
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    # (symbols between single characters and cases mixed: `e@8r?I^j`, `M5=F@n@l*K`)
    versioned = compiled(r"[0-9]\.[0-9]", 0).search(value) is not None
    dense = not versioned and len(runs) >= 3 and 2 * sum(map(len, runs)) <= 5 * len(runs)
    # (or short runs, two symbols and two digits, no version: `Pi8?Sm6^`)
    dense = dense or (
        len(runs) >= 2
        and all(len(r) <= 3 for r in runs)
        and sum(c in _PASSWORD_SYMBOLS for c in value) >= 2
        and sum(c.isdigit() or c in _PASSWORD_SYMBOLS for c in value) >= 4
        and not versioned
    )
    # (one case will do beside a symbol no expression has and two digits: `3M1#XS&0`)
    plain = any(c in "!@#$%^&?~" for c in value) and sum(c.isdigit() for c in value) >= 2
    if odd >= 2 or ((mixed or plain) and (odd == 1 or dense)):
        return True
    # (both cases, a digit and a symbol, letters that read as no names: `D*2qUzQT`)
    return mixed and not reads_as_names(value)


# a run of a name beside a symbol: a word, CamelCase words or an acronym (a lower-case
# letter may lead: `iOS`, `eBay`), a number after it (`Home1`, `EC2`, `iPhone15`); a
# version (`v3`); a number
_UNIT = r"(?:st|nd|rd|th|[xkKDpP]|px|em|ms|bit|[kKMGT]B|fps|[hH]z)"
_NAME_RUN = (
    # (a name's number may carry its unit: `Ultra4K`, `Cam1080p`)
    r"(?:[a-z]?(?:[A-Z]?[a-z]{2,}|[A-Z][a-z]?|[A-Z]{2,5})(?:[A-Z][a-z]+|[A-Z]{2,5}){0,4}"
    rf"|[A-Z](?=[0-9]))(?:[0-9]{{1,4}}{_UNIT}?)?|[vVqQ][0-9]{{1,4}}"
    # (a number, an ordinal or a unit: `2nd`, `4K`, `3D`, `64bit`, `1080p`)
    rf"|[0-9]{{1,8}}{_UNIT}?"
)


# pairs of consonants words hold beside `COMMON_PAIRS`' (`Smith`, `World`, `Knob`)
_CLUSTERS = words(
    "rl sm sn sk sw tw dw bb dd gg kk nn zz rk rb rc rf rp rv rw lk lm lp lv lb nk nf mn ph gh "
    "kn wr ps pn dg bs cs fs hs ks ms ps rz tz nz lz"
)


def _scattered(value: str) -> bool:
    """A short value (8 to 12) holding every class, upper and lower case, digits and a
    password's symbol, with a run no name has beside the symbols: a lone letter, digits
    before letters (`4wca`), letters after a number (`5577Oo`), cases mixed inside a hump
    (`cYseu`, `ExzOR`), or letters whose pairs words lack (`Exz`). Names joined by a symbol
    (`Team@Acme2024`, `Mac@M2Pro`, `Q3+EC2`) are not."""
    if not 8 <= len(value) <= 12 or not any(c in _PASSWORD_SYMBOLS for c in value):
        return False
    if not all(any(f(c) for c in value) for f in (str.isupper, str.islower, str.isdigit)):
        return False
    name = compiled(_NAME_RUN, 0)
    for run in _runs(value):
        if not name.fullmatch(run) and not (len(run) >= 4 and _model_name(run)):
            return True
        if run[0].isdigit():
            continue  # a number, an ordinal or a unit: `1080p`, `2nd`
        for n, hump in enumerate(_humps(run)):
            low = hump.lower()
            if not hump.isalpha() or hump.isupper() or (n == 0 and hump in ("i", "e")):
                continue
            if len(low) <= 2 and low not in _SHORT_NAMES:
                return True  # (`Id`, `Db` are names; `Oo`, `Fy` none)
            if len(low) >= 3 and low not in _NO_VOWEL_NAMES:
                rare = [q for q in itertools.pairwise(low) if "".join(q) not in COMMON_PAIRS]
                # (a pair of consonants words seldom hold: `wc`, `xz`)
                foreign = [
                    q for q in rare if not set(q) & set("aeiouy") and "".join(q) not in _CLUSTERS
                ]
                if (foreign or 2 * len(rare) > len(low) - 1) and not _brand(low, len(rare)):
                    return True
    return False


_VOWELS = frozenset("aeiouAEIOU")
# names with no vowel that code and tools use as words
_NO_VOWEL_NAMES = words(
    "db js ts pg px ms ns vm ws fs mb kb gb tb dns tls ssl ssh sql xml tcp udp http https html "
    "npm pnpm ctrl cmd pkg cfg msg btn svc stg prd rpc grpc pgsql mysql psql lvm nfs smb sftp "
    "smtp rtmp gltf png jpg svg pdf md rb py rs cc cpp sh zsh tty pty std str fn sync "
    "my by sys gym mr dr st jr ltd vs nr pt cd dvd tv pc hd lcd rc lts jdk sdk ctl mgr nvm npx nd rd th"
)


def _humps(value: str) -> list[str]:
    # (a version after an acronym is a number: `gRPCv2Api` is g, RPC, v2, Api)
    value = compiled(r"(?<=[A-Z])v(?=[0-9])", 0).sub("0", value)
    return compiled(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", 0).findall(value)


def _spoken(hump: str) -> bool:
    """Letters whose pairs are nearly all common in English words (`strength`, `Check`):
    a word, whatever consonants it holds together."""
    low = hump.lower()
    pairs = [low[i : i + 2] for i in range(len(low) - 1)]
    return len(pairs) >= 3 and sum(p in COMMON_PAIRS for p in pairs) * 5 >= len(pairs) * 4


def _vowelless(hump: str) -> bool:
    """A hump of two letters or more, ending in lower case, with no vowel and no name:
    `Xxqzg`, `Fb`, `rn` (not `Db`, `ssh`, `RSA`)."""
    return (
        len(hump) >= 2
        and hump[-1].islower()
        and not any(c in _VOWELS for c in hump)
        and hump.lower() not in _NO_VOWEL_NAMES
    )


def _clustered(hump: str) -> bool:
    """Four consonants together, no name's: `cpulbgd`."""
    low = hump.lower()
    return (
        low not in _NO_VOWEL_NAMES
        and compiled(r"[b-df-hj-np-tv-xz]{4}", 0).search(low) is not None
        and not _spoken(low)
    )


def _odd_run(run: str) -> bool:
    """A run of letters and digits no name has: digits inside letters (`k3y`, `Qr2JH7kj`;
    not `k8s`), or a hump of letters no name has together (`Xxqzg`, `Jn`, `cpulbgd`).
    Words, acronyms and numbers (`MySQL8`, `InnoDB`, `Smith`, `2nd`, `x86`) are names."""
    if compiled(r"[A-Za-z][0-9]+[A-Za-z]", 0).search(run) and run.lower() not in _NUMBERED_NAMES:
        return True
    return any(_vowelless(h) or _clustered(h) for h in _humps(run))


_NUMBERED_NAMES = words("k8s k3s i18n l10n a11y e2e p2p b2b b2c w3c s3a h2o co2")


# two-letter words and names that code and prose use (beside `_NO_VOWEL_NAMES`)
_TWO_LETTER_NAMES = words(
    "my by go id ok up db js io os is it in on at to of or no do we be me he if as an am us ui "
    "ux vm ip qa ci cd"
)


_SHORT_NAMES = _TWO_LETTER_NAMES | _NO_VOWEL_NAMES


def _word_hump(hump: str) -> bool:
    """A hump that reads as a word or a name: an acronym of up to five capitals, one letter,
    a short name (`db`, `My`), or letters most of whose pairs words have (`Check`, `Results`,
    `strength`; not `Oqq`, `Uz`, `Xw`)."""
    if (hump.isupper() and len(hump) <= 5) or len(hump) == 1:
        return True
    low = hump.lower()
    if low in _NO_VOWEL_NAMES or low in _TWO_LETTER_NAMES:
        return True
    common = sum(low[i : i + 2] in COMMON_PAIRS for i in range(len(low) - 1))
    if len(low) <= 3:
        return common >= 1
    # (a long word may hold pairs rarer in English: `Django`, `Kafka`)
    share = 0.4 if len(low) >= 5 else 0.5
    if common >= (len(low) - 1) * share and any(c in "aeiouy" for c in low):
        return True
    # (a brand's or a place's name spoken syllable by syllable: `Roku`, `Nokia`, `Mazda`)
    return _spoken_name(hump)


def _spoken_name(hump: str) -> bool:
    """A capitalised word of 4 to 8 letters whose consonants and vowels alternate (one pair
    of consonants at most): it is said aloud, a random hump seldom is (`Roku`, `Toyota`)."""
    if not 4 <= len(hump) <= 8 or not hump[0].isupper() or not hump[1:].islower():
        return False
    shape = "".join("v" if c in "aeiouy" else "c" for c in hump.lower())
    return shape.count("vv") + shape.count("cc") <= 1 and "vvv" not in shape and "ccc" not in shape


def _expression(value: str) -> bool:
    """An expression: operands joined by two operators or more (`*+/^=-`), each a number,
    a variable of one letter with a coefficient or an index (`2x`, `Y1`) or a name
    (`Math.PI`, `total`)."""
    operands = compiled(r"[*+/^=-]", 0).split(value)
    if len(operands) < 3 or not all(operands):
        return False
    variable = compiled(r"[0-9]{0,4}[A-Za-z][0-9]{0,4}|[0-9]+(?:\.[0-9]+)?", 0)
    return all(
        variable.fullmatch(o) or (o.replace(".", "").isalpha() and reads_as_names(o))
        for o in operands
    )


def reads_as_names(value: str) -> bool:
    """Whether the letters of `value` read as words and names (`SalesResults-1.2`,
    `build10MutableMapping`, `MySQL8+InnoDB`, `x+Y=z2`): every hump a word, an acronym or a
    number, and at most one lone letter inside a run of several humps or hump of two letters
    that names nothing. Random letters of both cases (`9lHZOqq+`, `D*2qUzQT`) do not: lone
    letters, pairs no word has, humps of one or two."""
    value = compiled(r"(?<![A-Za-z])[vV](?=[0-9])", 0).sub("0", value)  # versions: v2, V10
    humps: list[str] = []
    singles = 0
    for run in _runs(value):
        letters = [h for h in _humps(run) if h.isalpha()]
        if len(letters) > 1:  # (a run of one letter is a variable's name: `x`, `Y2`)
            # (a lower-case letter before a word starts a name: `iPhone`, `eBay`, `iPad`)
            lead = (
                len(letters[0]) == 1
                and letters[0].islower()
                and run[0].isalpha()
                and len(letters[1]) >= 3
                and letters[1][1:].islower()
            )
            singles += sum(len(h) == 1 for h in letters) - lead
            humps += letters[1:] if lead else letters
        else:
            humps += [h for h in letters if len(h) > 1]
    if not all(map(_word_hump, humps)):
        return False
    # (two letters no name is: `Lu`, `XW`; and the others three letters a hump or more)
    unknown = [h for h in humps if h.lower() not in _SHORT_NAMES]
    short = sum(len(h) == 2 for h in unknown)
    return singles + short <= 1 and len(unknown) * 3 <= sum(map(len, unknown)) + 1


def _generated_word(value: str) -> bool:
    """Letters of both cases and digits, 8 to 64, with letters no name has together (four
    consonants, `cpulbgd`; a hump with no vowel among many short ones, `1vsHiQMaR`,
    `FbB0JxXu`): a generated password with no symbol. A name with a number (`getV2Key`,
    `iPhone14ProMax`, `k8sNodeV1`, `tcpDump2`) has none."""
    if not 8 <= len(value) <= 64:
        return False
    if not all(any(f(c) for c in value) for f in (str.isupper, str.islower, str.isdigit)):
        return False
    humps = _humps(value)
    if any(_clustered(h) for h in humps):
        return True
    # (a short hump with no vowel among short humps: `mp4Video` and `tcpDump2` are three
    # humps in eight characters)
    return any(_vowelless(h) for h in humps) and len(humps) * 10 >= len(value) * 4


def _runs(value: str) -> list[str]:
    return compiled(r"[A-Za-z0-9]+", 0).findall(value)


def _salt(value: str) -> bool:
    """A long generated value with blanks among its symbols (WordPress' `AUTH_SALT`): 32
    characters or more, letters of both cases, digits, a fifth of it symbols, high entropy."""
    symbols = sum(not c.isalnum() and c != " " for c in value)
    return (
        len(value) >= 32
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and symbols * 5 >= len(value)
        and value.count(" ") * 8 <= len(value)
        and entropy(value) >= (4.3 if " " in value else 4.6)
    )


_HEX_ID = r"[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64}"
_CAMEL_WORDS = r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)*[A-Z]?"


def mixed_case(value: str) -> bool:
    """Letters only, upper and lower case mixed at random (`tUwyGoFaJStpIESN`): a generated
    password without digits. CamelCase names (`getPassword`, `NextPageToken`) are words."""
    if len(value) < 10 or not value.isascii() or not value.isalpha():
        return False
    if compiled(_CAMEL_WORDS, 0).fullmatch(value) or value.isupper() or value.islower():
        return False
    switches = sum(1 for a, b in itertools.pairwise(value) if a.isupper() != b.isupper())
    return switches * 3 >= len(value) and entropy(value) >= 3.0


def secret_like(value: str) -> bool:
    """An unquoted value that is not just letters (code names a variable that way)."""
    return any(not (c.isalpha() or c in "._-") for c in value)


def _lexer_token(key: str, value: str) -> bool:
    """`token: 'identifier'` (a parser's token type) or `token = next_token`: a key that
    only says "token" given a plain word or identifier."""
    parts = key_words(key)
    return (
        parts[-1:] == ["token"]
        and not any(names_credential(w) for w in parts[:-1])
        and (compiled(r"[A-Za-z]+(?:[_.-][A-Za-z]+)*", 0).fullmatch(value) is not None)
        and not mixed_case(value)
    )


def _is_passphrase(value: str) -> bool:
    """`correcthorsebatterystaple`: all letters, long enough to be chosen as a passphrase."""
    return compiled(r"[a-z]{8,64}|[A-Za-z]+(?:[ -][A-Za-z]+){3,}", 0).fullmatch(value) is not None


# words before `key` that make it a credential's name (`API key`, `signing key`)
_KEY_QUALIFIERS = words(
    "api access secret private signing encryption master account client auth license app "
    "service deploy admin shared hmac jwt webhook root"
)


def bare_key_digest(key: str, value: str) -> bool:
    """`key: <md5>`, "stored under the key: <md5>" in prose: a key that is only a `key`,
    given 32 hex digits (either case), names a digest (a cache's or an object store's
    key), not a credential; `API key: <32 hex>` is one."""
    parts = key_words(key)
    return (
        parts[-1:] == ["key"]
        and not any(w in _KEY_QUALIFIERS or names_credential(w) for w in parts)
        and compiled(r"[0-9a-f]{32}|[0-9A-F]{32}", 0).fullmatch(value.strip("'\"`")) is not None
    )


def memorable(value: str) -> bool:
    """A password manager's memorable password: three words or more joined by dots, and
    digits (`Cobalt.velvet.cobalt30`). Under a credential's name, quoted or in a
    configuration file, it is no attribute path, which code writes unquoted."""
    parts = value.split(".")
    return (
        len(parts) >= 3
        and all(compiled(r"[A-Za-z]{3,12}[0-9]{0,4}", 0).fullmatch(p) for p in parts)
        and any(c.isdigit() for c in value)
    )


def _drawn_dots(value: str) -> bool:
    """Letters and digits drawn at random, joined by dots (`cNO.Pme.Mjv`): a password when it
    is quoted or in a configuration file, unless it starts with a lower-case name (`self.`,
    `cfg.`) or its parts read as names together (`Secrets.MySQL8Password`)."""
    if compiled(r"[A-Za-z0-9]+(?:\.[A-Za-z0-9]+)+", 0).fullmatch(value) is None:
        return False
    if compiled(r"[a-z0-9_]+", 0).fullmatch(value.split(".", 1)[0]):
        return False
    return not reads_as_names(value.replace(".", "_")) and password_evidence(
        value.replace(".", "!")
    )


# the first name of an attribute path in code or a template: `self.key`, `config.db.password`
OBJECTS = words(
    "self this cls args opts options cfg conf config configs settings setting env environ os "
    "process ctx context params secrets vars inputs props state app request req session matrix "
    "steps github needs runner job values spec"
)
# a file's extension: a value naming where a password is kept (`db.pass.txt`), not one
_EXTENSIONS = words(
    "txt json yaml yml toml ini cfg conf env pem key crt cer p12 pfx jks gpg asc age enc "
    "properties xml secret secrets pass"
)


def dotted_literal(key: str, value: str) -> bool:
    """A password of names joined by dots where a value is a literal (an INI file's value,
    a flag's `--password=…`): `my.pass.word`, `a.b.c`. Not an attribute path written there
    (its first name an object's: `self.key`, `config.db.password`), a value naming its own
    key (`db.password`), a file's name (`db.pass.txt`) or a version (`1.2.3`)."""
    parts = value.split(".")
    # (words in lower case and numbers: a name of code mixes cases, digits or `_` in a
    # part, `x509.load_pem`, `this.props.apiKey`, `Secrets.MySQL8Password`)
    if len(parts) < 2 or not all(
        compiled(r"[a-z]{1,20}|[0-9]{1,10}", 0).fullmatch(p) for p in parts
    ):
        return False
    names = key_words(key)
    return (
        parts[0].isalpha()
        and parts[0] not in OBJECTS
        and parts[-1] not in _EXTENSIONS
        and not any(p in names for p in parts)
    )


# an INI file's section header, and the lines a section holds
_INI_SECTION = r"\[[\w .:\"'/-]{1,80}\]"
_INI_LINE = r"[#;][^\n]*|[\w.-]{1,80}[ \t]*[=:][^\n]*"


def in_ini_section(text: str, pos: int) -> bool:
    """Whether the line at `pos` is in an INI file's section: the lines above it, up to a
    `[section]` header, are `key = value` lines, comments or blank."""
    end = text.rfind("\n", 0, pos)
    for _ in range(200):
        if end < 0:
            return False
        start = text.rfind("\n", 0, end) + 1
        line = text[start:end].strip()
        if compiled(_INI_SECTION, 0).fullmatch(line):
            return True
        if line and not compiled(_INI_LINE, 0).fullmatch(line):
            return False
        end = start - 1
    return False


def assignment_is_secret(key: str, value: str, *, quoted: bool, env_style: bool) -> bool:
    """Whether `key <op> value` assigns a credential: a weak key needs a random-looking
    value; a strong one any real value, unless it is unquoted code (`token = next_token`)."""
    strength = key_strength(key)
    password = strength == "strong" and kind_of(key) == "password"
    if password and compiled(r"\d{4,64}", 0).fullmatch(value):
        return True  # a PIN, or a password of digits: `"pin": <digits>`
    if strength == "strong" and (quoted or env_style) and (memorable(value) or _drawn_dots(value)):
        return True  # a literal (quoted, or in an env file), not an attribute path
    if strength is None or not is_value(value) or _lexer_token(key, value):
        return False
    if escapes_table(value):
        return False  # a table of characters written as escapes (pygments' `Sk = '…'`)
    if short_hex(value) and kind_of(key) != "password":
        return False  # `session_key: 3f2a9c0d1e4b5a6c`: an id in a log (see docs/secrets.md)
    if names_itself(key, value) or _a_name_about(value) or describes(value):
        return False
    if bare_key_digest(key, value):
        return False
    if is_identifier_value(value) and not _names_secret(key):
        # a bare hex digest under a key that is exactly a token (`token=<40 hex>`: an old
        # GitHub OAuth token) is one; under `commit`, `etag` or `sha` it names a version
        return key_words(key)[-1:] == ["token"] and (
            compiled(_HEX_ID, 0).fullmatch(value) is not None or _uuid_token(key, value)
        )
    if strength == "weak":
        if named_id(value):
            return False  # `key: build-<random>`: the id of a build, a run, a trace
        if looks_random(value) or password_evidence(value) or mixed_case(value):
            return True
        from gitimprove.redaction.pronounced import pwgen_draw

        return pwgen_draw(value)  # a short password pwgen drew (`pronounced.py`)
    if quoted or env_style or secret_like(value) or looks_random(value) or mixed_case(value):
        return True
    return kind_of(key) == "password" and _is_passphrase(value) and value.lower() not in key.lower()


def escapes_table(value: str) -> bool:
    """Characters written as escapes, most of the value (`\\xa8\\u02c2-\\u02c5…`): a
    table of code points or a character class, not a secret."""
    escapes = compiled(r"\\(?:u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2})", 0).findall(value)
    return len(escapes) >= 4 and sum(map(len, escapes)) * 2 >= len(value)


# words that name what an id identifies: `build-<random>`, `run_<random>`, `req-<random>`
_ID_PREFIXES = words(
    "build builds run runs job jobs task step pipeline deploy deployment release commit image "
    "artifact trace span request req correlation event evt msg message order invoice item node "
    "pod instance cluster container volume snapshot backup upload file doc page test workflow "
    "execution exec batch operation op revision rev change changeset bundle asset cache"
)


def named_id(value: str) -> bool:
    """An id named by what it identifies: one such word in lower case, `-` or `_`, then
    letters and digits (`build-<36 random>`, `run_01J…`)."""
    head, sep, body = value.partition("-") if "-" in value[:12] else value.partition("_")
    return (
        bool(sep)
        and head in _ID_PREFIXES
        and compiled(r"[A-Za-z0-9]{6,64}", 0).fullmatch(body) is not None
    )


# tokens that are ids, not credentials: a page cursor, a request's or a trace's id
_ID_TOKENS = words("page next continuation cursor idempotency sync request correlation trace")
_ID_TOKENS |= words("cancellation change resume pagination client csrf xsrf state nonce")


def _uuid_token(key: str, value: str) -> bool:
    """A UUID under a key that is a token (`CONSUL_HTTP_TOKEN`, `NOMAD_TOKEN`,
    `X-Postmark-Server-Token`, `HEROKU_API_TOKEN`): Consul, Nomad, Postmark and Heroku
    tokens are UUIDs. A page cursor or a request id is not (`next_token`, `request_token`),
    nor a UUID under a bare `token`."""
    parts = key_words(key)  # (a bare `token = <uuid>` is as often a request's id)
    uuid = compiled(_UUID, 0).fullmatch(value) is not None
    return len(parts) >= 2 and uuid and not any(w in _ID_TOKENS for w in parts)


def _names_secret(key: str) -> bool:
    """A key naming a password, a secret or an API key (a UUID or hash there is one)."""
    joined = "_".join(key_words(key))
    return kind_of(key) == "password" or any(
        w in joined
        for w in (
            "secret",
            "api_key",
            "apikey",
            "access_key",
            "credential",
            "private",
            "auth_token",
            "access_token",
            "api_token",
            "refresh_token",
        )
    )


def short_hex(value: str) -> bool:
    """Hex digits fewer than 32 (under 128 bits): what logs print as a session or request id.
    A key or token in hex is 32 digits or more; a password may be anything, so a key naming
    a password still counts it."""
    return (
        not value.isdigit()
        and compiled(r"[0-9a-f]{8,31}|[0-9A-F]{8,31}", 0).fullmatch(value) is not None
    )


def random_value(value: str) -> bool:
    """A long random-looking string that is not a UUID, a hash or encoded prose."""
    return is_value(value) and looks_random(value) and not is_identifier_value(value)


def check_generic(secret: str, m: re.Match[str]) -> bool:
    """gitleaks' catch-all rule, held to the same key names and values as ours: not a
    pagination cursor (`nextPageToken: …`), a fingerprint, an id, a hash or encoded prose."""
    key = m.string[m.start() : m.start(1)] if m.re.groups and m.start(1) >= 0 else ""
    if "\n" in key.lstrip("\r\n"):
        return False  # a line's end (`</password>`) and the next line: no assignment
    parts = head_words(key)
    if parts != key_words(key) and key_strength(key) is None:
        return False  # `vaultForTokens: …`: a vault's name, not a token
    if any(w in NOT_SECRET_ANY or w in NOT_SECRET_FIRST for w in parts):
        return False
    if parts and (parts[-1] in ABOUT or parts[-1] in ("is", "was")):
        return False
    if not is_value(secret) or _lexer_token(key.strip(" \t'\":=>,"), secret):
        return False
    if short_hex(secret) and kind_of(key) != "password":
        return False
    if bare_key_digest(key, secret):
        return False
    if names_itself(key, secret.strip("'\"")) or public_key_before(m.string, m.start()):
        return False
    value = secret.strip("'\"")
    if compiled(_FILE_NAME, re.I).fullmatch(value):
        return False  # `./sign1 tmpl.xml rsakey.pem > sign1-res.xml`: the output's file
    if (
        key_strength(key.strip(" \t'\":=>,")) == "weak"
        and reads_as_names(value)
        and not password_evidence(value)
        and not mixed_case(value)
    ):
        return False  # `DEPLOY_KEY: signature1RESIZE`: names under a name that only may be one
    if key_strength(key.strip(" \t'\":=>,")) == "weak" and named_id(value):
        return False  # `key: build-<random>`: the id of a build, a run, a trace
    return not (is_identifier_value(secret) and not _names_secret(key))


# a file's name, by the extensions of files that keys, configurations and outputs are in
_FILE_NAME = (
    r"[\w.-]{1,128}\.(?:xml|json|ya?ml|txt|pem|crt|cer|der|p12|pfx|key|pub|bin|csv|html?|md|py|"
    r"js|ts|sh|cfg|conf|ini|log|toml|lock|tar|gz|tgz|zip|out|tmp|bak|dat|db|sqlite)"
)


def public_key_before(text: str, start: int) -> bool:
    """`pub key: 0x04…`, `public_key = …`: a key that says it is a public one."""
    before = text[max(0, start - 12) : start]
    return compiled(r"(?i)\b(?:pub|public|publishable)[ \t_-]*$", 0).search(before) is not None


def check_keyed(secret: str, m: re.Match[str]) -> bool:
    """gitleaks' `<identifier with keyword> = <secret>` rules, held to what the identifier
    says: not a name about the credential (`PASSWORD_FIELD`, `password_param`) and not a
    value naming itself (`= "password"`)."""
    key = m.string[m.start() : m.start(1)] if m.re.groups and m.start(1) >= 0 else ""
    if "\n" in key.lstrip("\r\n"):
        return False  # a line's end (`</password>`) and the next line: no assignment
    key = key.strip(" \t'\"`:=>,|?")
    parts = key_words(key)
    value = secret.strip("'\"`")
    if names_itself(key, value) or _a_name_about(value):
        return False
    if bare_key_digest(key, value):
        return False
    # a name about the credential (`PASSWORD_FIELD`) given a random value still holds one
    return not (parts and parts[-1] in ABOUT) or looks_random(value, min_len=8)


# the little words of a sentence, which a passphrase of random words seldom holds two of
_FUNCTION_WORDS = words(
    "a an the to for of with in on by from your you is are be was not this that and or it its "
    "as at if when used use set must should will can only any see"
)


def describes(value: str) -> bool:
    """A sentence about the credential, not the credential: `"the key the service gave you"`,
    `"A personal access token with repo scope"`, `"used to sign cookies"` (help texts, config
    schemas, docs). Three words or more, of letters, two of them the little words of a
    sentence."""
    parts = value.split()
    if len(parts) < 3 or len(value) > 300:
        return False
    plain = [w.strip(".,;:()'\"!?").lower() for w in parts]
    if not all(w.isalpha() or w.replace("-", "").isalpha() for w in plain if w):
        return False
    return sum(w in _FUNCTION_WORDS for w in plain) >= 2


def _a_name_about(value: str) -> bool:
    """A value that is itself a name about a credential, in one case with underscores
    (`"PASSWORD_FIELD"` in a linter's message, `api_key_header`): code, not a secret."""
    snake = compiled(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+", 0)
    if snake.fullmatch(value) is None:
        return False
    parts = key_words(value)
    return any(names_credential(p) for p in parts) and parts[-1] in ABOUT
