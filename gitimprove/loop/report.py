"""Run reports for `status` and `plot`: the latest run, best vs baseline, the kept line."""

from __future__ import annotations

from dataclasses import dataclass, field

from gitimprove.errors import GitImproveError
from gitimprove.git.repo import Repo
from gitimprove.loop.runs import latest_run, list_runs
from gitimprove.state import experiments
from gitimprove.state.record import Experiment

SPARKS = "▁▂▃▄▅▆▇█"


@dataclass
class RunReport:
    run: str
    finished: bool
    base: str
    rows: list[Experiment]
    direction: str
    baseline: float | None
    best: float | None
    best_commit: str | None
    escalation: int
    cost_usd: float
    kept_line: list[float] = field(default_factory=list)

    @property
    def attempts(self) -> list[Experiment]:
        return [r for r in self.rows if not r.is_baseline]

    @property
    def kept(self) -> int:
        return sum(1 for r in self.attempts if r.is_keep)


def run_report(repo: Repo, run: str | None = None) -> RunReport:
    runs = list_runs(repo)
    if not runs:
        raise GitImproveError("no run yet", hint="start one with `git improve run`")
    if run is None:
        run = latest_run(repo) or sorted(runs)[-1]
    if run not in runs:
        raise GitImproveError(f"there is no run {run!r}", hint="runs: " + ", ".join(sorted(runs)))
    rows = experiments.run_experiments(repo, run)
    direction = next((r.direction for r in rows if r.direction), "lower")
    lower = direction == "lower"
    base_row = next((r for r in rows if r.is_baseline), None)
    baseline = base_row.value if base_row else None
    best, best_commit = baseline, base_row.commit if base_row else None
    line: list[float] = [] if baseline is None else [baseline]
    for r in rows:
        v = r.value
        if r.is_keep and v is not None:
            if best is None or (v < best if lower else v > best):
                best, best_commit = v, r.commit
            line.append(v)
    escalation = next((r.escalation for r in reversed(rows) if not r.is_baseline), 0)
    return RunReport(
        run,
        "stop" in runs[run],
        runs[run]["base"],
        rows,
        direction,
        baseline,
        best,
        best_commit,
        escalation,
        sum(r.cost_usd for r in rows),
        line,
    )


def sparkline(values: list[float]) -> str:
    if not values:
        return ""
    lo, hi = min(values), max(values)
    if hi == lo:
        return SPARKS[0] * len(values)
    return "".join(SPARKS[int((v - lo) / (hi - lo) * (len(SPARKS) - 1))] for v in values)


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
    xs, ys, colors = [], [], []
    best_x, best_y = [], []
    best = None
    lower = report.direction == "lower"
    for r in report.rows:
        v = r.value
        it = r.iteration
        if v is None or it is None:
            continue
        kept = r.kept
        xs.append(it)
        ys.append(v)
        colors.append("tab:green" if kept else "tab:gray")
        if kept and (best is None or (v < best if lower else v > best)):
            best = v
        if best is not None:
            best_x.append(it)
            best_y.append(best)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.scatter(xs, ys, c=colors, s=18, label="attempts (green: kept)")
    ax.step(best_x, best_y, where="post", color="tab:blue", label="best so far")
    ax.set_xlabel("iteration")
    metric_name = next((r.metric_name for r in report.rows if r.metric_name), "metric")
    ax.set_ylabel(f"{metric_name} ({report.direction} is better)")
    ax.set_title(f"git improve run {report.run}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
