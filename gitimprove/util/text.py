"""Text from an agent or a child process made storable: valid UTF-8, no NUL.

A lone surrogate (`"\\ud800"`, which JSON and Python strings allow) cannot be encoded as
UTF-8, so a commit message or a note holding one would fail to be written; a NUL ends a
commit message where it stands. Every message and note goes through `storable`."""

from __future__ import annotations

import re

__all__ = ["storable"]


def storable(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD and every NUL dropped."""
    if "\0" in text:
        text = text.replace("\0", "")
    # a str holds code points: a surrogate in it is always lone (JSON's pairs are joined)
    return _SURROGATE.sub("\ufffd", text)


_SURROGATE = re.compile("[\ud800-\udfff]")
