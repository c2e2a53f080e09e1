"""Credentials in the shapes tools print them, and provider tokens that need no keyword.

- a table whose header row names a secret column (AWS's credentials CSV `Access key ID,Secret
  access key`, a `|`- or tab-separated listing): that column's cells in the rows below;
- a key and its value in two cells (a row of `aws … --output table`; a key, a tab, its
  value) or separated by spaces (`aws configure set aws_secret_access_key …`, rclone's
  `secret_access_key …`), when the key is a compound credential name and the value no word;
- an AWS secret key printed near its access key id (`aws … --output text`, a CSV row);
- provider formats recognisable alone: Netlify `nfp_…`, Discord bot tokens, Asana personal
  access tokens, Datadog and Algolia keys under their names, Teams incoming webhooks whole.
"""

from __future__ import annotations

import re

from gitimprove.redaction.engine import CONTEXT, SPECIFIC, Rule, compiled
from gitimprove.redaction.values import (
    is_identifier_value,
    is_value,
    key_strength,
    key_words,
    looks_random,
    password_evidence,
    secret_like,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# box-drawing bars separate a drawn table's cells (psql's unicode borders, rich, cli-table)
_BARS = "\u2502\u2503\u2551\u250a\u250b\u2506\u2507\u254e\u254f"
_SEPARATORS = (",", "\t", "|", ";", *_BARS)
# what a rule line between rows is made of (`+----+`, `├──┼──┤`, `╞══╪══╡`)
_RULE_CHARS = "-+=|: " + "".join(chr(c) for c in range(0x2500, 0x2580))
_COLUMN = r"[A-Za-z][\w .()/-]{0,40}"
_CELL_WORDS = ("secret", "password", "passwd", "token", "key", "credential", "pwd")
_HEADER_WORDS = (*_CELL_WORDS, "pass", "pw", "psw")


def _cells(line: str, sep: str) -> list[tuple[int, int]]:
    """(start, end) of each cell of `line`, spaces and quotes trimmed."""
    out = []
    pos = 0
    for part in line.split(sep):
        a, b = pos, pos + len(part)
        while a < b and line[a] in " \"'":
            a += 1
        while b > a and line[b - 1] in " \"'\r":
            b -= 1
        out.append((a, b))
        pos += len(part) + 1
    return out


# a column headed by one of these short words holds passwords (in a line of column names;
# elsewhere `pass` is a test's outcome and `PWD` the working directory)
_SHORT_COLUMNS = (["pwd"], ["pass"], ["pw"], ["psw"], ["pword"], ["pwds"])


def _secret_column(name: str) -> bool:
    if len(name.split()) > 3:
        return False  # a sentence in a cell (`the name of the token`) names no column
    if name.isalpha() and key_words(name) in _SHORT_COLUMNS:
        return True
    if key_strength(name) != "strong":
        return False
    parts = key_words(name.replace(" ", "_"))
    return not (parts and parts[-1] in ("id", "ids", "name", "type", "arn"))


def _weak_column(name: str) -> bool:
    return name.isalpha() and key_strength(name) == "weak"


def _header(header: str) -> tuple[str, list[str]] | None:
    """The separator and the column names of a header row, or None (code, prose)."""
    if header.lstrip()[:1] in ("(", "[", "{"):
        return None  # a tuple, a list or a dict in code: `("mysql -p", PW, True),`
    sep = max(_SEPARATORS, key=header.count)
    if header.count(sep) == 0:
        return None
    names = [header[a:b] for a, b in _cells(header, sep)]
    if names and not compiled(_COLUMN, 0).fullmatch(names[0]):
        # text before the row (`Bash failed: host,port`): its last word names the column
        last = (names[0].split() or [""])[-1]
        names[0] = "" if last.endswith(":") else last  # `Bash failed: | user | password |`
    if sum(1 for n in names if n) < 2 or any(
        not compiled(_COLUMN, 0).fullmatch(n) for n in names if n
    ):
        return None
    return sep, names


def _read_header(header: str, text: str, below: int) -> tuple[str, list[str]] | None:
    """The header row's separator and names. A sentence or a statement may come before the
    row and hold the separator itself ("No, use this: a,b", "export X=1; a;b", several
    records joined with `; `): then the reading whose width the next row has wins."""
    read = _header(header)
    said = list(compiled(r"[:.?!;][ \t]+", 0).finditer(header))
    after = _header(header[said[-1].end() :]) if said else None
    if read is None or after is None:
        return read or after
    nxt = next((ln for ln in _lines(text, below, 4) if ln.strip().strip(_RULE_CHARS)), "")
    fits = [_row(nxt, r[0], len(r[1]) - 1).count(r[0]) == len(r[1]) - 1 for r in (read, after)]
    # when both fit, the names after the sentence are the row's own (the other reading took
    # its first name from the sentence's last word)
    return after if fits[1] else read


def _fold(line: str, sep: str) -> str:
    """A drawn table's row with its bars as `sep`: a header drawn in heavy bars (`┃`) heads
    rows drawn in light ones (`│`)."""
    if sep not in _BARS:
        return line
    return line.translate({ord(b): sep for b in _BARS})


def _lines(text: str, pos: int, n: int) -> list[str]:
    return text[pos:].split("\n", n)[:n]


def _row(line: str, sep: str, width: int) -> str:
    """A row, without what a `; ` joined after it (`ops,pw,admin; requests.post(a, b)`)."""
    if line.count(sep) == width or "; " not in line:
        return line
    at = line.find("; ")
    while at != -1:
        if line[:at].count(sep) == width:
            return line[:at]
        at = line.find("; ", at + 1)
    return line


def _table(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    """The cells, below a header row naming a secret column, in that column."""
    text = m.string
    header, start = m.group("header"), m.start("header")
    read = _read_header(header, text, start + len(header) + 1)
    if read is None:
        return
    sep, names = read
    width = len(names) - 1
    columns = [n for n, name in enumerate(names) if _secret_column(name)]
    # a column that may hold one (`token`, `key`): its random-looking cells
    weak = [n for n, name in enumerate(names) if n not in columns and _weak_column(name)]
    if not columns and not weak:
        return
    pos = start + len(header) + 1
    misses = 0  # rows may come later (`head -1 users.csv`, then `grep bob users.csv`)
    while pos < len(text) and misses < _ROWS_APART:
        stop = text.find("\n", pos)
        stop = len(text) if stop == -1 else stop
        line = _row(_fold(text[pos:stop], sep), sep, width)
        if line.strip() and not line.strip().strip(_RULE_CHARS):
            pos = stop + 1  # a rule between the header and the rows (psql, mysql)
            continue
        apart = misses > 0 and (line[:1].isspace() or any(c in line for c in "()=[]{}"))
        # (a statement is no row: `_SEGMENT = r"[…]{0,128}"` under a comment ending in a
        # column's name)
        apart = apart or compiled(r"[ \t]*[A-Za-z_][\w.]*[ \t]+=[ \t]", 0).match(line) is not None
        if not line.strip() or line.count(sep) != width or _header_like(line, sep) or apart:
            misses += 1  # (a row after other lines is data, not indented code or a call)
            pos = stop + 1
            continue
        misses = 0
        cells = _cells(line, sep)
        for n in columns + weak:
            if n < len(cells):
                a, b = cells[n]
                if "; " in line[a:b]:  # a statement joined after the last cell
                    b = line.index("; ", a, b)
                value = line[a:b]
                if (
                    is_value(value)
                    and " " not in value
                    and not _placeholder(value)
                    and value[0] not in "(`"  # prose or code after a comma: `(see `x`)`
                    and (looks_random(value.rstrip("+")) or (n in columns and secret_like(value)))
                ):
                    yield pos + a, pos + b
        pos = stop + 1


def _placeholder(value: str) -> bool:
    """`(set)`, `(none)`, `<hidden>`: a word in brackets stands for a value."""
    return len(value) > 2 and value[0] + value[-1] in ("()", "<>", "[]") and value[1:-1].isalpha()


# how many other lines may stand between a header and its rows, or between two rows
_ROWS_APART = 40


def _header_like(line: str, sep: str) -> bool:
    """Another header row (column names only): the rows below it belong to it."""
    names = [line[a:b] for a, b in _cells(line, sep)]
    return all(compiled(_COLUMN, 0).fullmatch(n) for n in names if n) and not any(
        c.isdigit() for c in line
    )


def _check_spaced(secret: str, m: re.Match[str]) -> bool | str:
    key = m.group("key")
    compound = "_" in key or "-" in key or any(c.isupper() for c in key[1:])
    if not compound or key_strength(key) != "strong" or not is_value(secret):
        return False
    if is_identifier_value(secret) and "secret" not in key.lower():
        return False
    if "/" in secret or "." in key:  # a path, a file name: `token_store.ex lib/app/…`
        return looks_random(secret.replace("/", ""))
    return secret_like(secret) or looks_random(secret)


def _check_cell(secret: str, m: re.Match[str]) -> bool:
    key = m.group("key")
    mixed = any(c.isdigit() for c in secret) and any(c.isalpha() for c in secret)
    strength = key_strength(key)
    if strength == "weak":  # `key1<TAB><random>` (az storage account keys list)
        return is_value(secret) and (looks_random(secret) or password_evidence(secret))
    return strength == "strong" and is_value(secret) and (mixed or looks_random(secret))


# provider token prefixes (their published formats) a random body follows, with no keyword
# needed beside them
_PREFIXES = dict(
    [
        ("NRAK-", "new-relic-api-key"),
        ("NRII-", "new-relic-insert-key"),
        ("NRJS-", "new-relic-browser-key"),
        ("ntn_", "notion-token"),
        ("secret_", "notion-token"),
        ("r8_", "replicate-token"),
        ("gsk_", "groq-api-key"),
        ("xai-", "xai-api-key"),
        ("lsv2_pt_", "langsmith-api-key"),
        ("lsv2_sk_", "langsmith-api-key"),
        ("pcsk_", "pinecone-api-key"),
        ("tvly-", "tavily-api-key"),
        ("fc-", "firecrawl-api-key"),
        ("re_", "resend-api-key"),
        ("CCIPAT_", "circleci-token"),
        ("rnd_", "render-api-key"),
        ("esecret_", "anyscale-api-key"),
        ("ak-", "modal-token"),
        ("as-", "modal-token"),
        ("sk-", "api-key"),
        ("api-", "launchdarkly-access-token"),
        ("sdk-", "launchdarkly-sdk-key"),
    ]
)
_UUID_BODY = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def _check_prefixed(secret: str, m: re.Match[str]) -> bool | str:
    prefix, body = m.group("p"), m.group("rest")
    if prefix in ("api-", "sdk-"):
        ok = compiled(_UUID_BODY, 0).fullmatch(body) is not None
    else:
        ok = looks_random(body.replace("_", "").replace("-", ""), min_len=20)
    return ok and _PREFIXES[prefix]


def _check_aws_secret(secret: str, m: re.Match[str]) -> bool:
    return looks_random(secret, min_len=40) or sum(c.isupper() for c in secret) >= 4


_KEYWORDS = (*_CELL_WORDS, "auth", "salt")

RULES: list[Rule] = [
    Rule(
        "credential",
        r"(?im)^(?P<header>(?=[^\n]*[,\t|;"
        + _BARS
        + r"])[^\n]{0,4000}?(?:secret|pass|pw|psw|token|key|credential)"
        r"[^\n]{0,4000})$",
        _HEADER_WORDS,
        needs=("\n",),
        priority=CONTEXT,
        expand=_table,
        whole=True,
    ),
    Rule(
        # two cells of a row: `| SecretAccessKey | <value> |`, `DB_PASSWORD<TAB><value>`
        "credential",
        r"(?im)(?:^|[|\t])[ \t]*(?P<key>[\w.-]{0,40}(?:secret|password|passwd|token|key|"
        r"credential|pwd|auth|salt)[\w.-]{0,40})(?:[ \t]+\|[ \t]+|\t[ \t]*)(?P<v>[^\s|]{4,500})",
        _KEYWORDS,
        groups=("v",),
        needs=(" | ", "\t"),
        priority=CONTEXT,
        check=_check_cell,
    ),
    Rule(
        # `aws configure set aws_secret_access_key <v>`, rclone `secret_access_key <v>`
        "credential",
        r"(?i)(?<![\w.-])(?P<key>[\w.-]{0,40}(?:secret|password|passwd|token|key|credential|"
        r"pwd)[\w.-]{0,40})[ \t]+[\"']?(?P<v>[^\s'\"`,;|&<>(){}\[\]\\]{8,500})",
        _KEYWORDS,
        groups=("v",),
        priority=CONTEXT,
        check=_check_spaced,
    ),
    Rule(
        # an AWS secret key near its access key id: CSV rows, `--output text`, `table`
        "aws-secret-key",
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b[^\n]{0,80}?(?<![A-Za-z0-9+/])"
        r"([A-Za-z0-9+/]{40})(?![A-Za-z0-9+/=])",
        ("akia", "asia", "abia", "acca"),
        priority=SPECIFIC,
        check=_check_aws_secret,
    ),
    Rule(
        "api-key",
        r"(?<![\w.-])(?P<all>(?P<p>"
        + "|".join(re.escape(p) for p in sorted(_PREFIXES, key=len, reverse=True))
        + r")(?P<rest>[A-Za-z0-9_-]{20,160}))(?![\w-])",
        tuple(p.lower() for p in _PREFIXES),
        groups=("all",),
        check=_check_prefixed,
    ),
    Rule("mapbox-secret-token", r"\bsk\.eyJ[\w-]{20,}\.[\w-]{16,}", ("sk.eyj",)),
    Rule("airtable-pat", r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b", ("pat",)),
    Rule("netlify-access-token", r"\bnf[pcu]_[A-Za-z0-9]{36,40}\b", ("nfp_", "nfc_", "nfu_")),
    Rule(
        "discord-bot-token",
        r"(?<![\w.-])[MNO][A-Za-z0-9_-]{23,27}\.[\w-]{6}\.[\w-]{27,40}(?![\w-])",
        ("m", "n", "o"),
        check=lambda s, m: sum(c.isdigit() for c in s) >= 3,
    ),
    Rule("asana-pat", r"\b[12]/\d{16}(?:/\d{16})?:[a-f0-9]{32}\b", ("1/1", "2/1")),
    Rule(
        "datadog-key",
        r"(?i)\b(?:dd|datadog)[_-]?(?:api|app|application|client)[_-]?(?:key|token)\b"
        r"[\"']?\s*(?:[:=]|=>|,)?\s*[\"']?([a-f0-9]{32,40})\b",
        ("dd_", "dd-", "ddapi", "ddapp", "datadog"),
    ),
    Rule(
        "algolia-api-key",
        r"(?i)\balgolia\w*\s*(?:\.\w+)?\s*\(\s*[\"'][\w-]+[\"']\s*,\s*[\"']([a-f0-9]{32})[\"']",
        ("algolia",),
    ),
    Rule(
        "cohere-api-key",
        r"(?i)\b(?:cohere|co)\.(?:Client|ClientV2|AsyncClient)\(\s*(?:api_key\s*=\s*)?"
        r"[\"']([A-Za-z0-9]{40})[\"']",
        ("cohere", "co."),
    ),
    Rule(
        "microsoft-teams-webhook",
        r"https://[\w.-]+\.(?:webhook\.office|outlook\.office)\.com/webhook(?:b2)?/[\w@.-]+"
        r"/IncomingWebhook/[0-9a-f]{32}/[0-9a-f-]{36}(?:/[\w-]+)?",
        ("incomingwebhook",),
    ),
]
