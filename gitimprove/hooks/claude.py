"""Claude Code hooks (DESIGN §10). Each handler takes the event's JSON payload and returns
(exit code, JSON object for stdout or None, text for stderr or None). Exit 2 only for a
deliberate block by the configured gate.

The hot handlers (PostToolUseFailure, PreCompact, Stop) import no pygit2 and do not mask:
signals go to the local spool with their text deferred (`memory/deferred.py`), and the next
SessionStart, SessionEnd or memory command flushes them, masking as it writes.
"""

from __future__ import annotations

import json
import os
import sys
import time

from gitimprove.util import gitdir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    Result = tuple[int, dict[str, Any] | None, str | None]
CONTEXT_LIMIT = 10_000
CONTEXT_CACHE_VERSION = 1  # raise when what the context shows changes
STOP_DEBOUNCE_SECONDS = 30.0
STOP_DEBOUNCE_BYTES = 64 * 1024


def _session(payload: dict[str, Any]) -> str:
    return str(payload.get("session_id") or "unknown")


def post_tool_use_failure(loc: gitdir.Location, payload: dict[str, Any]) -> Result:
    from gitimprove.memory import capture, deferred

    if payload.get("is_interrupt"):
        return 0, None, None
    tool = str(payload.get("tool_name") or "tool")
    error = payload.get("error")
    if not isinstance(error, str):
        resp = payload.get("tool_response")
        error = json.dumps(resp, ensure_ascii=False) if resp is not None else ""
    inp = payload.get("tool_input") if isinstance(payload.get("tool_input"), dict) else {}
    assert isinstance(inp, dict)
    summary = str(inp.get("command") or inp.get("file_path") or inp.get("pattern") or "")
    sig = capture.make_signal(  # masked when the spool is flushed, before every cut
        type_="failure",
        content=[deferred.head(f"{tool} failed: ", 2000), deferred.cut(error.strip(), 500)],
        context=[deferred.cut(summary, 300)],
        session=_session(payload),
        hook="PostToolUseFailure",
        file=str(inp.get("file_path")) if inp.get("file_path") else None,
        tags=(tool,),
        defer=True,
    )
    capture.spool_signals(loc.improve_dir, [sig])
    return 0, None, None


def _mine(loc: gitdir.Location, payload: dict[str, Any], hook: str) -> int:
    from gitimprove.memory import capture, mining

    path = payload.get("transcript_path")
    if not isinstance(path, str) or not os.path.isfile(path):
        return 0
    found = mining.mine(
        path,
        loc.improve_dir,
        _session(payload),
        hook,
        last_assistant_message=payload.get("last_assistant_message") or None,
        defer=True,
    )
    return capture.spool_signals(loc.improve_dir, found)


def pre_compact(loc: gitdir.Location, payload: dict[str, Any]) -> Result:
    _mine(loc, payload, "PreCompact")
    return 0, None, None


def _gate(loc: gitdir.Location, payload: dict[str, Any]) -> Result | None:
    """Run the configured gate; a failure blocks (exit 2) unless a block is already active."""
    if payload.get("stop_hook_active"):
        return None
    from pathlib import Path

    from gitimprove import config

    assert loc.work_tree is not None
    try:
        cfg = config.load(Path(loc.work_tree))
    except Exception:
        return None  # a broken config never blocks a session
    command = str(cfg.get("gate", "command")).strip()
    if not command:
        return None
    from gitimprove.util import proc

    res = proc.run(
        command,
        cwd=loc.work_tree,
        shell=True,
        timeout=float(cfg.get("gate", "timeout")),
        env=proc.clean_env({"GITIMPROVE_CHILD": "1"}),
    )
    if res.ok:
        return None
    why = "timed out" if res.timed_out else f"exited with {res.returncode}"
    reason = f"The gate `{command}` {why}. Fix it before finishing:\n{res.tail(3000)}"
    return 2, None, reason


def stop(loc: gitdir.Location, payload: dict[str, Any]) -> Result:
    blocked = _gate(loc, payload)
    # Stop fires every turn: mine only when enough time passed or the transcript grew.
    from gitimprove.memory import mining

    path = payload.get("transcript_path")
    state = mining.State.load(mining.watermark_path(loc.improve_dir, _session(payload)))
    try:
        grown = os.path.getsize(path) - state.offset if isinstance(path, str) else 0
    except OSError:
        grown = 0
    if time.time() - state.mined_at >= STOP_DEBOUNCE_SECONDS or grown >= STOP_DEBOUNCE_BYTES:
        _mine(loc, payload, "Stop")
    return blocked or (0, None, None)


