"""Where a secret ends: the terminators of gitleaks' tokens, widened for text that is not
source code, and the characters that end a context rule's value in its syntax."""

from __future__ import annotations

# gitleaks ends a token at a quote, a blank, `;`, an escaped line break or the end of the
# text: it alerts on source files. A token in prose, markdown, XML, a path or a URL ends at
# `.` `,` `)` `]` `|` `*` `:` `<` `/` `&` too, so for masking a token ends wherever the next
# character cannot continue it (a letter, a digit, `_` or `-`). gitleaks' catch-all
# (`generic-api-key`) keeps its own: its value is any identifier-like run after a keyword
# and an operator (`,` included), so only a quote, a blank or `;` after it tells a value
# from code (`"--secrets",` / `is_flag=True,`); our context rules cover that ground.
GITLEAKS_END = r"""(?:[\x60'"\s;]|\\[nr]|$)"""
TOKEN_END = r"(?![\w-])"
# the Azure AD client secret's own terminator (a quote, a blank, `<`, `)`, `,`)
_AZURE_END = r"""(?:$|[\\'"\x60\s<),])"""
_BLANK_END = r"(?:\s|\Z)"


def token_end(regex: str) -> str:
    """A gitleaks pattern with its token terminator widened to any non-token character
    (applied to every ported rule as it loads; the data stays gitleaks' own)."""
    regex = regex.replace(GITLEAKS_END, TOKEN_END).replace(_AZURE_END, TOKEN_END)
    if regex.endswith(_BLANK_END):  # a command's argument ends at a blank or an operator
        regex = regex[: -len(_BLANK_END)] + r"(?=[\s&|;,)]|\Z)"
    return regex


# what ends an unquoted value in the syntax around it: a query's or a command's `&`, a pipe,
# `;`, a quote, a literal escape (`\n` in a JSON string)
_VALUE_END = r"""[&|;"'`]|\\[nrt]"""


def value_end(text: str, start: int, end: int) -> int:
    """Where the value a context rule found at text[start:end] ends: a quoted value at its
    quote (kept whole), an unquoted one at the first character that ends values in its
    syntax, so a mask never takes the text after the secret (`&user=bob`, `|next`)."""
    if start > 0 and end < len(text) and text[start - 1] in "\"'`" and text[end] == text[start - 1]:
        return end
    from gitimprove.redaction.engine import compiled

    m = compiled(_VALUE_END, 0).search(text, start, end)
    return end if m is None else m.start()
