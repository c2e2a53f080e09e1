"""A secret glued to an escape left in a text: `\\n<token>`, `"\\t<password>"`, `\\r\\n<key>`.

A JSON or C string printed without decoding keeps its escapes as two characters, and the
letter of the escape glues to what follows (`\\nghp_…` reads as `nghp_…`, `"\\tS3cr…"` as a
value starting with a backslash). The rules run again on a view where each such escape is
blanks of its length (so every position stays where it was); a finding there counts when it
starts right after an escape, or further on a line whose first word an escape glued
(`\ncurl -u "…"` reads `ncurl`), without the blanks (the rest was found on the text
itself).
"""

from __future__ import annotations

import bisect

from gitimprove.redaction.engine import RuleSet, Span, compiled

# a line break, a tab or a carriage return as an escape (`\n`, `\u000a`, `\x0a`)
_ESCAPE = r"\\(?:[ntr]|u000[9aAdD]|x0[9aAdD])"
_NEAR = 3  # an escape this close to a finding's edge (a quote between them) glued it


def spans(rules: RuleSet, text: str) -> list[Span]:
    """Findings at an escape's edge, each line holding escapes read alone (its escaped line
    breaks are lines of a string, not of the text around it: a heredoc or a table begun on
    another line does not reach into it)."""
    out: list[Span] = []
    at = text.find("\\")
    while at != -1:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end == -1 else end
        out.extend(
            Span(s.start + start, s.end + start, s.kind, s.priority)
            for s in _line_spans(rules, text[start:end])
        )
        at = text.find("\\", end)
    return out


def _line_spans(rules: RuleSet, text: str) -> list[Span]:
    marks = [m.span() for m in compiled(_ESCAPE).finditer(text)]
    if not marks:
        return []
    chars = list(text)
    for a, b in marks:
        # a line break stays one (a flag's value is on its line: `-p\nEnter password:`),
        # unless a quote holds it: `"\n<value>\n"` is a value's first or last character
        quoted = (a and text[a - 1] in "\"'") or text[b : b + 1] in ('"', "'")
        brk = not quoted and (text[a + 1] in "nr" or text[b - 1] in "aAdD")
        # (the blanks go before the break: the next line starts where it started)
        chars[a:b] = " " * (b - a - 1) + ("\n" if brk else " ")
    for m in compiled(r"\\(?=[\"'])").finditer(text):
        chars[m.start()] = " "  # (`\"` in a string printed undecoded: the quote it is)
    view = "".join(chars)
    ends = [b for _, b in marks]
    out = []
    for s in rules.spans(view, views=False, literal_view=False):
        start, end = s.start, s.end
        while start < end and view[start] in " \n":
            start += 1
        while end > start and view[end - 1] in " \n":
            end -= 1
        if start >= end:
            continue
        # an escape ends just before it: the escape glued to it (an escape after a value
        # is read on the text itself; one further away glued nothing, and reading `\n` as
        # a line there turns a string literal of code into lines, a table, a block)
        i = bisect.bisect_left(ends, start - _NEAR)
        if i < len(ends) and ends[i] <= start:
            out.append(Span(start, end, s.kind, s.priority))
            continue
        # the last escape before it glued a word its line starts with (`\ncurl -u "…"`:
        # the text reads `ncurl`, no command), and nothing breaks the line between them
        j = bisect.bisect_right(ends, start) - 1
        glued = j >= 0 and text[ends[j] : ends[j] + 1].isalpha()
        if glued and "\n" not in view[ends[j] : start]:
            out.append(Span(start, end, s.kind, s.priority))
    return out
