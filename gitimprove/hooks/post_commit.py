"""post-commit: an `experiment(...)` commit made outside the loop gets a `pending` note.

On an ordinary commit this reads the new commit's message from the loose object and returns:
no subprocess, no pygit2. Only an experiment commit pays for writing the note (or, with
`capture.measure_on_commit`, for starting a detached `git improve measure`).
"""

from __future__ import annotations

import os
import sys

from gitimprove.util import gitdir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

PREFIX = "experiment"


def _subject(loc: gitdir.Location, oid: str) -> str | None:
    message = gitdir.read_loose_commit_message(loc, oid)
    if message is None:  # packed or unusual: ask git
        from gitimprove.util import proc

        res = proc.git(["log", "-1", "--format=%B", oid], cwd=loc.work_tree or loc.git_dir)
        message = res.stdout if res.ok else None
    return message


def handle(loc: gitdir.Location, args: Sequence[str]) -> int:
    oid = gitdir.read_ref(loc, "HEAD")
    if not oid:
        return 0
    message = _subject(loc, oid)
    if not message or not message.lstrip().startswith(PREFIX):
        return 0
    from gitimprove.loop.measure import parse_subject

    parsed = parse_subject(message)
    if parsed is None:
        return 0
    record_pending(loc, oid, parsed)
    return 0


def record_pending(loc: gitdir.Location, oid: str, parsed: tuple[str | None, str]) -> None:
    from gitimprove import config
    from gitimprove.git.repo import open_repo
    from gitimprove.state import experiments

    repo = open_repo(loc.work_tree or loc.git_dir)
    if experiments.get(repo, oid) is not None:
        return  # the loop (or an earlier hook) already recorded it
    scope, description = parsed
    experiments.record(
        repo,
        oid,
        {"status": "pending", "description": description, "scope": scope, "source": "post-commit"},
    )
    assert loc.work_tree is not None
    try:
        from pathlib import Path

        cfg = config.load(Path(loc.work_tree), repo.config_items("improve."))
    except Exception:
        return  # a broken config must not break the commit; `measure` will say what is wrong
    if cfg.get("capture", "measure_on_commit"):
        from gitimprove.util import proc

        proc.spawn_detached(
            [sys.executable, "-m", "gitimprove", "measure", oid],
            cwd=loc.work_tree,
            log_path=os.path.join(loc.improve_dir, "measure-on-commit.log"),
        )
