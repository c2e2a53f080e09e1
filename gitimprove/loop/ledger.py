"""The run's records: every write the loop makes to refs is one transaction here.

`record` lands one attempt — its note, its link on the archive chain and, for a keep, the
fast-forward of `improve/<run>` — all or nothing; `commit_round` lands a tournament round's
final lines with the move to its winner. Both are compare-and-swap with retries (DESIGN §2).
"""

from __future__ import annotations

from typing import Any

from gitimprove.git import archive, notes, refs
from gitimprove.git.repo import cas_loop, update_refs
from gitimprove.loop.context import Event, RunContext
from gitimprove.state.record import Experiment
from gitimprove.state.records import make_line
from gitimprove.util.clock import utc_now
from gitimprove.util.failpoint import failpoint

Note = dict[str, Any]  # the fields of the note being written (DESIGN §4)


def record(ctx: RunContext, commit: str, note: Note, *, keep: bool) -> Event:
    """Note, archive link and (for a keep) the branch move: one transaction, all or nothing."""
    repo = ctx.repo
    note["finished"] = utc_now()
    view = Experiment(commit, note)
    if view.family_ignored:
        note["reason"] = (
            f"{view.reason} (asked for a {view.family} change; the agent reported {view.approach})"
        )
    line = make_line("create", note)
    iteration = view.iteration

    def attempt() -> None:
        notes_tip = repo.ref_target(refs.NOTES)
        arch_tip = repo.ref_target(refs.ARCHIVE)
        new_notes, _ = notes.build_commit(
            repo, notes_tip, {commit: [line]}, f"gitimprove: {ctx.name} iteration {iteration}"
        )
        assert new_notes is not None
        new_arch = archive.archive_commit(
            repo,
            arch_tip,
            [commit],
            f"gitimprove: {ctx.name} iteration {iteration}: {view.status}",
        )
        updates = [(refs.NOTES, new_notes, notes_tip), (refs.ARCHIVE, new_arch, arch_tip)]
        if keep:
            updates.append((refs.run_branch(ctx.name), commit, view.parent))
        update_refs(repo, updates, f"gitimprove: {ctx.name} iteration {iteration}")

    with ctx.shared.lock:
        cas_loop(repo, attempt, what="the run's records", lock="notes")
    done = Experiment(commit, note)
    failpoint("after-log", f"{done.iteration}.{done.candidate}")
    return {
        "event": "attempt",
        "run": ctx.name,
        "iteration": done.iteration,
        "candidate": done.candidate,
        "commit": commit,
        "status": done.status,
        "reason": done.reason,
        "value": done.value,
        "description": done.description or None,
        "escalation": done.escalation,
        "family": done.family,
    }


def commit_round(
    ctx: RunContext,
    iteration: int,
    incumbent: str,
    updates: dict[str, dict[str, Any]],
    winner: Experiment | None,
) -> None:
    """Every candidate's final line and the fast-forward of improve/<run> to the winner."""
    lines = {commit: [make_line("update", upd)] for commit, upd in updates.items()}
    branch = refs.run_branch(ctx.name)

    def attempt() -> None:
        notes_tip = ctx.repo.ref_target(refs.NOTES)
        new_notes, _ = notes.build_commit(
            ctx.repo, notes_tip, lines, f"gitimprove: {ctx.name} round {iteration}"
        )
        assert new_notes is not None
        moves = [(refs.NOTES, new_notes, notes_tip)]
        if winner is not None:
            moves.append((branch, winner.commit, incumbent))
        update_refs(ctx.repo, moves, f"gitimprove: {ctx.name} round {iteration}")

    with ctx.shared.lock:
        if lines:
            cas_loop(ctx.repo, attempt, what="the round's records", lock="notes")
        if winner is not None:
            ctx.rule.window, ctx.rule.last_base = [], None
