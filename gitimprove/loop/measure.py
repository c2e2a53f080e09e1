"""Measuring commits outside the loop: the baseline at `init`, and `git improve measure`.

Every measurement happens in a fresh checkout of the commit's tree under
`<git-common-dir>/improve/work/`, never in the user's work tree. A candidate is compared with
fresh runs of its nearest measured ancestor, interleaved with its own runs, never with the
stored samples that made the ancestor look good (NOISE.md rule 2).
"""

from __future__ import annotations

import platform
import re
import statistics
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gitimprove.config import Config
from gitimprove.errors import GitImproveError, MetricError
from gitimprove.git import history
from gitimprove.git.checkout import Checkout, checkout
from gitimprove.git.repo import Repo
from gitimprove.loop.decide import decide_fixed
from gitimprove.loop.metrics import MetricRun, relative_of, run_metric
from gitimprove.loop.stats import spread
from gitimprove.state import experiments
from gitimprove.state.records import KEPT
from gitimprove.util import proc
from gitimprove.util.clock import utc_now

_SUBJECT = re.compile(r"^experiment(?:\(([^)]*)\))?!?:\s*(.*)$")

Progress = Callable[[str], None]


def parse_subject(message: str) -> tuple[str | None, str] | None:
    """(scope, description) of an `experiment(<scope>): <description>` message, else None."""
    first = message.split("\n", 1)[0].strip()
    m = _SUBJECT.match(first)
    if not m:
        return None
    return m.group(1), m.group(2).strip()


def harness(cfg: Config) -> dict[str, Any]:
    return {
        "metric_command": cfg.metric_command,
        "guard_command": cfg.guard_command or None,
        "python": platform.python_version(),
        "platform": sys.platform,
    }


@dataclass
class ArmRuns:
    samples: list[float] = field(default_factory=list)
    secondary: dict[str, float] = field(default_factory=dict)
    failure: MetricRun | None = None
    name: str | None = None
    form: str = ""  # how its last run's output was read, its trailer included


def _run_once(
    cfg: Config, co: Checkout, arm: ArmRuns, *, learn: bool = False, pinned: str | None = None
) -> None:
    """One metric run, from exactly the committed tree (what an earlier run wrote is gone).
    With `learn` (unchanged code: a baseline, a measured ancestor) lines naming the metric
    after the one read are its format; with `pinned` (the form such a run learnt) the output
    must keep it; with neither, no line naming the metric may follow the one read."""
    if arm.failure is not None:
        return
    got = run_metric(
        cfg.metric_command,
        co.path,
        timeout=float(cfg.get("metric", "timeout")),
        spec=str(cfg.get("metric", "extract")),
        name=cfg.metric_name,
        relative=relative_of(cfg.get("metric", "min_delta")),
        pinned=pinned,
        learn=learn and not pinned,
    )
    _after(co, "a metric run", cfg)
    if got.status == "ok" and got.value is not None:
        arm.samples.append(got.value)
        arm.secondary.update(got.secondary)
        arm.name = got.name
        arm.form = got.form
    else:
        arm.failure = got


def _after(co: Checkout, what: str, cfg: Config) -> None:
    """After a run in `co`: a fresh copy of the commit for the next run (nothing of this one
    survives), and what the run did to its checkout named as `run` names it — files it
    changed, a mount it stacked on the checkouts (taken off), a file-system flag (cleared) or
    files that cannot be removed."""
    from gitimprove.loop.integrity import relocked

    changed = co.verify(after_run=True)
    if relocked(changed, cfg.metric_command, cfg.guard_command or ""):
        changed = []  # the command's build tool brought its lock file up to date
    left = co.reset()  # StuckFlags (a flag this process cannot clear) says what to do
    if changed:
        raise GitImproveError(
            f"{what} changed files of {co.commit[:10]}: " + ", ".join(changed[:10]),
            hint="the metric must not rewrite the code it measures; write output elsewhere",
        )
    if left:
        raise GitImproveError(
            f"{what} marked its checkout of {co.commit[:10]} (a mount, a file-system flag) or "
            "left files that cannot be removed: " + ", ".join(left[:10]),
            hint="the metric and the guard must leave their checkout as they found it; "
            "`git improve doctor` lists what is left",
        )


def _guard(cfg: Config, co: Checkout) -> dict[str, Any]:
    if not cfg.guard_command.strip():
        return {"status": "skipped"}
    res = proc.run(
        cfg.guard_command, cwd=co.path, shell=True, timeout=float(cfg.get("guard", "timeout"))
    )
    _after(co, "the guard", cfg)
    status = "pass" if res.ok else "fail"
    out: dict[str, Any] = {"status": status, "exit_code": None if res.timed_out else res.returncode}
    if status == "fail":
        out["tail"] = res.tail(1500)
        if res.timed_out:
            out["timed_out"] = True
    return out


