"""What a text says once its encodings are decoded: a third view beside `views.py`'s.

A secret can be written in an encoding a reader decodes without noticing: URL-encoded
(`password%3D…`, `postgres%3A%2F%2Fapp%3A…%40db`), as HTML entities (`password&#61;…`), as
JSON or source escapes (`password\\u003d…`), JSON escaped inside a JSON string
(`"SecretString": "{\\"password\\": \\"…\\"}"`, escaped twice too), split by string concatenation
(`"<head>" + "<tail>"`), or as a YAML block scalar (`password: >` and the value on the
next, indented line). The view decodes these (only when the text holds one of their marks,
so plain text costs one scan), the rules run on it near what changed, and each finding is
mapped back onto the original, covering the escapes inside it.
"""

from __future__ import annotations

from gitimprove.redaction.engine import RuleSet, Span, compiled
from gitimprove.redaction.views import View, _edits, _windows

_ENTITIES = {
    "amp": "&",
    "lt": "<",
    "gt": ">",
    "quot": '"',
    "apos": "'",
    "equals": "=",
    "colon": ":",
    "sol": "/",
    "commat": "@",
    "percnt": "%",
    "plus": "+",
    "nbsp": " ",
    "num": "#",
    "quest": "?",
}
_WORDCHARS = "A-Za-z0-9_-"
_PATTERN = (
    r"%(?P<pct>[0-9A-Fa-f]{2})"
    r"|&#(?P<dec>[0-9]{1,5});|&#[xX](?P<hex>[0-9A-Fa-f]{1,4});"
    r"|&(?P<name>" + "|".join(_ENTITIES) + r");"
    r"|\\u(?P<u>[0-9A-Fa-f]{4})|\\x(?P<x>[0-9A-Fa-f]{2})"
    # JSON escaped inside a JSON string (`"{\\"password\\":\\"…\\"}"`), doubly too
    r"|\\(?P<esc>[\"\\/'])"
    # string concatenation inside a token: "<head>" + "<tail>", 'a' . 'b', "a" & "b"
    rf"|(?<=[{_WORDCHARS}])(?P<cat>[\"'])[ \t]*(?:\+|\.|&|\|\|)?[ \t]*(?:\r?\n[ \t]*)?"
    rf"(?:\+|\.|&)?[ \t]*(?P=cat)(?=[{_WORDCHARS}])"
    # … or literals side by side across a line break (`("<head>"` / `"<tail>")`, a
    # backslash continuation)
    rf"|(?<=[{_WORDCHARS}])(?P<adj>[\"'])[ \t]*\\?\r?\n[ \t]*(?P=adj)(?=[{_WORDCHARS}])"
    # a triple-quoted literal holding one token: its quotes and line breaks are a quote
    r"|(?<=[=:(,][ \t])(?P<tq1>\"\"\"|''')\r?\n?[ \t]*(?=[\w+/=.-])"
    r"|(?:(?<=[\w+/.-])|(?<=\w=)|(?<=\w==))(?P<tq2>[ \t]*\r?\n?[ \t]*(?:\"\"\"|'''))"
    # a line break inside a quoted token (`"<head>` / `<tail>"`): the token goes on
    r"|(?<=[\w+/=.-])(?P<wrap>\r?\n[ \t]*)(?=[\w+/=.-])"
    # a YAML block scalar: `key: >` / `key: |-` and its value on the next line
    r"|(?<=:)(?P<block>[ \t]*[>|][-+]?[ \t]*\r?\n[ \t]+)(?=\S)"
)


def _char(m: object) -> str | None:
    import re

    assert isinstance(m, re.Match)
    for group, base in (("pct", 16), ("dec", 10), ("hex", 16), ("u", 16), ("x", 16)):
        value = m.group(group)
        if value is not None:
            code = int(value, base)
            c = chr(code) if code < 0x110000 else ""
            return c if c.isascii() and (c.isprintable() or c == " ") else None
    if m.group("esc") is not None:
        return str(m.group("esc"))
    if m.group("name") is not None:
        return _ENTITIES[m.group("name")]
    if m.group("cat") is not None or m.group("adj") is not None:
        return ""
    if m.group("tq1") is not None or m.group("tq2") is not None:
        return '"'
    if m.group("wrap") is not None:
        return "" if _in_literal(m.string, m.start(), m.end()) else None
    return " "  # a block scalar's indicator and line break: the value follows the key


