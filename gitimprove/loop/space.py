"""Disk space an attempt may take, and a full disk met during one (docs/integrity.md).

After the agent, its workspace may hold no more than `[agent] workspace_size` bytes on disk
and no more entries than `[agent] workspace_files` (or ten times the incumbent's, when that is
more): a larger one is not hashed at all and the attempt is `out-of-scope`. A full disk met while the
workspace is hashed, the commit written, a checkout made or the candidate measured ends the
attempt as `crash` ("no space left on device …"): the workspace's files are removed first
(what the agent wrote is usually what filled the disk) and the attempt is recorded on a commit
of the incumbent's tree when no commit of its own could be written. When even that record
cannot be written, the run stops (exit 1) saying what to free; `run --resume` goes on from
there once space is back.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from gitimprove.git import space
from gitimprove.git.space import NoSpace
from gitimprove.util.files import remove_tree

if TYPE_CHECKING:
    from gitimprove.loop.agent_call import Workspace
    from gitimprove.loop.attempt import AttemptSpec
    from gitimprove.loop.context import Event, RunContext
    from gitimprove.loop.ledger import Note

__all__ = ["NoSpace", "Unrecorded", "check_workspace", "out_of_space", "record_failed"]


class Unrecorded(Exception):
    """The attempt ends without its tree: (status, reason) say why."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def out_of_space(ctx: RunContext, exc: BaseException, doing: str) -> Unrecorded | None:
    """The attempt's end when `exc` is a full disk, else None."""
    if not space.out_of_space(exc, ctx.repo.common_dir):
        return None
    place = space.full_place(exc, ctx.repo.common_dir)
    free = space.free_bytes(place)
    shown = f"; {free:,} bytes free" if free is not None else ""
    if place != ctx.repo.common_dir:
        shown = f" (in {place}{shown})"
    return Unrecorded("crash", f"crash: no space left on device while {doing}{shown}")


def check_workspace(ctx: RunContext, path: Path, incumbent_entries: int = 0) -> None:
    """Raise Unrecorded when the agent's workspace holds more than `[agent] workspace_size`
    bytes on disk, or more entries (files, folders, links, its `.git`'s too) than
    `[agent] workspace_files` or ten times the incumbent's, whichever is larger: checked while
    walking, before anything of it is hashed."""
    limit = int(ctx.cfg.get("agent", "workspace_size"))
    files = max(int(ctx.cfg.get("agent", "workspace_files")), 10 * incumbent_entries)
    used, entries = space.usage(path, limit, files)
    if used > limit:
        raise Unrecorded(
            "out-of-scope",
            f"out-of-scope: the workspace holds more than {limit:,} bytes on disk "
            "([agent] workspace_size); nothing of it was hashed",
        )
    if entries > files:
        raise Unrecorded(
            "out-of-scope",
            f"out-of-scope: the workspace holds more than {files:,} files and folders "
            "([agent] workspace_files, or ten times the incumbent's); nothing of it was hashed",
        )


def record_failed(
    ctx: RunContext,
    spec: AttemptSpec,
    ws: Workspace,
    note: Note,
    end: Unrecorded,
    commit: str | None = None,
) -> Event:
    """Record an attempt that ended with `end`: the workspace's files removed first, on its
    own commit or, without one, on a commit of the incumbent's tree."""
    from gitimprove.loop.attempt import commit_tree
    from gitimprove.loop.ledger import record

    remove_tree(ws.path)
    note.update(status=end.status, reason=end.reason)
    try:
        if commit is None:
            commit, note["scope"] = commit_tree(
                ctx, spec, ws.incumbent_tree, note.get("description", "")
            )
        return record(ctx, commit, note, keep=False)
    except Exception as exc:
        if space.out_of_space(exc, ctx.repo.common_dir):
            place = space.full_place(exc, ctx.repo.common_dir)
            raise NoSpace(place, "recording an attempt") from None
        raise