def task_completed(loc: gitdir.Location, payload: dict[str, Any]) -> Result:
    return _gate(loc, payload) or (0, None, None)


def session_end(loc: gitdir.Location, payload: dict[str, Any]) -> Result:
    """Write the end ref and hand the summary to a detached process; return at once."""
    from gitimprove.memory.sessions import sid_for
    from gitimprove.util import proc

    sid = sid_for(loc.improve_dir, _session(payload), create=False)
    if sid is None:
        return 0, None, None  # the session never started here
    head = gitdir.read_ref(loc, "HEAD")
    if head:
        from gitimprove.git import refs

        name = refs.session_ref(sid, "end")
        done = proc.git(["update-ref", name, head, "0" * 40], cwd=loc.git_dir)
        if done.returncode == 0:  # witnessed as every move of a gitimprove ref (a run watches)
            from pathlib import Path

            from gitimprove.git import witness

            witness.record(Path(loc.improve_dir), [(name, head, None)])
    argv = [
        sys.executable,
        "-m",
        "gitimprove",
        "hook",
        "session-summary",
        sid,
        str(payload.get("reason") or "other"),
        _session(payload),
        str(payload.get("transcript_path") or ""),
    ]
    proc.spawn_detached(
        argv, cwd=loc.work_tree, log_path=os.path.join(loc.improve_dir, "session-summary.log")
    )
    return 0, None, None


def session_start(loc: gitdir.Location, payload: dict[str, Any]) -> Result:
    from gitimprove.git import sessions as refs_sessions
    from gitimprove.git.repo import open_repo
    from gitimprove.memory import sessions

    repo = open_repo(loc.work_tree or loc.git_dir)
    claude_id = _session(payload)
    sid = sessions.sid_for(loc.improve_dir, claude_id)
    assert sid is not None
    head = repo.head_commit()
    if head is not None:
        refs_sessions.mark(repo, sid, "start", str(head.id))
        sessions.catch_up(repo, sid)
    text = context(loc, repo, payload)
    _flush_later(loc)  # last: the flush's masking must not compete with this hook for a core
    return (
        0,
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}},
        None,
    )


def _flush_later(loc: gitdir.Location) -> None:
    """Hand the spool to a detached flush: hooks spool text unmasked, and masking it is the
    flush's work, too much for a session's start (DESIGN §13); the context below reads the
    memory branch, and from the spool only this session's signals after a compaction."""
    from gitimprove.memory import spool

    if not spool.pending(loc.improve_dir):
        return
    from gitimprove.util import proc

    argv = [sys.executable, "-m", "gitimprove", "hook", "flush"]
    log = os.path.join(loc.improve_dir, "flush.log")
    cwd = loc.work_tree or loc.git_dir
    try:  # niced from its start: its interpreter's start must not take a core from our exit
        proc.spawn_detached(["nice", "-n", "10", *argv], cwd=cwd, log_path=log)
    except FileNotFoundError:  # no `nice` on PATH: the flush lowers its priority itself
        proc.spawn_detached(argv, cwd=cwd, log_path=log)


def flush(loc: gitdir.Location, args: list[str]) -> int:
    """The detached half of SessionStart: the spool onto the memory branch, masked; at a
    lower priority than the session it serves."""
    from gitimprove.git.repo import open_repo
    from gitimprove.memory import signals

    try:
        os.nice(max(0, 10 - os.nice(0)))  # 10, or as SessionStart's `nice` started it
    except OSError:
        pass
    signals.flush(open_repo(loc.work_tree or loc.git_dir))
    return 0


def context(loc: gitdir.Location, repo: Any, payload: dict[str, Any]) -> str:
    """What a session starts with: recent history, MEMORY.md, the latest run, pending ideas,
    and after a compaction this session's signals; under 10,000 characters. Outside a
    compaction the text is cached, keyed by what it is made of (`_context_key`)."""
    max_lines = _max_lines(loc)
    if payload.get("source") == "compact":  # this session's signals: some still spooled
        return _build_context(loc, repo, payload, max_lines)
    key = _context_key(loc, max_lines)
    path = os.path.join(loc.improve_dir, "cache", "context.json")
    from gitimprove.util.files import atomic_write, read_state

    try:
        cached = json.loads(read_state(path))
        if cached.get("key") == key and isinstance(cached.get("text"), str):
            return str(cached["text"])
    except (OSError, ValueError, AttributeError, RecursionError):
        pass
    text = _build_context(loc, repo, payload, max_lines)
    try:
        atomic_write(path, json.dumps({"key": key, "text": text}), durable=False)
    except OSError:
        pass
    return text


