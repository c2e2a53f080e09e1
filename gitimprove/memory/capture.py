"""Building and spooling signals: the hot path of the capture hooks.

No pygit2 here, and no masking on the hot path (DESIGN §13): a hook builds the signal with
its text deferred (`make_signal(defer=True)`: the raw window a masked cut looks at, see
`deferred.py`) and spools it; `signals.flush` renders it (masked, then cut: the same text as
masking at once) as it writes it to the memory branch, where every blob is masked again.
"""

from __future__ import annotations

import os

from gitimprove.errors import GitImproveError
from gitimprove.memory import deferred, spool
from gitimprove.redaction.engine import compiled
from gitimprove.util.clock import host_id, utc_now

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from gitimprove.memory.deferred import Expr

TYPES = (
    "correction",
    "failure",
    "convention",
    "command",
    "gotcha",
    "discovery",
    "pattern",
    "project_friction",
    "summary",
)
STATUSES = ("captured", "analyzed", "promoted", "dismissed", "archived")
CATEGORIES = (
    "command",
    "convention",
    "gotcha",
    "preference",
    "project-structure",
    "documentation",
    "naming",
    "test-structure",
    "configuration",
)
DEFAULT_CATEGORY = {
    "correction": "preference",
    "failure": "gotcha",
    "convention": "convention",
    "command": "command",
    "gotcha": "gotcha",
    "discovery": "documentation",
    "pattern": "preference",
    "project_friction": "project-structure",
    "summary": "documentation",
}


# What does not change which command ran: its output's plumbing (`2>&1`, `> /dev/null`, a
# trailing `| tail -20`), a leading `cd <dir> &&`, quoted arguments (a commit message) and
# spacing.
_QUOTED = r"\"(?:[^\"\\]|\\.)*(?:\"|$)|'[^']*(?:'|$)"  # cut short: to the end
_REDIRECT = r"\s*\d?>>?\s*(?:&\s*\d|/dev/null)(?=\s|$|[|;&])"
_TRIM_PIPE = r"\s*\|\s*(?:tail|head|grep|less|more|tee|cat)\b[^|;&]*$"
_LEADING_CD = r"^cd\s+\S+\s*&&\s*"


def command_key(command: str) -> str:
    """A command as it identifies a failure: `npm run lint` and `npm run test` differ;
    `pytest -q 2>&1 | tail -20` is `pytest -q`; `git commit -m "a"` is `git commit -m "b"`.
    A file path or pattern comes back as it is."""
    text = " ".join(compiled(_QUOTED, 0).sub('"…"', command).split())
    text = compiled(_LEADING_CD, 0).sub("", text)
    for _ in range(3):
        text = compiled(_TRIM_PIPE, 0).sub("", compiled(_REDIRECT, 0).sub("", text)).strip()
    return text


def _field(text: str | list[Expr], limit: int) -> dict[str, Any]:
    """`clip(text.strip(), limit)`, deferred; `text` may be parts some of which are."""
    if isinstance(text, str):
        return deferred.cut(text.strip(), limit)
    return deferred.joined(text, limit)


def make_signal(
    *,
    type_: str,
    content: str | list[Expr],
    session: str | None,
    hook: str,
    context: str | list[Expr] = "",
    confidence: int = 1,
    turn: int | None = None,
    file: str | None = None,
    category: str | None = None,
    tags: Sequence[str] = (),
    now: str | None = None,
    defer: bool = False,
) -> dict[str, Any]:
    """A new signal. Its content and context are masked before they are cut to 2,000
    characters; with `defer` (a hot hook) that happens when the spool is flushed, and the
    signal holds the raw text it needs under `raw` till then (`deferred.finish`)."""
    if type_ not in TYPES:
        raise GitImproveError(
            f"unknown signal type {type_!r}", hint="use one of: " + ", ".join(TYPES)
        )
    if category is not None and category not in CATEGORIES:
        raise GitImproveError(
            f"unknown category {category!r}", hint="use one of: " + ", ".join(CATEGORIES)
        )
    ts = now or utc_now()
    raw = {"content": _field(content, 2000), "context": _field(context, 2000)}
    sig: dict[str, Any] = {
        "v": 1,
        # signals are told apart by id (events name it): 48 random bits keep a busy team's
        # thousands a day apart, where 24 would make two of 1,000 one about once a month
        "id": f"SIG-{ts[:10].replace('-', '')}-{host_id()}-{os.urandom(6).hex()}",
        "ts": ts,
        "session": session,
        "type": type_,
        "status": "captured",
        "confidence": max(1, min(4, int(confidence))),
        "source": {"hook": hook, "turn": turn, "file": file},
        "content": "",
        "context": "",
        "category": category or DEFAULT_CATEGORY[type_],
        "tags": [t for t in tags if t],
        "related": [],
        deferred.RAW: raw,
    }
    return sig if defer else deferred.finish(sig)


def path_for(signal: dict[str, Any]) -> str:
    return spool.entry_name("signals", "json", str(signal["ts"]), host_id())


def spool_signals(improve_dir: str, signals: Iterable[dict[str, Any]]) -> int:
    n = 0
    for sig in signals:
        spool.put(improve_dir, path_for(sig), sig)
        n += 1
    return n
