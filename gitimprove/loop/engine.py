"""The improvement loop (DESIGN §7): the loop that ties the stages together.

    runs.py        choose / start / resume a run, its options, its summary
    history.py     the run's records, typed, read once per round; the rule rebuilt from them
    control.py     stop conditions, the stuck ladder, the diagnosis
    attempt.py     one candidate, stage by stage
    tournament.py  K candidates per round, the confirmation, the round's transaction

The engine never prints: it reports each step through `emit(event)` and returns a summary.
All state lives in refs and notes, so a run killed at any point continues with `--resume`:
an attempt without a note is re-run under the same iteration number.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from gitimprove import agents
from gitimprove.agents import sandbox
from gitimprove.config import CONFIG_FILE
from gitimprove.errors import GitImproveError
from gitimprove.git import pending, refs, strays, trees, witness
from gitimprove.git.checkout import COUNTS, remove_workspace, stale_workspaces, work_root
from gitimprove.git.repo import Repo
from gitimprove.loop import baseline, control, inprocess, lookup, runs, scope
from gitimprove.loop.attempt import AttemptSpec, run_attempt
from gitimprove.loop.context import Emit, Event, RoundBudget, RunContext, Shared
from gitimprove.loop.decide import make_rule
from gitimprove.loop.history import History, rebuild_rule
from gitimprove.loop.integrity import (
    check_config_file,
    check_config_pin,
    check_config_read,
    run_refs,
)
from gitimprove.loop.runs import RunOptions, RunSummary
from gitimprove.loop.runtimes import SOURCES_WITH_MAIN
from gitimprove.loop.tournament import run_round
from gitimprove.util import proc, reaper

__all__ = ["Engine", "Event", "RunOptions", "RunSummary", "build_context"]


def build_context(
    repo: Repo, name: str, base: str, opts: RunOptions, emit: Emit, *, resuming: bool = False
) -> RunContext:
    """Everything the stages need, read once from the run's base and the options; checks the
    configuration and the agent, and writes nothing."""
    overrides = repo.config_items("improve.")
    history = History.read(repo, name)
    check_config_read(repo, overrides)
    if history.baseline is not None:  # a resumed run keeps the configuration it started with
        check_config_pin(history.baseline.state.get("config"), overrides, name)
    cfg = runs.config_at(repo, base, overrides)
    if history.baseline is not None:
        check_config_file(repo, cfg, name, base)
    if resuming:
        runs.check_resume(opts, name, history)
    more = opts.iterations if resuming else None  # on resume, -n means that many more rounds
    runs.restore_options(opts, history)
    agent = agents.make(
        opts.agent or str(cfg.get("agent", "name")),
        opts.agent_command if opts.agent_command is not None else str(cfg.get("agent", "command")),
    )
    agent.check()
    confidence = 0.90 if opts.explore else float(cfg.get("metric", "confidence"))
    rule = make_rule(cfg, confidence=confidence, strict_ab=opts.strict_ab)
    candidates = opts.candidates or int(cfg.get("loop", "candidates"))
    if candidates > len(agents.FAMILIES) - 1:
        raise GitImproveError(
            f"{candidates} candidates per round is more than the {len(agents.FAMILIES) - 1} approach families a round can give out",
            hint=f"use --candidates {len(agents.FAMILIES) - 1} or fewer",
        )
    sealed = list(cfg.get("scope", "sealed"))
    base_tree = trees.tree_of(repo, base)
    assert repo.work_tree is not None
    box = sandbox.choose(
        str(cfg.get("agent", "sandbox")),
        [repo.work_tree, repo.git_dir, repo.common_dir],
        repo.common_dir / "objects",
        tmp_size=int(cfg.get("agent", "tmp_size")),
        state=repo.improve_dir,
    )
    extraction = history.baseline.state.get("extraction") if history.baseline else None
    shared = Shared(opts.jobs or int(cfg.get("loop", "jobs")), opts.measure_jobs)
    shared.refs = run_refs(repo, name)
    return RunContext(
        repo=repo,
        name=name,
        base=base,
        cfg=cfg,
        opts=opts,
        agent=agent,
        rule=rule,
        confidence=confidence,
        base_tree=base_tree,
        sealed_tree=trees.subset_tree(
            repo, base_tree, lambda p: bool(scope.sealed_paths([p], sealed))
        ),
        sealed=sealed,
        mutable=list(cfg.get("scope", "mutable")),
        iterations=(history.next_iteration()[0] - 1 + more)
        if more is not None
        else (opts.iterations or int(cfg.get("loop", "iterations"))),
        candidates=candidates,
        shared=shared,
        emit=emit,
        sandbox=box,
        extraction=extraction if isinstance(extraction, str) else None,
    )


def remove_stale(repo: Repo, name: str) -> list[int]:
    """What an interrupted process left behind: first the processes of this run (found by
    their token), then its workspaces and programs, and any other whose process is gone (a run
    killed while it measured its baseline). Returns the pids killed."""
    killed = reaper.kill_survivors(reaper.repo_key(repo.common_dir), name)
    for stale in sorted(work_root(repo).glob(f"{name}-*")):
        if stale.is_dir():
            remove_workspace(stale)
        elif stale.name.endswith(".prompt.md"):
            stale.unlink(missing_ok=True)
    for stale in stale_workspaces(repo):
        remove_workspace(stale)
    return killed


def remove_strays(repo: Repo) -> list[str]:
    """What in `.git/improve/` gitimprove did not write, found before the run's first watched
    window (which judges only what changes while it is open): named as `doctor` names it
    (git/strays.py) and removed, so nothing left there before the run — by measured code of an
    earlier run, an agent, or anyone — reaches this run's measured code."""
    found = strays.find(repo.improve_dir)
    if found:
        strays.remove(repo.improve_dir, found)
    return found


