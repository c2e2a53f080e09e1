"""The run's records: every write the loop makes to refs is one transaction here.

`record` lands one attempt — its note, its link on the archive chain and, for a keep, the
fast-forward of `improve/<run>` — all or nothing; `commit_round` lands a tournament round's
final lines with the move to its winner. Both are compare-and-swap with retries (DESIGN §2).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gitimprove.git import archive, notes, refs
from gitimprove.git.repo import cas_loop, update_refs
from gitimprove.loop.context import Event, RunContext
from gitimprove.loop.measure import harness
from gitimprove.state.record import Experiment
from gitimprove.state.records import make_line
from gitimprove.util.clock import utc_now
from gitimprove.util.failpoint import failpoint

if TYPE_CHECKING:
    from gitimprove.agents import AgentResult
    from gitimprove.loop.attempt import AttemptSpec

Note = dict[str, Any]  # the fields of the note being written (DESIGN §4)


def record(
    ctx: RunContext,
    commit: str,
    note: Note,
    *,
    keep: bool,
    also: Sequence[tuple[str, str | None, str | None]] = (),
) -> Event:
    """Note, archive link and (for a keep) the branch move: one transaction, all or nothing.
    `also` adds ref moves to the same transaction (a new run's markers, with its baseline)."""
    repo = ctx.repo
    note["finished"] = utc_now()
    view = Experiment(commit, note)
    if view.family_ignored:
        note["reason"] = (
            f"{view.reason} (asked for a change of the {view.family} family; the agent reported {view.approach})"
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
        update_refs(repo, [*updates, *also], f"gitimprove: {ctx.name} iteration {iteration}")

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


def start_note(ctx: RunContext, spec: AttemptSpec) -> Note:
    """The note of an attempt as it starts: where it stands in the run and what measures it."""
    note: Note = {
        "run": ctx.name,
        "iteration": spec.iteration,
        "candidate": spec.candidate,
        "parent": spec.incumbent,
        "escalation": spec.level,
        "started": utc_now(),
        "harness": {**harness(ctx.cfg), "sealed_tree": ctx.sealed_tree},
    }
    if spec.tournament:
        note.update(family=spec.family, round=spec.iteration, stage="evaluated")
    return note


def note_agent(
    note: Note,
    spec: AttemptSpec,
    ctx: RunContext,
    result: AgentResult,
    rework: int,
    cost: float,
) -> None:
    rec = result.record(ctx.agent.name, rework)
    if cost:
        rec["cost_usd"] = round(cost, 6)
    note["agent"] = rec
    for key in ("description", "hypothesis", "approach"):
        value = getattr(result, key)
        if value:
            note[key] = value
    if spec.tournament and result.approach and result.approach != spec.family:
        note["family_ignored"] = True
