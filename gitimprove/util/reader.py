"""The one tolerant reader of stored JSON records: note lines, memory entries, imported rows,
hook payloads, metric output.

A record is read only within limits (MAX_BYTES, MAX_DEPTH), with no NaN, infinity, number
too large for a float, or text that is not valid Unicode, and its known fields are checked
against a schema. Unknown fields are kept as they are. What cannot be read comes back as
an `Unreadable` (why, and a short preview of the raw text) for the caller to show raw, count
and skip: a hostile record never stops a command.

The checks that walk a whole value run only when a cheap scan of the text says they could
fail, so ordinary records cost one `json.loads` and a look at their known fields. Imports
nothing but `json` and `re`: the hooks and the warm `log` use it.
"""

from __future__ import annotations

import json
import math
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    # A schema maps field names to specs: "str", "int", "num", "bool", "dict", "list",
    # "any" (the field must be there; a trailing "?" makes it optional and allows null), a
    # nested schema (a dict; optional), or a one-item list [spec] for a list of such items
    # (optional).
    Spec = Any
    Schema = Mapping[str, Spec]

MAX_BYTES = 1 << 20  # one record: a note line, a memory entry, an imported row
MAX_DEPTH = 32  # our records nest 3 deep; a future field gets plenty of room
PREVIEW_CHARS = 300
BIG_INT = 1 << 63
BIG_FLOAT = 1e300

# A cheap scan of the raw text: only when it matches does a walk of the strings run.
_SURROGATE_RISK = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class Unreadable:
    """A record that could not be read: why, its size, and a short preview of it."""

    __slots__ = ("preview", "reason", "size")

    def __init__(self, reason: str, raw: str | bytes) -> None:
        self.reason = reason
        self.size = len(raw)
        self.preview = preview(raw)

    def __repr__(self) -> str:
        return f"Unreadable({self.reason!r}, {self.preview!r})"

    def __str__(self) -> str:
        return f"{self.reason}: {self.preview}"


def preview(raw: str | bytes, limit: int = PREVIEW_CHARS) -> str:
    """The start of a raw record, printable on any terminal, with its size when cut."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    text = scrub(text[: limit * 2])
    text = "".join(c if c.isprintable() else " " for c in text)
    if len(raw) > limit:
        return text[:limit] + f"… ({len(raw)} characters in all)"
    return text[:limit]


def scrub(text: str) -> str:
    """Text that encodes as UTF-8: lone surrogates become U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a record may hold")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 overflows to infinity
        raise ValueError(f"the number {text[:40]} is too large for a float")
    return value


_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float)


_PLAIN = json.JSONDecoder()


def loads(
    raw: str | bytes,
    *,
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    finite: bool = True,
    repair_text: bool = False,
) -> Any:
    """The JSON value of `raw`, or an Unreadable saying why not. Never raises.

    `finite=False` lets NaN and infinity through, for a caller that reports them itself
    (a metric's output); `repair_text=True` turns lone surrogates into U+FFFD instead of
    refusing the value (a hook payload, whose signal must not be lost)."""
    if len(raw) > max_bytes:
        return Unreadable(f"{len(raw)} bytes, over the {max_bytes}-byte limit of one record", raw)
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return Unreadable("not UTF-8 text", raw)
    else:
        text = raw
    try:
        value = (_DECODER if finite else _PLAIN).decode(text)
    except RecursionError:
        return Unreadable(f"nested deeper than {max_depth} levels", raw)
    except (ValueError, TypeError) as exc:
        return Unreadable(f"not valid JSON ({str(exc)[:80]})", raw)
    if text.count("[") + text.count("{") > max_depth:
        depth = _depth(value, max_depth)
        if depth > max_depth:
            return Unreadable(f"nested deeper than {max_depth} levels", raw)
    if "\\u" in text and _SURROGATE_RISK.search(text) is not None:
        if repair_text:
            return _repaired(value)
        why = _walk(value)
        if why:
            return Unreadable(why, raw)
    return value


def _depth(value: Any, limit: int) -> int:
    stack = [(value, 1)]
    deepest = 0
    while stack:
        item, level = stack.pop()
        if level > limit:
            return level
        deepest = max(deepest, level)
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return deepest


def _repaired(value: Any) -> Any:
    """`value` with every string scrubbed (its depth is already known to be bounded)."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub(k): _repaired(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_repaired(v) for v in value]
    return value


def _walk(value: Any) -> str | None:
    """Why `value` holds text that cannot be stored (a lone surrogate), or None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
            stack.extend(item.keys())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and scrub(item) is not item:
            return "holds text that is not valid Unicode (a lone surrogate)"
    return None


def load_object(
    raw: str | bytes,
    schema: Schema | None = None,
    *,
    version: int | None = 1,
    max_bytes: int = MAX_BYTES,
) -> dict[str, Any] | Unreadable:
    """A JSON object whose known fields match `schema` and whose `v` (when `version` is
    given) is one this reader understands; else an Unreadable."""
    value = loads(raw, max_bytes=max_bytes)
    if isinstance(value, Unreadable):
        return value
    if not isinstance(value, dict):
        return Unreadable(f"a JSON {type(value).__name__}, not an object", raw)
    if version is not None:
        v = value.get("v", 1)
        if not is_int(v):
            return Unreadable(f"its version v = {v!r} is not a whole number", raw)
        if v > version:
            return Unreadable(f"written by a newer gitimprove (v {v})", raw)
    if schema:
        why = compiled(schema)(value, "")
        if why:
            return Unreadable(why, raw)
    return value


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -BIG_INT <= value <= BIG_INT


