"""A run's lifecycle: choose, start or resume, the options kept on the run, stop, summary.

A run is its markers (`refs/improve/runs/<run>/{base,stop}`), its branch `improve/<run>` and
its notes; nothing else. Everything here reads or moves those refs.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from gitimprove import config as config_mod
from gitimprove.config import Config
from gitimprove.errors import GitImproveError
from gitimprove.git import refs, trees
from gitimprove.git.repo import RefMoved, Repo, update_refs
from gitimprove.loop.context import RunContext
from gitimprove.loop.history import History
from gitimprove.state import experiments
from gitimprove.state.experiments import Experiment
from gitimprove.util.clock import utc_now


@dataclass
class RunOptions:
    run: str | None = None
    iterations: int | None = None
    goal: str = ""
    agent: str | None = None
    agent_command: str | None = None
    target: float | None = None
    max_cost: float | None = None
    max_time: float | None = None
    resume: bool = False
    explore: bool = False
    strict_ab: bool = False
    seed: int = 0
    candidates: int | None = None
    jobs: int | None = None
    measure_jobs: int = 1


# The options a run keeps in its baseline record, so a resumed run goes on as it started.
PERSISTED = (
    "iterations",
    "goal",
    "seed",
    "target",
    "max_cost",
    "explore",
    "strict_ab",
    "agent",
    "agent_command",
    "candidates",
    "jobs",
    "measure_jobs",
)


def options_record(opts: RunOptions, iterations: int) -> dict[str, Any]:
    rec = {k: getattr(opts, k) for k in PERSISTED}
    rec["iterations"] = iterations
    return {k: v for k, v in rec.items() if v not in (None, "", False)}


def restore_options(opts: RunOptions, history: History) -> None:
    """A resumed run keeps the options it was started with, unless given again."""
    saved = history.baseline.options if history.baseline else None
    if not saved:
        return
    defaults = RunOptions()
    for key in PERSISTED:
        if key in saved and getattr(opts, key) == getattr(defaults, key):
            setattr(opts, key, saved[key])


@dataclass
class RunSummary:
    run: str
    base: str
    stop_reason: str
    baseline: float | None
    best: float | None
    best_commit: str | None
    attempts: int
    keeps: int
    rows: list[Experiment] = field(default_factory=list)


def keep_changes(rows: list[Experiment]) -> list[tuple[float | None, float | None]]:
    """Each keep's change as its note measured it, `(delta, delta_pct)`, in order."""
    out = []
    for r in rows:
        m = r.metric if r.is_keep else None
        if m is not None:
            out.append((m.delta, m.delta_pct))
    return out


def summarize(name: str, base: str, history: History, reason: str, direction: str) -> RunSummary:
    inc = history.incumbent()
    best = inc.value if inc is not None else None
    best_commit = inc.commit if inc is not None and not inc.is_baseline else None
    attempts = history.attempts
    return RunSummary(
        name,
        base,
        reason,
        history.baseline.value if history.baseline else None,
        best,
        best_commit,
        len(attempts),
        sum(1 for e in attempts if e.is_keep),
        list(history.records),
    )


def list_runs(repo: Repo) -> dict[str, dict[str, str]]:
    return repo.markers(refs.RUNS_PREFIX, "run")


def config_at(repo: Repo, commit: str, overrides: dict[str, str]) -> Config:
    data = trees.read_path(repo, repo.commit(commit).tree, config_mod.CONFIG_FILE)
    if data is None:
        raise GitImproveError(
            f"{config_mod.CONFIG_FILE} is not committed at {commit[:10]}; a run reads its configuration from its base commit",
            hint="commit .gitimprove.toml (git add .gitimprove.toml && git commit), then run again",
        )
    return config_mod.load_bytes(data, overrides)


# --- which run ---------------------------------------------------------------------------------


def start_times(repo: Repo) -> dict[str, str]:
    """When each run that recorded anything started: the time of its baseline record."""
    times: dict[str, str] = {}
    for e in experiments.all_experiments(repo):
        if e.is_baseline and e.run:
            times[e.run] = min(times.get(e.run, "~"), e.ts or "~")
    return times


def running(repo: Repo) -> set[str]:
    """Runs another process is running now (it holds the run's lock)."""
    from filelock import Timeout

    out = set()
    folder = repo.improve_dir / "locks"
    for path in folder.glob("run-*.lock") if folder.is_dir() else ():
        name = path.name[len("run-") : -len(".lock")]
        try:
            with repo.lock(f"run-{name}", timeout=0):
                pass
        except Timeout:
            out.add(name)
    return out


def _latest(names: list[str], times: dict[str, str]) -> str:
    return max(names, key=lambda r: (times.get(r, ""), r))


def latest_run(repo: Repo) -> str | None:
    """The run that started last, among those that recorded anything."""
    times = start_times(repo)
    return _latest(list(times), times) if times else None


@dataclass(frozen=True)
class Choice:
    name: str
    base: str  # "" for a new run: HEAD, read when it starts
    resuming: bool
    reopen: bool = False  # a finished run continued with --resume --run NAME
    automatic: bool = False  # a name made up here (another can be made if it is taken)


def _new_name(repo: Repo, taken: set[str]) -> str:
    now = utc_now()  # 2026-11-22T05:52:01.123456Z
    stamp = "run-" + now[:10].replace("-", "") + "-" + now[11:19].replace(":", "")
    name, n = stamp, 2
    while name in taken or repo.ref_target(refs.run_branch(name)) is not None:
        name, n = f"{stamp}-{n}", n + 1
    return name


