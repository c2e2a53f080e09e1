"""One candidate as explicit stages (DESIGN §7 steps 2–7):

    prepare workspace → agent → snapshot tree → precheck → commit → measure → guard (+rework)
    → decide → record

Each stage is a small function with typed input and output; `run_attempt` strings them
together and builds the note as it goes; the agent's stages live in `agent_call.py`. A
measurement or a record that finds something changed behind the harness's back ends the
attempt as `tampered` (`integrity.py`). In a tournament (the spec has a family) the note is
written with stage "evaluated" and the round decides later (see `tournament.py`).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitimprove import agents
from gitimprove.errors import GitImproveError, corrupt_object, damaged_object
from gitimprove.git import archive, strays, trees
from gitimprove.git.checkout import Checkout
from gitimprove.git.workspace import Hashed
from gitimprove.loop import scope, siblings, wording
from gitimprove.loop.agent_call import (
    AgentTampered,
    Workspace,
    build_program,
    call_agent,
    prepare_workspace,
    snapshot_tree,
)
from gitimprove.loop.context import Event, MetricFailed, RunContext
from gitimprove.loop.decide import report
from gitimprove.loop.history import History
from gitimprove.loop.implicit import built_outputs, implicit_in
from gitimprove.loop.integrity import Tampered, fresh_checkout, log_incident, stop_error
from gitimprove.loop.ledger import Note, note_agent, record, start_note
from gitimprove.loop.measure import metric_block
from gitimprove.loop.space import Unrecorded, out_of_space, record_failed
from gitimprove.redaction import clip
from gitimprove.state.record import CRASHES
from gitimprove.util.clock import utc_now

__all__ = [
    "AttemptSpec",
    "Decided",
    "Measured",
    "Verdict",
    "Workspace",
    "build_program",
    "call_agent",
    "commit_tree",
    "decide",
    "measure_first",
    "precheck",
    "prepare_workspace",
    "run_attempt",
    "snapshot_tree",
]


@dataclass(frozen=True)
class AttemptSpec:
    """What to attempt: one candidate of one round, from one incumbent."""

    iteration: int
    candidate: int
    incumbent: str
    history: History
    level: int  # the stuck ladder's escalation level
    family: str | None = None  # given in a tournament: the approach family asked for
    round_history: str | None = None

    @property
    def tournament(self) -> bool:
        return self.family is not None

    @property
    def name(self) -> str:
        return f"{self.iteration}-{self.candidate}"


@dataclass(frozen=True)
class Verdict:
    """An attempt that ends before measurement (or fails it): its status and reason."""

    status: str
    reason: str
    metric_tail: str | None = None  # the metric's output, when it gave no number


@dataclass(frozen=True)
class Measured:
    checkout: Checkout  # the candidate's measurement checkout
    first: float  # its first metric value


@dataclass(frozen=True)
class Decided:
    status: str
    reason: str
    keep: bool  # moves the run branch now (never in a tournament: the round decides)
    metric: dict[str, Any]
    decision: dict[str, Any]


# --- stages ----------------------------------------------------------------------------------


def precheck(
    ctx: RunContext, spec: AttemptSpec, ws: Workspace, result: agents.AgentResult, hashed: Hashed
) -> Verdict | None:
    """Reasons not to measure: the agent failed, left files git cannot commit or links out of
    the workspace, changed nothing, broke scope, or repeated."""
    tree = hashed.tree
    if result.timed_out:
        return Verdict(
            "timeout",
            f"timeout: the agent ran past {float(ctx.cfg.get('agent', 'timeout')):.0f}s and was stopped",
        )
    if result.over:
        return Verdict(
            "crash", f"crash: the agent printed too much ({result.over}; [loop] max_output)"
        )
    if result.exit_code not in (0, None):
        return Verdict("crash", f"crash: the agent exited with {result.exit_code}")
    if hashed.escaping:
        return Verdict(
            "out-of-scope",
            "out-of-scope: symbolic links that do not resolve to a file or folder inside the "
            "workspace: " + "; ".join(hashed.escaping[:5]),
        )
    if hashed.refused:
        return Verdict(
            "out-of-scope",
            "out-of-scope: files that cannot be committed (left out): "
            + ", ".join(hashed.refused[:5]),
        )
    if tree == ws.incumbent_tree:
        return Verdict("no-op", "no-op: the agent changed nothing")
    with ctx.shared.lock:
        sealed = scope.sealed_paths(trees.changed_paths(ctx.repo, ctx.base_tree, tree), ctx.sealed)
        outside = scope.outside(trees.changed_paths(ctx.repo, ws.incumbent_tree, tree), ctx.mutable)
        loaded = implicit_in(
            ctx.repo, ctx.base_tree, tree, ctx.sealed_tree, ctx.mutable, ctx.importable
        )
        loaded += built_outputs(
            trees.changed_paths(ctx.repo, ctx.base_tree, tree), ctx.unbuilt, ctx.mutable
        )
    if sealed:
        return Verdict(
            "sealed", "sealed: the attempt changed sealed files: " + ", ".join(sealed[:5])
        )
    if loaded:
        return Verdict(
            "out-of-scope",
            "out-of-scope: files loaded without being named (to allow one, add to "
            "[scope] mutable a pattern that spells its name, such as its path; `**` or a "
            "folder's `/**` alone does not): " + "; ".join(loaded[:5]),
        )
    if outside:
        return Verdict(
            "out-of-scope",
            "out-of-scope: changed files outside scope.mutable: " + ", ".join(outside[:5]),
        )
    if tree in spec.history.measured_trees() or not ctx.shared.claim_tree(tree, spec.candidate):
        return Verdict("duplicate", "duplicate: this exact tree was already measured in this run")
    return None


def commit_tree(ctx: RunContext, spec: AttemptSpec, tree: str, description: str) -> tuple[str, str]:
    """The harness's commit of the tree on the incumbent; returns (commit, scope name)."""
    text = clip(" ".join((description or "attempt").split()), 120)
    with ctx.shared.lock:
        changed = trees.changed_paths(ctx.repo, trees.tree_of(ctx.repo, spec.incumbent), tree)
        tops = sorted({p.split("/")[0] if "/" in p else Path(p).stem for p in changed})
        scope_name = tops[0] if len(tops) == 1 else ("multi" if tops else "none")
        message = (
            f"experiment({scope_name}): {text}\n\n"
            f"Run: {ctx.name}\nIteration: {spec.iteration}\nCandidate: {spec.candidate}\n"
        )
        commit = ctx.repo.create_commit(ctx.repo.raw[tree].id, message, [spec.incumbent])
    return commit, scope_name


