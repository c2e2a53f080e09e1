"""`git improve hook <event>`: the entry every hook goes through.

It imports almost nothing (no click, no pygit2, no tomllib on an ordinary commit), never
raises, and decides its exit code explicitly: 0 always, unless a handler blocks on purpose
(STYLE.md §5). Internal errors are logged to `<git-common-dir>/improve/hooks.log`.
"""

from __future__ import annotations

import os
import sys

from gitimprove.util import gitdir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

HANDLERS: dict[str, str] = {
    "post-commit": "gitimprove.hooks.post_commit:handle",
}


def log_line(loc: gitdir.Location | None, message: str) -> None:
    try:
        import time

        if loc is None:
            return
        folder = loc.improve_dir
        os.makedirs(folder, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with open(os.path.join(folder, "hooks.log"), "a", encoding="utf-8") as fh:
            fh.write(f"{stamp} {message.rstrip()}\n")
    except OSError:
        pass


def run(event: str, args: Sequence[str]) -> int:
    if os.environ.get("GITIMPROVE_CHILD") == "1" or os.environ.get("GITIMPROVE_DISABLE") == "1":
        return 0
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
        if isinstance(exc, KeyboardInterrupt):
            return 0
        import traceback

        log_line(
            loc,
            f"{event}: internal error, ignored: {''.join(traceback.format_exception(exc)).strip()}",
        )
        return 0


def main(argv: Sequence[str]) -> int:
    """argv = [event, *args]."""
    if not argv:
        sys.stderr.write("usage: git improve hook <event>\n")
        return 0
    return run(argv[0], argv[1:])
