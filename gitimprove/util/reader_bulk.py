"""The tolerant reader over many records at once: `load_objects(texts, schema)` is
`[reader.load_object(t, schema) for t in texts]`, value for value, only faster.

A cold `log` reads ten thousand note lines (DESIGN §13). Read one by one, each pays for the
decoder's wrappers and a walk of its fields through the schema; here each text is decoded by
the same scanner the reader uses (the same float and constant hooks, so the same values), and
the schema is checked one field at a time across every record — a column of ten thousand
values whose types are all right is settled by one set of types and a min/max. Anything this
cannot settle goes through `reader.load_object` itself: a text that is large, nested, holds a
`\\u` escape, is not exactly one JSON object, or any record with a field whose column holds a
suspicious type (only that record, checked exactly, with the reader's reason). So the bulk
path never accepts what the reader refuses, and never refuses what it accepts.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from itertools import chain, repeat

from gitimprove.util import reader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any

_NONE = type(None)
_FEW = 8  # up to this many records (one note), each is read alone
_MAX_BYTES, _MAX_DEPTH = reader.MAX_BYTES, reader.MAX_DEPTH
# Types a column may hold and be settled at once (None is added for optional fields); ints
# still need their range checked.
_SETTLED: dict[str, frozenset[type]] = {
    "str": frozenset({str}),
    "int": frozenset({int}),
    "num": frozenset({int, float}),
    "bool": frozenset({bool}),
    "dict": frozenset({dict}),
    "object": frozenset({dict}),
    "list": frozenset({list}),
}


def load_objects(
    texts: Sequence[str], schema: reader.Schema, *, version: int | None = 1
) -> list[dict[str, Any] | reader.Unreadable]:
    """Each text as `reader.load_object(text, schema, version=version)` reads it."""
    batch = Batch(schema, version=version)
    for text in texts:
        batch.add(text)
    return batch.results()


@contextmanager
def no_gc() -> Iterator[None]:
    """The cycle collector paused while records are read in bulk: ten thousand records are
    a hundred thousand new dicts and lists and no cycle, and each collection would walk all
    of them again (it halves a cold `log`). Nests; restores what it found."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Batch:
    """`load_objects` fed one text at a time (each decoded as it comes, so a caller can read
    while git still writes); `results()` checks the schema over all of them at once (or,
    for a few, reads each one alone)."""

    def __init__(self, schema: reader.Schema, *, version: int | None = 1) -> None:
        self.schema, self.version = schema, version
        self.texts: list[str] = []
        self.decoded: list[dict[str, Any] | None] = []
        # the reader's own scanner: the same float and constant hooks, so the same values
        self._scan: Callable[[str, int], tuple[Any, int]] = reader._DECODER.scan_once  # type: ignore[attr-defined]

    def add(self, text: str) -> None:
        """Take one more text, decoded now (by the reader's own scanner) if it can be."""
        self.texts.append(text)
        value: Any = None
        if (
            len(text) <= _MAX_BYTES
            and "\\u" not in text
            and text.count("{") + text.count("[") <= _MAX_DEPTH
        ):
            try:
                value, end = self._scan(text, 0)
            except Exception:  # not JSON, a constant, a float out of range: the reader says
                value = None
            else:
                if end != len(text) or type(value) is not dict:
                    value = None
        self.decoded.append(value)

    def results(self) -> list[dict[str, Any] | reader.Unreadable]:
        if len(self.texts) <= _FEW:  # the columns would cost more than they save
            return [reader.load_object(t, self.schema, version=self.version) for t in self.texts]
        where = [i for i, v in enumerate(self.decoded) if v is not None]
        objs: list[dict[str, Any]] = [self.decoded[i] for i in where]  # type: ignore[misc]
        bad = _bad_versions(objs, self.version) | _bad_fields(objs, self.schema)
        out: list[dict[str, Any] | reader.Unreadable | None] = list(self.decoded)
        for j in bad:
            out[where[j]] = None
        return [
            value
            if value is not None
            else reader.load_object(text, self.schema, version=self.version)
            for value, text in zip(out, self.texts, strict=True)
        ]


def _bad_versions(objs: list[dict[str, Any]], version: int | None) -> set[int]:
    if version is None:
        return set()
    vs = [o.get("v", 1) for o in objs]
    if not vs or (
        set(map(type, vs)) == {int} and min(vs) >= -reader.BIG_INT and max(vs) <= version
    ):
        return set()
    return {j for j, v in enumerate(vs) if not (reader.is_int(v) and v <= version)}


def _bad_fields(objs: list[dict[str, Any]], schema: reader.Schema) -> set[int]:
    """Positions in `objs` that may not fit `schema` (a superset; the reader decides)."""
    if not objs:
        return set()
    bad: set[int] = set()
    for key, spec in schema.items():
        if isinstance(spec, str) and not spec.endswith("?"):  # required
            bad.update(j for j, o in enumerate(objs) if key not in o)
    present = set().union(*objs)
    for key in present.intersection(schema):
        bad |= _bad_column(list(map(dict.get, objs, repeat(key))), schema[key])
    return bad


def _bad_column(col: list[Any], spec: reader.Spec) -> set[int]:
    """Positions in `col` (one field's values; None where absent) that may not fit `spec`."""
    if isinstance(spec, dict):
        kind, optional, item = "object", True, None
    elif isinstance(spec, list):
        kind, optional, item = "list", True, spec[0]
    else:
        kind, optional, item = str(spec).rstrip("?"), str(spec).endswith("?"), None
    if kind == "any":
        return set()
    types = set(map(type, col))
    allowed = _SETTLED.get(kind, frozenset())
    if types <= (allowed | {_NONE} if optional else allowed):
        if kind == "int" or kind == "num":  # floats were bounded by the decoder's hook
            numbers = list(filter(None, col))  # 0 and None need no range check
            big = reader.BIG_INT
            if not numbers or (min(numbers) >= -big and max(numbers) <= big):
                return set()
        elif kind == "object":
            at = [j for j, v in enumerate(col) if v is not None]
            return {at[k] for k in _bad_fields([col[j] for j in at], spec)}
        elif kind == "list" and item is not None:
            owner = [j for j, v in enumerate(col) if v for _ in v]
            flat = list(chain.from_iterable(filter(None, col)))
            return {owner[k] for k in _bad_column(flat, item)}
        else:
            return set()
    field = reader._compile_field(spec)  # exact, one value at a time
    return {j for j, v in enumerate(col) if reader._fits(field, v, "") is not None}