def measure_first(
    ctx: RunContext, commit: str, ws: Workspace, stack: contextlib.ExitStack[Any]
) -> Measured | Verdict:
    """The candidate's first metric run, in a fresh checkout the agent never saw (written
    now that every process of the agent is gone)."""
    since = siblings.tick()
    try:
        with ctx.shared.lock:
            co = fresh_checkout(stack, ctx.repo, commit, f"{ws.name}-measure", ctx.shared.spares)
    except Tampered as exc:  # rewritten while it was written: by a sibling's agent at work?
        writers = ctx.suspects(since)
        if not writers:
            raise
        with siblings.alone(), ctx.shared.lock:  # alone first: agents need the lock to end
            co = fresh_checkout(stack, ctx.repo, commit, f"{ws.name}-measure", ctx.shared.spares)
        siblings.blame(writers, f"the checkout of {commit[:10]} (as it was written)", exc.paths)
    try:
        return Measured(co, ctx.metric(co))
    except MetricFailed as exc:
        status = exc.run.status if exc.run.status != "ok" else "metric-error"
        return Verdict(status, f"{status}: {exc.run.error}", exc.run.tail[-1500:])


@dataclass(frozen=True)
class Guarded:
    result: dict[str, Any]  # the guard block of the note
    verdict: Verdict | None = None  # guard-fail: no rework left
    rework: bool = False  # failed, and the agent gets another try with `tail`
    tail: str = ""


