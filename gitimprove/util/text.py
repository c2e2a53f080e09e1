"""Text from an agent or a child process made storable (valid UTF-8, no NUL) and printable
(no terminal control sequence).

A lone surrogate (`"\\ud800"`, which JSON and Python strings allow) cannot be encoded as
UTF-8, so a commit message or a note holding one would fail to be written; a NUL ends a
commit message where it stands. Every message and note goes through `storable`."""

from __future__ import annotations

import re

__all__ = ["cell", "printable", "storable"]


def storable(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD and every NUL dropped."""
    if "\0" in text:
        text = text.replace("\0", "")
    # a str holds code points: a surrogate in it is always lone (JSON's pairs are joined)
    return _SURROGATE.sub("\ufffd", text)


_SURROGATE = re.compile("[\ud800-\udfff]")


# What a terminal acts on rather than shows: C0 controls (ESC starts CSI and OSC sequences,
# CR returns to the line's start, BEL ends an OSC title), DEL, C1 controls (0x9b is a CSI on
# its own), and the invisible formatting characters that reorder or hide text (bidi overrides,
# zero-width characters, line and paragraph separators).
_OTHER = "\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff"
_UNSAFE = re.compile("[\x00-\x1f" + _OTHER + "]")
_UNSAFE_LINES = re.compile("[\x00-\x08\x0b-\x1f" + _OTHER + "]")  # newline and tab kept
_NAMED = {"\r": "\\r", "\n": "\\n", "\t": "\\t"}


def _shown(match: re.Match[str]) -> str:
    c = match.group()
    if c in _NAMED:
        return _NAMED[c]
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def printable(text: str, *, lines: bool = False) -> str:
    """Untrusted text (a file name, an agent's description, a child's output) made safe to
    print: every control or invisible formatting character is shown escaped (ESC as `\\x1b`,
    CR as `\\r`), so nothing in it moves the cursor, rewrites a line or sets a title. With
    `lines`, newlines and tabs are kept (a whole rendered table or text)."""
    pattern = _UNSAFE_LINES if lines else _UNSAFE
    if pattern.search(text) is None:
        return text
    return pattern.sub(_shown, text)


def cell(text: str) -> str:
    """A table or TSV cell: runs of white space (tab and newline too) one space, every other
    control or invisible formatting character shown escaped (`printable`)."""
    return printable(" ".join(text.split()))
