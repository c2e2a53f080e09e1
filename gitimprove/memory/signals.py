"""Signals on the memory branch (DESIGN §5, after seed 003): capture, events, the fold.

One file per signal under signals/; a status change is a new file under events/; the current
state of a signal is its file plus the events that name it. Signals recurring across
sessions gain confidence; near-duplicates are grouped; signals past the TTL that were never
promoted leave the views but stay on the branch.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gitimprove.errors import GitImproveError
from gitimprove.git import memory
from gitimprove.git.repo import Repo
from gitimprove.memory import spool
from gitimprove.memory.redact import redact
from gitimprove.util.clock import host_id, utc_now

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


def make_signal(
    *,
    type_: str,
    content: str,
    session: str | None,
    hook: str,
    context: str = "",
    confidence: int = 1,
    turn: int | None = None,
    file: str | None = None,
    category: str | None = None,
    tags: Sequence[str] = (),
    now: str | None = None,
) -> dict[str, Any]:
    if type_ not in TYPES:
        raise GitImproveError(
            f"unknown signal type {type_!r}", hint="use one of: " + ", ".join(TYPES)
        )
    if category is not None and category not in CATEGORIES:
        raise GitImproveError(
            f"unknown category {category!r}", hint="use one of: " + ", ".join(CATEGORIES)
        )
    ts = now or utc_now()
    return {
        "v": 1,
        "id": f"SIG-{ts[:10].replace('-', '')}-{host_id()}-{secrets.token_hex(3)}",
        "ts": ts,
        "session": session,
        "type": type_,
        "status": "captured",
        "confidence": max(1, min(4, int(confidence))),
        "source": {"hook": hook, "turn": turn, "file": file},
        "content": redact(content.strip())[:2000],
        "context": redact(context.strip())[:2000],
        "category": category or DEFAULT_CATEGORY[type_],
        "tags": [t for t in tags if t],
        "related": [],
    }


def path_for(signal: dict[str, Any]) -> str:
    return spool.entry_name("signals", "json", str(signal["ts"]), host_id())


def spool_signals(improve_dir: str, signals: Iterable[dict[str, Any]]) -> int:
    n = 0
    for sig in signals:
        spool.put(improve_dir, path_for(sig), sig)
        n += 1
    return n


def flush(repo: Repo) -> int:
    """Move spooled entries into the memory branch; returns how many were added."""
    improve_dir = str(repo.common_dir / "improve")
    with repo.lock("spool", timeout=60):
        files = spool.pending(improve_dir)
        entries: dict[str, bytes] = {}
        for file, path in files:
            try:
                with open(file, "rb") as fh:
                    entries[path] = fh.read()
            except OSError:
                continue
        if not entries:
            return 0
        added = memory.add_entries(
            repo, entries, message=f"gitimprove: {len(entries)} captured entries"
        )
        for file, path in files:
            if path in entries:
                with contextlib.suppress(OSError):
                    os.unlink(file)
        return added


def add_now(repo: Repo, signal: dict[str, Any]) -> str:
    path = path_for(signal)
    memory.add_entries(
        repo,
        {path: json.dumps(signal, sort_keys=True, ensure_ascii=False) + "\n"},
        message=f"gitimprove: signal {signal['id']}",
    )
    return path


def add_event(repo: Repo, targets: Sequence[str], status: str, **extra: Any) -> None:
    ts = utc_now()
    event = {"v": 1, "ts": ts, "targets": list(targets), "status": status, **extra}
    memory.add_entries(
        repo,
        {
            spool.entry_name("events", "json", ts, host_id()): json.dumps(event, sort_keys=True)
            + "\n"
        },
        message=f"gitimprove: {status} {', '.join(targets)[:60]}",
    )


# --- reading -------------------------------------------------------------------------------


@dataclass
class Group:
    """Near-duplicate signals folded into one candidate."""

    signals: list[dict[str, Any]] = field(default_factory=list)

    @property
    def first(self) -> dict[str, Any]:
        return self.signals[0]

    @property
    def id(self) -> str:
        return str(self.first["id"])

    @property
    def sessions(self) -> set[str]:
        return {str(s.get("session")) for s in self.signals if s.get("session")}

    @property
    def confidence(self) -> int:
        base = max(int(s.get("confidence") or 1) for s in self.signals)
        recurrence = len(self.sessions)
        return min(4, max(base, min(3, recurrence)))

    @property
    def status(self) -> str:
        return str(self.first.get("status", "captured"))


def _parse(data: bytes) -> dict[str, Any] | None:
    try:
        obj = json.loads(data)
    except ValueError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("v", 1), int) or obj.get("v", 1) > 1:
        return None
    return obj


def all_signals(repo: Repo, *, include_spool: bool = True) -> list[dict[str, Any]]:
    """Every signal with its folded status (events applied), oldest first."""
    sigs: dict[str, dict[str, Any]] = {}
    entries = list(memory.iter_entries(repo, "signals/"))
    if include_spool:
        entries += [
            (p, d)
            for p, d in spool.read_pending(str(repo.common_dir / "improve"))
            if p.startswith("signals/")
        ]
    for path, data in entries:
        obj = _parse(data)
        if obj and obj.get("id"):
            obj["path"] = path
            sigs[str(obj["id"])] = obj
    events = []
    for _, data in memory.iter_entries(repo, "events/"):
        ev = _parse(data)
        if ev:
            events.append(ev)
    for ev in sorted(events, key=lambda e: str(e.get("ts"))):
        for target in ev.get("targets") or []:
            if target in sigs and ev.get("status") in STATUSES:
                sigs[target]["status"] = ev["status"]
                if ev.get("to"):
                    sigs[target]["promoted_to"] = ev["to"]
    return sorted(sigs.values(), key=lambda s: (str(s.get("ts")), str(s.get("id"))))


def _fresh(sig: dict[str, Any], ttl_days: int, now: _dt.datetime) -> bool:
    if sig.get("status") == "promoted":
        return True
    try:
        ts = _dt.datetime.fromisoformat(str(sig["ts"]).replace("Z", "+00:00"))
    except (KeyError, ValueError):
        return True
    return now - ts <= _dt.timedelta(days=ttl_days)


_WORD = re.compile(r"[a-z0-9_./-]+")


def _tokens(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 1}


def similar(a: str, b: str, threshold: float = 0.7) -> bool:
    ta, tb = _tokens(a), _tokens(b)
    if not ta or not tb:
        return a.strip().lower() == b.strip().lower()
    return len(ta & tb) / len(ta | tb) >= threshold


def groups(
    signals: Sequence[dict[str, Any]], *, ttl_days: int = 14, now: _dt.datetime | None = None
) -> list[Group]:
    """Group near-duplicates (same type, similar content) among signals still in view."""
    moment = now or _dt.datetime.now(_dt.UTC)
    out: list[Group] = []
    for sig in signals:
        if not _fresh(sig, ttl_days, moment):
            continue
        for g in out:
            if g.first.get("type") == sig.get("type") and similar(
                str(g.first.get("content")), str(sig.get("content"))
            ):
                g.signals.append(sig)
                break
        else:
            out.append(Group([sig]))
    return out