def guard_stage(
    ctx: RunContext,
    spec: AttemptSpec,
    commit: str,
    measured: Measured,
    rework: int,
    trail: list[dict[str, Any]],
) -> Guarded:
    """The guard in the candidate's measurement checkout. On failure the agent reworks in the
    same workspace (the failed commit stays on the archive chain) up to `guard.rework` times."""
    guard = ctx.guard(measured.checkout)
    trail.append({k: v for k, v in guard.items() if k != "tail"})
    block = {**guard, "history": list(trail)} if rework or guard["status"] == "fail" else guard
    if guard["status"] != "fail":
        return Guarded(block)
    if rework < int(ctx.cfg.get("guard", "rework")):
        with ctx.shared.lock:
            archive.append(
                ctx.repo,
                [commit],
                f"gitimprove: {ctx.name} iteration {spec.iteration} guard failed; reworking",
            )
        return Guarded(block, rework=True, tail=str(guard.get("tail", "")))
    reason = f"guard failed (exit {guard.get('exit_code')}) after {rework} rework(s)"
    return Guarded(block, verdict=Verdict("guard-fail", reason))


def decide(
    ctx: RunContext, spec: AttemptSpec, measured: Measured, rework: int
) -> Decided | Verdict:
    """Candidate against fresh runs of the incumbent, interleaved, with the run's rule
    (docs/noise.md). In a tournament the rule takes the outcome in only when the round ends."""
    inc = ctx.incumbent_checkout(spec.incumbent)
    pending = [measured.first]

    def run_candidate() -> float:
        return pending.pop() if pending else ctx.metric(measured.checkout)

    try:
        with ctx.shared.rule_lock:
            out = ctx.rule.decide(
                lambda: ctx.metric(inc), run_candidate, absorb=not spec.tournament
            )
    except MetricFailed as exc:
        if not pending:
            status = exc.run.status if exc.run.status != "ok" else "metric-error"
            return Verdict(status, f"{exc.run.error}, on a repeat run")
        raise
    change, reason = report(ctx.rule, out)
    keep = out.keep
    status = ("keep-reworked" if rework else "keep") if keep else "discard"
    if spec.tournament:  # the round decides the winner: until then no candidate is "kept"
        status = "pending" if keep else "discard"
        if keep:
            reason = f"beats the incumbent: {wording.verdict_free(reason)}"
    metric = metric_block(
        ctx.cfg,
        out.candidate,
        incumbent_samples=out.incumbent,
        confidence=ctx.confidence,
        **change.fields(),
    )
    decision = {**out.record(), "rework": rework}
    return Decided(status, reason, keep and not spec.tournament, metric, decision)


# --- the attempt, start to finish --------------------------------------------------------------


def record_tampered(ctx: RunContext, commit: str, note: Note, exc: Tampered) -> Event:
    """A tampered attempt is recorded, never kept; a change outside the workspace and the
    checkouts (the user's repository) also stops the run."""
    ctx.shared.drop_checkout(exc.checkout)
    note.update(status="tampered", reason=exc.reason, tampered=exc.paths[:50])
    try:
        event = record(ctx, commit, note, keep=False)
    except Exception as err:
        # the user's objects were removed or damaged: the records' own history may be gone
        # with them (the notes' tip), so the run stops naming what changed, unrecorded
        name = damaged_object(err)
        if not exc.stop or name is None:
            raise
        log_incident(ctx.repo, ctx.name, exc.what, exc.paths)
        stop = stop_error(ctx.name, exc)
        stop.message += f" (this attempt could not be recorded: the object {name} is gone)"
        raise stop from None
    if exc.stop:
        log_incident(ctx.repo, ctx.name, exc.what, exc.paths)
        raise stop_error(ctx.name, exc)
    return event


def planted(name: str) -> Tampered:
    """An object of the repository that does not hold what its name says (written by an
    agent without a sandbox under the name of a blob it was about to make): stops the run."""
    return Tampered(
        "an object in your repository does not hold what its name says (run "
        "`git improve doctor --repair` to move it aside)",
        [f".git/objects/{name[:2]}/{name[2:]}"],
        stop=True,
    )


def run_attempt(ctx: RunContext, spec: AttemptSpec) -> Event | None:
    """One candidate, start to finish; None when the budget left cannot cover launching it.
    What changes in gitimprove's folder while it works is laid at its door (git/strays.py)."""
    with strays.owning(f"{ctx.name}-{spec.name}"):
        return _run_attempt(ctx, spec)


