from __future__ import annotations

import click

from gitimprove import output
from gitimprove.git.repo import open_repo
from gitimprove.loop import wording
from gitimprove.loop.report import MEASURED, RunReport, run_report, sparkline
from gitimprove.state import views


@click.command("status")
@click.option("--run", "run_name", help="Which run (default: the most recent).")
@click.option("--json", "as_json", is_flag=True, help="The report as one JSON object.")
def command(run_name: str | None, as_json: bool) -> None:
    """Show the current run: best vs baseline, last rows, escalation level, cost, and a
    sparkline of the kept metric."""
    rep = run_report(open_repo(need_work_tree=False), run_name)
    if as_json:
        output.emit_json(
            {
                "run": rep.run or None,  # None: commits measured outside a loop
                "imported": rep.imported,
                "finished": rep.finished,
                "direction": rep.direction,
                "baseline": rep.baseline,
                "best": rep.best,
                "best_commit": rep.best_commit,
                "attempts": len(rep.attempts),
                "kept": rep.kept,
                # the keeps together, as their notes measured them (None: no keep, or a
                # level reaching 0 / a run without decisions to follow)
                "kept_change": _kept_change(rep),
                "escalation": rep.escalation,
                "cost_usd": rep.cost_usd,
            }
        )
        return
    state = (
        "finished" if rep.finished else "in progress (or interrupted: `git improve run --resume`)"
    )
    if rep.run == MEASURED:
        output.echo("no loop run yet; the commits measured with `git improve measure`:")
    else:
        output.echo(f"run {rep.run}: {'imported' if rep.imported else state}")
    if rep.direction is None and rep.baseline is not None:
        output.echo(
            f"baseline {rep.baseline:.6g}; the results file does not say whether lower or "
            "higher is better, so no best is named"
        )
    elif rep.baseline is not None and rep.best is not None:
        changes = rep.keep_changes
        if rep.imported or rep.run == MEASURED or any(d is None for d, _ in changes):
            # no chain of decisions to follow: the two levels, as their records hold them
            change = wording.level_change_words(rep.best, rep.baseline, 2)
            output.echo(
                f"best {rep.best:.6g} at {str(rep.best_commit)[:10]}, baseline {rep.baseline:.6g}{change}, {rep.direction} is better"
            )
        else:  # a loop run: each keep as its note measured it (wording.kept_together)
            output.echo(
                f"best {rep.best:.6g} at {str(rep.best_commit)[:10]}, baseline {rep.baseline:.6g}, {rep.direction} is better; {wording.kept_words(changes)}"
            )
    output.echo(
        f"{len(rep.attempts)} attempts, {rep.kept} kept; escalation level {rep.escalation}; agent cost ${rep.cost_usd:.2f}"
    )
    output.echo(f"kept: {sparkline(rep.kept_line)}")
    headers, cells = views.table_cells(rep.rows, rep.direction, last=10)
    output.write(output.shown(output.table(headers, cells)))  # (descriptions stored unmasked)


def _kept_change(rep: RunReport) -> dict[str, float | None] | None:
    changes = rep.keep_changes
    if not changes or rep.imported or rep.run == MEASURED or any(d is None for d, _ in changes):
        return None
    delta, pct = wording.kept_together(changes)
    return {"delta": delta, "pct": pct}
