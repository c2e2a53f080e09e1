"""Sessions: boundary refs, the mapping from Claude's session ids, and session summaries.

A summary covers the commits start..end of this session only: counts by conventional-commit
type, the most-modified files, the stop reason and the tool failures captured."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from typing import Any

from gitimprove.git import memory
from gitimprove.git import sessions as refs_sessions
from gitimprove.git.repo import Repo
from gitimprove.memory import entries
from gitimprove.util import proc
from gitimprove.util.clock import utc_now
from gitimprove.util.files import read_state
from gitimprove.util.seal import seal, unseal

_TYPE = re.compile(r"^(\w+)(?:\([^)]*\))?!?:")


def map_path(improve_dir: str, claude_session: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", claude_session)[:100] or "unknown"
    return os.path.join(improve_dir, "session-map", safe)


def sid_for(improve_dir: str, claude_session: str, *, create: bool = True) -> str | None:
    path = map_path(improve_dir, claude_session)
    try:
        sid = unseal(read_state(path)).decode("utf-8", "replace").strip()
        if sid:
            return sid
    except OSError:
        pass
    if not create:
        return None
    sid = refs_sessions.new_session_id()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = seal(improve_dir, f"session-map/{os.path.basename(path)}", f"{sid}\n".encode())
    try:
        with open(path, "xb") as fh:  # the first hook of the session wins
            fh.write(data)
    except FileExistsError:
        return sid_for(improve_dir, claude_session, create=False) or sid
    return sid


def summarize(
    repo: Repo,
    sid: str,
    start: str,
    end: str,
    *,
    stop_reason: str | None,
    claude_session: str | None,
    tools_failed: int,
) -> dict[str, Any]:
    res = proc.git(
        ["log", "--format=%x00%H%x09%s", "--name-only", f"{start}..{end}"], cwd=repo.git_dir
    )
    commits: list[str] = []
    types: Counter[str] = Counter()
    files: Counter[str] = Counter()
    for block in res.stdout.split("\0"):
        lines = [ln for ln in block.strip().splitlines() if ln.strip()]
        if not lines:
            continue
        sha, _, subject = lines[0].partition("\t")
        commits.append(sha)
        m = _TYPE.match(subject)
        types[m.group(1).lower() if m else "other"] += 1
        files.update(lines[1:])
    started = sid[:16]
    return {
        "v": 1,
        "sid": sid,
        "started": f"{started[:4]}-{started[4:6]}-{started[6:8]}T{started[9:11]}:{started[11:13]}:{started[13:15]}Z",
        "ended": utc_now(),
        "start_commit": start,
        "end_commit": end,
        "commits": commits,
        "commit_types": dict(sorted(types.items())),
        "files_most_modified": [f for f, _ in files.most_common(10)],
        "stop_reason": stop_reason,
        "tools_failed": tools_failed,
        "agent": {"name": "claude", "session_id": claude_session},
    }


def write_summary(repo: Repo, summary: dict[str, Any]) -> None:
    ended = str(summary["ended"])
    path = f"sessions/{ended[:4]}/{ended[5:7]}/{summary['sid']}.json"
    existing = [
        p
        for p, _ in memory.iter_entries(repo, "sessions/")
        if p.endswith(f"/{summary['sid']}.json")
    ]
    if existing:
        return  # one summary per session
    memory.add_entries(
        repo,
        {path: json.dumps(summary, sort_keys=True) + "\n"},
        message=f"gitimprove: session {summary['sid']}",
    )


def summaries(repo: Repo, *, bad: list[entries.BadEntry] | None = None) -> list[dict[str, Any]]:
    """Readable session summaries, newest first (unreadable ones go to `bad`)."""
    out = [obj for _, obj in entries.read(repo, "sessions", bad=bad)]
    return sorted(out, key=lambda s: str(s.get("ended")), reverse=True)


def finish(
    repo: Repo,
    sid: str,
    *,
    stop_reason: str | None,
    claude_session: str | None,
    end: str | None = None,
) -> dict[str, Any] | None:
    """Write the end ref (if missing) and the summary of session `sid`."""
    from gitimprove.git import refs
    from gitimprove.memory.signals import all_signals

    start = repo.ref_target(refs.session_ref(sid, "start"))
    head = repo.head_commit()
    end = end or repo.ref_target(refs.session_ref(sid, "end")) or (str(head.id) if head else None)
    if start is None or end is None:
        return None
    refs_sessions.mark(repo, sid, "end", end)

    def failure(s: dict[str, Any]) -> bool:
        return s.get("type") == "failure" and s.get("session") in (sid, claude_session)

    failed = sum(1 for s in all_signals(repo, spooled=failure) if failure(s))
    summary = summarize(
        repo,
        sid,
        start,
        end,
        stop_reason=stop_reason,
        claude_session=claude_session,
        tools_failed=failed,
    )
    write_summary(repo, summary)
    return summary


def catch_up(repo: Repo, current: str | None) -> list[str]:
    """Sessions that started but never got a SessionEnd: end them at HEAD and summarize."""
    done = []
    for sid, marks in refs_sessions.list_sessions(repo).items():
        if sid == current or "end" in marks:
            continue
        if finish(
            repo,
            sid,
            stop_reason="no SessionEnd (summarized at the next session start)",
            claude_session=None,
        ):
            done.append(sid)
    return done