def is_number(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return -BIG_INT <= value <= BIG_INT
    return isinstance(value, float) and -BIG_FLOAT <= value <= BIG_FLOAT


_LABELS = {
    "str": "text",
    "int": "a whole number",
    "num": "a number between -1e300 and 1e300",
    "bool": "true or false",
    "dict": "an object",
    "list": "a list",
    "any": "anything",
    "object": "an object",
}

if TYPE_CHECKING:
    from collections.abc import Callable

    ObjectCheck = Callable[[Mapping[str, Any], str], str | None]
    # (kind, optional, nested check for an object, item field for a list)
    Field = tuple[str, bool, ObjectCheck | None, Any]

_COMPILED: dict[int, tuple[Schema, ObjectCheck]] = {}


def _compile_field(spec: Spec) -> Field:
    if isinstance(spec, dict):
        return ("object", True, compiled(spec), None)
    if isinstance(spec, list):
        return ("list", True, None, _compile_field(spec[0]))
    kind = str(spec)
    return (kind.rstrip("?"), kind.endswith("?"), None, None)


def _fits(field: Field, value: Any, where: str) -> str | None:
    """Why `value` does not fit `field` (`where` names it), or None. Type identity, not
    isinstance: JSON gives exactly these types, and True must not pass as a number."""
    kind, optional, nested, item = field
    t = type(value)
    if value is None:
        if optional:
            return None
    elif kind == "str":
        if t is str:
            return None
    elif kind == "int":
        if t is int and -BIG_INT <= value <= BIG_INT:
            return None
    elif kind == "num":
        if (t is float and -BIG_FLOAT <= value <= BIG_FLOAT) or (
            t is int and -BIG_INT <= value <= BIG_INT
        ):
            return None
    elif kind == "object":
        if t is dict:
            assert nested is not None
            return nested(value, where + ".")
    elif kind == "list":
        if t is list and item is None:  # "list": any list
            return None
        if t is list:
            for i, v in enumerate(value):
                why = _fits(item, v, f"{where}[{i}]")
                if why:
                    return why
            return None
    elif kind == "bool":
        if t is bool:
            return None
    elif kind == "dict":
        if t is dict:
            return None
    elif kind == "any":
        return None
    return f"{where} is {_shown(value)}, not {_LABELS[kind]}"


def _all_numbers(values: list[Any]) -> bool:
    for v in values:
        t = type(v)
        if not (
            (t is float and -BIG_FLOAT <= v <= BIG_FLOAT) or (t is int and -BIG_INT <= v <= BIG_INT)
        ):
            return False
    return True


def compiled(schema: Schema) -> ObjectCheck:
    """`schema` as one function (cached per schema object): the first mismatch, or None."""
    hit = _COMPILED.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    fields = {key: _compile_field(spec) for key, spec in schema.items()}
    required = [k for k, spec in schema.items() if isinstance(spec, str) and not spec.endswith("?")]
    # The common kinds are checked inline (one lookup, one or two comparisons); the rest,
    # and every mismatch (to name it), go through _fits.
    kinds = {key: f[0] for key, f in fields.items()}
    optional = {key for key, f in fields.items() if f[1]}
    numbers = {key for key, f in fields.items() if f[0] == "list" and f[3] and f[3][0] == "num"}
    nested = {key: f[2] for key, f in fields.items() if f[0] == "object" and f[2] is not None}
    big_int = BIG_INT

    def check_object(obj: Mapping[str, Any], prefix: str) -> str | None:
        for key in required:
            if key not in obj:
                return f"{prefix}{key} is missing"
        for key, value in obj.items():
            kind = kinds.get(key)
            if kind is None:
                continue
            t = type(value)
            if kind == "str":
                if t is str:
                    continue
            elif kind == "int":
                if t is int and -big_int <= value <= big_int:
                    continue
            elif kind == "list" and t is list and key in numbers and _all_numbers(value):
                continue
            elif kind == "object" and t is dict:
                why = nested[key](value, f"{prefix}{key}.")
                if why:
                    return why
                continue
            if value is None and key in optional:
                continue
            why = _fits(fields[key], value, prefix + key)
            if why:
                return why
        return None

    _COMPILED[id(schema)] = (schema, check_object)
    return check_object


def check(obj: Mapping[str, Any], schema: Schema, where: str = "") -> str | None:
    """Why `obj` does not match `schema` (the first mismatch, naming the field), or None."""
    return compiled(schema)(obj, where)


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True, default=str) if _small(value) else None
    if text is None or len(text) > 40:
        return f"a {type(value).__name__}" if not isinstance(value, str) else "text"
    return text


def _small(value: Any) -> bool:
    return not isinstance(value, dict | list) or len(value) <= 4
