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
from gitimprove.loop.integrity import IntegrityError, RefCheck, check_run_refs, log_incident
from gitimprove.loop.measure import harness
from gitimprove.state.record import Experiment
from gitimprove.state.records import make_line
from gitimprove.state.signing import load_key
from gitimprove.util.clock import utc_now
from gitimprove.util.failpoint import failpoint

if TYPE_CHECKING:
    from gitimprove.agents import AgentResult
    from gitimprove.loop.attempt import AttemptSpec

Note = dict[str, Any]  # the fields of the note being written (DESIGN §4)


def check_refs(ctx: RunContext) -> RefCheck:
    """Before each decision: the run's refs must be where the harness left them."""
    with ctx.shared.lock:
        return check_run_refs(ctx.repo, ctx.name, ctx.shared.refs, ctx.base)


def notes_base(ctx: RunContext, tip: str | None, check: RefCheck) -> str | None:
    """Where the next notes commit goes: on the tip, with forged notes of the run put back."""
    if tip is None or not check.forged:
        return tip
    return notes.revert_notes(
        ctx.repo,
        tip,
        ctx.shared.refs.get(refs.NOTES),
        check.forged,
        f"gitimprove: {ctx.name}: remove notes written outside the harness",
    )


def refs_stop(ctx: RunContext, problems: list[str]) -> IntegrityError:
    what = "the run's refs moved outside the harness"
    log_incident(ctx.repo, ctx.name, what, problems)
    return IntegrityError(
        f"run {ctx.name} stopped: {what}: " + "; ".join(problems),
        hint="an agent (or another program) wrote to the repository; `git improve doctor` "
        "lists what changed; the run branch and the run's notes were put back where the run "
        "left them",
    )


def record(
    ctx: RunContext,
    commit: str,
    note: Note,
    *,
    keep: bool,
    also: Sequence[tuple[str, str | None, str | None]] = (),
) -> Event:
    """Note, archive link and (for a keep) the branch move: one transaction, all or nothing.
    `also` adds ref moves to the same transaction (a new run's markers, with its baseline).

    When the run's refs moved behind the harness's back, the attempt is recorded as
    `tampered`, the run branch is put back, and the run stops (IntegrityError)."""
    repo = ctx.repo
    branch = refs.run_branch(ctx.name)
    check = check_refs(ctx)
    problems = check.problems
    if problems:
        keep = False
        note.update(
            status="tampered",
            reason="tampered: the run's refs moved outside the harness: " + "; ".join(problems),
            tampered=problems,
        )
    note["finished"] = utc_now()
    view = Experiment(commit, note)
    if view.family_ignored:
        note["reason"] = (
            f"{view.reason} (asked for a change of the {view.family} family; the agent reported {view.approach})"
        )
    line = make_line("create", note, key=load_key(repo.improve_dir))
    iteration = view.iteration

    def attempt() -> None:
        notes_tip = repo.ref_target(refs.NOTES)
        arch_tip = repo.ref_target(refs.ARCHIVE)
        new_notes, _ = notes.build_commit(
            repo,
            notes_base(ctx, notes_tip, check),
            {commit: [line]},
            f"gitimprove: {ctx.name} iteration {iteration}",
        )
        assert new_notes is not None
        new_arch = archive.archive_commit(
            repo,
            arch_tip,
            [commit],
            f"gitimprove: {ctx.name} iteration {iteration}: {view.status}",
        )
        updates = [(refs.NOTES, new_notes, notes_tip), (refs.ARCHIVE, new_arch, arch_tip)]
        tip, expected = repo.ref_target(branch), ctx.shared.refs.get(branch)
        if keep:
            updates.append((branch, commit, view.parent))
        elif tip != expected and expected is not None:
            updates.append((branch, expected, tip))  # put the run branch back
        update_refs(repo, [*updates, *also], f"gitimprove: {ctx.name} iteration {iteration}")
        landed.update({refs.NOTES: new_notes, refs.ARCHIVE: new_arch})
        landed.update({name: new for name, new, _ in also})
        if keep:
            landed[branch] = commit

    landed: dict[str, str | None] = {}
    with ctx.shared.lock:
        cas_loop(repo, attempt, what="the run's records", lock="notes")
        ctx.shared.landed(landed)
    if problems:
        raise refs_stop(ctx, problems)
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
    branch = refs.run_branch(ctx.name)
    check = check_refs(ctx)
    problems = check.problems
    if problems:
        winner = None
        for upd in updates.values():
            upd.update(
                status="tampered",
                reason="tampered: the run's refs moved outside the harness: " + "; ".join(problems),
                winner=None,
            )
    key = load_key(ctx.repo.improve_dir)
    lines = {commit: [make_line("update", upd, key=key)] for commit, upd in updates.items()}

    def attempt() -> None:
        notes_tip = ctx.repo.ref_target(refs.NOTES)
        new_notes, _ = notes.build_commit(
            ctx.repo,
            notes_base(ctx, notes_tip, check),
            lines,
            f"gitimprove: {ctx.name} round {iteration}",
        )
        assert new_notes is not None
        moves = [(refs.NOTES, new_notes, notes_tip)]
        tip = ctx.repo.ref_target(branch)
        if winner is not None:
            moves.append((branch, winner.commit, incumbent))
        elif problems and tip != incumbent:
            moves.append((branch, incumbent, tip))  # put the run branch back
        update_refs(ctx.repo, moves, f"gitimprove: {ctx.name} round {iteration}")
        landed.update({refs.NOTES: new_notes, branch: winner.commit if winner else incumbent})

    landed: dict[str, str | None] = {}
    with ctx.shared.lock:
        if lines:
            cas_loop(ctx.repo, attempt, what="the round's records", lock="notes")
            ctx.shared.landed(landed)
    if problems:
        raise refs_stop(ctx, problems)


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