def _check_new(repo: Repo, name: str) -> None:
    """A new run's branch must be creatable, checked before anything is measured."""
    if repo.ref_target("refs/heads/improve") is not None:
        raise GitImproveError(
            "a branch named `improve` exists, so git cannot create improve/<run> beside it",
            hint="rename it (git branch -m improve improve-work), then run again",
        )
    if repo.ref_target(refs.run_branch(name)) is not None:
        raise GitImproveError(
            f"the branch improve/{name} already exists", hint="choose another --run name"
        )


def choose(repo: Repo, opts: RunOptions) -> Choice:
    """The named run, the latest unfinished one, or a new one. Nothing is written here.

    Runs that never recorded anything (phantoms of older versions) are not resumed;
    `git improve doctor --repair` removes them."""
    runs = list_runs(repo)
    times = start_times(repo)
    unfinished = [r for r, m in runs.items() if "base" in m and "stop" not in m and r in times]
    name = opts.run
    if name is not None:
        refs.check_run_name(name)
        if name in runs and "base" in runs[name] and name in times:
            finished = "stop" in runs[name]
            if finished and not opts.resume:
                raise GitImproveError(
                    f"run {name!r} has finished",
                    hint=f"continue it with `git improve run --resume --run {name}`, or choose a new --run name",
                )
            return Choice(name, runs[name]["base"], True, reopen=finished)
        if opts.resume:
            known = ", ".join(sorted(times)) or "none yet"
            raise GitImproveError(
                f"there is no run {name!r} to resume (runs: {known})",
                hint="see `git improve status`, or start it without --resume",
            )
        if name in runs:
            raise GitImproveError(
                f"run {name!r} was started before but never recorded anything",
                hint="remove it with `git improve doctor --repair`, or choose another --run name",
            )
        _check_new(repo, name)
        return Choice(name, "", False)
    if opts.resume and not unfinished:
        raise GitImproveError(
            "there is no unfinished run to resume", hint="start one with `git improve run`"
        )
    if unfinished:
        name = _latest(unfinished, times)
        return Choice(name, runs[name]["base"], True)
    name = _new_name(repo, set(runs) | running(repo))
    _check_new(repo, name)
    return Choice(name, "", False, automatic=True)


def head(repo: Repo) -> str:
    commit = repo.head_commit()
    if commit is None:
        raise GitImproveError("the repository has no commit yet", hint="commit your code first")
    return str(commit.id)


def start_refs(name: str, base: str) -> list[tuple[str, str | None, str | None]]:
    """The ref moves that make a run exist: they land with its baseline record, all or none."""
    return [(refs.run_marker(name, "base"), base, None), (refs.run_branch(name), base, None)]


def reopen(repo: Repo, name: str) -> None:
    """`run --resume --run NAME` of a finished run: drop its stop marker."""
    with contextlib.suppress(KeyError):
        repo.raw.references.delete(refs.run_marker(name, "stop"))


# --- stopping ----------------------------------------------------------------------------------


def request_stop(repo: Repo, run: str | None = None) -> str:
    """Ask a run to stop after its current round; a run still measuring its baseline stops
    before its first round."""
    runs = list_runs(repo)
    live = running(repo)
    if run is None:
        times = start_times(repo)
        active = [r for r in live if r not in runs or "stop" not in runs[r]] or [
            r for r, m in runs.items() if "stop" not in m and r in times
        ]
        if not active:
            raise GitImproveError("no run is in progress", hint="see `git improve status`")
        run = _latest(active, times)
    if run not in runs and run not in live:
        raise GitImproveError(f"there is no run {run!r}", hint="see `git improve status`")
    target = repo.ref_target(refs.run_branch(run)) or runs.get(run, {}).get("base") or head(repo)
    with contextlib.suppress(RefMoved):
        update_refs(repo, [(refs.run_marker(run, "stop"), target, None)], f"gitimprove: stop {run}")
    return run


def mark_stopped(repo: Repo, name: str, base: str, reason: str) -> None:
    with contextlib.suppress(RefMoved):
        tip = repo.ref_target(refs.run_branch(name)) or base
        update_refs(
            repo,
            [(refs.run_marker(name, "stop"), tip, None)],
            f"gitimprove: run {name} stopped: {reason}",
        )


def stop_requested(repo: Repo, name: str) -> bool:
    return repo.ref_target(refs.run_marker(name, "stop")) is not None


# --- options across resumes ---------------------------------------------------------------------


def check_resume(opts: RunOptions, name: str, history: History) -> None:
    """A plain `run` that finds an unfinished run continues it as it was started: a different
    --goal needs --resume (which then replaces the goal)."""
    if history.baseline is None:
        return
    old_goal = str((history.baseline.options or {}).get("goal") or "")
    if opts.goal and opts.goal != old_goal and not opts.resume:
        raise GitImproveError(
            f"run {name!r} is unfinished and its goal is "
            + (repr(old_goal) if old_goal else "unset")
            + f"; a plain `run` continues it, so the new goal {opts.goal!r} was not used",
            hint=f"continue it with the new goal: `git improve run --resume --goal ...`; or finish it first (`git improve stop --run {name}`) and start a new run",
        )


def update_options(ctx: RunContext, history: History) -> None:
    """A resume that changes the run's options (more rounds, a new goal) records them on the
    baseline note, so the next resume goes on from here; keys it does not know are kept."""
    if history.baseline is None:
        return
    old = dict(history.baseline.options or {})
    new = {**old, **options_record(ctx.opts, ctx.iterations)}
    if old != new:
        experiments.record(
            ctx.repo, history.baseline.commit, {"options": new}, op="update", sign=True
        )
