"""The agent's stage of an attempt: its workspace, its program, the call, the tree it left.

    prepare workspace → agent → snapshot tree

The agent works in a throwaway clone (in the sandbox when one is in force) with a token in
its environment; when it returns, every process it left is killed (`Shared.processes`), and
the user's repository is compared with a snapshot taken before the call (its ignored files
too without the sandbox: git/ignored.py), kept on disk through the call so that a harness
killed meanwhile has it compared by the next run (git/pending.py). The tree is hashed
from the files by the harness, whatever the agent did to its clone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gitimprove import agents
from gitimprove.git import caches, pending, strays, trees
from gitimprove.git.checkout import work_root
from gitimprove.git.watch import RepoState, objects_hint, put_back
from gitimprove.git.workspace import Hashed, Made, hash_workspace, made_workspace
from gitimprove.loop import program, siblings, sites
from gitimprove.loop.context import RunContext
from gitimprove.loop.integrity import Tampered
from gitimprove.loop.space import check_workspace
from gitimprove.util import files, inherited, proc, reaper, written

if TYPE_CHECKING:
    from gitimprove.loop.attempt import AttemptSpec


@dataclass(frozen=True)
class Workspace:
    path: Path  # the agent's throwaway clone
    prompt: Path  # the program file handed to the agent
    name: str  # "<run>-<iteration>-<candidate>": the prefix of every checkout of this attempt
    incumbent_tree: str
    made: Made | None = None  # what the harness wrote there, as proved (git/workspace.py)


@contextlib.contextmanager
def prepare_workspace(ctx: RunContext, spec: AttemptSpec) -> Iterator[Workspace]:
    """A fresh workspace at the incumbent for the agent (git/workspace.py), its program
    removed on exit."""
    name = f"{ctx.name}-{spec.name}"
    prompt = work_root(ctx.repo) / f"{name}.prompt.md"
    with ctx.shared.lock:
        inc_tree = trees.tree_of(ctx.repo, spec.incumbent)
    with made_workspace(
        ctx.repo, spec.incumbent, name, ctx.shared.workspaces, ctx.shared.lock
    ) as made:
        if spec.tournament and not ctx.sandbox.active:  # waiting for a slot: another's writes
            siblings.rest(name, made.path, f"candidate {spec.candidate}'s workspace")
        try:
            yield Workspace(made.path, prompt, name, inc_tree, made)
        finally:  # before its clone goes: a program beside no clone is a stray (strays.py)
            prompt.unlink(missing_ok=True)


def build_program(ctx: RunContext, spec: AttemptSpec, rework_tail: str | None) -> str:
    learnings, ideas = program.memory_inputs(ctx.repo)
    return program.build(
        goal=ctx.opts.goal,
        metric_name=ctx.cfg.metric_name,
        direction=ctx.cfg.direction,
        metric_command=ctx.cfg.metric_command,
        mutable=ctx.mutable,
        sealed=ctx.sealed,
        rows=spec.history.records,
        learnings=learnings[-10:],
        ideas=ideas[-10:],
        escalation=spec.level,
        family=spec.family,
        rework_tail=rework_tail,
        round_history=spec.round_history,
    )


def _look_on_the_way_out(ctx: RunContext, saved: Path, found: list[str] | None = None) -> None:
    """An agent call interrupted: the user's repository compared with the snapshot taken
    before it, as after a call (unless the comparison interrupted had `found` changes); a
    change is reported and its snapshot kept (`run --resume` refuses naming it, `doctor
    --repair` accepts it), else the snapshot goes, so what the user edits next is not taken
    for the agent's. A second signal cuts this short (the snapshot stays); so does a failure
    to look (the resume looks)."""
    changed = found or []
    try:
        if not changed:
            with proc.last_step(), ctx.shared.lock:
                changed = pending.look_now(ctx.repo, saved)
    except Exception:  # never in place of the interrupt: the resume looks
        return
    if changed:
        shown = ", ".join(changed[:10]) + (
            f" and {len(changed) - 10} more" if len(changed) > 10 else ""
        )
        message = (
            f"your repository changed while the interrupted agent worked: {shown}; "
            "`git improve doctor` names it, `git improve doctor --repair` accepts it"
        )
        ctx.emit({"event": "warning", "run": ctx.name, "message": message})


def call_agent(
    ctx: RunContext,
    spec: AttemptSpec,
    ws: Workspace,
    rework: int,
    rework_tail: str | None,
) -> agents.AgentResult | None:
    """Write the program and run the agent in the workspace; None when the round's budget
    cannot cover launching it (checked once a slot is free, before the first call only)."""
    with ctx.shared.lock:
        text = build_program(ctx, spec, rework_tail)
    data = text.encode("utf-8")
    written.mark(ws.prompt, pending=True, data=data)
    ws.prompt.write_bytes(data)
    written.mark(ws.prompt, data=data)
    token = ctx.token()
    task = agents.AgentTask(
        ws.prompt,
        ctx.name,
        spec.iteration,
        spec.candidate,
        seed=ctx.opts.seed,
        family=spec.family,
        rework_tail=rework_tail,
        sealed=tuple(ctx.sealed),
        mutable=tuple(ctx.mutable),
        commands=(ctx.cfg.guard_command,),  # a rework must be able to run the failing tests
        token=token.env(),
        sandbox=ctx.sandbox,
        max_output=int(ctx.cfg.get("loop", "max_output")),
    )
    with ctx.shared.agent_slots:  # the slot is held only while an agent works
        if rework == 0 and spec.tournament and not ctx.can_launch():
            return None
        owner = strays.current_owner()
        siblings_watched = spec.tournament and not ctx.sandbox.active
        if siblings_watched:  # its own workspace, at rest until now, a last time
            siblings.wake(owner)
        python = sites.take(ctx.site_folders)
        named = sites.take(ctx.command_paths)
        runners = sites.take(ctx.runner_files)
        with ctx.shared.lock:
            before = RepoState.take(ctx.repo, ignored=not ctx.sandbox.active)
            # on disk too: a harness killed while the agent works compares it at its resume
            saved = pending.save(
                ctx.repo,
                ctx.name,
                f"{ws.name}.{rework}",
                before,
                reachable=not ctx.sandbox.active,
                outside={
                    "python": (ctx.site_folders, python),
                    "named": (ctx.command_paths, named),
                    "runners": (ctx.runner_files, runners),
                },
            )
        ctx.shared.agent_started()
        seconds, cost = 0.0, 0.0
        try:
            # every process the agent left dies on exit; what it wrote to the view caches is
            # dropped (a cache is never the source of truth)
            with (
                siblings.agent(owner),  # first: it may wait for a sibling measured alone
                caches.watched(ctx.repo.improve_dir),
                strays.watched(ctx.repo.improve_dir, reachable=not ctx.sandbox.active) as left,
                ctx.shared.processes(token),
            ):
                result = ctx.agent.run(task, ws.path, float(ctx.cfg.get("agent", "timeout")))
            # set back when the agent exited (util/proc.py), and after its daemons died
            changed_limits, restored = ([], True) if ctx.sandbox.active else inherited.changes()
            if not restored:  # no record can be written under them: named, the run stops
                raise inherited.Stuck(changed_limits, "the agent")
            files.rechoose_tempdir()  # it may have filled $TMPDIR, or put a file there
            seconds, cost = result.seconds, result.cost_usd or 0.0
            # verified before anything is measured: nothing with its token anywhere (in the
            # sandbox every process of the agent died with its pid namespace)
            escaped = [] if ctx.sandbox.active else reaper.outlived(token)
        except KeyboardInterrupt:  # Ctrl-C, SIGTERM: the agent's processes are dead by now
            _look_on_the_way_out(ctx, saved)
            raise
        finally:
            ctx.shared.agent_finished(seconds, cost, first=rework == 0)
        changed: list[str] = []
        try:
            if siblings_watched:  # what it may have written into a sibling's resting workspace
                siblings.look(but=owner)
                ctx.look_at_incumbent()  # or into the incumbent's checkout
            with ctx.shared.lock:
                after = RepoState.take(ctx.repo, ignored=not ctx.sandbox.active)
                # in the sandbox the agent cannot reach the repository: only the user changed it
                changed = before.changes(after, reachable=not ctx.sandbox.active)
                ctx.shared.repo_state = None if changed else after
                moved: list[str] = []
                if changed:
                    moved = put_back(ctx.repo, before, after)
                pending.drop(saved)  # compared: whatever it found is reported below
        except KeyboardInterrupt:  # during the comparison: what it found, else made again
            _look_on_the_way_out(ctx, saved, changed)
            raise
    if changed:
        raise AgentTampered(result, changed, hint=objects_hint(moved, changed))
    if changed_limits:  # set back
        raise AgentTampered(result, changed_limits, _INHERITED, stop=False)
    planted = sites.changes(python, sites.take(ctx.site_folders))
    if planted:
        raise AgentTampered(
            result,
            planted,
            "the folders Python reads code from at every start (the metric's and guard's "
            "interpreter) changed while the agent worked: a `.pth`, `sitecustomize.py` or "
            "module there runs in every later measurement",
            hint=sites.HINT,
        )
    moved = sites.changes(named, sites.take(ctx.command_paths))
    if moved:
        raise AgentTampered(
            result,
            moved,
            "files the metric or guard command names outside the repository changed while the "
            "agent worked: the benchmark measured would no longer be the one the baseline ran",
            hint=sites.NAMED_HINT,
        )
    planted = sites.changes(runners, sites.take(ctx.runner_files))
    if planted:
        raise AgentTampered(
            result,
            planted,
            "files your runners and toolchains read from your home or a folder above the "
            "repository changed while the agent worked (`~/.npmrc`, a `node_modules/` or "
            "`.cargo/config.toml` above the checkout...): every later measurement reads them",
            hint=sites.RUNNER_HINT,
        )
    if left:  # removed: no run of this attempt or a later one reads them
        raise AgentTampered(result, left, "the agent wrote into gitimprove's folder", stop=False)
    if escaped:
        raise AgentTampered(
            result,
            [f"pid {pid}" for pid in escaped],
            "processes of the agent escaped its sweep (killed before anything was measured)",
            stop=False,
        )
    return result


_INHERITED = (
    "the agent changed what the harness's processes inherit (its resource limits, cgroup, "
    "CPU affinity, priority or I/O priority): every later measurement would run under them"
)


class AgentTampered(Tampered):
    """The user's repository changed while the agent worked (the run stops), or the agent's
    processes escaped the sweep (the attempt is not trusted)."""

    def __init__(
        self,
        result: agents.AgentResult,
        paths: list[str],
        what: str = "your repository changed while the agent worked",
        *,
        stop: bool = True,
        hint: str | None = None,
    ) -> None:
        super().__init__(what, paths, stop=stop, hint=hint)
        self.result = result


def snapshot_tree(ctx: RunContext, ws: Workspace) -> Hashed:
    """The tree of the workspace's files, hashed by the harness (never the clone's index or
    config), with what had to be left out of it; Unrecorded when the workspace is larger
    than `[agent] workspace_size` on disk or holds too many files (`workspace_files`)."""
    check_workspace(ctx, ws.path, len(ws.made.record) if ws.made is not None else 0)
    with ctx.shared.lock:
        return hash_workspace(
            ctx.repo,
            ws.path,
            max_file=int(ctx.cfg.get("scope", "max_file_size")),
            max_tree=int(ctx.cfg.get("scope", "max_tree_size")),
            known=ws.made,
        )
