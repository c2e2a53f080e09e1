"""A run's lifecycle: choose, start or resume, the options kept on the run, stop, summary.

A run is its markers (`refs/improve/runs/<run>/{base,stop}`), its branch `improve/<run>` and
its notes; nothing else. Everything here reads or moves those refs.
"""

from __future__ import annotations

import contextlib
import statistics
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
from gitimprove.state import experiments
from gitimprove.state.experiments import Experiment
from gitimprove.state.findings import Finding
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
        run = latest(repo, active)
    if run not in runs:
        raise GitImproveError(f"there is no run {run!r}", hint="see `git improve status`")
    target = repo.ref_target(refs.run_branch(run)) or runs[run]["base"]
    with contextlib.suppress(RefMoved):
        update_refs(repo, [(refs.run_marker(run, "stop"), target, None)], f"gitimprove: stop {run}")
    return run


def start_times(repo: Repo, names: list[str]) -> dict[str, str]:
    """When each run started: the time of its baseline record; a run that has none yet is the
    newest (it was started and stopped before its first record landed)."""
    times = dict.fromkeys(names, "~")
    for e in experiments.all_experiments(repo):
        if e.is_baseline and e.run in times:
            times[e.run] = min(times[e.run], e.ts or "~")
    return times


def latest(repo: Repo, names: list[str]) -> str:
    times = start_times(repo, names)
    return max(names, key=lambda r: (times[r], r))


def _new_name(repo: Repo, runs: dict[str, dict[str, str]]) -> str:
    now = utc_now()  # 2026-11-22T05:52:01.123456Z
    stamp = "run-" + now[:10].replace("-", "") + "-" + now[11:19].replace(":", "")
    name, n = stamp, 2
    while name in runs or repo.ref_target(refs.run_branch(name)) is not None:
        name, n = f"{stamp}-{n}", n + 1
    return name


def choose(repo: Repo, opts: RunOptions) -> tuple[str, str, bool]:
    """(name, base, resuming): the named run, the latest unfinished one, or a new name.
    Nothing is written here: a finished run is reopened only once it starts for real."""
    runs = list_runs(repo)
    unfinished = [r for r, m in runs.items() if "base" in m and "stop" not in m]
    name = opts.run
    if name is not None:
        refs.check_run_name(name)
        if name in runs and "base" in runs[name]:
            if "stop" in runs[name] and not opts.resume:
                raise GitImproveError(
                    f"run {name!r} has finished",
                    hint=f"continue it with `git improve run --resume --run {name}`, or choose a new --run name",
                )
            return name, runs[name]["base"], True
        if opts.resume:
            known = ", ".join(sorted(runs)) or "none yet"
            raise GitImproveError(
                f"there is no run {name!r} to resume (runs: {known})",
                hint="see `git improve status`, or start it without --resume",
            )
        return name, "", False
    if opts.resume and not unfinished:
        raise GitImproveError(
            "there is no unfinished run to resume", hint="start one with `git improve run`"
        )
    if unfinished:
        name = latest(repo, unfinished)
        return name, runs[name]["base"], True
    return _new_name(repo, runs), "", False


def check_resume(opts: RunOptions, name: str, history: History) -> None:
    """A plain `run` that finds an unfinished run continues it as it was started: a different
    --goal needs --resume (which then replaces the goal)."""
    saved = history.baseline.options if history.baseline else None
    old_goal = str((saved or {}).get("goal") or "")
    if opts.goal and opts.goal != old_goal and not opts.resume:
        raise GitImproveError(
            f"run {name!r} is unfinished and was started with "
            + (f"the goal {old_goal!r}" if old_goal else "no goal")
            + f"; a plain `run` continues it, so the new goal {opts.goal!r} was not used",
            hint=f"continue it with the new goal: `git improve run --resume --goal ...`; or finish it first (`git improve stop --run {name}`) and start a new run",
        )


def head(repo: Repo) -> str:
    commit = repo.head_commit()
    if commit is None:
        raise GitImproveError("the repository has no commit yet", hint="commit your code first")
    return str(commit.id)


def start(repo: Repo, name: str, base: str) -> None:
    """Write the run's markers at `base`: the run exists from here on."""
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


def reopen(repo: Repo, name: str) -> None:
    """`run --resume --run NAME` of a finished run: drop its stop marker."""
    with contextlib.suppress(KeyError):
        repo.raw.references.delete(refs.run_marker(name, "stop"))


