"""Text a hot hook keeps unmasked until the flush (DESIGN §13: the hot hooks do not mask).

Text becomes part of a git object only when the spool is flushed into the memory branch, and
every blob written there goes through the redactor anyway. So a hook that captures a signal
does not mask: where it would write `clip(text, n)` it keeps `cut(text, n)`, the raw window
that masking-then-cutting looks at (`redaction.window`) and whether the text was longer, and
`render` gives at the flush exactly what `clip(text, n)` gives. A field is an expression:

- `{"cut": n, "tail": false, "longer": false, "text": "<window>"}`: `clip(text, n)` (or
  `clip_tail` with `tail`), from the window a hook kept;
- `{"cut": n, "strip": true, "parts": [<str or expression>, …]}`: the parts rendered and
  joined (then stripped), clipped at `n`; `"Bash failed: " + clip(error, 500)` clipped at
  2,000, as a signal's content is.

A spooled signal holding such fields has them under `raw` (its `content` and `context` stay
empty until `finish`). Spool files are the user's alone (0600, in `<git-common-dir>/improve/
spool`); every reader that shows a spooled entry finishes it first (`shown`).
"""

from __future__ import annotations

import json

from gitimprove.redaction import MARGIN, clip, clip_tail, clip_window, window

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Expr = str | dict[str, Any]

RAW = "raw"
_DEPTH = 8  # expressions a hook writes are 2 deep; a spool file is not trusted further


def cut(text: str, limit: int, *, tail: bool = False) -> dict[str, Any]:
    """`clip(text, limit)` (`clip_tail` with `tail`), to be rendered at the flush."""
    win, longer = window(text, limit, tail=tail)
    return {"cut": limit, "tail": tail, "longer": longer, "text": win}


def head(text: str, limit: int) -> str:
    """The part of a literal that starts a `joined` text clipped at `limit` that the clip
    can see: its leading space stripped (the join is), the rest past a window dropped (the
    clip knows the text is longer either way)."""
    return text.lstrip()[: limit + MARGIN + 1]


def joined(parts: list[Expr], limit: int, *, strip: bool = True) -> dict[str, Any]:
    """`clip("".join(parts).strip(), limit)` of parts some of which are deferred."""
    return {"cut": limit, "strip": strip, "parts": parts}


def render(expr: Any, depth: int = 0) -> str:
    """The masked text an expression stands for; ValueError for one no hook writes."""
    if isinstance(expr, str):
        return expr
    if not isinstance(expr, dict) or depth > _DEPTH:
        raise ValueError("not a deferred text")
    limit, tail = expr.get("cut"), expr.get("tail", False)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise ValueError("a deferred text without its limit")
    if "parts" in expr:
        parts = expr["parts"]
        if not isinstance(parts, list):
            raise ValueError("deferred parts are not a list")
        text = "".join(render(p, depth + 1) for p in parts)
        if expr.get("strip"):
            text = text.strip()
        return clip_tail(text, limit) if tail else clip(text, limit)
    kept, longer = expr.get("text"), expr.get("longer")
    if not isinstance(kept, str) or not isinstance(longer, bool):
        raise ValueError("a deferred cut without its text")
    return clip_window(kept, limit, longer, tail=bool(tail))


def finish(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` with its deferred fields rendered (masked, then cut) in place of the empty ones.
    A field that cannot be rendered keeps its expression's text masked: nothing is dropped
    and nothing unmasked is kept."""
    raw = obj.pop(RAW, None)
    if not isinstance(raw, dict):
        return obj
    for key, expr in raw.items():
        try:
            obj[str(key)] = render(expr)
        except (ValueError, RecursionError):
            obj[str(key)] = clip(json.dumps(expr, ensure_ascii=False), 2000)
    return obj


def finish_entry(data: bytes) -> bytes:
    """A spooled entry as the flush stores it: its deferred fields rendered. An entry that
    is not a JSON object is left to the blob redactor, as any other entry is."""
    if b'"raw"' not in data:
        return data
    try:
        obj = json.loads(data)
    except ValueError:
        return data
    if not isinstance(obj, dict) or RAW not in obj:
        return data
    return (json.dumps(finish(obj), sort_keys=True, ensure_ascii=False) + "\n").encode(
        "utf-8", errors="surrogateescape"
    )


def shown(data: bytes) -> bytes:
    """A spooled entry as a reader may show it: what the flush would store, masked whole."""
    from gitimprove.redaction import redact_blob

    return redact_blob(finish_entry(data))
