"""Where a line break may sit inside one token (a terminal, a log or an editor wrapped it),
and where it only ends a line: the views join a text at the first kind of break alone.

A break is a wrap where the token's characters run on both sides and the two pieces read as
one token; it is not one before a line of its own (`KEY=…` after `SECRET=…`), between a
digest and a word, before a range (`84c15ef..b4664b4`), or after a name or a path
(`token_store.py` / `To …`): a masked secret never swallows the text after it.
"""

from __future__ import annotations

from gitimprove.redaction.engine import compiled

_RUN_CHARS = "A-Za-z0-9+/=_-"
# a break inside a token: after a long line or a long run, before a run of 4 or more (or
# an indented run of 3 or more: a wrapped line's continuation); a break inside a scheme
_BREAK = (
    rf"(?<=[{_RUN_CHARS}])\r?\n(?:(?=[{_RUN_CHARS}]{{4}})|(?P<indent>[ \t]+)(?=[{_RUN_CHARS}]{{3}}))"
    r"|(?<=[A-Za-z0-9+.-]:)(?P<scheme>\r?\n)(?=//)"
)
_LONG_LINE, _LONG_RUN = 40, 8
# what a token or a URL holds: a line break (and indentation) between two runs of these
# whose joined run is token-like is a wrap, wherever it cut the token (after its first few
# characters, or before its last two)
_WRAP_CHARS = "A-Za-z0-9+/=_.:%~!#$*@-"
_WRAP = rf"(?<=[{_WRAP_CHARS}])\r?\n[ \t]*(?=[{_WRAP_CHARS}])"
TOKEN_RUN = 16


def breaks(text: str) -> list[tuple[int, int]]:
    """Where line breaks (with a continuation's indentation) may split a token."""
    out = []
    for m in compiled(_BREAK, 0).finditer(text):
        if m.group("scheme") is not None:
            out.append(m.span())
            continue
        if m.group("indent") is not None and not _continuation(text, m.end()):
            continue
        if _statement_line(text, m.end()) or not _may_wrap(text, m.start(), m.end()):
            continue
        line_start = text.rfind("\n", 0, m.start()) + 1
        run = compiled(rf"[{_RUN_CHARS}]*$", 0).search(
            text, max(line_start, m.start() - 64), m.start()
        )
        piece = run.group(0) if run is not None else ""
        # a token's head: long, or short but not a word (`ghp_k3`, `sk-4f`)
        tokenish = (
            len(piece) >= 4
            and any(c.isalpha() for c in piece)
            and (any(c.isdigit() or c in "_-" for c in piece))
        )
        if len(piece) >= _LONG_RUN or tokenish or m.start() - line_start >= _LONG_LINE:
            out.append(m.span())
    if "\n" in text:
        out.extend(_wraps(text, {a for a, _ in out}))
    return sorted(out)


def _wraps(text: str, known: set[int]) -> list[tuple[int, int]]:
    """Breaks whose two sides joined read as one token (16 or more token or URL characters,
    letters and digits): a token cut after its first few characters (`gith` / `ub_pat_…`,
    `AKIA` / `…`, `https://ho` / `oks.slack.com/…`) or before its last two. A next line
    that starts a statement of its own (`NAME = …`) is code, not a wrapped token."""
    return [
        m.span()
        for m in compiled(_WRAP, 0).finditer(text)
        if m.start() not in known
        and token_across(text, m.start(), m.end())
        and _may_wrap(text, m.start(), m.end())
    ]


# a line of its own: a key and its value (`DB_HOST=…`, `export AWS_REGION=…`, `username:
# admin`, `- name: x`, `"port": 5432`)
_KEY_LINE = (
    r"[ \t]*(?:(?:export|set|declare|local|readonly|setenv)[ \t]+|-[ \t]+|\$env:)?"
    r"[\"']?(?P<name>[A-Za-z_][\w.-]*)[\"']?"
    r"(?:=(?![=\s])(?![\"'`](?:[\s,;)\]}]|$))|[ \t]+=[ \t]|[ \t]*:(?=[ \t\r\n]|$))"
)
# a digest's end: 16 or more hex digits, digits and letters both, after a non-token character
_HEX_TAIL = r"(?<![A-Za-z0-9])(?=[a-fA-F]*[0-9])(?=[0-9]*[a-fA-F])(?:[0-9a-f]{16,}|[0-9A-F]{16,})$"


def _valued(text: str, b: int) -> bool:
    """Whether the line before the break at `b` gives a value already (`KEY=…`, `key: …`):
    then a key on the next line starts a line of its own."""
    line = text[text.rfind("\n", 0, b) + 1 : b]
    return compiled(r"[=:][ \t]*[\"']?[^\s\"']+$|:[ \t]", 0).search(line) is not None


def _random(name: str) -> bool:
    """A name that is itself a random token's piece (`sdGJaTewzqf1iCNM2lO35w…:`, `c66d.lock`):
    long with digits, or a digit between letters (`S3_BUCKET`, `ipv4` are names)."""
    if len(name) >= TOKEN_RUN and sum(c.isdigit() for c in name) >= 3:
        return True
    return compiled(r"[A-Za-z][0-9]+[A-Za-z]", 0).search(name) is not None