@contextlib.contextmanager
def contained() -> Iterator[None]:
    """The harness as the reaper of its agents' orphans, with SIGINT, SIGTERM and SIGHUP
    handled like Ctrl-C (`proc.termination_signals`: every child's process group killed at
    once, every thread unwinding) so every process is killed on the way out."""
    reaper.become_subreaper()
    undo = reaper.harden()
    try:
        with proc.termination_signals():
            yield
    finally:
        undo()


def _uncommitted_config(repo: Repo, base: str) -> str | None:
    """A warning when the work tree's .gitimprove.toml differs from the one the run reads."""
    if repo.work_tree is None:
        return None
    try:
        here = (repo.work_tree / CONFIG_FILE).read_bytes()
    except OSError:
        return None
    committed = trees.read_path(repo, repo.commit(base).tree, CONFIG_FILE)
    if committed is None or committed == here:
        return None
    return (
        f"{CONFIG_FILE} in your work tree differs from the one committed at {base[:10]}; "
        "the run uses the committed one (commit your changes to use them)"
    )


class Engine:
    def __init__(self, repo: Repo, opts: RunOptions, emit: Emit) -> None:
        if repo.work_tree is None:
            raise GitImproveError("a run needs a repository with a work tree")
        self.repo = repo
        self.opts = opts
        self.emit = emit

    def run(self) -> RunSummary:
        from filelock import Timeout

        for _ in range(5):
            choice = runs.choose(self.repo, self.opts)
            try:
                with self.repo.lock(f"run-{choice.name}", timeout=0), contained():
                    try:
                        return self._run(choice)
                    finally:
                        key = reaper.repo_key(self.repo.common_dir)
                        reaper.sweep_harness(key, choice.name)
                        witness.compact(self.repo.improve_dir, deferrable=True)
                        if self.repo.ref_target(refs.run_branch(choice.name)) is None:
                            # a run that never started leaves not even its lock file
                            # (unlinked while held: filelock ≥ 3.21 retries a lock it took
                            # on an unlinked file, so a process that opened it just before
                            # cannot hold the name beside one that locks the new file)
                            lock_file = self.repo.improve_dir / "locks" / f"run-{choice.name}.lock"
                            with contextlib.suppress(OSError):
                                lock_file.unlink(missing_ok=True)
            except Timeout:
                if not choice.automatic:  # a name made up here is simply made up again
                    raise GitImproveError(
                        f"run {choice.name!r} is already running in another process",
                        hint=f"wait for it to finish, or stop it: git improve stop --run {choice.name}",
                    ) from None
        raise GitImproveError("could not find a free run name", hint="pass --run NAME")

    def _run(self, choice: runs.Choice) -> RunSummary:
        repo, name = self.repo, choice.name
        base = choice.base or runs.head(repo)
        # Validate everything before any ref is written: a run that cannot start leaves
        # nothing behind (config and agent here, the guard and the metric below).
        try:
            ctx = build_context(repo, name, base, self.opts, self.emit, resuming=choice.resuming)
        except GitImproveError as exc:
            if choice.resuming:
                exc.message = f"cannot resume run {name!r}: {exc.message}"
            raise
        killed = remove_stale(repo, name)  # survivors of a kill -9 die before anything is reused
        # what an agent (or those survivors) changed while a killed harness could not look
        pending.check_at_start(repo, name)
        stray = remove_strays(repo)
        counted = dict(COUNTS)  # the checkouts this run kept or wrote anew between runs
        self.emit(
            {
                "event": "start",
                "run": name,
                "base": base,
                "resumed": choice.resuming,
                "reopened": choice.reopen,
                "agent": self.opts.agent or str(ctx.cfg.get("agent", "name")),
                "iterations": ctx.iterations,
                "goal": self.opts.goal,
                "sandbox": ctx.sandbox.mode,
                "sandbox_message": ctx.sandbox.message,
                "killed": killed,
            }
        )
        if stray:
            shown = ", ".join(stray[:10]) + (
                f" and {len(stray) - 10} more" if len(stray) > 10 else ""
            )
            self.emit(
                {
                    "event": "warning",
                    "run": name,
                    "message": f"removed from .git/improve before the run, not written by "
                    f"gitimprove: {shown} (measured code or an agent without the sandbox, or "
                    "another program, left them there for a later run to read)",
                    "strays": stray,
                }
            )
        relative = lookup.relative_entries()
        if relative:
            named = "; ".join(
                f"{var}: " + ", ".join(repr(e) if e else "an empty entry" for e in entries)
                for var, entries in relative.items()
            )
            self.emit(
                {
                    "event": "warning",
                    "run": name,
                    "message": f"search entries that are not absolute are left out of the "
                    f"metric's and guard's environment ({named}): in a candidate's checkout they "
                    "would find its files (a `bin/python3` it added) before your programs; name "
                    "a program of the tree by its path (`./bin/bench`)",
                }
            )
        imported = inprocess.imported_mutable(
            ctx.cfg.metric_command,
            ctx.sealed_paths,
            ctx.mutable,
            lambda path: trees.read_in(repo, ctx.base_tree, path),
            trees.blob_paths(repo, ctx.base_tree),
        )
        if imported is not None:
            script, paths = imported
            shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
            verb = "links" if script.endswith((".rs", ".go", *SOURCES_WITH_MAIN)) else "imports"
            self.emit(
                {
                    "event": "warning",
                    "run": name,
                    "message": f"the sealed benchmark {script} {verb} {shown} "
                    "into its own process, and the agent may change it: code there can patch "
                    "the benchmark (its timer, its counters) or print a METRIC line after the "
                    "benchmark's own, and no check tells that from a real gain; run the code "
                    "under test in a child process of the benchmark and print the result "
                    'from the benchmark (docs/integrity.md, "What you must still do")',
                }
            )
        unsealed = inprocess.unsealed_named(
            ctx.cfg.metric_command,
            ctx.cfg.guard_command or "",
            trees.blob_paths(repo, ctx.base_tree),
            ctx.sealed_paths,
            lambda path: trees.read_in(repo, ctx.base_tree, path),
        )
        if unsealed:
            self.emit(
                {
                    "event": "warning",
                    "run": name,
                    "message": f"the metric or guard command runs {', '.join(unsealed)}, "
                    f"which {'are' if len(unsealed) > 1 else 'is'} not sealed: the agent may "
                    "rewrite what prints the number or what the "
                    "tests check, and such a change is measured like any other; seal it "
                    '(`[scope] sealed`; docs/integrity.md, "What you must still do")',
                }
            )
        uncommitted = _uncommitted_config(repo, base)
        if uncommitted:
            self.emit({"event": "warning", "run": name, "message": uncommitted})
        try:
            history = History.read(repo, name)
            if history.baseline is None:
                try:
                    guard = baseline.check_guard(ctx)
                    cal = baseline.calibrate(ctx)
                except GitImproveError as exc:
                    if not choice.resuming:  # the run named at start does not exist after all
                        exc.message = f"run {name!r} was not started: {exc.message}"
                    raise
                baseline.record_baseline(ctx, cal, guard, new_run=not choice.resuming)
                history = History.read(repo, name)
            else:
                if choice.reopen:
                    runs.reopen(repo, name)
                runs.update_options(ctx, history)
                ctx.shared.landed(run_refs(repo, name))  # the options just recorded
                rebuild_rule(ctx.rule, history)
                ctx.shared.guard_tests = baseline.guard_tests(history)
            reason = self.loop(ctx, history)
        finally:
            ctx.shared.close()
        runs.mark_stopped(repo, name, base, reason)
        summary = runs.summarize(name, base, History.read(repo, name), reason, ctx.cfg.direction)
        self.emit(
            {
                "event": "stop",
                "run": name,
                "reason": reason,
                "best": summary.best,
                "baseline": summary.baseline,
                "attempts": summary.attempts,
                "keeps": summary.keeps,
                "kept_changes": runs.keep_changes(summary.rows),
                "checkouts": {k: COUNTS[k] - counted[k] for k in COUNTS},
            }
        )
        return summary

    def loop(self, ctx: RunContext, history: History) -> str:
        """Round after round until a stop condition holds; returns the stop reason.

        A round run here counts as done even if its record cannot be read back: the run
        never repeats an attempt it already recorded."""
        done = 0
        while True:
            iteration, unfinished = history.next_iteration()
            if iteration <= done:
                iteration, unfinished = done + 1, False
            reason = None if unfinished else control.stop_reason(ctx, history, iteration)
            reason = reason or (None if unfinished else control.stalled(ctx, history))
            if reason:
                return reason
            level = control.escalation(ctx, history)
            incumbent = ctx.repo.ref_target(refs.run_branch(ctx.name))
            assert incumbent is not None
            if ctx.candidates == 1 and not unfinished:
                ctx.shared.new_round(RoundBudget())
                event = run_attempt(ctx, AttemptSpec(iteration, 0, incumbent, history, level))
                assert event is not None
                history = History.read(ctx.repo, ctx.name)
                self.emit(event)
            else:
                stop = run_round(ctx, iteration, incumbent, history, level)
                history = History.read(ctx.repo, ctx.name)
                if stop:
                    return stop
            done = iteration
            if iteration % 10 == 0:
                s = runs.summarize(ctx.name, ctx.base, history, "", ctx.cfg.direction)
                self.emit(
                    {
                        "event": "summary",
                        "run": ctx.name,
                        "attempts": s.attempts,
                        "keeps": s.keeps,
                        "baseline": s.baseline,
                        "best": s.best,
                    }
                )
