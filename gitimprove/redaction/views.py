"""What a text says once its disguises are taken off, with a way back to where it said it.

A secret can hide from the rules without being changed for a reader: colour codes inside an
assignment (`\\x1b[32mPASSWORD\\x1b[0m=…`), a soft hyphen or a zero-width space inside a
token, fullwidth separators (`PASSWORD＝…`, `password：…`), a shell line continuation, or a
long token wrapped onto the next line by a terminal. The rules run again on two views:

- the *clean* view: escape sequences and invisible characters dropped, compatibility forms
  folded to ASCII (NFKC, dashes, quotes, spaces), `\\`-newline continuations joined; every
  finding there counts;
- the *joined* view: on top of that, a line break between two runs of token characters is
  removed, when the line before is long or ends in a long run; only findings that cross a
  removed break count (the lines on their own were scanned already), so two lines that
  merely sit next to each other are not read as one.

Each finding is mapped back onto the original text, covering whatever was dropped inside it.
"""

from __future__ import annotations

import bisect

from gitimprove.redaction import wraps
from gitimprove.redaction.engine import SPECIFIC, RuleSet, Span, compiled

_RUN_CHARS = "A-Za-z0-9+/=_-"
# ANSI CSI / OSC / two-character escapes, also as JSON or a shell would spell them
_ESCAPE = (
    r"(?:\x1b|\\u001[bB]|\\x1[bB]|\\033|\\e)"
    r"(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]{0,200}(?:\x07|\x1b\\|\\u0007|\\a)|[@-Z\\_])"
)
_INVISIBLE = "[\u00ad\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\ufeff]"
_CONTINUATION = rf"(?<=[{_RUN_CHARS}])\\\r?\n[ \t]*(?=[{_RUN_CHARS}])|\\\r?\n"
_DROP = rf"{_ESCAPE}|{_INVISIBLE}|{_CONTINUATION}"
_FOLD = {
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d", "-"),
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
}
_REACH, _WINDOW = 400, 4000


class View:
    """A text made from an original by dropping and replacing pieces. Segments are
    (view start, original start, original length, view length, exact)."""

    def __init__(self, text: str, segments: list[tuple[int, int, int, int, bool]]) -> None:
        self.text = text
        self.segments = segments
        self.starts = [s[0] for s in segments]

    def _segment(self, pos: int) -> tuple[int, int, int, int, bool]:
        return self.segments[bisect.bisect_right(self.starts, pos) - 1]

    def original(self, start: int, end: int) -> tuple[int, int]:
        vs, os_, ol, _, exact = self._segment(start)
        o_start = os_ + (start - vs) if exact else os_
        vs, os_, ol, _, exact = self._segment(end - 1)
        o_end = os_ + (end - 1 - vs) + 1 if exact else os_ + ol
        return o_start, o_end


def _fold(c: str) -> str:
    folded = _FOLD.get(c)
    if folded is not None:
        return folded
    import unicodedata

    n = unicodedata.normalize("NFKC", c)
    if n.isascii() and n.isprintable():
        return n
    return " " if c.isspace() else c


def _build(text: str, pattern: str, replace: bool) -> View | None:
    """`text` with the matches of `pattern` dropped (and, with `replace`, non-ASCII
    characters folded); None when nothing changes."""
    parts: list[str] = []
    segments: list[tuple[int, int, int, int, bool]] = []
    vpos = pos = 0
    changed = False

    def keep(a: int, b: int) -> None:
        nonlocal vpos
        if a < b:
            parts.append(text[a:b])
            segments.append((vpos, a, b - a, b - a, True))
            vpos += b - a

    full = rf"{pattern}|(?P<fold>[^\x00-\x7f])" if replace else pattern
    for m in compiled(full, 0).finditer(text):
        if replace and m.group("fold") is not None:
            new = _fold(m.group(0))
            if new == m.group(0):
                continue
            keep(pos, m.start())
            parts.append(new)
            segments.append((vpos, m.start(), 1, len(new), False))
            vpos += len(new)
        else:
            keep(pos, m.start())
        pos = m.end()
        changed = True
    if not changed:
        return None
    keep(pos, len(text))
    if not segments:
        segments.append((0, len(text), 0, 0, False))
    return View("".join(parts), segments)


def _edits(view: View) -> list[int]:
    """Where in the view something was dropped or replaced: only findings near these can
    differ from the original's."""
    out = []
    previous_end = 0
    for vs, os_, ol, _, exact in view.segments:
        if not exact or os_ != previous_end:
            out.append(vs)
        previous_end = os_ + ol
    return out