def metric_block(cfg: Config, samples: Sequence[float], **extra: Any) -> dict[str, Any]:
    block: dict[str, Any] = {
        "name": cfg.metric_name,
        "direction": cfg.direction,
        "value": statistics.median(samples) if samples else None,
        "samples": list(samples),
    }
    block.update(extra)
    return block


# --- baseline -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Baseline:
    commit: str
    value: float
    samples: list[float]
    spread_pct: float | None
    name: str | None = None
    form: str = ""  # how the unchanged code's output is read (metrics.extract_pinned)


def noise_sentence(samples: Sequence[float]) -> str:
    value = statistics.median(samples)
    sigma = spread(samples)
    if sigma == 0:
        return "the metric repeated exactly: it is deterministic, and any change beyond min_delta counts"
    if 2.0 * sigma < abs(value):  # else the runs scatter across 0: a percent says nothing
        pct = sigma / abs(value) * 100
        return (
            f"noise ≈ {pct:.2g}% per run; improvements of about {1.1 * pct:.2g}% and larger "
            "can be confirmed"
        )
    return f"noise ≈ {sigma:.3g} per run"


def measure_baseline(
    repo: Repo, cfg: Config, commit: str, runs: int, progress: Progress | None = None
) -> Baseline:
    """Run the metric `runs` times on `commit`; raise MetricError with the output if it fails."""
    arm = ArmRuns()
    with checkout(repo, commit, "baseline") as co:
        for i in range(runs):
            _run_once(cfg, co, arm, learn=True)
            if arm.failure is not None:
                break
            if progress:
                progress(f"run {i + 1}/{runs}: {arm.samples[-1]:.10g}")
    if arm.failure is not None:
        fail = arm.failure
        raise MetricError(
            f"the metric command failed on {commit[:10]}: {fail.error}",
            fail.tail,
            hint="fix [metric] command (it must print a number), or pass --metric",
        )
    value = statistics.median(arm.samples)
    pct = spread(arm.samples) / abs(value) * 100 if value else None
    return Baseline(commit, value, arm.samples, pct, arm.name, arm.form)


def record_baseline(repo: Repo, cfg: Config, base: Baseline, *, run: str | None = None) -> None:
    now = utc_now()
    experiments.record(
        repo,
        base.commit,
        {
            "run": run,
            "iteration": 0,
            "status": "baseline",
            "description": "baseline",
            "reason": f"baseline: median of {len(base.samples)} runs; "
            + noise_sentence(base.samples),
            "metric": metric_block(cfg, base.samples),
            "extraction": base.form or None,
            "harness": harness(cfg),
            "started": now,
            "finished": now,
        },
        sign=True,
    )


# --- measuring experiment commits ----------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    commit: str
    status: str
    reason: str
    value: float | None
    parent: str | None


def _known(repo: Repo) -> dict[str, experiments.Experiment]:
    return {e.commit: e for e in experiments.all_experiments(repo)}


def _has_result(exp: experiments.Experiment | None) -> bool:
    return exp is not None and exp.status not in (None, "pending")


def pending_commits(repo: Repo, known: dict[str, experiments.Experiment]) -> list[str]:
    """Experiment commits of the current branch without a result, oldest first."""
    head = repo.head_commit()
    if head is None:
        return []
    return [
        c.id
        for c in history.ancestors_oldest_first(repo, str(head.id))
        if parse_subject(c.message) and not _has_result(known.get(c.id))
    ]


def nearest_measured(
    repo: Repo, commit: str, known: dict[str, experiments.Experiment]
) -> str | None:
    current = history.info(repo, commit)
    while current.parents:
        pid = current.parents[0]
        exp = known.get(pid)
        if exp is not None and exp.value is not None:
            return pid
        current = history.info(repo, pid)
    return None


def measure_commits(
    repo: Repo,
    cfg: Config,
    revs: Sequence[str] | None = None,
    *,
    runs: int | None = None,
    progress: Progress | None = None,
) -> list[Outcome]:
    runs = runs or int(cfg.get("metric", "runs"))
    known = _known(repo)
    targets = [history.info(repo, r).id for r in revs] if revs else pending_commits(repo, known)
    forms = baseline_forms(known.values())
    outcomes = []
    for commit in targets:
        outcome = _measure_one(repo, cfg, commit, known, forms, runs, progress)
        outcomes.append(outcome)
        fresh = experiments.get(repo, commit)
        if fresh is not None:
            known[commit] = fresh
    return outcomes


