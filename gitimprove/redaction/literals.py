"""What a text says once a language's own string syntax is read as a plain quoted string: a
fourth view beside `views.py`'s and `decoded.py`'s.

Every language has string literals the rules' `"…"` / `'…'` do not read: Rust's raw strings
(`r"…"`, `r#"…"#`, `br##"…"##`), C++'s (`R"(…)"`, `R"x(…)x"`), C#'s verbatim and
interpolated strings (`@"…"`, `$"…"`), Python's prefixed ones (`rb"…"`, `f"…"`), Perl's
quote-like operators (`q{…}`, `qq(…)`, `q/…/`), Ruby's percent literals (`%q(…)`, `%Q[…]`,
`%(…)`), JavaScript's and Go's backticks, and here-documents whose body is the value
(Ruby `<<~EOS`, PHP `<<<EOT`, Perl `<<"END";`, HCL `<<EOT`). A YAML plain scalar may also
start on the line after its key (`password:` then the value, indented). The view writes
each as `"…"` (the key and the value side by side), the rules run on it near what changed,
and each finding is mapped back onto the original text.

Every pattern here is one pass of bounded, non-nested pieces; a literal's closing delimiter
is found with `str.find` on its line, not by backtracking.
"""

from __future__ import annotations

from gitimprove.redaction.engine import RuleSet, Span, compiled
from gitimprove.redaction.views import View, _windows
from gitimprove.redaction.views import _edits as _view_edits

# what may stand before a literal holding a value: an assignment, an argument, a pair
_OPERATOR = "=:(,[{>-"
_BODY = 512
_CLOSERS = {"(": ")", "[": "]", "{": "}", "<": ">"}
# one alternative per literal syntax; each only finds where the literal opens
_OPEN = (
    # Rust raw strings, also bytes: r"…", r#"…"#, br##"…"##
    r"(?<![\w$])(?P<rust>b?r(?P<hashes>#{0,3}))\""
    # C++ raw strings: R"(…)", R"delim(…)delim"
    r"|(?<![\w$])(?P<cpp>(?:u8|[uUL])?R\"(?P<delim>[^\s()\\\"]{0,16})\()"
    # a prefix before a quote: Python's rb/f/u, C#'s @ and $
    r"|(?<![\w$@])(?P<prefix>[rRbBuUfF]{1,2}|@\$?|\$@?)(?=[\"'])"
    # Perl's quote-like operators and Ruby's percent literals
    r"|(?<![\w$@%&-])(?P<ql>qq?|%[qQ]?)(?P<qopen>[({\[<|/!^~])"
    # a backtick string
    r"|(?P<tick>`)"
    # a here-document: its operator, tag and the rest of its line
    r"|(?P<heredoc><<(?:<|[~-])?)[ \t]*+(?P<hq>[\"']?)(?P<tag>[A-Za-z_]\w{0,30}+)(?P=hq)"
    r"(?P<hrest>[^\n]{0,80}+)\n"
    # a YAML key alone on its line, its plain value on the next, indented
    # (at a line's start, or after a label: `Error: password:`)
    r"|(?m:^(?P<yindent>[ \t]*)(?:[^\n]{0,80}?[ \t])?[\w.-]{1,80}(?P<ycolon>:)[ \t]*\r?\n)"
)


def _after_operator(text: str, start: int) -> bool:
    """Whether a literal at `start` stands where a value does: after `=`, `:`, `(`, `,`,
    `=>`, `<-` (blanks between)."""
    before = text[max(0, start - 8) : start].rstrip(" \t")
    return bool(before) and before[-1] in _OPERATOR and not before.endswith("->")


# the words the context rules' keys hold (their keywords)
_NAMING = ("pass", "pw", "secret", "token", "key", "cred", "auth", "pin", "sig", "cookie", "dsn")


def _named_before(text: str, start: int) -> bool:
    """Whether a word naming a credential stands on the line before `start` (or just
    before it): the context rules this view is for need one."""
    line = text.rfind("\n", 0, start) + 1
    before = text[max(line, start - 120) : start].lower()
    return any(w in before for w in _NAMING)


def _quote_for(body: str) -> str | None:
    if '"' not in body:
        return '"'
    if "'" not in body:
        return "'"
    return None


