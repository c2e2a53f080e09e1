"""A secret glued to an escape left in a text: `\\n<token>`, `"\\t<password>"`, `\\r\\n<key>`.

A JSON or C string printed without decoding keeps its escapes as two characters, and the
letter of the escape glues to what follows (`\\nghp_…` reads as `nghp_…`, `"\\tS3cr…"` as a
value starting with a backslash). The rules run again on a view where each such escape is
blanks of its length (so every position stays where it was); a finding there counts when it
starts or ends at an escape (the rest was found on the text itself), without the blanks.
"""

from __future__ import annotations

import bisect

from gitimprove.redaction.engine import RuleSet, Span, compiled

# a line break, a tab or a carriage return as an escape (`\n`, `\u000a`, `\x0a`)
_ESCAPE = r"\\(?:[ntr]|u000[9aAdD]|x0[9aAdD])"
_NEAR = 3  # an escape this close to a finding's edge (a quote between them) glued it


def spans(rules: RuleSet, text: str) -> list[Span]:
    marks = [m.span() for m in compiled(_ESCAPE).finditer(text)]
    if not marks:
        return []
    chars = list(text)
    for a, b in marks:
        # a line break stays one (a flag's value is on its line: `-p\nEnter password:`),
        # unless a quote holds it: `"\n<value>\n"` is a value's first or last character
        quoted = (a and text[a - 1] in "\"'") or text[b : b + 1] in ('"', "'")
        brk = not quoted and (text[a + 1] in "nr" or text[b - 1] in "aAdD")
        chars[a:b] = ("\n" if brk else " ") + " " * (b - a - 1)
    view = "".join(chars)
    ends = [b for _, b in marks]
    starts = [a for a, _ in marks]
    out = []
    for s in rules.spans(view, views=False, literal_view=False):
        start, end = s.start, s.end
        while start < end and view[start] in " \n":
            start += 1
        while end > start and view[end - 1] in " \n":
            end -= 1
        if start >= end:
            continue
        # an escape ends just before it, starts just after it, or lies inside it
        i = bisect.bisect_left(ends, start - _NEAR)
        j = bisect.bisect_left(starts, start)
        if (i < len(ends) and ends[i] <= start) or (j < len(starts) and starts[j] <= end + _NEAR):
            out.append(Span(start, end, s.kind, s.priority))
    return out
