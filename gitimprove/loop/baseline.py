"""A run's baseline: the guard once on unchanged code, the noise learned from repeated runs,
and the run's first record (DESIGN §7, NOISE.md calibration)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from gitimprove.errors import GitImproveError
from gitimprove.loop import runs
from gitimprove.loop.context import MetricFailed, RunContext
from gitimprove.loop.history import History, noise_prior
from gitimprove.loop.integrity import IntegrityError, Tampered, config_pin
from gitimprove.loop.ledger import record
from gitimprove.loop.measure import harness, metric_block
from gitimprove.loop.rule import AdaptiveRule
from gitimprove.state import experiments
from gitimprove.util.clock import host_id, utc_now


@dataclass(frozen=True)
class Calibration:
    samples: list[float]
    message: str  # the noise floor and the budget of runs per decision, in words
    started: str
    noise: dict[str, Any] | None = None  # the baseline note's noise block (adaptive rule)
    max_runs: int | None = None


def check_guard(ctx: RunContext) -> dict[str, Any]:
    """Run the guard once on the run's base: a guard that fails on unchanged code (or does not
    exist) would fail every candidate, so the run does not start."""
    if not ctx.cfg.guard_command.strip():
        return {"status": "skipped"}
    try:
        result = ctx.guard(ctx.incumbent_checkout(ctx.base), keep_tail=True)
    except Tampered as exc:
        raise _tampered(exc) from None
    if result["status"] != "pass":
        code = result.get("exit_code")
        why = "timed out" if code is None else f"exited with {code}"
        raise GitImproveError(
            f"the guard fails on the run's base {ctx.base[:10]} ({why}), so it would fail every candidate:\n"
            + str(result.get("tail") or "(no output)"),
            hint="fix [guard] command so it passes on the unchanged code, then run again",
        )
    ctx.shared.guard_tests = result.get("tests")
    return result


def guard_tests(history: History) -> int | None:
    """The tests a pytest guard ran on the run's base, as its baseline note recorded them."""
    base = history.baseline
    guard = base.state.get("guard") if base is not None else None
    tests = guard.get("tests") if isinstance(guard, dict) else None
    return tests if isinstance(tests, int) and not isinstance(tests, bool) else None


def calibrate(ctx: RunContext) -> Calibration:
    """Repeated runs of the unchanged base teach the rule the noise (with what earlier runs of
    this metric on this machine learned), and the rule chooses its budget of runs per decision
    from it; nothing is written."""
    co = ctx.incumbent_checkout(ctx.base)
    started = utc_now()
    rule = ctx.rule
    if isinstance(rule, AdaptiveRule):
        rule.pool.set_prior(
            noise_prior(
                experiments.all_experiments(ctx.repo),
                rule,
                run=ctx.name,
                metric_command=ctx.cfg.metric_command,
                host=host_id(),
            )
        )

    def once() -> float:
        ctx.learning = ctx.extraction is None
        value = ctx.metric(co)
        if ctx.extraction is None:  # what the base printed fixes how every run is read
            ctx.extraction = ctx.shared.last_form or None
        return value

    ctx.extraction = None
    try:
        raw = rule.calibrate(once)
    except MetricFailed as exc:
        raise GitImproveError(
            f"the metric fails on the run's base {ctx.base[:10]}: {exc.run.error}\n{exc.run.tail}",
            hint="fix [metric] command so it prints a number on the unchanged code"
            + (
                "; it ran in the sandbox (a read-only system, a private /tmp): a metric that "
                'needs more runs with [agent] sandbox = "none"'
                if ctx.sandbox.active
                else "; it ran under Landlock (it may write its checkout and $TMPDIR alone): a "
                'metric that writes elsewhere runs with [agent] sandbox = "none"'
                if ctx.sandbox.contained
                else ""
            ),
        ) from None
    except Tampered as exc:
        raise _tampered(exc) from None
    finally:
        ctx.learning = False
    if isinstance(rule, AdaptiveRule):
        rule.plan_budget()
        return Calibration(
            raw, rule.noise_message(), started, dict(rule.budget_record()), rule.max_runs
        )
    message = f"benchmark rule: the median of {rule.runs} run(s) against the stored best"
    return Calibration(raw, message, started, None, rule.max_runs)


def _tampered(exc: Tampered) -> IntegrityError:
    return IntegrityError(
        f"the base's measurement checkout changed while it was measured: {exc.reason}",
        hint="something else is writing under .git/improve/work; stop it and run again",
    )


def record_baseline(
    ctx: RunContext, cal: Calibration, guard: dict[str, Any], *, new_run: bool
) -> None:
    """The run's first record. The baseline is a commit of its own (the base's tree, the base
    as parent), so a second run from the same base, or init's baseline, keeps its own record.
    A new run's markers land in the same transaction: a run exists once it has a record."""
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
        "options": runs.options_record(ctx.opts, ctx.iterations),
        "config": config_pin(ctx.cfg.overrides),
        "extraction": ctx.extraction,
        "started": cal.started,
        "finished": utc_now(),
    }
    if cal.noise is not None:
        note["noise"] = cal.noise
    if guard.get("status") != "skipped":
        note["guard"] = {k: v for k, v in guard.items() if k != "tail"}
    with ctx.shared.lock:
        baseline = ctx.repo.create_commit(
            ctx.repo.raw[ctx.base_tree].id,
            f"experiment(baseline): run {ctx.name}\n\nRun: {ctx.name}\nIteration: 0\n",
            [ctx.base],
        )
    record(
        ctx,
        baseline,
        note,
        keep=False,
        also=runs.start_refs(ctx.name, ctx.base) if new_run else (),
    )
    ctx.emit(
        {
            "event": "noise",
            "run": ctx.name,
            "baseline": statistics.median(raw),
            "samples": raw,
            "message": cal.message,
            "max_runs": cal.max_runs,
            "guard": guard,
        }
    )