def _edits(text: str) -> list[tuple[int, int, str]]:
    """The rewrites, in order: (start, end, replacement)."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    for m in compiled(_OPEN, 0).finditer(text):
        if m.start() < pos:
            continue
        found = _literal(text, m)
        if found:
            out.extend(found)
            pos = found[-1][1]
    return out


def _literal(text: str, m: object) -> list[tuple[int, int, str]]:
    import re

    assert isinstance(m, re.Match)
    start = m.start()
    # a literal's body ends on its line, within `_BODY` characters
    eol = text.find("\n", m.end(), m.end() + _BODY)
    eol = min(len(text), m.end() + _BODY) if eol == -1 else eol
    if not _named_before(text, start if m.group("ycolon") is None else m.end("ycolon")):
        return []  # no word naming a credential before it: no rule would read it anyway
    if m.group("ycolon") is not None:
        return _yaml_next_line(text, m)
    if m.group("heredoc") is not None and not _after_operator(text, start):
        # `TOKEN=$(cat <<EOF` / the value / `EOF` / `)`: the command substitution's output
        sub = compiled(r"=[ \t]*(\"?\$\([ \t]*cat[ \t]*(?:-[ \t]*)?)$", 0).search(
            text, max(0, start - 24), start
        )
        return [] if sub is None else _heredoc(text, m, sub.start(1))
    if not _after_operator(text, start):
        return []
    if m.group("prefix") is not None:
        return [(start, m.end(), "")]
    if m.group("rust") is not None:
        close = '"' + m.group("hashes")
        end = text.find(close, m.end(), eol)
        if end == -1:
            return []
        return _wrap(text, start, m.end(), end, end + len(close))
    if m.group("cpp") is not None:
        close = ")" + m.group("delim") + '"'
        end = text.find(close, m.end(), eol)
        return [] if end == -1 else _wrap(text, start, m.end(), end, end + len(close))
    if m.group("ql") is not None:
        opener = str(m.group("qopen"))
        closer = _CLOSERS.get(opener, opener)
        end = text.find(closer, m.end(), eol)
        if end <= m.end() or (opener in text[m.end() : end] and opener != closer):
            return []
        return _wrap(text, start, m.end(), end, end + 1)
    if m.group("tick") is not None:
        # code assigns a backtick string (`= `, `:= `); in prose, inline code after a
        # colon, a comma or a parenthesis is a name, and one with a blank is a phrase
        end = text.find("`", m.end(), eol)
        if end <= m.end() or text[:start].rstrip(" \t")[-1:] != "=":
            return []
        if any(c.isspace() for c in text[m.end() : end]):
            return []
        return _wrap(text, start, m.end(), end, end + 1)
    return _heredoc(text, m)


def _wrap(text: str, a: int, b: int, c: int, d: int) -> list[tuple[int, int, str]]:
    """`text[a:b]` opens a literal whose body is `text[b:c]` and `text[c:d]` closes it."""
    body = text[b:c]
    q = _quote_for(body)
    if q is None or not body.strip():
        return []
    return [(a, b, q), (c, d, q)]


def _heredoc(text: str, m: object, outer: int = -1) -> list[tuple[int, int, str]]:
    """A here-document whose body is one line: the value, between quotes (with `outer`, a
    command substitution `$(cat <<EOF … EOF)` opening there, its `)` closing it too)."""
    import re

    assert isinstance(m, re.Match)
    if m.group("hrest").strip(" \t;),.") and not compiled(
        r"[ \t]*(?:\.\w+(?:\(\))?|\)|;|,)*[ \t]*\r?", 0
    ).fullmatch(m.group("hrest")):
        return []  # more code on the opening line: not a value alone
    body_start = m.end()
    indent = compiled(r"[ \t]*+", 0).match(text, body_start).end() - body_start  # type: ignore[union-attr]
    eol = text.find("\n", body_start)
    if eol == -1:
        return []
    body = text[body_start + indent : eol].rstrip("\r")
    after = compiled(r"[ \t]*" + m.group("tag") + r"\b", 0).match(text, eol + 1)
    if after is None or not body.strip() or any(c.isspace() for c in body.strip()):
        return []
    q = _quote_for(body)
    if q is None:
        return []
    end_body = body_start + indent + len(body.rstrip(" \t"))
    if outer >= 0:
        close = compiled(r"[ \t]*\r?\n?[ \t]*\)\"?", 0).match(text, after.end())
        if close is None:
            return []
        return [(outer, body_start + indent, q), (end_body, close.end(), q)]
    return [(m.start("heredoc"), body_start + indent, q), (end_body, after.end(), q)]


def _yaml_next_line(text: str, m: object) -> list[tuple[int, int, str]]:
    """`password:` then, on the next line and indented deeper, one plain value (not a
    mapping's key, a list's item or a comment)."""
    import re

    assert isinstance(m, re.Match)
    nxt = compiled(r"([ \t]+)([^\s#:\-\[{|>&*!\"'][^\s]{0,500})[ \t]*(?=\r?\n|\Z)", 0).match(
        text, m.end()
    )
    if nxt is None or len(nxt.group(1)) <= len(m.group("yindent")):
        return []
    if nxt.group(2).endswith(":"):
        return []
    return [(m.start("ycolon") + 1, nxt.start(2), " ")]


def _build(text: str) -> View | None:
    edits = _edits(text)
    if not edits:
        return None
    parts: list[str] = []
    segments: list[tuple[int, int, int, int, bool]] = []
    vpos = pos = 0
    for a, b, new in edits:
        if pos < a:
            parts.append(text[pos:a])
            segments.append((vpos, pos, a - pos, a - pos, True))
            vpos += a - pos
        if new:
            parts.append(new)
            segments.append((vpos, a, b - a, len(new), False))
            vpos += len(new)
        pos = b
    parts.append(text[pos:])
    segments.append((vpos, pos, len(text) - pos, len(text) - pos, True))
    return View("".join(parts), segments)


def spans(rs: RuleSet, text: str) -> list[Span]:
    """Findings in the view of `text` with its literals written as plain quoted strings,
    near what the view changed, mapped back onto `text` (the delimiters stay outside)."""
    view = _build(text)
    if view is None:
        return []
    out: list[Span] = []
    for start, end in _windows(view.text, _view_edits(view)):
        for s in rs.spans(view.text[start:end], views=False, literal_view=False):
            a, b = view.original(s.start + start, s.end + start)
            out.append(Span(a, b, s.kind, s.priority))
    return out
