"""Run reports for `status` and `plot`: the latest run, best vs baseline, the kept line.

A run is known by its markers or by its records: a loop run (its markers here, or only its
notes, fetched from a teammate), or an imported one (`git improve import`: rows on commits
and under imports/, no markers). Without --run the report is of the loop run that started
last, or, when there is none, of the run imported last. An imported file may not say which
way is better: then the report says so and names no best.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gitimprove.errors import GitImproveError
from gitimprove.git.repo import Repo
from gitimprove.loop.runs import keep_changes, latest_run, list_runs
from gitimprove.state import experiments
from gitimprove.state.record import Experiment

SPARKS = "▁▂▃▄▅▆▇█"


@dataclass
class RunReport:
    run: str
    finished: bool
    base: str
    rows: list[Experiment]
    direction: str | None  # None: an imported file that does not say
    baseline: float | None
    best: float | None
    best_commit: str | None
    escalation: int
    cost_usd: float
    kept_line: list[float] = field(default_factory=list)
    imported: bool = False
    baseline_row: Experiment | None = None  # an imported Karpathy file's is its first keep

    @property
    def attempts(self) -> list[Experiment]:
        return [r for r in self.rows if not r.is_baseline and r is not self.baseline_row]

    @property
    def kept(self) -> int:
        return sum(1 for r in self.attempts if r.is_keep)

    @property
    def keep_changes(self) -> list[tuple[float | None, float | None]]:
        """Each keep's change as its note measured it, `(delta, delta_pct)`, in order."""
        return keep_changes(self.attempts)


def _imported_runs(repo: Repo) -> dict[str, list[Experiment]]:
    from gitimprove.state import imports, views

    runs: dict[str, list[Experiment]] = {}
    for e in views.order(imports.imported_experiments(repo)):
        runs.setdefault(e.run or "", []).append(e)
    runs.pop("", None)
    return runs


MEASURED = ""  # the "run" of the commits measured outside any loop (`init`, `measure`)


def run_report(repo: Repo, run: str | None = None) -> RunReport:
    markers = list_runs(repo)
    every = experiments.all_experiments(repo)
    loop_runs = {e.run for e in every if e.run} | set(markers)
    imported = _imported_runs(repo)
    measured = any(not e.run and not e.is_baseline for e in every)
    if not loop_runs and not imported and not measured:
        raise GitImproveError(
            "no run yet",
            hint="start one with `git improve run`, measure experiment commits with "
            "`git improve measure`, or bring results in with `git improve import`",
        )
    if run is None:
        run = latest_run(repo) or (
            sorted(loop_runs)[-1] if loop_runs else list(imported)[-1] if imported else MEASURED
        )
    if run == MEASURED and measured:
        rows = experiments.run_experiments(repo, None, every)
    elif run in loop_runs:
        rows = experiments.run_experiments(repo, run, every)
    elif run in imported:
        rows = imported[run]
    else:
        raise GitImproveError(
            f"there is no run {run!r}", hint="runs: " + ", ".join(sorted(loop_runs | set(imported)))
        )
    direction = next((r.direction for r in rows if r.direction), None)
    if direction is None and (run in loop_runs or run == MEASURED):
        direction = "lower"  # the loop records its configured direction; this is its default
    base_row = next((r for r in rows if r.is_baseline), None) or next(
        (r for r in rows if r.kept and r.value is not None), None
    )
    baseline = base_row.value if base_row else None
    best, best_commit = baseline, base_row.commit if base_row else None
    line: list[float] = [] if baseline is None else [baseline]
    for r in rows:  # the incumbent is the last keep, as its note records it
        v = r.value
        if r is base_row or not r.is_keep or v is None:
            continue
        # a loop's incumbent is its last keep, as that keep's note records it; an imported
        # run's rows carry no decision to follow, so its best is the best kept value
        if direction and (
            run in loop_runs or best is None or (v < best if direction == "lower" else v > best)
        ):
            best, best_commit = v, r.commit
        line.append(v)
    if direction is None:
        best, best_commit = None, None  # which way is better is not known
    escalation = next((r.escalation for r in reversed(rows) if not r.is_baseline), 0)
    marker = markers.get(run, {})
    return RunReport(
        run,
        "stop" in marker or run not in markers,
        marker.get("base", base_row.commit if base_row else ""),
        rows,
        direction,
        baseline,
        best,
        best_commit,
        escalation,
        sum(r.cost_usd for r in rows),
        line,
        imported=run not in loop_runs and run != MEASURED,
        baseline_row=base_row,
    )


def sparkline(values: list[float]) -> str:
    if not values:
        return ""
    lo, hi = min(values), max(values)
    if hi == lo:
        return SPARKS[0] * len(values)
    return "".join(SPARKS[int((v - lo) / (hi - lo) * (len(SPARKS) - 1))] for v in values)


@dataclass
class PlotPoints:
    xs: list[int] = field(default_factory=list)
    ys: list[float] = field(default_factory=list)
    kept: list[bool] = field(default_factory=list)
    best_x: list[int] = field(default_factory=list)  # the best-so-far line (none when the
    best_y: list[float] = field(default_factory=list)  # direction is unknown)


def plot_points(report: RunReport) -> PlotPoints:
    """Every measured attempt (x: its iteration, or its place for an imported row that has a
    label instead), and the incumbent's line (an imported run's: the best so far)."""
    out = PlotPoints()
    best = None
    lower = report.direction == "lower"
    for position, r in enumerate(report.rows):
        v = r.value
        if v is None:
            continue
        it = r.iteration if r.iteration is not None else position
        out.xs.append(it)
        out.ys.append(v)
        out.kept.append(r.kept)
        # the loop's incumbent is its last keep (the value its note records)
        better = best is None or (v < best if lower else v > best)
        if report.direction and r.kept and (better or not report.imported):
            best = v
        if best is not None:
            out.best_x.append(it)
            out.best_y.append(best)
    return out


def plot(report: RunReport, path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise GitImproveError(
            "plotting needs matplotlib",
            hint="pip install 'gitimprove[plot]' (or pip install matplotlib)",
        ) from None
    points = plot_points(report)
    colors = ["tab:green" if k else "tab:gray" for k in points.kept]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.scatter(points.xs, points.ys, c=colors, s=18, label="attempts (green: kept)")
    if points.best_x:
        label = "best so far" if report.imported else "incumbent"
        ax.step(points.best_x, points.best_y, where="post", color="tab:blue", label=label)
    ax.set_xlabel("iteration")
    metric_name = next((r.metric_name for r in report.rows if r.metric_name), "metric")
    better = f"{report.direction} is better" if report.direction else "direction unknown"
    ax.set_ylabel(f"{metric_name} ({better})")
    ax.set_title(
        "commits measured with git improve measure"
        if report.run == MEASURED
        else f"{'imported' if report.imported else 'git improve'} run {report.run}"
    )
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
