"""What a record may store, so that every line the writer makes is read back equal.

A record's fields come partly from the agent (its output's tail, a description, the paths of a
commit, a reason naming a file), so any text can reach them. The reader (util/reader.py) splits
a note at line breaks and refuses a line over MAX_BYTES, nested deeper than MAX_DEPTH, or
holding a number it would not take; the writer must never produce such a line:

- `cleaned` makes a value storable: NaN, infinity and numbers beyond the reader's range become
  null, lone surrogates U+FFFD, nesting past DEPTH one short text;
- `fitted` cuts texts and lists, largest first, until the encoded line is within BUDGET bytes,
  saying what was left out (a text ends with "… (N more characters)", a list of texts with
  "… and N more", and the record's `clipped` field counts each cut by its path);
- `escape_breaks` writes U+2028, U+2029 and U+0085 as JSON escapes: JSON leaves them raw, and
  `str.splitlines` (which readers of notes used) splits at them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

from gitimprove.util import reader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BUDGET = 256 * 1024  # encoded bytes of one line: a quarter of what the reader takes
DEPTH = 12  # levels kept; our records nest 3 deep
_FIRST_TEXT = 16 * 1024  # the first cut of a text, in characters; halved while too large
_FIRST_ITEMS = 1000  # the first cut of a list

# the characters `str.splitlines` splits at that JSON does not escape
_BREAKS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"})


def escape_breaks(line: str) -> str:
    """`line` (compact JSON) with no character `str.splitlines` splits at."""
    return line.translate(_BREAKS)


def cleaned(value: Any, depth: int = 0) -> Any:
    """`value` as a record may store it (see the module's docstring)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if reader.is_int(value) else None
    if isinstance(value, float):
        return value if math.isfinite(value) and reader.is_number(value) else None
    if isinstance(value, str):
        return reader.scrub(value)
    if isinstance(value, Mapping | list | tuple) and depth >= DEPTH:
        return f"(a {'list' if isinstance(value, list | tuple) else 'map'} nested deeper than {DEPTH} levels, left out)"
    if isinstance(value, Mapping):
        return {reader.scrub(str(k)): cleaned(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [cleaned(v, depth + 1) for v in value]
    return reader.scrub(str(value))


def encoded_size(record: Mapping[str, Any]) -> int:
    return len(dump(record).encode("utf-8"))


def dump(record: Mapping[str, Any]) -> str:
    return escape_breaks(
        json.dumps(
            record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    )


def fitted(record: dict[str, Any], budget: int = BUDGET) -> dict[str, Any]:
    """`record` (already `cleaned`), cut until its line is within `budget` encoded bytes."""
    if encoded_size(record) <= budget:
        return record
    text, items = _FIRST_TEXT, _FIRST_ITEMS
    while True:
        clipped: dict[str, int] = {}
        out = {k: _cut(v, k, text, items, clipped) for k, v in record.items() if k != "clipped"}
        out["clipped"] = clipped
        if encoded_size(out) <= budget or (text <= 8 and items <= 1):
            return out if encoded_size(out) <= budget else _bare(record)
        text, items = max(8, text // 2), max(1, items // 2)


def _cut(value: Any, path: str, text: int, items: int, clipped: dict[str, int]) -> Any:
    if isinstance(value, str):
        if len(value) <= text:
            return value
        clipped[path] = len(value) - text
        return value[:text] + f"… ({len(value) - text} more characters)"
    if isinstance(value, dict):
        return {k: _cut(v, f"{path}.{k}", text, items, clipped) for k, v in value.items()}
    if isinstance(value, list):
        kept = [_cut(v, f"{path}[]", text, items, clipped) for v in value[:items]]
        if len(value) > items:
            clipped[path] = len(value) - items
            if all(isinstance(v, str) for v in value):
                kept.append(f"… and {len(value) - items} more")
        return kept
    return value


# what a record keeps when nothing else fits (a record with very many keys)
_ESSENTIAL = ("run", "iteration", "candidate", "status", "stage", "parent", "tree", "finished")


def _bare(record: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: record[k] for k in _ESSENTIAL if k in record and not isinstance(record[k], str)}
    out.update(
        {k: record[k][:200] for k in _ESSENTIAL if isinstance(record.get(k), str)},
    )
    out["reason"] = str(record.get("reason") or "")[:2000]
    out["clipped"] = {"*": len(record)}
    return out