def _needs_cleaning(text: str) -> bool:
    return not text.isascii() or any(
        s in text for s in ("\x1b", "\\\n", "\\\r\n", "\\u001", "\\x1", "\\033", "\\e[")
    )


def _joined_spans(rs: RuleSet, text: str) -> list[Span]:
    """Findings that cross a line break inside a token: at a wrap the text shows (every
    finding), or at another break where a format is incomplete before it and complete
    with the continuation."""
    found = wraps.breaks(text)
    if not found:
        return []
    wrapped = [(br.start, br.end) for br in found if br.wrap and not _complete(rs, text, br)]
    out = _wrapped_spans(rs, text, wrapped) if wrapped else []
    out.extend(_completed(rs, text, [br for br in found if not br.wrap], out))
    return out


def _complete(rs: RuleSet, text: str, br: wraps.Break) -> bool:
    """Whether a format of a fixed length ends right at the wrap on its line (`HRKU-AA`
    and its 58 on a full line, then `Traceback`): a match already complete never extends
    across a break. A format that could take more characters (a JWT's signature, a
    password) is read across the wrap the width shows."""
    ls = text.rfind("\n", 0, br.start) + 1
    line = text[max(ls, br.start - _REACH) : br.start]
    n = len(line)
    lower = line.lower()
    longer = line + line[-1]  # one more of the same kind of character
    for rule in rs.candidates(lower):
        if rule.priority != SPECIFIC or rule.id in _OPEN_ENDED:
            continue
        if not any(_ends_at(line, s.end, n) for s in rs._rule_spans(rule, line, lower)):
            continue
        if not any(s.end > n for s in rs._rule_spans(rule, longer, longer.lower())):
            return True
    return False


def _ends_at(text: str, end: int, at: int) -> bool:
    """Whether a finding ending at `end` ends at `at`, but for a sentence's `.`, `,` or `)`
    (which a mask leaves out)."""
    return end <= at and not text[end:at].strip(".,)")


def _wrapped_spans(rs: RuleSet, text: str, breaks: list[tuple[int, int]]) -> list[Span]:
    """Findings in `text` with its wraps removed that cross one of them."""
    view = _join_at(text, breaks)
    origins = [seg[1] for seg in view.segments]
    # where the text after each removed break starts in the view
    joins = [view.segments[bisect.bisect_right(origins, b)][0] for b, _ in breaks]
    out: list[Span] = []
    for start, end in _windows(view.text, joins):
        window = view.text[start:end]
        found = rs.spans(window, views=False)
        if compiled(r"(?i)base64|b64|atob|decode").search(window):
            # a token decoded in place (`echo <b64> | base64 -d`) is judged by what it says
            from gitimprove.redaction import layers

            found += layers.spans(rs, window)
        found += _binary_runs(view.text, start, end)
        for s in found:
            a, b = s.start + start, s.end + start
            first = bisect.bisect_right(joins, a)
            crosses = first < len(joins) and joins[first] < b
            if crosses or _key_crosses(view.text, joins[first - 1] if first else -1, a):
                o_start, o_end = view.original(a, b)
                out.append(Span(o_start, o_end, s.kind, s.priority))
    return out


def _completed(
    rs: RuleSet, text: str, candidates: list[wraps.Break], found: list[Span]
) -> list[Span]:
    """At each break no wrap explains, a provider's format (a fixed length, a checksum, a
    JWT's parts) that the line before holds incomplete and the joined lines complete: the
    only evidence that a break without a width is inside a token."""
    out: list[Span] = []
    budget = 2 * len(text) + 4096  # two lines per break: about twice the text at most
    for br in candidates:
        b, e = br.start, br.end
        if any(s.start <= b < s.end for s in found):
            continue
        ls = text.rfind("\n", 0, b) + 1
        deco, _ = wraps.decoration(text[ls:b])
        start = max(ls + len(deco), b - _REACH)
        stop = text.find("\n", e)
        stop = min(stop if stop != -1 else len(text), e + _REACH)
        budget -= stop - start
        if budget < 0:
            break
        window = text[start:b] + text[e:stop].rstrip("\r")
        j = b - start
        if not any(
            s.priority == SPECIFIC and s.start < j < s.end and s.kind not in _OPEN_ENDED
            for s in rs.spans(window, views=False)
        ):
            continue
        out.extend(_formats_completed(rs, text, window, start, j, e))
    return out