def _measure_one(
    repo: Repo,
    cfg: Config,
    commit: str,
    known: dict[str, experiments.Experiment],
    forms: dict[str | None, str],
    runs: int,
    progress: Progress | None,
) -> Outcome:
    obj = history.info(repo, commit)
    parsed = parse_subject(obj.message)
    scope, description = parsed if parsed else (None, obj.message.split("\n", 1)[0].strip())
    parent = nearest_measured(repo, commit, known)
    started = utc_now()
    if parent is None:
        if not obj.parents:
            raise GitImproveError(
                f"{commit[:10]} has no parent to compare with",
                hint="measure a commit that has a parent, or run `git improve init` for a baseline",
            )
        parent = obj.parents[0]
        if progress:
            progress(f"{parent[:10]}: no measured ancestor; measuring it as the baseline")
        base = measure_baseline(repo, cfg, parent, runs)
        record_baseline(repo, cfg, base)
        known[parent] = experiments.get(repo, parent) or experiments.Experiment(parent, {})
        baseline_forms([known[parent]], forms)
    incumbent = known[parent]
    exact_value = _exact_value(incumbent)
    if exact_value is not None:
        return _measure_exact(
            repo, cfg, commit, parent, incumbent, exact_value, description, scope, runs,
            progress, forms,
        )  # fmt: skip
    cand, inc = ArmRuns(), ArmRuns()
    pinned = pinned_form(incumbent, forms)
    with (
        checkout(repo, commit, "measure") as cand_co,
        checkout(repo, parent, "incumbent") as inc_co,
    ):
        for i in range(runs):
            # the ancestor first: unchanged code, whose output fixes how the candidate's is
            # read when no record of it says (its trailer of lines naming the metric)
            _run_once(cfg, inc_co, inc, learn=True, pinned=pinned)
            pinned = pinned or inc.form or None
            _run_once(cfg, cand_co, cand, pinned=pinned)
            if cand.failure is not None:
                break
            if progress:
                progress(f"{commit[:10]} run {i + 1}/{runs}: {cand.samples[-1]:.10g}")
        guard = _guard(cfg, cand_co) if cand.failure is None else {"status": "skipped"}
    fields = _note_fields(cfg, incumbent, parent, description, scope, started)
    inc_samples = inc.samples if inc.failure is None and inc.samples else list(incumbent.samples)
    if cand.failure is not None:
        fail = cand.failure
        fields.update(
            status=fail.status,
            reason=f"{fail.status}: {fail.error}",
            metric_tail=fail.tail,
        )
        fields["metric"] = metric_block(cfg, cand.samples, incumbent_samples=inc_samples)
    else:
        decision = decide_fixed(
            cand.samples,
            inc_samples or cand.samples,
            direction=cfg.direction,
            min_delta=cfg.get("metric", "min_delta"),
            confidence=float(cfg.get("metric", "confidence")),
        )
        fields["metric"] = metric_block(
            cfg,
            cand.samples,
            incumbent_samples=inc_samples,
            confidence=float(cfg.get("metric", "confidence")),
            **decision.change.fields(),
        )
        _decided(fields, cand, guard, decision.status, decision.reason)
        if inc.failure is not None:
            fields["reason"] += (
                f"; the ancestor could not be re-run ({inc.failure.error}), its stored runs were used"
            )
    op = "update" if _has_result(known.get(commit)) or commit in known else "create"
    experiments.record(repo, commit, fields, op=op, sign=True)
    value = statistics.median(cand.samples) if cand.samples and cand.failure is None else None
    return Outcome(commit, str(fields["status"]), str(fields["reason"]), value, parent)


def _decided(
    fields: dict[str, Any], cand: ArmRuns, guard: dict[str, Any], status: str, reason: str
) -> None:
    """A measured candidate's decision in its note: a failing guard overrules it."""
    if cand.secondary:
        fields["metrics"] = cand.secondary
    fields["guard"] = guard
    if guard["status"] == "fail":
        status, reason = "guard-fail", f"guard failed (exit {guard.get('exit_code')}); {reason}"
    fields.update(status=status, reason=reason)


def _note_fields(
    cfg: Config,
    incumbent: experiments.Experiment,
    parent: str,
    description: str,
    scope: str | None,
    started: str,
) -> dict[str, Any]:
    """What every note `measure` writes says of where the commit stands and when."""
    it = incumbent.iteration
    return {
        "run": incumbent.run,
        "parent": parent,
        "description": description,
        "scope": scope,
        "harness": harness(cfg),
        "started": started,
        "finished": utc_now(),
        "source": "measure",
        "iteration": it + 1 if it is not None else None,
    }


def _form(exp: experiments.Experiment) -> str | None:
    form = exp.state.get("extraction")
    return form if isinstance(form, str) and form else None


def baseline_forms(
    exps: Iterable[experiments.Experiment], forms: dict[str | None, str] | None = None
) -> dict[str | None, str]:
    """How each run's baseline output was read (the first baseline that records it), by run;
    `forms` with those of `exps` added."""
    forms = {} if forms is None else forms
    for exp in exps:
        form = _form(exp) if exp.status == "baseline" else None
        if form is not None:
            forms.setdefault(exp.run, form)
    return forms


