"""Where a line break sits inside one token (a terminal, an encoder or a log wrapped it), on
evidence only: a masked secret never swallows the text after it.

A break between two runs of token characters is a *wrap* when the text shows it is one:

- width: the line before is full at a wrap width the text itself shows: one of a block of
  solid lines of one length (base64, PEM or hex wrapped at 64, 76, …, followed by a shorter
  last line), or a common terminal width (80, 120, …) with the token running to its end;
- a partial line: a container log line flagged `P` (CRI: the line goes on in the next one).

Any other break is only a *candidate*: the views join it when a fixed-length or checksummed
format (`ghp_` and 36, `xoxb-…`, a JWT's three parts) is incomplete before it and complete
with the continuation (`views.py`); a match already complete before the break never extends
across it. Lines that share a decoration (a docker compose `svc  | `, a timestamp, pytest's
`E   `, `# `, `> `, a line number, a box border) continue after it: the decoration is part
of the break, and it stays in the text byte for byte when the secret is masked (`apply`).
"""

from __future__ import annotations

from gitimprove.redaction.engine import compiled

# what a token or a URL holds
_RUN = "A-Za-z0-9+/=_.:%~!#$*@?^-"
_CANDIDATE = rf"(?<=[{_RUN}])(\r?\n)"
# the widths terminals wrap at (a whole line's, or its text's after a decoration), and
# those encoders wrap at (base64 76, PEM 64, …: a solid line of token characters only)
TERMINAL = frozenset({80, 100, 120, 160, 200, 240})
ENCODER = frozenset({60, 64, 72, 76})
# the lines of a block wrapped by an encoder: base64, PEM, hex
_SOLID = r"[A-Za-z0-9+/=_-]+"
_MIN_BLOCK = 40
# a line's decoration, repeated on the lines it continues onto: docker compose's service,
# CRI's timestamp and stream (with its full/partial flag), a raw CI log's timestamp, pytest's
# `E`, a comment, a quote, a line number, a box border
_DECORATION = (
    r"(?P<deco>(?:[\w.-]+[ \t]+\|[ \t]?"
    r"|\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:?\d\d)?[ \t]+(?:(?:stdout|stderr)[ \t]+(?P<flag>[FP])[ \t])?"
    r"|E[ \t]{2,}|#+[ \t]|//[ \t]|>+[ \t]?|[ \t]*\d+[ \t]*[:|][ \t]|[ \t]*\d+[ \t]+"
    r"|[│┃|][ \t]?)(?:[ \t]*[│┃|][ \t]?)?)"
)


# how a line of its own starts (not the rest of a token a terminal wrapped): a word, a
# number, a date, a status, a version or a short commit hash followed by more words
# (`Traceback (most`, `Running tests`, `200 OK`, `7f3a2b1 fix`; a short word only before a
# lower-case word or a number: `Step 3/10`), or alone on its line when no token's rest reads
# so (`Downloading`, `done.`, `2026-11-23`, `v1.2.3`)
_OWN_LINE = (
    r"(?:[A-Z]?[a-z]{4,}|[A-Z]{3,}|\d+(?:[-/:.]\d+)*|v?\d+(?:\.\d+)+[\w.-]*|[0-9a-f]{7,12}"
    r"|[A-Za-z]+/\d+(?:\.\d+)*)[:,;]?[ \t]+(?:\(|[A-Za-z0-9])"
    r"|[A-Z]?[a-z]{2,3}[:,;]?[ \t]+(?:[a-z]{2,}|\d)"
    r"|(?:[A-Z]?[a-z]{6,}|[A-Z]?[a-z]{2,}[.:!]|\d+(?:[-/:]\d+)+|v\d+(?:\.\d+)+)[ \t]*\r?$"
)


class Break:
    """A line break between two runs of token characters: text[start:end] is the break
    with the next line's decoration or indentation; `kept` is what of it a mask keeps (the
    line break and the decoration); `wrap` says whether the text shows it is a wrap."""

    __slots__ = ("end", "kept", "start", "wrap")

    def __init__(self, start: int, end: int, kept: str, wrap: bool) -> None:
        self.start = start
        self.end = end
        self.kept = kept
        self.wrap = wrap

    def __repr__(self) -> str:
        return f"Break({self.start}, {self.end}, {self.kept!r}, wrap={self.wrap})"


def _line(text: str, at: int) -> tuple[int, int]:
    """The line holding position `at`, without its line break."""
    start = text.rfind("\n", 0, at) + 1
    stop = text.find("\n", at)
    stop = len(text) if stop == -1 else stop
    if stop > start and text[stop - 1] == "\r":
        stop -= 1
    return start, stop


def decoration(line: str) -> tuple[str, str | None]:
    """A line's decoration (empty when none) and its CRI flag."""
    m = compiled(_DECORATION, 0).match(line)
    if m is None:
        return "", None
    return m.group("deco"), m.group("flag")