def starts_line(text: str, e: int) -> bool:
    """Whether the line after a break at `e` starts with something of its own: a key
    (`DB_HOST=…`, `username: …`) or a common word or command (`Run …`, `and …`, `ls`)."""
    key = compiled(_KEY_LINE, 0).match(text, e)
    if key is not None:
        return not _random(key.group("name"))
    word = compiled(r"[ \t]*([A-Za-z]+)(?![\w/+=@.-])", 0).match(text, e)
    if word is None:
        return False
    w = word.group(1)
    return w.lower() in WORDS and (w.islower() or w.istitle())


def _key_head(text: str, b: int, e: int) -> bool:
    """Whether the break text[b:e] splits a key's name (`DB_PASSWO` / `RD=…`): the two
    pieces joined name a credential that the next line's key alone does not."""
    head = compiled(r"(?<![\w.-])[A-Za-z_][\w.-]{0,63}$", 0).search(text, max(0, b - 64), b)
    tail = compiled(r"[ \t]*[\"']?([A-Za-z_][\w.-]*)", 0).match(text, e)
    if head is None or tail is None or text[b:e].strip("\r\n"):
        return False
    joined, alone = (head.group(0) + tail.group(1)).lower(), tail.group(1).lower()
    return any(w in joined and w not in alone for w in _KEY_WORDS)


_KEY_WORDS = ("pass", "pwd", "secret", "token", "key", "auth", "cred", "private")


def _may_wrap(text: str, b: int, e: int) -> bool:
    """Whether the break text[b:e] may sit inside one token: not before a line of its own
    (`KEY=…`, `key: …`), not between a hex run and what is not hex (a digest ends at the
    break: `Linux-pip-<hex>` / `Run …`), not before a range (`84c15ef..b4664b4`)."""
    key = compiled(_KEY_LINE, 0).match(text, e)
    if key is not None and _valued(text, b) and not _random(key.group("name")):
        return _key_head(text, b, e)
    tail = compiled(r"[A-Za-z0-9+/=_.-]{1,64}", 0).match(text, e)
    if tail is None:
        return True
    if ".." in tail.group(0):
        return False
    head = compiled(_HEX_TAIL, 0).search(text, max(0, b - 64), b)
    if head is not None:
        digits = "0123456789abcdef" if not head.group(0).isupper() else "0123456789ABCDEF"
        first = compiled(r"[A-Za-z0-9]+", 0).match(tail.group(0))
        return first is None or all(c in digits for c in first.group(0))
    return True


def token_across(text: str, b: int, e: int) -> bool:
    """Whether the runs of token characters either side of the break text[b:e] read as one
    token once joined; a next line that starts a statement of its own (`NAME = …`,
    `name: …`, `call(…`) is code, not the rest of a token."""
    head = compiled(rf"[{_WRAP_CHARS}]{{1,64}}$", 0).search(text, max(0, b - 64), b)
    tail = compiled(rf"[{_WRAP_CHARS}]{{1,64}}", 0).match(text, e)
    if head is None or tail is None:
        return False
    if compiled(r"[ \t]*(?:=|:[ \t])|\(", 0).match(text, tail.end()):
        return False
    run = head.group(0) + tail.group(0)
    if len(run) < TOKEN_RUN:
        return False
    # the longer side reads as a token on its own: a file name and the next line's first
    # word (`token_store.py` / `To …`) joined are not one
    longer = max(head.group(0), tail.group(0), key=len)
    return _tokenish(run) and not _named(longer)


def _named(piece: str) -> bool:
    """A name, a word or a path in one case without digits (`token_store.py`,
    `github.com:acme/app.git`): not a random token's piece."""
    return (
        len(piece) >= TOKEN_RUN // 2
        and not any(c.isdigit() for c in piece)
        and (piece.islower() or piece.isupper())
    )


def _tokenish(run: str) -> bool:
    """Letters, and digits or letters of both cases around a `_` (`api_org_kQzT…`)."""
    if not any(c.isalpha() for c in run):
        return False
    return any(c.isdigit() for c in run) or ("_" in run and not run.islower() and not run.isupper())


def _continuation(text: str, at: int) -> bool:
    """An indented line that continues a token: one run of non-space characters (code's
    indented lines hold spaces, calls or operators)."""
    stop = text.find("\n", at)
    line = text[at : stop if stop != -1 else len(text)].rstrip()
    if _statement_line(text, at):
        return False
    return 3 <= len(line) <= 200 and not any(c in line for c in " \t()")


def _statement_line(text: str, at: int) -> bool:
    """A line of code of its own: a block's opener (`else:`) or a bare statement."""
    stop = text.find("\n", at)
    line = text[at : stop if stop != -1 else len(text)].strip()
    return line.endswith(":") or line in _STATEMENTS


_STATEMENTS = frozenset(
    ["pass", "break", "continue", "return", "raise", "else", "fi", "done", "esac", "then", "end"]
)


# words that begin a line of prose or of a log: after a whole token, not its rest
WORDS = frozenset(
    """a an and are as at be but by can did do done error failed for from had has have if in
    is it its no not of ok on or run see set so that the then this to use used was we were
    when which will with you your also added after again all before build check copy create
    created get got here info let make new next note now only please push pushed removed
    saved skip start started stop token update updated warning ls cd cat echo git npm pip
    python make sudo exit""".split()  # noqa: SIM905
)