def phantoms(repo: Repo) -> list[str]:
    """Runs whose markers exist but that never recorded anything (left by older versions
    when a run failed before its first record), and whose branch never moved."""
    runs = list_runs(repo)
    recorded = {e.run for e in experiments.all_experiments(repo) if e.run}
    out = []
    for name, m in sorted(runs.items()):
        base = m.get("base")
        branch = repo.ref_target(refs.run_branch(name))
        if name not in recorded and base and branch in (None, base):
            out.append(name)
    return out


def remove_phantom(repo: Repo, name: str) -> bool:
    """Remove a phantom run's markers and branch; False when it is in use (its lock is held)."""
    from filelock import Timeout

    runs = list_runs(repo)
    try:
        with repo.lock(f"run-{name}", timeout=0):
            moves = [(refs.run_marker(name, k), None, v) for k, v in runs.get(name, {}).items()]
            branch = repo.ref_target(refs.run_branch(name))
            if branch is not None:
                moves.append((refs.run_branch(name), None, branch))
            with contextlib.suppress(RefMoved):
                update_refs(repo, moves, f"gitimprove: remove phantom run {name}")
                return True
    except Timeout:
        pass
    return False


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


@dataclass(frozen=True)
class Calibration:
    samples: list[float]
    message: str  # the noise floor, in words
    started: str


def check_guard(ctx: RunContext) -> dict[str, Any]:
    """Run the guard once on the run's base: a guard that fails on unchanged code (or does not
    exist) would fail every candidate, so the run does not start."""
    if not ctx.cfg.guard_command.strip():
        return {"status": "skipped"}
    result = ctx.guard(ctx.incumbent_path(ctx.base), keep_tail=True)
    if result["status"] != "pass":
        code = result.get("exit_code")
        why = "timed out" if code is None else f"exited with {code}"
        raise GitImproveError(
            f"the guard fails on the run's base {ctx.base[:10]} ({why}), so it would fail every candidate:\n"
            + str(result.get("tail") or "(no output)"),
            hint="fix [guard] command so it passes on the unchanged code, then run again",
        )
    return result


def calibrate(ctx: RunContext) -> Calibration:
    """Repeated runs of the unchanged base teach the rule the noise; nothing is written."""
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
    return Calibration(raw, floor, started)


def record_baseline(ctx: RunContext, cal: Calibration, guard: dict[str, Any]) -> None:
    """The run's first record. The baseline is a commit of its own (the base's tree, the base
    as parent), so a second run from the same base, or init's baseline, keeps its own record."""
    raw = cal.samples
    note = {
        "run": ctx.name,
        "iteration": 0,
        "candidate": 0,
        "status": "baseline",
        "description": "baseline",
        "reason": f"baseline: median of {len(raw)} runs; {cal.message}",
        "metric": metric_block(ctx.cfg, raw),
        "tree": ctx.base_tree,
        "harness": {**harness(ctx.cfg), "sealed_tree": ctx.sealed_tree},
        "options": options_record(ctx.opts, ctx.iterations),
        "started": cal.started,
        "finished": utc_now(),
    }
    if guard.get("status") != "skipped":
        note["guard"] = {k: v for k, v in guard.items() if k != "tail"}
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
            "message": cal.message,
            "guard": guard,
        }
    )


def update_options(ctx: RunContext, history: History) -> None:
    """A resume that changes the run's options (more rounds, a new goal) records them on the
    baseline note, so the next resume goes on from here."""
    if history.baseline is None:
        return
    new = options_record(ctx.opts, ctx.iterations)
    if dict(history.baseline.options or {}) != new:
        experiments.record(ctx.repo, history.baseline.commit, {"options": new}, op="update")


def check_phantoms(repo: Repo, repair: bool) -> list[Finding]:
    """doctor: runs left behind by a failed start (older versions wrote markers first)."""
    found = phantoms(repo)
    if not found:
        return [Finding("runs", True, "no phantom runs")]
    f = Finding(
        "runs",
        False,
        f"{len(found)} run(s) that never recorded anything: " + ", ".join(found),
        "git improve doctor --repair removes their markers and branches",
    )
    if repair:
        f.repaired = all(remove_phantom(repo, name) for name in found)
    return [f]
