"""Session boundary refs `refs/improve/sessions/<sid>/{start,end}`: create-only."""

from __future__ import annotations

import datetime as _dt

from gitimprove.git import refs
from gitimprove.git.repo import RefMoved, Repo, update_refs
from gitimprove.util.clock import host_id


def new_session_id(now: _dt.datetime | None = None) -> str:
    import secrets  # not at the top: a session start that knows its id never needs it

    moment = now or _dt.datetime.now(_dt.UTC)
    alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
    rand = "".join(secrets.choice(alphabet) for _ in range(4))
    return f"{moment.strftime('%Y%m%dT%H%M%SZ')}-{host_id()}-{rand}"


def mark(repo: Repo, sid: str, end: str, commit: str) -> bool:
    """Create the boundary ref; False when it already exists (it is never moved)."""
    name = refs.session_ref(sid, end)
    try:
        update_refs(repo, [(name, commit, None)], f"gitimprove: session {end}")
    except RefMoved:
        return False
    return True


def list_sessions(repo: Repo) -> dict[str, dict[str, str]]:
    return repo.markers(refs.SESSIONS_PREFIX, "session")
