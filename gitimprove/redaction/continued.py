"""A secret's rest on the next line, where nothing shows a wrap: the line is its tail.

`wraps.py` reads a line break as inside a token only on evidence (a terminal's width, an
encoder's, a format left incomplete). A value cut by hand or by a narrow pane into two
short lines shows none: `API_KEY=<head>` then `<tail>` alone on the next line. What shows
it is the pair: a secret found running to its line's end, and a next line that is one run
of a token's characters reading as no line of its own (no word, name, path, number,
version, date, command or `key=value`; eight characters or more, mixing upper and lower
case letters and digits or symbols as a generated token does, or letters of both cases
in humps no word has, or hex after hex). A
provider's format complete before the break is not continued (`wraps.py` reads a format
the break left incomplete). Such a line is masked with the secret before it,
as one secret (one marker, hashed over both pieces).
"""

from __future__ import annotations

from gitimprove.redaction.engine import SPECIFIC, RuleSet, Span, compiled
from gitimprove.redaction.values import mixed_case, words

# one run of a token's characters alone on its line (its indentation aside)
_TAIL = r"[ \t]*(?P<tail>[A-Za-z0-9+/=_.~!@#$%^*?-]{2,256})[ \t]*(?=\r?\n|\Z)"
# lines that read as their own: words, names, numbers, versions, dates, paths, files, rules
_OWN_LINE = (
    r"[A-Za-z][a-z]+[.!:]?"  # a word, `Done.`
    r"|[A-Z]+[.!:]?"  # `OK`, `PASSED`
    r"|[a-z]+(?:[-_.][a-z]+)*"  # a name, a command: `make`, `npm-run`, `foo.bar`
    r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"  # a constant's name
    r"|[A-Za-z][a-z]*(?:[A-Z][a-z]+)+"  # CamelCase
    r"|[\d.,:/+-]+"  # numbers, dates, times, versions
    r"|v?\d+(?:\.\d+)+[\w.+-]*"
    r"|[=*#~^_.-]{4,}"  # a rule under a heading, `----`
    r"|[\w-]+\.[A-Za-z]{1,5}"  # a file: `README.md`
    r"|[0-9a-f]{7,12}|[0-9a-f]{40}|[0-9a-f]{64}"  # a git id, a digest
)


# short lines that are words of their own: an answer, a shell keyword, a status
_SHORT_WORDS = words(
    "ok no yes yep nop go hi oh on off end fi do done esac ack nak err id it is ja nein non "
    "oui si up all any"
)


def _tail_of(text: str, span: Span, *, short: bool = True) -> tuple[int, int] | None:
    """Where the next line's token is, when it continues the secret at `span` (with
    `short`, a span found a secret already: its last two or three characters may follow)."""
    end = span.end
    if end >= len(text) or text[end] not in "\r\n":
        return None
    line = text.rfind("\n", 0, span.start) + 1
    head = text[span.start : end]
    if any(c.isspace() for c in head) or "[REDACTED:" in text[line:end]:
        return None
    nl = end + (2 if text.startswith("\r\n", end) else 1)
    m = compiled(_TAIL, 0).match(text, nl)
    if m is None:
        return None
    tail = m.group("tail")
    # (a short tail is one when it mixes cases or digits with a password's symbols, as no
    # line of its own does: `U%EQXeU`)
    symbols = sum(c in "!@#$%^*?~+=" for c in tail)
    if len(tail) < 4:
        if not short:
            return None
        # (the last two or three characters of a value wrapped by hand: `Q7`, `x#`, `9Zk`;
        # one kind, a version or a number reads as a line of its own: `ok`, `v2`, `42`)
        if _kinds(tail) < 2 or not tail[0].isalnum() or compiled(r"\d+\.?", 0).fullmatch(tail):
            return None
        if len(head) < 8 or _kinds(head) < 2 or _hex(head):
            return None
        # (after a generated password, its cases, digits and symbols mixed, a word or a
        # version of two cases or kinds is its rest: `Oh`, `v4`; after a plainer value, a
        # line of its own)
        if (tail.lower() in _SHORT_WORDS or tail[0] in "vV") and _kinds(head) < 4:
            return None
        return m.span("tail")  # (`Bl`, `dTf`: two or three letters say no word of their own)
    elif len(tail) < 8 and not (symbols and _kinds(tail) >= 3):
        return None  # `abc123`, `ok`: too short to tell from a line of its own
    if _hex(head) and _hex(tail) and len(tail) not in (40, 64):
        return m.span("tail")  # a hex key's rest (a full git id or digest is a line of its own)
    if compiled(_OWN_LINE, 0).fullmatch(tail) or not any(c.isalnum() for c in tail):
        return None
    if compiled(r"[/.-]|~[\w.-]*/", 0).match(tail) or "=" in tail.strip("="):
        return None  # a path, an option, an assignment of its own
    if len(tail) >= 4 and not _same_kind(head, tail):
        return None
    return m.span("tail")


