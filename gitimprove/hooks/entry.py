"""`git improve hook <event>`: the entry every hook goes through.

It imports almost nothing (no click, no pygit2, no tomllib on an ordinary commit), never
raises, and decides its exit code explicitly: 0 always, unless a handler blocks on purpose
(STYLE.md §5). Internal errors are logged to `<git-common-dir>/improve/hooks.log`.
"""

from __future__ import annotations

import os
import sys

from gitimprove.util import gitdir
from gitimprove.util.files import append_state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

HANDLERS: dict[str, str] = {
    "post-commit": "gitimprove.hooks.post_commit:handle",
    "session-summary": "gitimprove.hooks.claude:session_summary",
    "flush": "gitimprove.hooks.claude:flush",
    "pre-push": "gitimprove.hooks.pre_push:handle",
}
MAX_PAYLOAD = 64 << 20  # a hook's stdin beyond this is not read
CLAUDE_EVENTS = frozenset(
    {"SessionStart", "PostToolUseFailure", "PreCompact", "Stop", "TaskCompleted", "SessionEnd"}
)


def log_line(loc: gitdir.Location | None, message: str) -> None:
    try:
        import time

        if loc is not None:
            folder = loc.improve_dir
        else:  # no repository to log into: the user's state folder
            base = os.environ.get("XDG_STATE_HOME") or os.path.join(
                os.path.expanduser("~"), ".local", "state"
            )
            folder = os.path.join(base, "gitimprove")
        os.makedirs(folder, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        append_state(os.path.join(folder, "hooks.log"), f"{stamp} {message.rstrip()}\n".encode())
    except OSError:
        pass


def _swallow(loc: gitdir.Location | None, event: str, exc: BaseException) -> int:
    """Log an error of gitimprove's own and report success: a hook never fails the user."""
    if not isinstance(exc, KeyboardInterrupt):
        import traceback

        log_line(
            loc,
            f"{event}: internal error, ignored: {''.join(traceback.format_exception(exc)).strip()}",
        )
    return 0


def run(event: str, args: Sequence[str]) -> int:
    if os.environ.get("GITIMPROVE_CHILD") == "1" or os.environ.get("GITIMPROVE_DISABLE") == "1":
        return 0
    if event in CLAUDE_EVENTS:
        return run_claude(event)
    loc = None
    try:
        loc = gitdir.discover()
        if loc is None or loc.config_path is None or not os.path.isfile(loc.config_path):
            return 0  # not a gitimprove project: do nothing
        target = HANDLERS.get(event)
        if target is None:
            log_line(loc, f"{event}: no handler for this event; ignored")
            return 0
        module_name, _, func_name = target.partition(":")
        module = __import__(module_name, fromlist=[func_name])
        handler: Callable[[gitdir.Location, Sequence[str]], int] = getattr(module, func_name)
        code = handler(loc, args)
        return code if code in (0, 2) else 0
    except BaseException as exc:  # fail open, whatever happened
        return _swallow(loc, event, exc)


def run_claude(event: str) -> int:
    """A Claude Code hook: one JSON object in on stdin, at most one JSON object out."""
    loc = None
    try:
        raw = sys.stdin.buffer.read(MAX_PAYLOAD + 1) if not sys.stdin.isatty() else b""
        from gitimprove.util import reader

        payload = (
            reader.loads(raw, max_bytes=MAX_PAYLOAD, max_depth=64, repair_text=True)
            if raw.strip()
            else None
        )
        cwd = payload.get("cwd") if isinstance(payload, dict) else None
        usable = isinstance(cwd, str) and "\0" not in cwd and os.path.isdir(cwd)
        loc = gitdir.discover(cwd if usable else None)
        if loc is None or loc.config_path is None or not os.path.isfile(loc.config_path):
            return 0
        if not isinstance(payload, dict):
            what = (
                "an empty stdin"
                if not raw.strip()
                else f"stdin that is not a JSON object ({getattr(payload, 'reason', 'not an object')})"
            )
            log_line(loc, f"{event}: got {what}; nothing done")
            return 0
        from gitimprove.hooks import claude

        code, out, message = claude.HANDLERS[event](loc, payload)
        if out is not None:
            import json

            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()
        if code == 2 and message:
            sys.stderr.write(message + "\n")
            return 2
        return 0
    except BaseException as exc:  # fail open, whatever happened
        return _swallow(loc, event, exc)


def main(argv: Sequence[str]) -> int:
    """argv = [event, *args]."""
    if not argv:
        sys.stderr.write("usage: git improve hook <event>\n")
        return 0
    return run(argv[0], argv[1:])
