"""A run's lifecycle: choose, start or resume, the options kept on the run, stop, summary.

A run is its markers (`refs/improve/runs/<run>/{base,stop}`), its branch `improve/<run>` and
its notes; nothing else. Everything here reads or moves those refs.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from gitimprove import config as config_mod
from gitimprove.config import Config
from gitimprove.errors import GitImproveError
from gitimprove.git import refs, trees
from gitimprove.git.repo import RefMoved, Repo, update_refs
from gitimprove.loop.context import MetricFailed, RunContext
from gitimprove.loop.history import History
from gitimprove.loop.ledger import record
from gitimprove.loop.measure import harness, metric_block
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


def summarize(name: str, base: str, history: History, reason: str, direction: str) -> RunSummary:
    best = history.best(direction)
    best_commit = next(
        (e.commit for e in history.records if e.kept and e.value == best and best is not None),
        None,
    )
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
    return config_mod.load_text(data.decode("utf-8"), overrides)


def request_stop(repo: Repo, run: str | None = None) -> str:
    runs = list_runs(repo)
    if run is None:
        active = [r for r, m in runs.items() if "stop" not in m]
        if not active:
            raise GitImproveError("no run is in progress", hint="see `git improve status`")
        run = sorted(active)[-1]
    if run not in runs:
        raise GitImproveError(f"there is no run {run!r}", hint="see `git improve status`")
    target = repo.ref_target(refs.run_branch(run)) or runs[run]["base"]
    with contextlib.suppress(RefMoved):
        update_refs(repo, [(refs.run_marker(run, "stop"), target, None)], f"gitimprove: stop {run}")
    return run


def choose(repo: Repo, opts: RunOptions) -> tuple[str, str, bool]:
    """(name, base, resuming): the named run, the latest unfinished one, or a new name."""
    runs = list_runs(repo)
    unfinished = sorted(r for r, m in runs.items() if "base" in m and "stop" not in m)
    name = opts.run
    if name is not None:
        refs.check_run_name(name)
        if name in runs:
            if "stop" in runs[name]:
                if not opts.resume:
                    raise GitImproveError(
                        f"run {name!r} has finished",
                        hint=f"continue it with `git improve run --resume --run {name}`, or choose a new --run name",
                    )
                repo.raw.references.delete(refs.run_marker(name, "stop"))
            return name, runs[name]["base"], True
        return name, "", False
    if opts.resume and not unfinished:
        raise GitImproveError(
            "there is no unfinished run to resume", hint="start one with `git improve run`"
        )
    if unfinished:
        return unfinished[-1], runs[unfinished[-1]]["base"], True
    return time.strftime("run-%Y%m%d-%H%M%S", time.gmtime()), "", False


def start(repo: Repo, name: str) -> str:
    """Write the run's markers at HEAD; returns the base commit."""
    head = repo.head_commit()
    if head is None:
        raise GitImproveError("the repository has no commit yet", hint="commit your code first")
    base = str(head.id)
    try:
        update_refs(
            repo,
            [(refs.run_marker(name, "base"), base, None), (refs.run_branch(name), base, None)],
            f"gitimprove: start run {name}",
        )
    except RefMoved:
        raise GitImproveError(
            f"the branch improve/{name} already exists", hint="choose another --run name"
        ) from None
    return base


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


def calibrate(ctx: RunContext) -> None:
    """The run's first record: repeated runs of the unchanged base teach the rule the noise.

    The baseline is a commit of its own (the base's tree, the base as parent), so a second run
    from the same base, or init's baseline, keeps its own record."""
    path = ctx.incumbent_path(ctx.base)
    started = utc_now()
    try:
        raw = ctx.rule.calibrate(lambda: ctx.metric(path))
    except MetricFailed as exc:
        raise GitImproveError(
            f"the metric fails on the run's base {ctx.base[:10]}: {exc.run.error}\n{exc.run.tail}",
            hint="fix [metric] command so it prints a number on the unchanged code",
        ) from None
    pct = ctx.rule.noise_pct()
    sigma, _ = ctx.rule.sigma()
    if sigma == 0:
        floor = "noise: none (the metric repeated exactly); each candidate is decided after one run"
    elif pct is not None:
        floor = f"noise ≈ {pct:.2g}% per run; improvements of about {1.1 * pct:.2g}% and larger can be confirmed"
    else:
        floor = f"noise ≈ {sigma:.3g} per run (metric units)"
    note = {
        "run": ctx.name,
        "iteration": 0,
        "candidate": 0,
        "status": "baseline",
        "description": "baseline",
        "reason": f"baseline: median of {len(raw)} runs; {floor}",
        "metric": metric_block(ctx.cfg, raw),
        "tree": ctx.base_tree,
        "harness": {**harness(ctx.cfg), "sealed_tree": ctx.sealed_tree},
        "options": options_record(ctx.opts, ctx.iterations),
        "started": started,
        "finished": utc_now(),
    }
    with ctx.shared.lock:
        baseline = ctx.repo.create_commit(
            ctx.repo.raw[ctx.base_tree].id,
            f"experiment(baseline): run {ctx.name}\n\nRun: {ctx.name}\nIteration: 0\n",
            [ctx.base],
        )
    record(ctx, baseline, note, keep=False)
    ctx.emit(
        {
            "event": "noise",
            "run": ctx.name,
            "baseline": statistics.median(raw),
            "samples": raw,
            "message": floor,
        }
    )
