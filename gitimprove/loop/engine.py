"""The improvement loop (DESIGN §7): review → modify → commit → verify → guard → decide → log.

The engine never prints: it reports each step through `emit(event)` and returns a summary.
All state lives in refs and notes, so a run killed at any point continues with `--resume`:
an attempt without a note is re-run under the same iteration number.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitimprove import config as config_mod
from gitimprove.agents import base as agents
from gitimprove.config import Config
from gitimprove.errors import GitImproveError
from gitimprove.git import archive, memory, notes, refs, trees
from gitimprove.git.repo import RefMoved, Repo, cas_loop, update_refs
from gitimprove.git.workspace import (
    agent_workspace,
    checkout,
    hash_workspace,
    remove_workspace,
    work_root,
)
from gitimprove.loop import program, scope
from gitimprove.loop.decide import AdaptiveRule
from gitimprove.loop.measure import harness, metric_block
from gitimprove.loop.metrics import MetricRun, run_metric
from gitimprove.state import experiments
from gitimprove.state.records import make_line
from gitimprove.util import proc
from gitimprove.util.clock import utc_now

Event = dict[str, Any]
Emit = Callable[[Event], None]
KEEPS = ("keep", "keep-reworked")
CRASHES = ("crash", "timeout")


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
    rows: list[dict[str, Any]] = field(default_factory=list)


class _MetricFailed(Exception):
    def __init__(self, run: MetricRun) -> None:
        super().__init__(run.error)
        self.run = run


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


class Engine:
    def __init__(self, repo: Repo, opts: RunOptions, emit: Emit) -> None:
        if repo.work_tree is None:
            raise GitImproveError("a run needs a repository with a work tree")
        self.repo = repo
        self.opts = opts
        self.emit = emit
        self.overrides = repo.config_items("improve.")
        self.started = time.monotonic()
        self.checkouts = contextlib.ExitStack()
        self.inc_checkout: tuple[str, Path] | None = None
        self.lock = threading.RLock()  # pygit2 objects and shared state
        self.rule_lock = threading.Lock()  # one decision at a time
        self.agent_sem = threading.Semaphore(1)
        self.measure_sem = threading.Semaphore(1)
        self.running = 0
        self.round_cost = 0.0
        self.round_done = 0
        self.round_seconds = 0.0
        self.round_trees: dict[str, int] = {}
        self.spent = 0.0
        self.avg_cost: float | None = None
        self.avg_seconds: float | None = None

    # --- setting up -------------------------------------------------------------------------

    def _choose_run(self) -> tuple[str, str, bool]:
        runs = list_runs(self.repo)
        unfinished = sorted(r for r, m in runs.items() if "base" in m and "stop" not in m)
        name = self.opts.run
        if name is not None:
            refs.check_run_name(name)
            if name in runs:
                if "stop" in runs[name]:
                    if not self.opts.resume:
                        raise GitImproveError(
                            f"run {name!r} has finished",
                            hint=f"continue it with `git improve run --resume --run {name}`, or choose a new --run name",
                        )
                    self.repo.raw.references.delete(refs.run_marker(name, "stop"))
                return name, runs[name]["base"], True
            return name, "", False
        if self.opts.resume and not unfinished:
            raise GitImproveError(
                "there is no unfinished run to resume", hint="start one with `git improve run`"
            )
        if unfinished:
            return unfinished[-1], runs[unfinished[-1]]["base"], True
        return time.strftime("run-%Y%m%d-%H%M%S", time.gmtime()), "", False

    def _start_run(self, name: str) -> str:
        head = self.repo.head_commit()
        if head is None:
            raise GitImproveError("the repository has no commit yet", hint="commit your code first")
        base = str(head.id)
        try:
            update_refs(
                self.repo,
                [(refs.run_marker(name, "base"), base, None), (refs.run_branch(name), base, None)],
                f"gitimprove: start run {name}",
            )
        except RefMoved:
            raise GitImproveError(
                f"the branch improve/{name} already exists", hint="choose another --run name"
            ) from None
        return base

    # --- history ------------------------------------------------------------------------------

    def rows(self) -> list[dict[str, Any]]:
        out = []
        for exp in experiments.all_experiments(self.repo):
            if exp.state.get("run") == self.name:
                out.append({"commit": exp.commit, **exp.state})
        out.sort(
            key=lambda r: (
                r.get("iteration") if isinstance(r.get("iteration"), int) else -1,
                r.get("candidate") or 0,
            )
        )
        return out

    def _rebuild_rule(self, rows: list[dict[str, Any]]) -> None:
        rule = self.rule
        for row in rows:
            metric = row.get("metric") or {}
            samples = [
                rule.tx(v)
                for v in metric.get("samples") or []
                if (isinstance(v, int | float) and v > 0) or not rule.relative
            ]
            if row.get("status") == "baseline":
                for a, b in itertools.pairwise(samples):
                    rule._note_pair(a, b)
                rule.window = samples[-rule.W :] if rule.W else []
                rule.last_base = samples[-1] if samples else None
                continue
            if "decision" not in row:
                continue
            for a, b in itertools.pairwise(samples):
                rule._note_pair(a, b)
            fresh = [rule.tx(v) for v in metric.get("incumbent_samples") or []]
            for x in fresh:
                if rule.last_base is not None:
                    rule._note_pair(rule.last_base, x)
                rule.last_base = x
            rule.since_refresh = 0 if fresh else rule.since_refresh + 1
            if row.get("status") in KEEPS:
                rule.window, rule.last_base = [], None
            else:
                w = rule.window[: row["decision"].get("window_used", len(rule.window))] + fresh
                rule.window = w[-rule.W :] if rule.W else []

    # --- measuring ----------------------------------------------------------------------------

    def _metric(self, path: Path) -> float:
        with self.measure_sem:
            got = self._run_metric(path)
        if got.status != "ok" or got.value is None:
            raise _MetricFailed(got)
        return got.value

    def _run_metric(self, path: Path) -> MetricRun:
        return run_metric(
            self.cfg.metric_command,
            path,
            timeout=float(self.cfg.get("metric", "timeout")),
            spec=str(self.cfg.get("metric", "extract")),
            name=self.cfg.metric_name,
        )

    def _incumbent_path(self, commit: str) -> Path:
        with self.lock:
            if self.inc_checkout and self.inc_checkout[0] == commit:
                return self.inc_checkout[1]
            self.checkouts.close()
            self.checkouts = contextlib.ExitStack()
            path = self.checkouts.enter_context(
                checkout(self.repo, commit, f"{self.name}-incumbent")
            )
            self.inc_checkout = (commit, path)
            return path

    def _guard(self, path: Path) -> dict[str, Any]:
        if not self.cfg.guard_command.strip():
            return {"status": "skipped"}
        res = proc.run(
            self.cfg.guard_command,
            cwd=path,
            shell=True,
            timeout=float(self.cfg.get("guard", "timeout")),
            env=proc.clean_env({"GITIMPROVE_CHILD": "1"}),
        )
        out: dict[str, Any] = {
            "status": "pass" if res.ok else "fail",
            "exit_code": None if res.timed_out else res.returncode,
        }
        if not res.ok:
            out["tail"] = res.tail(1500)
        return out

    # --- the run ---------------------------------------------------------------------------

    def run(self) -> RunSummary:
        repo = self.repo
        name, base, resuming = self._choose_run()
        self.name = name
        with repo.lock(f"run-{name}", timeout=1):
            if not resuming:
                base = self._start_run(name)
            self.base = base
            self.cfg = config_at(repo, base, self.overrides)
            rows = self.rows()
            self._restore_options(rows)
            agent_name = self.opts.agent or str(self.cfg.get("agent", "name"))
            self.agent = agents.make(
                agent_name,
                self.opts.agent_command
                if self.opts.agent_command is not None
                else str(self.cfg.get("agent", "command")),
            )
            self.agent.check()
            confidence = 0.90 if self.opts.explore else float(self.cfg.get("metric", "confidence"))
            self.confidence = confidence
            self.rule = AdaptiveRule(
                direction=self.cfg.direction,
                min_delta=self.cfg.get("metric", "min_delta"),
                max_runs=int(self.cfg.get("metric", "max_runs")),
                confidence=confidence,
                window=0 if self.opts.strict_ab else 12,
            )
            for stale in sorted(work_root(repo).glob(f"{name}-*")):
                if stale.is_dir():
                    remove_workspace(stale)
                elif stale.name.endswith(".prompt.md"):
                    stale.unlink(missing_ok=True)
            self.base_tree = trees.tree_of(repo, base)
            self.sealed = list(self.cfg.get("scope", "sealed"))
            self.mutable = list(self.cfg.get("scope", "mutable"))
            self.sealed_tree = trees.subset_tree(
                repo, self.base_tree, lambda p: bool(scope.sealed_paths([p], self.sealed))
            )
            self.iterations = self.opts.iterations or int(self.cfg.get("loop", "iterations"))
            self.candidates = self.opts.candidates or int(self.cfg.get("loop", "candidates"))
            if self.candidates > len(agents.FAMILIES) - 1:
                raise GitImproveError(
                    f"{self.candidates} candidates per round is more than the {len(agents.FAMILIES) - 1} approach families a round can give out",
                    hint=f"use --candidates {len(agents.FAMILIES) - 1} or fewer",
                )
            self.jobs = self.opts.jobs or int(self.cfg.get("loop", "jobs"))
            self.agent_sem = threading.Semaphore(max(1, self.jobs))
            self.measure_sem = threading.Semaphore(max(1, self.opts.measure_jobs))
            rows = self.rows()
            self.emit(
                {
                    "event": "start",
                    "run": name,
                    "base": base,
                    "resumed": resuming,
                    "agent": agent_name,
                    "iterations": self.iterations,
                }
            )
            try:
                if not any(r.get("status") == "baseline" for r in rows):
                    self._calibrate()
                    rows = self.rows()
                else:
                    self._rebuild_rule(rows)
                reason = self._loop(rows)
            finally:
                self.checkouts.close()
            with contextlib.suppress(RefMoved):
                tip = repo.ref_target(refs.run_branch(name)) or base
                update_refs(
                    repo,
                    [(refs.run_marker(name, "stop"), tip, None)],
                    f"gitimprove: run {name} stopped: {reason}",
                )
            rows = self.rows()
            summary = self._summary(rows, reason)
            self.emit(
                {
                    "event": "stop",
                    "run": name,
                    "reason": reason,
                    "best": summary.best,
                    "baseline": summary.baseline,
                    "attempts": summary.attempts,
                    "keeps": summary.keeps,
                }
            )
            return summary

    def _calibrate(self) -> None:
        path = self._incumbent_path(self.base)
        started = utc_now()
        try:
            raw = self.rule.calibrate(lambda: self._metric(path))
        except _MetricFailed as exc:
            raise GitImproveError(
                f"the metric fails on the run's base {self.base[:10]}: {exc.run.error}\n{exc.run.tail}",
                hint="fix [metric] command so it prints a number on the unchanged code",
            ) from None
        pct = self.rule.noise_pct()
        sigma, _ = self.rule.sigma()
        if sigma == 0:
            floor = (
                "noise: none (the metric repeated exactly); each candidate is decided after one run"
            )
        elif pct is not None:
            floor = f"noise ≈ {pct:.2g}% per run; improvements of about {1.1 * pct:.2g}% and larger can be confirmed"
        else:
            floor = f"noise ≈ {sigma:.3g} per run (metric units)"
        value = statistics.median(raw)
        fields = {
            "run": self.name,
            "iteration": 0,
            "candidate": 0,
            "status": "baseline",
            "description": "baseline",
            "reason": f"baseline: median of {len(raw)} runs; {floor}",
            "metric": metric_block(self.cfg, raw),
            "tree": self.base_tree,
            "harness": {**harness(self.cfg), "sealed_tree": self.sealed_tree},
            "options": self._options_record(),
            "started": started,
            "finished": utc_now(),
        }
        # The run's baseline is a commit of its own (the base's tree, the base as parent): a
        # second run from the same base, or init's baseline, keeps its own record.
        with self.lock:
            baseline = self.repo.create_commit(
                self.repo.raw[self.base_tree].id,
                f"experiment(baseline): run {self.name}\n\nRun: {self.name}\nIteration: 0\n",
                [self.base],
            )
        self._log(baseline, fields, keep=False)
        self.emit(
            {
                "event": "noise",
                "run": self.name,
                "baseline": value,
                "samples": raw,
                "message": floor,
            }
        )

    _PERSISTED = (
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

    def _options_record(self) -> dict[str, Any]:
        rec = {k: getattr(self.opts, k) for k in self._PERSISTED}
        rec["iterations"] = self.iterations
        return {k: v for k, v in rec.items() if v not in (None, "", False)}

    def _restore_options(self, rows: list[dict[str, Any]]) -> None:
        """A resumed run keeps the options it was started with, unless given again."""
        saved = next(
            (
                r.get("options")
                for r in rows
                if r.get("status") == "baseline" and isinstance(r.get("options"), dict)
            ),
            None,
        )
        if not saved:
            return
        defaults = RunOptions()
        for key in self._PERSISTED:
            if key in saved and getattr(self.opts, key) == getattr(defaults, key):
                setattr(self.opts, key, saved[key])

    def _stop_reason(self, rows: list[dict[str, Any]], iteration: int) -> str | None:
        stop_ref = self.repo.ref_target(refs.run_marker(self.name, "stop"))
        if stop_ref:
            return "stop requested (git improve stop)"
        if iteration > self.iterations:
            return f"iterations reached ({self.iterations})"
        rounds = _rounds(rows)
        best = self._best(rows)
        target = (
            self.opts.target if self.opts.target is not None else self.cfg.get("loop", "target")
        )
        if (
            target is not None
            and best is not None
            and (best <= target if self.cfg.direction == "lower" else best >= target)
        ):
            return f"target reached ({best:.6g})"
        since_keep = 0
        for rnd in reversed(rounds):
            if any(r.get("status") in KEEPS for r in rnd):
                break
            since_keep += 1
        if since_keep >= int(self.cfg.get("loop", "plateau_patience")):
            return f"plateau: no keep in {since_keep} rounds"
        crashes = 0
        for rnd in reversed(rounds):
            if not all(r.get("status") in CRASHES for r in rnd):
                break
            crashes += 1
        if crashes >= int(self.cfg.get("loop", "circuit_breaker")):
            return f"circuit breaker: {crashes} rounds in a row crashed"
        spent = sum(float((r.get("agent") or {}).get("cost_usd") or 0.0) for r in rows)
        cap = (
            self.opts.max_cost
            if self.opts.max_cost is not None
            else self.cfg.get("loop", "max_cost_usd")
        )
        if cap is not None and spent >= cap:
            return f"cost cap reached (${spent:.2f} of ${cap:.2f})"
        max_time = (
            self.opts.max_time
            if self.opts.max_time is not None
            else float(self.cfg.get("loop", "max_time"))
        )
        if time.monotonic() - self.started >= max_time:
            return f"time cap reached ({max_time:.0f}s)"
        return None

    def _best(self, rows: list[dict[str, Any]]) -> float | None:
        vals = [
            r["metric"]["value"]
            for r in rows
            if r.get("status") in (*KEEPS, "baseline")
            and isinstance((r.get("metric") or {}).get("value"), int | float)
        ]
        if not vals:
            return None
        return float(min(vals) if self.cfg.direction == "lower" else max(vals))

    def escalation(self, rows: list[dict[str, Any]]) -> int:
        """Rounds without a keep since the last keep, over stuck_after, capped at 5."""
        n = 0
        for rnd in reversed(_rounds(rows)):
            if any(r.get("status") in KEEPS for r in rnd):
                break
            n += 1
        return min(5, n // int(self.cfg.get("loop", "stuck_after")))

    def _loop(self, rows: list[dict[str, Any]]) -> str:
        while True:
            done: list[int] = [
                int(r["iteration"]) for r in rows if isinstance(r.get("iteration"), int)
            ]
            last = max(done, default=0)
            unfinished = any(
                r.get("iteration") == last and r.get("stage") == "evaluated" for r in rows
            )
            iteration = last if unfinished else last + 1
            reason = None if unfinished else self._stop_reason(rows, iteration)
            if reason:
                return reason
            level = self.escalation(rows)
            if level >= 5:
                self._diagnose(rows)
                return "stuck: escalation level 5 reached; a diagnosis was written to the memory branch"
            incumbent = self.repo.ref_target(refs.run_branch(self.name))
            assert incumbent is not None
            if self.candidates == 1 and not unfinished:
                self.round_trees = {}
                event = self._attempt(iteration, 0, incumbent, rows, level)
                assert event is not None
                rows = self.rows()
                self.emit(event)
            else:
                stop = self._round(iteration, incumbent, rows, level)
                rows = self.rows()
                if stop:
                    return stop
            if iteration % 10 == 0:
                self.emit(self._summary_event(rows))

    def _summary_event(self, rows: list[dict[str, Any]]) -> Event:
        s = self._summary(rows, "")
        return {
            "event": "summary",
            "run": self.name,
            "attempts": s.attempts,
            "keeps": s.keeps,
            "baseline": s.baseline,
            "best": s.best,
        }

    def _summary(self, rows: list[dict[str, Any]], reason: str) -> RunSummary:
        base_rows = [r for r in rows if r.get("status") == "baseline"]
        baseline = base_rows[0]["metric"]["value"] if base_rows else None
        best = self._best(rows)
        best_commit = next(
            (
                r["commit"]
                for r in rows
                if r.get("status") in (*KEEPS, "baseline")
                and (r.get("metric") or {}).get("value") == best
            ),
            None,
        )
        attempts = [r for r in rows if r.get("status") != "baseline"]
        return RunSummary(
            self.name,
            self.base,
            reason,
            baseline,
            best,
            best_commit,
            len(attempts),
            sum(1 for r in attempts if r.get("status") in KEEPS),
            rows,
        )

    def _diagnose(self, rows: list[dict[str, Any]]) -> None:
        recent = rows[-25:]
        counts: dict[str, int] = {}
        for r in recent:
            counts[str(r.get("status"))] = counts.get(str(r.get("status")), 0) + 1
        body = "\n".join(
            [
                "+++",
                'kind = "proposal"',
                f'source = "run {self.name}"',
                f'created = "{utc_now()}"',
                "+++",
                f"# Run {self.name} is stuck",
                "",
                f"{len(recent)} attempts without a keep. Outcomes: "
                + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
                + ".",
                "",
                "Approaches tried: "
                + ", ".join(sorted({str(r.get("approach") or "other") for r in recent}))
                + ".",
                "",
                "Consider: a less noisy metric (more iterations inside the benchmark), a wider scope, or a new goal.",
                "",
            ]
        )
        memory.add_entries(
            self.repo,
            {memory.entry_name("proposals", "md"): body},
            message=f"gitimprove: diagnosis of stuck run {self.name}",
        )

    # --- one attempt --------------------------------------------------------------------------

    def _program(
        self,
        rows: list[dict[str, Any]],
        level: int,
        family: str | None,
        rework_tail: str | None,
        history: str | None = None,
    ) -> str:
        learnings = [
            data.decode("utf-8", errors="replace").strip().splitlines()[-1]
            for _, data in memory.iter_entries(self.repo, "learnings/")
            if data.strip()
        ]
        ideas = []
        for _, data in memory.iter_entries(self.repo, "ideas/"):
            with contextlib.suppress(ValueError):
                idea = json.loads(data)
                if isinstance(idea, dict) and idea.get("text"):
                    ideas.append(str(idea["text"]))
        return program.build(
            goal=self.opts.goal,
            metric_name=self.cfg.metric_name,
            direction=self.cfg.direction,
            metric_command=self.cfg.metric_command,
            mutable=self.mutable,
            sealed=self.sealed,
            rows=rows,
            learnings=learnings[-10:],
            ideas=ideas[-10:],
            escalation=level,
            family=family,
            rework_tail=rework_tail,
            round_history=history,
        )

    def _attempt(
        self,
        iteration: int,
        candidate: int,
        incumbent: str,
        rows: list[dict[str, Any]],
        level: int,
        family: str | None = None,
        history: str | None = None,
    ) -> Event | None:
        """One candidate, start to finish. In a tournament (family given) its note is written
        with stage "evaluated" and the round decides later; returns None when the budget left
        cannot cover launching it."""
        repo = self.repo
        tournament = family is not None
        ws_name = f"{self.name}-{iteration}-{candidate}"
        prompt = work_root(repo) / f"{ws_name}.prompt.md"
        with self.lock:
            inc_tree = trees.tree_of(repo, incumbent)
        measured_trees = {r.get("tree") for r in rows if r.get("tree")}
        started = utc_now()
        agent_timeout = float(self.cfg.get("agent", "timeout"))
        fields: dict[str, Any] = {
            "run": self.name,
            "iteration": iteration,
            "candidate": candidate,
            "parent": incumbent,
            "escalation": level,
            "started": started,
            "harness": {**harness(self.cfg), "sealed_tree": self.sealed_tree},
        }
        if tournament:
            fields.update(family=family, round=iteration, stage="evaluated")
        return self._attempt_body(
            iteration,
            candidate,
            incumbent,
            rows,
            level,
            family,
            history,
            ws_name,
            prompt,
            inc_tree,
            measured_trees,
            agent_timeout,
            fields,
        )

    def _attempt_body(
        self,
        iteration: int,
        candidate: int,
        incumbent: str,
        rows: list[dict[str, Any]],
        level: int,
        family: str | None,
        history: str | None,
        ws_name: str,
        prompt: Path,
        inc_tree: str,
        measured_trees: set[Any],
        agent_timeout: float,
        fields: dict[str, Any],
    ) -> Event | None:
        repo = self.repo
        tournament = family is not None
        guard_history: list[dict[str, Any]] = []
        rework = 0
        rework_tail: str | None = None
        total_cost = 0.0
        try:
            with agent_workspace(repo, incumbent, ws_name) as ws, _removing(prompt):
                while True:
                    with self.lock:
                        text = self._program(rows, level, family, rework_tail, history)
                    prompt.write_text(text, encoding="utf-8")
                    task = agents.AgentTask(
                        prompt,
                        self.name,
                        iteration,
                        candidate,
                        seed=self.opts.seed,
                        family=family,
                        rework_tail=rework_tail,
                        sealed=tuple(self.sealed),
                        mutable=tuple(self.mutable),
                    )
                    with self.agent_sem:  # the agent slot is held only while an agent works
                        if rework == 0:
                            if tournament and not self._can_launch():
                                return None
                            fields["started"] = utc_now()
                        with self.lock:
                            self.running += 1
                        try:
                            result = self.agent.run(task, ws, agent_timeout)
                        finally:
                            with self.lock:
                                self.running -= 1
                                self.round_done += 1 if rework == 0 else 0
                                self.round_seconds += (
                                    result.seconds if "result" in locals() else 0.0
                                )
                    total_cost += result.cost_usd or 0.0
                    with self.lock:
                        self.round_cost += result.cost_usd or 0.0
                    agent_rec = result.record(self.agent.name, rework)
                    if total_cost:
                        agent_rec["cost_usd"] = round(total_cost, 6)
                    fields["agent"] = agent_rec
                    for key in ("description", "hypothesis", "approach"):
                        value = getattr(result, key)
                        if value:
                            fields[key] = value
                    if tournament and result.approach and result.approach != family:
                        fields["family_ignored"] = True
                    with self.lock:
                        tree = hash_workspace(repo, ws)
                        fields["tree"] = tree
                        status, reason = self._precheck(
                            result, tree, inc_tree, measured_trees, candidate
                        )
                        commit = self._commit(tree, incumbent, fields)
                    if status is not None:
                        fields.update(status=status, reason=reason)
                        if result.tail and status in CRASHES:
                            fields["agent_tail"] = result.tail[-1500:]
                        return self._log(commit, fields, keep=False)
                    with contextlib.ExitStack() as stack:
                        with self.lock:
                            mpath = stack.enter_context(
                                checkout(repo, commit, f"{ws_name}-measure")
                            )
                        try:
                            first = self._metric(mpath)
                        except _MetricFailed as exc:
                            status = exc.run.status if exc.run.status != "ok" else "metric-error"
                            fields.update(
                                status=status,
                                reason=f"{status}: the metric {exc.run.error}",
                                metric_tail=exc.run.tail[-1500:],
                            )
                            return self._log(commit, fields, keep=False)
                        guard = self._guard(mpath)
                        guard_history.append({k: v for k, v in guard.items() if k != "tail"})
                        if guard["status"] == "fail":
                            if rework < int(self.cfg.get("guard", "rework")):
                                rework += 1
                                rework_tail = str(guard.get("tail", ""))
                                with self.lock:
                                    archive.append(
                                        repo,
                                        [commit],
                                        f"gitimprove: {self.name} iteration {iteration} guard failed; reworking",
                                    )
                                continue
                            fields.update(
                                status="guard-fail",
                                guard={**guard, "history": guard_history},
                                reason=f"guard failed (exit {guard.get('exit_code')}) after {rework} rework(s)",
                            )
                            return self._log(commit, fields, keep=False)
                        fields["guard"] = {**guard, "history": guard_history} if rework else guard
                        return self._decide(
                            commit, mpath, incumbent, first, fields, rework, tournament
                        )
        except _MetricFailed as exc:  # the incumbent stopped measuring
            prompt.unlink(missing_ok=True)
            raise GitImproveError(
                f"the incumbent {incumbent[:10]} no longer measures: {exc.run.error}",
                hint="check the machine, then `git improve run --resume`",
            ) from None

    # --- tournaments -----------------------------------------------------------------------------

    def families(self, rows: list[dict[str, Any]], iteration: int) -> list[str]:
        """K different approach families; never the one that won the last 3 rounds in a row."""
        winners = []
        for rnd in _rounds(rows):
            won = [r for r in rnd if r.get("status") in KEEPS]
            winners.append(str(won[0].get("family") or won[0].get("approach") or "") if won else "")
        banned = (
            winners[-1]
            if len(winners) >= 3 and winners[-1] and len(set(winners[-3:])) == 1
            else None
        )
        allowed = [f for f in agents.FAMILIES if f != banned]
        start = (iteration * self.candidates) % len(allowed)
        return [allowed[(start + i) % len(allowed)] for i in range(self.candidates)]

    @staticmethod
    def round_history(rows: list[dict[str, Any]], last: int = 5) -> str:
        lines = []
        for rnd in _rounds(rows)[-last:]:
            parts = []
            for r in sorted(rnd, key=lambda r: r.get("candidate") or 0):
                fam = r.get("family") or r.get("approach") or "other"
                word = (
                    "won"
                    if r.get("status") in KEEPS
                    else ("crashed" if r.get("status") in CRASHES else "lost")
                )
                parts.append(f"{fam} {word} ({r.get('status')}: {r.get('description') or '-'})")
            lines.append(f"- round {rnd[0].get('iteration')}: " + "; ".join(parts))
        return "\n".join(lines) or "- (no earlier rounds)"

    def _can_launch(self) -> bool:
        """Launch another candidate only if the budget left can cover one more."""
        with self.lock:
            per = self.avg_cost
            if per is None and self.round_done and self.round_cost > 0:
                per = self.round_cost / self.round_done
            cap = (
                self.opts.max_cost
                if self.opts.max_cost is not None
                else self.cfg.get("loop", "max_cost_usd")
            )
            if (
                cap is not None
                and per is not None
                and self.spent + self.round_cost + (self.running + 1) * per > cap
            ):
                return False
            max_time = (
                self.opts.max_time
                if self.opts.max_time is not None
                else float(self.cfg.get("loop", "max_time"))
            )
            dur = self.avg_seconds
            if dur is None and self.round_done:
                dur = self.round_seconds / self.round_done
            elapsed = time.monotonic() - self.started
            return not (dur is not None and elapsed + dur > max_time)

    def _round(
        self, iteration: int, incumbent: str, rows: list[dict[str, Any]], level: int
    ) -> str | None:
        """Run one tournament round; returns a stop reason when no candidate could be launched."""
        finished = {
            int(r.get("candidate") or 0): r for r in rows if r.get("iteration") == iteration
        }
        families = self.families([r for r in rows if r.get("iteration") != iteration], iteration)
        history = self.round_history(rows)
        attempts = [
            r
            for r in rows
            if r.get("status") != "baseline" and (r.get("agent") or {}).get("seconds") is not None
        ]
        costs = [float((r.get("agent") or {}).get("cost_usd") or 0.0) for r in attempts]
        self.spent = sum(costs)
        self.avg_cost = (sum(costs) / len(costs)) if costs and sum(costs) > 0 else None
        self.avg_seconds = (
            (sum(float(r["agent"]["seconds"]) for r in attempts) / len(attempts))
            if attempts
            else None
        )
        self.round_cost = 0.0
        self.round_done = 0
        self.round_seconds = 0.0
        self.round_trees = {
            str(r["tree"]): int(r.get("candidate") or 0) for r in finished.values() if r.get("tree")
        }
        self._incumbent_path(incumbent)
        todo = [c for c in range(self.candidates) if c not in finished]
        with ThreadPoolExecutor(max_workers=max(1, len(todo))) as pool:
            futures = {
                c: pool.submit(
                    self._attempt, iteration, c, incumbent, rows, level, families[c], history
                )
                for c in todo
            }
            for fut in futures.values():
                event = fut.result()
                if event is not None:
                    self.emit(event)
        cand_rows = [r for r in self.rows() if r.get("iteration") == iteration]
        if not cand_rows:
            return "budget: what is left of the cost or time cap cannot cover another candidate"
        self.emit(self._finalize_round(iteration, incumbent, cand_rows))
        return None

    def _confirm(self, winner: str, incumbent: str) -> tuple[bool, str, dict[str, Any]]:
        """Measure the winner once more against fresh runs of the incumbent (NOISE.md)."""
        rule = AdaptiveRule(
            direction=self.cfg.direction,
            min_delta=self.cfg.get("metric", "min_delta"),
            max_runs=int(self.cfg.get("metric", "max_runs")),
            confidence=self.confidence,
            window=0,
        )
        rule.diffs.extend(self.rule.diffs)
        inc_path = self._incumbent_path(incumbent)
        with contextlib.ExitStack() as stack:
            with self.lock:
                wpath = stack.enter_context(checkout(self.repo, winner, f"{self.name}-confirm"))
            try:
                with self.rule_lock:
                    out = rule.decide(lambda: self._metric(inc_path), lambda: self._metric(wpath))
            except _MetricFailed as exc:
                return False, f"the confirmation run failed: {exc.run.error}", {}
        record = {
            "runs": out.runs,
            "keep": out.keep,
            "gain": out.delta,
            "samples": out.candidate,
            "incumbent_samples": out.incumbent,
        }
        return out.keep, rule.sentence(out, self.confidence), record

    def _finalize_round(
        self, iteration: int, incumbent: str, cand_rows: list[dict[str, Any]]
    ) -> Event:
        """Rank, confirm the winner, then one transaction: every candidate's final line and
        the fast-forward of improve/<run>."""
        measured = [
            r
            for r in cand_rows
            if isinstance(r.get("decision"), dict) and r.get("status") in ("pending", "discard")
        ]
        ranked = sorted(measured, key=lambda r: -float(r["decision"].get("gain") or 0.0))
        eligible = [r for r in ranked if r["decision"].get("keep")]
        winner = eligible[0] if eligible else None
        confirmation: dict[str, Any] = {}
        confirm_sentence = ""
        if winner is not None:
            ok, confirm_sentence, confirmation = self._confirm(winner["commit"], incumbent)
            if not ok:
                winner_failed = winner
                winner = None
            else:
                winner_failed = None
        else:
            winner_failed = None
        updates: dict[str, dict[str, Any]] = {}
        n = len(ranked)
        for r in cand_rows:
            rank = ranked.index(r) + 1 if r in ranked else None
            upd: dict[str, Any] = {
                "stage": "final",
                "round": iteration,
                "rank": rank,
                "winner": winner["commit"] if winner else None,
            }
            if winner is not None and r is winner:
                rework = int(r["decision"].get("rework") or 0)
                upd.update(
                    status="keep-reworked" if rework else "keep",
                    reason=f"won round {iteration} (rank 1 of {n}); {r.get('reason')}; confirmed: {confirm_sentence}",
                    confirmation=confirmation,
                )
            elif winner_failed is not None and r is winner_failed:
                upd.update(
                    status="discard",
                    reason=f"won round {iteration} but failed the confirmation: {confirm_sentence}",
                    confirmation=confirmation,
                )
            elif r in eligible:
                best = winner or winner_failed
                assert best is not None
                upd.update(
                    status="discard",
                    reason=f"beaten by candidate {best.get('candidate')} ({best.get('family')}) in round {iteration}, rank {rank} of {n}; {r.get('reason')}",
                )
            elif rank is not None:
                upd.update(reason=f"{r.get('reason')}; rank {rank} of {n}")
            updates[r["commit"]] = upd
        lines = {commit: [make_line("update", upd)] for commit, upd in updates.items()}
        branch = refs.run_branch(self.name)

        def attempt() -> None:
            notes_tip = self.repo.ref_target(refs.NOTES)
            new_notes, _ = notes.build_commit(
                self.repo, notes_tip, lines, f"gitimprove: {self.name} round {iteration}"
            )
            assert new_notes is not None
            moves = [(refs.NOTES, new_notes, notes_tip)]
            if winner is not None:
                moves.append((branch, winner["commit"], incumbent))
            update_refs(self.repo, moves, f"gitimprove: {self.name} round {iteration}")

        with self.lock:
            if lines:
                cas_loop(self.repo, attempt, what="the round's records", lock="notes")
            if winner is not None:
                self.rule.window, self.rule.last_base = [], None
        return {
            "event": "round",
            "run": self.name,
            "iteration": iteration,
            "winner": winner["commit"] if winner else None,
            "winner_candidate": winner.get("candidate") if winner else None,
            "winner_family": winner.get("family") if winner else None,
            "confirmation": confirm_sentence or None,
            "candidates": {
                str(r.get("candidate")): updates[r["commit"]].get("status", r.get("status"))
                for r in cand_rows
            },
        }

    def _precheck(
        self,
        result: agents.AgentResult,
        tree: str,
        inc_tree: str,
        measured: set[Any],
        candidate: int = 0,
    ) -> tuple[str | None, str]:
        if result.timed_out:
            return (
                "timeout",
                f"timeout: the agent ran past {float(self.cfg.get('agent', 'timeout')):.0f}s and was stopped",
            )
        if result.exit_code not in (0, None):
            return "crash", f"crash: the agent exited with {result.exit_code}"
        if tree == inc_tree:
            return "no-op", "no-op: the agent changed nothing"
        sealed = scope.sealed_paths(
            trees.changed_paths(self.repo, self.base_tree, tree), self.sealed
        )
        if sealed:
            return "sealed", "sealed: the attempt changed sealed files: " + ", ".join(sealed[:5])
        outside = scope.outside(trees.changed_paths(self.repo, inc_tree, tree), self.mutable)
        if outside:
            return (
                "out-of-scope",
                "out-of-scope: changed files outside scope.mutable: " + ", ".join(outside[:5]),
            )
        if tree in measured or self.round_trees.get(tree, candidate) != candidate:
            return "duplicate", "duplicate: this exact tree was already measured in this run"
        self.round_trees[tree] = candidate
        return None, ""

    def _commit(self, tree: str, parent: str, fields: dict[str, Any]) -> str:
        description = " ".join(str(fields.get("description") or "attempt").split())[:120]
        changed = trees.changed_paths(self.repo, trees.tree_of(self.repo, parent), tree)
        tops = sorted({p.split("/")[0] if "/" in p else Path(p).stem for p in changed})
        scope_name = tops[0] if len(tops) == 1 else ("multi" if tops else "none")
        fields["scope"] = scope_name
        message = (
            f"experiment({scope_name}): {description}\n\n"
            f"Run: {self.name}\nIteration: {fields['iteration']}\nCandidate: {fields.get('candidate', 0)}\n"
        )
        return self.repo.create_commit(self.repo.raw[tree].id, message, [parent])

    def _decide(
        self,
        commit: str,
        mpath: Path,
        incumbent: str,
        first: float,
        fields: dict[str, Any],
        rework: int,
        tournament: bool = False,
    ) -> Event:
        inc_path = self._incumbent_path(incumbent)
        pending = [first]

        def run_candidate() -> float:
            return pending.pop() if pending else self._metric(mpath)

        try:
            with self.rule_lock:
                out = self.rule.decide(lambda: self._metric(inc_path), run_candidate)
        except _MetricFailed as exc:
            if exc.run is not None and pending == []:
                fields.update(
                    status=exc.run.status if exc.run.status != "ok" else "metric-error",
                    reason=f"the metric {exc.run.error} on a repeat run",
                )
                return self._log(commit, fields, keep=False)
            raise
        keep = out.keep
        status = ("keep-reworked" if rework else "keep") if keep else "discard"
        if tournament:
            status = "pending" if keep else "discard"  # the round decides the winner
        values = out.candidate
        fields.update(
            status=status,
            reason=self.rule.sentence(out, self.confidence),
            metric=metric_block(
                self.cfg,
                values,
                incumbent_samples=out.incumbent,
                delta=(statistics.median(values) - statistics.median(out.incumbent))
                if out.incumbent
                else None,
                gain=out.delta,
                se=out.se,
                confidence=self.confidence,
            ),
            decision={
                "runs": out.runs,
                "rule": out.reason,
                "window_used": out.window_used,
                "keep": keep,
                "gain": out.delta,
                "rework": rework,
            },
        )
        return self._log(commit, fields, keep=keep and not tournament)

    def _log(self, commit: str, fields: dict[str, Any], *, keep: bool) -> Event:
        """Note, archive link and (for a keep) the branch move: one transaction, all or nothing."""
        repo = self.repo
        fields["finished"] = utc_now()
        line = make_line("create", fields)
        branch = refs.run_branch(self.name)
        iteration = fields["iteration"]

        def attempt() -> None:
            notes_tip = repo.ref_target(refs.NOTES)
            arch_tip = repo.ref_target(refs.ARCHIVE)
            new_notes, _ = notes.build_commit(
                repo, notes_tip, {commit: [line]}, f"gitimprove: {self.name} iteration {iteration}"
            )
            assert new_notes is not None
            new_arch = archive.archive_commit(
                repo,
                arch_tip,
                [commit],
                f"gitimprove: {self.name} iteration {iteration}: {fields.get('status')}",
            )
            updates = [(refs.NOTES, new_notes, notes_tip), (refs.ARCHIVE, new_arch, arch_tip)]
            if keep:
                updates.append((branch, commit, fields["parent"]))
            update_refs(repo, updates, f"gitimprove: {self.name} iteration {iteration}")

        if fields.get("family_ignored"):
            fields["reason"] = (
                f"{fields.get('reason')} (asked for a {fields.get('family')} change; the agent reported {fields.get('approach')})"
            )
            line = make_line("create", fields)
        with self.lock:
            cas_loop(repo, attempt, what="the run's records", lock="notes")
        if (
            os.environ.get("GITIMPROVE_FAILPOINT")
            == f"after-log:{iteration}.{fields.get('candidate', 0)}"
        ):
            os._exit(137)  # tests: die right after one candidate's records landed
        if os.environ.get("GITIMPROVE_FAILPOINT") == f"after-log:{iteration}":
            os._exit(137)  # tests: die right after the records landed
        metric = fields.get("metric") or {}
        return {
            "event": "attempt",
            "run": self.name,
            "iteration": iteration,
            "candidate": fields.get("candidate", 0),
            "commit": commit,
            "status": fields.get("status"),
            "reason": fields.get("reason"),
            "value": metric.get("value") if isinstance(metric, dict) else None,
            "description": fields.get("description"),
            "escalation": fields.get("escalation", 0),
            "family": fields.get("family"),
        }


@contextlib.contextmanager
def _removing(path: Path) -> Iterator[None]:
    try:
        yield
    finally:
        path.unlink(missing_ok=True)


def _rounds(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The run's attempts grouped by iteration (round), in order; the baseline excluded."""
    groups: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        it = r.get("iteration")
        if r.get("status") != "baseline" and isinstance(it, int):
            groups.setdefault(it, []).append(r)
    return [groups[k] for k in sorted(groups)]