def _run_attempt(ctx: RunContext, spec: AttemptSpec) -> Event | None:
    note = start_note(ctx, spec)
    guard_trail: list[dict[str, Any]] = []  # every guard run of this attempt
    rework: int = 0
    rework_tail: str | None = None
    cost = 0.0
    try:
        with prepare_workspace(ctx, spec) as ws:
            while True:
                if rework == 0:
                    note["started"] = utc_now()
                tampered: Tampered | None = None
                try:
                    result = call_agent(ctx, spec, ws, rework, rework_tail)
                except AgentTampered as exc:
                    result, tampered = exc.result, exc
                if result is None:
                    return None
                cost += result.cost_usd or 0.0
                note_agent(note, spec, ctx, result, rework, cost)
                commit = None
                try:
                    hashed = snapshot_tree(ctx, ws)
                    note["tree"] = hashed.tree
                    if spec.tournament and not ctx.sandbox.active:  # another's, from now on
                        label = f"candidate {spec.candidate}'s workspace"
                        siblings.rest(f"{ctx.name}-{spec.name}", ws.path, label)
                    verdict = precheck(ctx, spec, ws, result, hashed)
                    commit, note["scope"] = commit_tree(
                        ctx, spec, hashed.tree, note.get("description", "")
                    )
                except Exception as exc:
                    bad = corrupt_object(exc)  # read by the scope checks (a planted blob)
                    if bad is not None and "tree" in note:
                        if commit is None:
                            commit, note["scope"] = commit_tree(
                                ctx, spec, note["tree"], note.get("description", "")
                            )
                        return record_tampered(ctx, commit, note, planted(bad))
                    end = exc if isinstance(exc, Unrecorded) else out_of_space(ctx, exc, "hashing")
                    if end is None:
                        raise
                    return record_failed(ctx, spec, ws, note, end)
                if tampered is not None:
                    return record_tampered(ctx, commit, note, tampered)
                if verdict is not None:
                    note.update(status=verdict.status, reason=verdict.reason)
                    if result.tail and verdict.status in CRASHES:
                        note["agent_tail"] = result.tail[-1500:]
                    return record(ctx, commit, note, keep=False)
                try:
                    with contextlib.ExitStack() as stack:
                        done = evaluate(ctx, spec, ws, commit, note, rework, guard_trail, stack)
                except Tampered as exc:
                    return record_tampered(ctx, commit, note, exc)
                except Exception as exc:
                    bad = corrupt_object(exc)
                    if bad is not None:
                        return record_tampered(ctx, commit, note, planted(bad))
                    end = out_of_space(ctx, exc, "measuring the candidate")
                    if end is None:
                        raise
                    return record_failed(ctx, spec, ws, note, end, commit)
                if isinstance(done, str):  # the guard failed and the agent may rework
                    rework += 1
                    rework_tail = done
                    continue
                return done
    except MetricFailed as exc:  # the incumbent stopped measuring
        raise GitImproveError(
            f"the incumbent {spec.incumbent[:10]} no longer measures: {exc.run.error}",
            hint="check the machine, then `git improve run --resume`",
        ) from None


def evaluate(
    ctx: RunContext,
    spec: AttemptSpec,
    ws: Workspace,
    commit: str,
    note: Note,
    rework: int,
    trail: list[dict[str, Any]],
    stack: contextlib.ExitStack[Any],
) -> Event | str:
    """Measure, guard, decide and record a committed candidate; the guard's tail (a str) when
    the agent should rework it."""
    measured = measure_first(ctx, commit, ws, stack)
    if isinstance(measured, Verdict):
        note.update(
            status=measured.status, reason=measured.reason, metric_tail=measured.metric_tail
        )
        return record(ctx, commit, note, keep=False)
    guarded = guard_stage(ctx, spec, commit, measured, rework, trail)
    if guarded.rework:
        return guarded.tail
    note["guard"] = guarded.result
    if guarded.verdict is not None:
        note.update(status=guarded.verdict.status, reason=guarded.verdict.reason)
        return record(ctx, commit, note, keep=False)
    decided = decide(ctx, spec, measured, rework)
    if isinstance(decided, Verdict):
        note.update(status=decided.status, reason=decided.reason)
        return record(ctx, commit, note, keep=False)
    note.update(
        status=decided.status,
        reason=decided.reason,
        metric=decided.metric,
        decision=decided.decision,
    )
    event = record(ctx, commit, note, keep=decided.keep)
    if decided.keep:  # the next attempt's incumbent: its checkout is this one
        ctx.shared.adopt_checkout(measured.checkout)
    return event