def _same_decoration(a: str, b: str) -> bool:
    """Two decorations of one kind (whatever blanks end them): equal, or timestamps (CRI's
    with either flag, a CI log's) of one shape."""
    a, b = a.rstrip(" \t"), b.rstrip(" \t")
    if a == b:
        return True
    shape = compiled(r"\d|(?<= )[FP]$", 0)
    return a[:1].isdigit() and shape.sub("0", a) == shape.sub("0", b)


def breaks(text: str) -> list[Break]:
    """Every line break between two runs of token characters (with the next line's
    decoration or indentation), and whether the text shows it is a wrap."""
    out: list[Break] = []
    for m in compiled(_CANDIDATE, 0).finditer(text):
        b, after = m.start(), m.end()
        ls, le = _line(text, b)
        ns, ne = _line(text, after)
        before, nxt = text[ls:le], text[ns:ne]
        deco, flag = decoration(before)
        ndeco, _ = decoration(nxt)
        if deco and ndeco and _same_decoration(deco, ndeco):
            cont = after + len(ndeco)
            kept = text[b:cont]
        elif deco.strip() and ndeco.strip():
            continue  # decorated lines of two kinds: the next line is one of its own
        else:
            deco, flag = "", None
            cont = after + len(nxt) - len(nxt.lstrip(" \t"))
            kept = ""
        if cont >= ne or not compiled(rf"[{_RUN}]", 0).match(text, cont):
            continue
        body = before[len(deco) :]
        wrap = flag == "P" or _full(text, ls, le, len(deco), body, text[cont:ne])
        out.append(Break(b, cont, kept, wrap))
    return out


def _full(text: str, ls: int, le: int, deco: int, body: str, rest: str) -> bool:
    """Whether the line text[ls:le] (its text `body` after a decoration of `deco`
    characters) is full at a width the text shows; `rest` is the next line's text."""
    run = compiled(rf"[{_RUN}]+$", 0).search(body)
    if run is None:
        return False
    solid = compiled(_SOLID, 0)
    # a terminal's width: the whole line's, its text's after a decoration or indentation
    widths = {le - ls, len(body), len(body.lstrip(" \t"))}
    if not widths.isdisjoint(TERMINAL) and len(run.group(0)) >= 4:
        # a full line may also just end there: the next line then reads as one of its own
        return compiled(_OWN_LINE, 0).match(rest) is None
    tail = rest.rstrip()
    b64 = compiled(r"[A-Za-z0-9+/=]+", 0)
    if len(body) in ENCODER and b64.fullmatch(body) and b64.fullmatch(tail):
        if len(tail) > len(body) or compiled(r"[A-Z]?[a-z]+", 0).fullmatch(tail):
            return False  # longer than the width, or a word of its own (`Downloading`)
        return not (_digest(body) and _digest(tail) and len(tail) == len(body))
    if len(body) < _MIN_BLOCK or not solid.fullmatch(body):
        return False
    # a block: the line above is as long and as solid; its last line may be shorter
    above = body
    if ls > 0:
        a_start, a_stop = _line(text, ls - 1)
        above = text[a_start + deco : a_stop]
    if not solid.fullmatch(tail) or len(tail) > len(body):
        return False
    if len(above) == len(body) and solid.fullmatch(above) and above != body:
        return len(tail) < len(body) or not _digest(body)
    return len(tail) == len(body) and not _digest(body) and not _digest(tail)


def _digest(line: str) -> bool:
    """A line of hex digits: one of a list of digests (a list's lines are all full)."""
    return compiled(r"[0-9a-fA-F]+", 0).fullmatch(line) is not None


def kept(text: str, start: int, end: int) -> tuple[str, str]:
    """The characters of the masked span text[start:end] without its breaks (what its
    marker hashes), and what of its breaks stays in the text after the marker: each line
    break with the decoration its line shares with the line before."""
    secret = text[start:end]
    if "\n" not in secret:
        return secret, ""
    chars: list[str] = []
    keep: list[str] = []
    pos = start
    for m in compiled(r"\r?\n", 0).finditer(text, start, end):
        chars.append(text[pos : m.start()])
        ns, ne = _line(text, m.end())
        nxt = text[ns:ne]
        ls, le = _line(text, m.start())
        deco, _ = decoration(nxt)
        prev, _ = decoration(text[ls:le])
        if deco.strip() and prev and _same_decoration(prev, deco):
            keep.append(text[m.start() : m.end() + len(deco)])
            pos = m.end() + len(deco)
        else:
            pos = m.end() + len(nxt) - len(nxt.lstrip(" \t"))
    chars.append(text[min(pos, end) : end])
    return "".join(chars), "".join(keep)