def _hex(value: str, least: int = 8) -> bool:
    return len(value) >= least and all(c in "0123456789abcdefABCDEF" for c in value)


def _same_kind(head: str, tail: str) -> bool:
    """A tail reads as the same token's rest: its characters are of the head's alphabet
    (hex stays hex), and it mixes kinds as a generated token does (not one plain word)."""
    if _hex(head):
        return _hex(tail)
    return _kinds(tail) >= 3 or mixed_case(tail) or _random_letters(tail)


def _random_letters(value: str) -> bool:
    """Letters of both cases, 10 or more, in humps no word has (`xbZhLuhInwjfpG`: `xb`, `Zh`
    have no vowel), not a name in CamelCase (`HelloWorld`, `getPassword`)."""
    if len(value) < 10 or not value.isalpha() or value.islower() or value.isupper():
        return False
    humps = compiled(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", 0).findall(value)
    return any(len(h) >= 2 and not any(c in "aeiouyAEIOUY" for c in h) for h in humps)


def _kinds(value: str) -> int:
    """How many of digits, upper case, lower case and other characters `value` mixes."""
    kinds = sum(any(f(c) for c in value) for f in (str.isdigit, str.isupper, str.islower))
    return kinds + any(not c.isalnum() for c in value)


# a line ending in a value given to a key: `KEY=<value>`, `key: <value>` (no blank in it)
_HEAD = r"(?m)[=:][ \t]*+(?P<head>[^\s\"'`=:]{4,256}+)(?=\r?\n)"


# a quoted value its line leaves open, closed on the next line by one run of a token's
# characters: `db_key = "<head>` then `<tail>"` (the quote is the evidence, whatever the width)
_OPEN = (
    r"(?m)(?:[=:,(]|=>)[ \t]*+(?P<q>[\"'])(?P<head>[^\s\"'`]{2,256}+)\r?\n"
    r"[ \t]*+(?P<tail>[^\s\"'`]{1,256}+)(?P=q)"
)


def breaks(text: str) -> list[tuple[int, int]]:
    """The line breaks after a value given to a key where the next line is its tail: the
    joined view reads the two as one (a value that alone is too short to be a secret, a
    hex key's first half, is one joined); also inside a quoted value the line leaves open."""
    out: list[tuple[int, int]] = []
    if "\n" in text and ('"' in text or "'" in text):
        for m in compiled(_OPEN, 0).finditer(text):
            q = m.group("q")
            before = text[text.rfind("\n", 0, m.start("q")) + 1 : m.start("q")]
            if before.count(q) % 2:
                continue  # the quote closes a literal (`opts="/password:"`), opens none
            if _kinds(m.group("head") + m.group("tail")) >= 2:
                out.append((m.end("head"), m.start("tail")))
    for m in compiled(_HEAD, 0).finditer(text):
        end = m.end("head")
        if _kinds(m.group("head")) < 2 and not _hex(m.group("head")):
            continue  # a word (`heroku auth:token`), not a value's first piece
        if "[REDACTED:" in text[text.rfind("\n", 0, end) + 1 : end]:
            continue
        tail = _tail_of(text, Span(m.start("head"), end, "", 0), short=False)
        if tail is not None:
            out.append((end, tail[0]))
    return out


def spans(rs: RuleSet, text: str, known: list[Span]) -> list[Span]:
    """Findings across the breaks `breaks` finds, the lines joined there; a break right
    after a secret already `known` needs no view (`extend` takes its tail in)."""
    ends = {s.end for s in known}
    # (in text order: the quoted values' breaks are found before the keys' ones)
    found = sorted(b for b in breaks(text) if b[0] not in ends)
    if not found:
        return []
    from gitimprove.redaction.views import _wrapped_spans

    # (a provider's format cut by a break is `wraps.py`'s: complete before it, it ends there)
    return [s for s in _wrapped_spans(rs, text, found) if s.priority != SPECIFIC]


def extend(text: str, found: list[Span]) -> list[Span]:
    """`found` (merged, in text order) with each secret's tail on the next line taken in."""
    if "\n" not in text or not found:
        return found
    out: list[Span] = []
    for n, s in enumerate(found):
        tail = _tail_of(text, s) if s.priority != SPECIFIC else None
        nxt = found[n + 1] if n + 1 < len(found) else None
        if tail is not None and (nxt is None or nxt.start >= tail[1]):
            s = Span(s.start, tail[1], s.kind, s.priority)
        out.append(s)
    return out