def pinned_form(incumbent: experiments.Experiment, forms: dict[str | None, str]) -> str | None:
    """How the incumbent's output was read, as its records say: its own note (a baseline),
    else its run's baseline (`baseline_forms`); None when no record says (an older record)."""
    return _form(incumbent) or forms.get(incumbent.run)


def _exact_value(exp: experiments.Experiment) -> float | None:
    """The incumbent's value when its record shows a deterministic metric: two or more runs
    that repeated exactly, or a decision the loop (or `measure`) made by exact comparison."""
    samples = exp.samples
    if not samples or len(set(samples)) != 1:
        return None
    decision = exp.state.get("decision")
    exact = isinstance(decision, dict) and decision.get("mode") == "exact"
    return samples[0] if len(samples) >= 2 or exact else None


class _Failed(Exception):
    """A candidate run failed: the exact rule stops asking for runs."""


def _measure_exact(
    repo: Repo,
    cfg: Config,
    commit: str,
    parent: str,
    incumbent: experiments.Experiment,
    value: float,
    description: str,
    scope: str | None,
    runs: int,
    progress: Progress | None,
    forms: dict[str | None, str],
) -> Outcome:
    """A deterministic metric, decided as the loop decides it: the candidate runs once (more
    only when `confirm_deterministic` asks, or when its runs differ) and is compared exactly
    with the incumbent's recorded value, which is not re-run (it repeated exactly)."""
    from gitimprove.loop import exact
    from gitimprove.loop.decide import make_rule, report

    confidence = float(cfg.get("metric", "confidence"))
    rule = make_rule(cfg, confidence=confidence)
    cand = ArmRuns()
    started = utc_now()
    pinned = pinned_form(incumbent, forms)
    with checkout(repo, commit, "measure") as co:

        def run_cand() -> float:
            _run_once(cfg, co, cand, pinned=pinned)
            if cand.failure is not None:
                raise _Failed
            if progress:
                progress(f"{commit[:10]} run {len(cand.samples)}: {cand.samples[-1]:.10g}")
            return cand.samples[-1]

        try:
            out = exact.decide_exact(
                value,
                run_cand,
                sign=1.0 if cfg.direction == "lower" else -1.0,  # the rule's: + = lower
                min_delta=cfg.get("metric", "min_delta"),
                confirm=int(cfg.get("loop", "confirm_deterministic")),
                confidence=confidence,
                max_runs=max(runs, 3),
            )
        except _Failed:
            out = None
        guard = _guard(cfg, co) if out is not None else {"status": "skipped"}
    fields = _note_fields(cfg, incumbent, parent, description, scope, started)
    stored = list(incumbent.samples)
    if out is None:
        fail = cand.failure
        assert fail is not None
        fields.update(
            status=fail.status,
            reason=f"{fail.status}: {fail.error}",
            metric_tail=fail.tail,
            metric=metric_block(cfg, cand.samples, incumbent_samples=stored),
        )
    else:
        change, reason = report(rule, out)
        reason += f"; against the recorded {value:.10g} of {parent[:10]}, not re-run"
        fields["metric"] = metric_block(
            cfg, cand.samples, incumbent_samples=stored, **change.fields()
        )
        fields["decision"] = out.record()
        _decided(fields, cand, guard, "keep" if out.keep else "discard", reason)
    before = experiments.get(repo, commit)
    experiments.record(repo, commit, fields, op="update" if before else "create", sign=True)
    value_out = statistics.median(cand.samples) if out is not None else None
    return Outcome(commit, str(fields["status"]), str(fields["reason"]), value_out, parent)


def is_kept(status: str | None) -> bool:
    return status in KEPT


def guard_baseline(repo: Repo, cfg: Config, commit: str) -> dict[str, Any]:
    """Run the guard once on unchanged code, in a separate checkout; a guard that fails (or
    does not exist) there would fail every experiment, so this raises with its output."""
    if not cfg.guard_command.strip():
        return {"status": "skipped"}
    with checkout(repo, commit, "guard") as co:
        res = proc.run(
            cfg.guard_command, cwd=co.path, shell=True, timeout=float(cfg.get("guard", "timeout"))
        )
    if not res.ok:
        why = "timed out" if res.timed_out else f"exited with {res.returncode}"
        raise GitImproveError(
            f"the guard `{cfg.guard_command}` fails on the unchanged code at {commit[:10]} ({why}):\n"
            + (res.tail(1500).strip() or "(no output)"),
            hint="fix [guard] command so it passes on the unchanged code (or leave it empty)",
        )
    return {"status": "pass", "exit_code": res.returncode, "tail": res.tail(600)}
