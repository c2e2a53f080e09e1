"""Where the records of a note or a JSON-lines file begin and end.

Records are compact JSON, one a line: a line ends at \n or \r, which JSON escapes inside a
string. Imports nothing but `json` and `re`: the hooks and the warm `log` use it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

_PLAIN = json.JSONDecoder()
_LINE_END = re.compile(r"\r\n|[\r\n]")
# where `str.splitlines` also splits: raw in lines an earlier writer stored (JSON escapes the
# control characters among them, not U+0085, U+2028 or U+2029)
_OTHER_BREAK = re.compile("[\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def raw_lines(text: str) -> list[str]:
    """`text` split only where a record line can end (\\n, \\r, \\r\\n): a merge or an append
    keeps every line as it was, whatever it holds."""
    return _LINE_END.split(text)


def lines_from_end(text: str) -> Iterator[str]:
    """The lines `raw_lines` gives, last first, found as they are asked for: a reader of the
    last lines of a long output neither splits nor copies the rest of it."""
    end = len(text)
    nl, cr = text.rfind("\n"), text.rfind("\r")
    while True:
        i = max(nl, cr)
        if i < 0:
            yield text[:end]
            return
        yield text[i + 1 : end]
        end = i - 1 if i == nl and i > 0 and text[i - 1] == "\r" else i  # \r\n ends one line
        if nl >= end:
            nl = text.rfind("\n", 0, end)
        if cr >= end:
            cr = text.rfind("\r", 0, end)


def record_lines(text: str) -> list[str]:
    """The records of a note or a JSON-lines file, stripped, blank lines left out.

    A line ends at \\n or \\r (which JSON escapes inside a string). A line holding another
    character `str.splitlines` splits at is one record when it reads as one JSON value (an
    earlier writer kept U+2028 raw inside a string); else it is split there too, as such notes
    were always read."""
    if _OTHER_BREAK.search(text) is None:
        return [s for line in text.splitlines() if (s := line.strip())]
    out: list[str] = []
    for line in _LINE_END.split(text):
        s = line.strip()
        if not s:
            continue
        if _OTHER_BREAK.search(s) is not None and not _one_value(s):
            out += [p for piece in s.splitlines() if (p := piece.strip())]
        else:
            out.append(s)
    return out


def _one_value(text: str) -> bool:
    try:
        _PLAIN.decode(text)
    except (ValueError, RecursionError):
        return False
    return True
