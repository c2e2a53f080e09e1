"""pre-push: start a background `git improve sync push <remote>` and return at once.

The user's push goes on exactly as without gitimprove; the sync runs detached, marked
GITIMPROVE_CHILD=1 (and pushes with --no-verify) so it never triggers this hook again. A
failed background sync is logged to <git-common-dir>/improve/sync.log; the next sync sends
everything anyway.
"""

from __future__ import annotations

import os
import sys

from gitimprove.util import gitdir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def handle(loc: gitdir.Location, args: Sequence[str]) -> int:
    if not args:
        return 0
    remote = args[0]
    from gitimprove.util import proc

    os.makedirs(loc.improve_dir, exist_ok=True)
    proc.spawn_detached(
        [sys.executable, "-m", "gitimprove", "sync", "push", remote],
        cwd=loc.work_tree or loc.git_dir,
        log_path=os.path.join(loc.improve_dir, "sync.log"),
        env=proc.clean_env({"GITIMPROVE_CHILD": "1"}),
    )
    return 0
