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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gitimprove.git import memory
from gitimprove.git.repo import Repo
from gitimprove.memory import deferred, entries, spool
from gitimprove.memory.capture import CATEGORIES as CATEGORIES
from gitimprove.memory.capture import STATUSES as STATUSES
from gitimprove.memory.capture import TYPES as TYPES
from gitimprove.memory.capture import command_key, path_for
from gitimprove.memory.capture import make_signal as make_signal
from gitimprove.memory.capture import spool_signals as spool_signals
from gitimprove.util.clock import host_id, parse_utc, utc_now


def flush(repo: Repo) -> int:
    """Move spooled entries into the memory branch; returns how many were added. A hook
    spools text unmasked (`deferred.py`): it is masked here, then cut, and masked again as
    every blob is written (the rules load once, however many entries there are)."""
    improve_dir = str(repo.common_dir / "improve")
    if not spool.pending(improve_dir):
        return 0
    with repo.lock("spool", timeout=60):
        files = spool.pending(improve_dir)
        entries: dict[str, bytes] = {}
        for file, path in files:
            try:
                entries[path] = deferred.finish_entry(spool.read_entry(file))
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
        {path: json.dumps(deferred.finish(signal), sort_keys=True, ensure_ascii=False) + "\n"},
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


def _meta(data: bytes) -> dict[str, Any]:
    try:
        obj = json.loads(data)
    except ValueError:
        return {}
    return obj if isinstance(obj, dict) else {}


def all_signals(
    repo: Repo,
    *,
    include_spool: bool = True,
    spooled: Callable[[dict[str, Any]], bool] | None = None,
    bad: list[entries.BadEntry] | None = None,
) -> list[dict[str, Any]]:
    """Every readable signal with its folded status (events applied), oldest first; the
    entries that cannot be read go to `bad`. Spooled ones are shown as the flush will store
    them: rendered and masked (a hook spools text unmasked), which costs what the flush
    costs; `spooled` picks, by their fields other than text (type, session), the only ones
    worth that."""
    sigs: dict[str, dict[str, Any]] = {}
    extra = []
    if include_spool:
        extra = [
            (p, deferred.shown(d))
            for p, d in spool.read_pending(str(repo.common_dir / "improve"))
            if p.startswith("signals/") and (spooled is None or spooled(_meta(d)))
        ]
    for path, obj in entries.read(repo, "signals", extra=extra, bad=bad):
        obj["path"] = path
        sigs[str(obj["id"])] = obj
    events = [ev for _, ev in entries.read(repo, "events", bad=bad)]
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
    ts = parse_utc(sig.get("ts"))
    if ts is None:
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


_CODE = re.compile(r"`([^`\n]+)`")
_PATHISH = re.compile(r"[\w.-]*[/.][\w./-]*\w")


def subject(sig: dict[str, Any]) -> tuple[str, frozenset[str], frozenset[str]]:
    """What a signal is about: its file, the commands and paths it names, its tool tags, and
    for a failure the command that failed (its context, normalized). Signals about different
    subjects are never one candidate, however alike their words ("parse.py was edited 3
    times" is not "views.py was edited 3 times"; `npm run lint` failing is not `cargo build`)."""
    source = sig.get("source") if isinstance(sig.get("source"), dict) else {}
    assert isinstance(source, dict)
    content = str(sig.get("content") or "")
    named = set(_CODE.findall(content))
    named |= {m for m in _PATHISH.findall(content) if not m.replace(".", "").isdigit()}
    if sig.get("type") == "failure":
        named.add("command: " + command_key(str(sig.get("context") or "")))
    tags = frozenset(str(t) for t in sig.get("tags") or ())
    return str(source.get("file") or ""), frozenset(named), tags


def groups(
    signals: Sequence[dict[str, Any]], *, ttl_days: int = 14, now: _dt.datetime | None = None
) -> list[Group]:
    """Group near-duplicates (same status, type and subject, similar content) among signals
    still in view. A captured signal never joins a reviewed one's group: it would be out of
    sight of `reflect` (and of `--apply`, whose wider view brings old reviewed ones back)."""
    moment = now or _dt.datetime.now(_dt.UTC)
    out: list[Group] = []
    for sig in signals:
        if not _fresh(sig, ttl_days, moment):
            continue
        for g in out:
            if (
                g.status == str(sig.get("status", "captured"))  # reviewed never hides captured
                and g.first.get("type") == sig.get("type")
                and subject(g.first) == subject(sig)
                and similar(str(g.first.get("content")), str(sig.get("content")))
            ):
                g.signals.append(sig)
                break
        else:
            out.append(Group([sig]))
    return out
