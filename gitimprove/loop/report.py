"""Run reports for `status` and `plot`: the latest run, best vs baseline, the kept line."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gitimprove.errors import GitImproveError
from gitimprove.git.repo import Repo
from gitimprove.loop.runs import list_runs
from gitimprove.state import experiments

SPARKS = "▁▂▃▄▅▆▇█"


@dataclass
class RunReport:
    run: str
    finished: bool
    base: str
    rows: list[dict[str, Any]]
    direction: str
    baseline: float | None
    best: float | None
    best_commit: str | None
    escalation: int
    cost_usd: float
    kept_line: list[float] = field(default_factory=list)

    @property
    def attempts(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r.get("status") != "baseline"]


def _value(row: dict[str, Any]) -> float | None:
    v = (row.get("metric") or {}).get("value")
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def run_report(repo: Repo, run: str | None = None) -> RunReport:
    runs = list_runs(repo)
    if not runs:
        raise GitImproveError("no run yet", hint="start one with `git improve run`")
    if run is None:
        rows_by_run: dict[str, str] = {}
        for exp in experiments.all_experiments(repo):
            r = exp.state.get("run")
            if isinstance(r, str) and r in runs:
                rows_by_run[r] = max(rows_by_run.get(r, ""), str(exp.state.get("ts") or ""))
        run = max(rows_by_run, key=lambda k: rows_by_run[k]) if rows_by_run else sorted(runs)[-1]
    if run not in runs:
        raise GitImproveError(f"there is no run {run!r}", hint="runs: " + ", ".join(sorted(runs)))
    rows = sorted(
        (
            {"commit": e.commit, **e.state}
            for e in experiments.all_experiments(repo)
            if e.state.get("run") == run
        ),
        key=lambda r: (
            r.get("iteration") if isinstance(r.get("iteration"), int) else -1,
            r.get("candidate") or 0,
        ),
    )
    direction = next(
        (
            str((r.get("metric") or {}).get("direction"))
            for r in rows
            if (r.get("metric") or {}).get("direction")
        ),
        "lower",
    )
    lower = direction == "lower"
    baseline = next((_value(r) for r in rows if r.get("status") == "baseline"), None)
    best, best_commit, line = (
        baseline,
        next((r["commit"] for r in rows if r.get("status") == "baseline"), None),
        [],
    )
    if baseline is not None:
        line.append(baseline)
    for r in rows:
        v = _value(r)
        if r.get("status") in ("keep", "keep-reworked") and v is not None:
            if best is None or (v < best if lower else v > best):
                best, best_commit = v, r["commit"]
            line.append(v)
    escalation = next(
        (int(r.get("escalation") or 0) for r in reversed(rows) if r.get("status") != "baseline"), 0
    )
    cost = sum(float((r.get("agent") or {}).get("cost_usd") or 0.0) for r in rows)
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
        cost,
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
        v = _value(r)
        it = r.get("iteration")
        if v is None or not isinstance(it, int):
            continue
        kept = r.get("status") in ("baseline", "keep", "keep-reworked")
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
    metric_name = next(
        (
            str((r.get("metric") or {}).get("name"))
            for r in report.rows
            if (r.get("metric") or {}).get("name")
        ),
        "metric",
    )
    ax.set_ylabel(f"{metric_name} ({report.direction} is better)")
    ax.set_title(f"git improve run {report.run}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