def _context_key(loc: gitdir.Location, max_lines: int) -> list[object]:
    """What the context outside a compaction depends on: HEAD (the recent commits), the
    notes and memory tips (the run, the ideas, MEMORY.md), `memory.max_lines`, and the hour
    (a captured signal leaves MEMORY.md once its days are over: an hour late at most)."""
    from gitimprove.git import refs

    return [
        CONTEXT_CACHE_VERSION,
        gitdir.read_ref(loc, "HEAD") or "",
        gitdir.read_ref(loc, refs.NOTES) or "",
        gitdir.read_ref(loc, refs.MEMORY) or "",
        max_lines,
        time.strftime("%Y-%m-%dT%H", time.gmtime()),
    ]


def _max_lines(loc: gitdir.Location) -> int:
    from pathlib import Path

    from gitimprove import config

    try:
        return int(config.load(Path(loc.work_tree or ".")).get("memory", "max_lines"))
    except Exception:
        return 200


def _build_context(loc: gitdir.Location, repo: Any, payload: dict[str, Any], max_lines: int) -> str:
    from gitimprove.memory import entries, render, signals
    from gitimprove.state import views
    from gitimprove.util import proc

    parts: list[str] = []
    log = proc.git(["log", "--oneline", "-20"], cwd=loc.work_tree or loc.git_dir)
    if log.ok and log.stdout.strip():
        parts.append("## Recent commits (git log --oneline -20)\n" + log.stdout.strip())
    latest, last = views.latest_run_tail(loc, 10)
    if latest:
        parts.append(
            f"## Latest improvement run {latest} (last 10 rows)\n"
            + views.render_tsv(last, views.direction_of(last)).strip()
        )
    ideas = [
        f"- {idea['text']}"
        for idea in entries.ideas(repo)
        if (idea.get("status") or "pending") == "pending"
    ]
    if ideas:
        parts.append("## Pending ideas (git improve idea)\n" + "\n".join(ideas[-10:]))
    if payload.get("source") == "compact":
        ours = _session(payload)  # still in the spool, or flushed: masked either way
        mine = [
            s
            for s in signals.all_signals(repo, spooled=lambda s: s.get("session") == ours)
            if s.get("session") == ours and s.get("status") == "captured"
        ]
        if mine:
            parts.append(
                "## Signals captured earlier in this session\n"
                + "\n".join(
                    f"- [{s.get('type')}] {str(s.get('content'))[:200]}" for s in mine[-15:]
                )
            )
    memory_md = render.render(repo, max_lines=max_lines, include_spool=False)
    head = "# gitimprove context\n"
    budget = CONTEXT_LIMIT - len(head) - 200
    out = []
    for block in [*parts[:1], memory_md.strip(), *parts[1:]]:
        if len(block) + 2 > budget:
            block = block[: max(0, budget - 40)].rsplit("\n", 1)[0] + "\n… (truncated)"
        if budget <= 40:
            break
        out.append(block)
        budget -= len(block) + 2
    return head + "\n\n".join(out)


def session_summary(loc: gitdir.Location, args: list[str]) -> int:
    """The detached half of SessionEnd: mine the rest of the transcript, flush, summarize."""
    from gitimprove.git.repo import open_repo
    from gitimprove.memory import sessions, signals

    sid, reason, claude_id, transcript = ([*args, "", "", "", ""])[:4]
    if transcript and os.path.isfile(transcript):
        _mine(loc, {"session_id": claude_id, "transcript_path": transcript}, "SessionEnd")
    repo = open_repo(loc.work_tree or loc.git_dir)
    signals.flush(repo)
    sessions.finish(repo, sid, stop_reason=reason or None, claude_session=claude_id or None)
    return 0


HANDLERS = {
    "SessionStart": session_start,
    "PostToolUseFailure": post_tool_use_failure,
    "PreCompact": pre_compact,
    "Stop": stop,
    "TaskCompleted": task_completed,
    "SessionEnd": session_end,
}