def _formats_completed(
    rs: RuleSet, text: str, window: str, start: int, j: int, e: int
) -> list[Span]:
    """The matches across the join at `j` of `window` (text[start:] up to a break, then the
    line after it from `e`) of provider rules that do not match the line before alone up to
    the break: a format a line break left incomplete (`ghp_` and 30 of its 36)."""
    out: list[Span] = []
    head = window[:j]
    lower, head_lower = window.lower(), head.lower()
    for rule in rs.candidates(lower):
        if rule.priority != SPECIFIC or rule.id in _OPEN_ENDED:
            continue
        across = [s for s in rs._rule_spans(rule, window, lower) if s.start < j < s.end]
        if not across or any(
            _ends_at(head, s.end, j) for s in rs._rule_spans(rule, head, head_lower)
        ):
            continue
        out.extend(Span(start + s.start, e + s.end - j, s.kind, s.priority) for s in across)
    return out


# findings whose end no format fixes: a key body, a catch-all run or a token's glued run is
# any length
# formats a line break never completes: open-ended ones, and a token the text ends inside
# (`cut-token` matches at a line's end only because the line ends there)
_OPEN_ENDED = frozenset(
    {"private-key-body", "generic-api-key", "prefixed-token", "glued-token", "cut-token"}
)


def _key_crosses(view: str, join: int, start: int) -> bool:
    """A finding just after a removed break, on the line it joined: the break split its key
    (`DB_PASSWO` / `RD=…`, `x-api-k` / `ey: …`, `SNYK_TO` / `KEN = "…"`), its scheme
    (`postgres:` / `//app:…@db`) or its command (`mysql -` / `u root -p…`): at most four
    words between the break and the value."""
    if join < 0 or not 0 <= start - join <= 64:
        return False
    between = view[join:start]
    return "\n" not in between and len(between.split()) <= 4


def _join_at(text: str, breaks: list[tuple[int, int]]) -> View:
    segments: list[tuple[int, int, int, int, bool]] = []
    parts: list[str] = []
    vpos = pos = 0
    for b, end in breaks:
        if b < pos:
            continue  # (a break inside one already removed)
        if b > pos:
            parts.append(text[pos:b])
            segments.append((vpos, pos, b - pos, b - pos, True))
            vpos += b - pos
        pos = end
    parts.append(text[pos:])
    segments.append((vpos, pos, len(text) - pos, len(text) - pos, True))
    return View("".join(parts), segments)


def _windows(text: str, joins: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for j in joins:
        # the line before the joined one too: what it says (`-----BEGIN CERTIFICATE-----`,
        # `expect "*assword:*"`) may decide what the joined line holds
        start = max(text.rfind("\n", 0, max(text.rfind("\n", 0, j), 0)) + 1, j - _REACH)
        stop = text.find("\n", j)
        end = min(stop if stop != -1 else len(text), j + _REACH)
        # overlapping windows join, up to a bound: each join keeps its own reach either way,
        # and rules cost more than linear time on one very long run of token characters
        if out and start <= out[-1][1] and end - out[-1][0] <= _WINDOW:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _binary_runs(text: str, start: int, end: int) -> list[Span]:
    """Long base64 runs in text[start:end] decoding to binary: key material whose lines
    were joined (a PEM body without its BEGIN line), unless a certificate's or a public
    key's. Positions are relative to `start`."""
    from gitimprove.redaction.keys import decodes_to_binary, public_before

    out = []
    pattern = compiled(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{100,}={0,2}", 0)
    for m in pattern.finditer(text, start, end):
        if decodes_to_binary(m.group(0)) and not public_before(text, m.start()):
            out.append(Span(m.start() - start, m.end() - start, "private-key-body", SPECIFIC))
    return out


def folded(text: str) -> str:
    """`text` as the rules read it (for finding which keywords occur in it)."""
    clean = _build(text, _DROP, replace=True) if _needs_cleaning(text) else None
    return text if clean is None else clean.text


def spans(rs: RuleSet, text: str) -> list[Span]:
    """Findings in the views of `text` that differ from it, mapped back onto `text`."""
    out: list[Span] = []
    base = text
    clean = _build(text, _DROP, replace=True) if _needs_cleaning(text) else None
    if clean is not None:
        base = clean.text
        for start, end in _windows(base, _edits(clean)):
            for s in rs.spans(base[start:end], views=False):
                a, b = clean.original(s.start + start, s.end + start)
                out.append(Span(a, b, s.kind, s.priority))
    for s in _joined_spans(rs, base):
        a, b = clean.original(s.start, s.end) if clean is not None else (s.start, s.end)
        out.append(Span(a, b, s.kind, s.priority))
    return out