_TOKEN = r"[\w+/=.-]+"
# lines a wrapped literal may span
_LINES = 12


def _in_literal(text: str, start: int, end: int) -> bool:
    """Whether the line break at `start:end` is inside a quoted token: an opening quote
    then token characters up to a break (maybe over whole lines of token characters), and
    after it token characters up to the same quote, 16 or more in all."""
    head = text.rfind("\n", 0, start) + 1
    size = 0
    opened = None
    for _ in range(_LINES):
        line = text[head:start].rstrip("\r")
        opened = compiled(r"([\"'])(" + _TOKEN + r")$", 0).search(line)
        if opened is not None:
            break
        if compiled(r"[ \t]*" + _TOKEN, 0).fullmatch(line) is None or head == 0:
            return False
        size += len(line.strip())
        start = head - 1
        head = text.rfind("\n", 0, start) + 1
    if opened is None:
        return False
    q = opened.group(1)
    if line[: opened.start()].count(q) % 2:
        return False  # that quote closes an earlier string
    size += len(opened.group(2))
    pos = end
    for _ in range(_LINES):
        stop = text.find("\n", pos)
        line = text[pos : len(text) if stop == -1 else stop].rstrip("\r")
        closed = compiled(r"[ \t]*(" + _TOKEN + r")" + q, 0).match(line)
        if closed is not None:
            return size + len(closed.group(1)) >= 16
        if compiled(r"[ \t]*" + _TOKEN, 0).fullmatch(line) is None or stop == -1:
            return False
        size += len(line.strip())
        pos = stop + 1
    return False


def _build(text: str) -> View | None:
    parts: list[str] = []
    segments: list[tuple[int, int, int, int, bool]] = []
    vpos = pos = 0
    for m in compiled(_PATTERN, 0).finditer(text):
        new = _char(m)
        if new is None:
            continue
        if pos < m.start():
            parts.append(text[pos : m.start()])
            segments.append((vpos, pos, m.start() - pos, m.start() - pos, True))
            vpos += m.start() - pos
        if new:
            parts.append(new)
            segments.append((vpos, m.start(), m.end() - m.start(), len(new), False))
            vpos += len(new)
        pos = m.end()
    if not segments and pos == 0:
        return None
    parts.append(text[pos:])
    segments.append((vpos, pos, len(text) - pos, len(text) - pos, True))
    return View("".join(parts), segments)


# layers decoded at most (`%25253D` is `=` URL-encoded three times)
_DEPTH = 4


def spans(rs: RuleSet, text: str) -> list[Span]:
    """Findings in the decoded views of `text` (decoded again while that changes it, up to
    `_DEPTH` layers: `%253D` is `%3D` is `=`), near what decoding changed, mapped back."""
    out: list[Span] = []
    chain: list[View] = []
    current = text
    for _ in range(_DEPTH):
        view = _build(current)
        if view is None or view.text == current:
            break
        chain.append(view)
        out.extend(_layer_spans(rs, chain))
        current = view.text
    return out


# findings told by their shape alone, not by a format: two strings joined by decoding
# (`"api-token" "<value>"` read as one) make that shape from two
_SHAPE_ONLY = frozenset({"prefixed-token"})


def _layer_spans(rs: RuleSet, chain: list[View]) -> list[Span]:
    view = chain[-1]
    out: list[Span] = []
    edits = _edits(view)
    for start, end in _windows(view.text, edits):
        for s in rs.spans(view.text[start:end], views=False):
            a, b = s.start + start, s.end + start
            if s.kind in _SHAPE_ONLY and any(a < e < b for e in edits):
                continue
            b = _before_escaped_quote(view.text, a, b)
            for layer in reversed(chain):
                a, b = layer.original(a, b)
            out.append(Span(a, b, s.kind, s.priority))
    return out


def _before_escaped_quote(text: str, a: int, b: int) -> int:
    """Where a secret found in a view ends: an escaped quote or a backslash still to be
    decoded (JSON inside JSON inside JSON, one layer down) closes its string."""
    for q in ('\\"', "\\'"):
        at = text.find(q, a + 1, b)
        if at != -1:
            b = at
    while b > a + 1 and text[b - 1] == "\\":
        b -= 1
    return b
