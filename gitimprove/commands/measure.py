from __future__ import annotations

import click

from gitimprove import output
from gitimprove.commands._common import repo_and_config
from gitimprove.loop.measure import measure_commits


@click.command("measure")
@click.argument("commits", nargs=-1)
@click.option("--runs", type=click.IntRange(1, 100), help="Runs per arm (default: metric.runs, 3).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per measured commit.")
def command(commits: tuple[str, ...], runs: int | None, as_json: bool) -> None:
    """Measure experiment commits made outside the loop and record keep or discard.

    Each commit is measured in a separate checkout, interleaved with fresh runs of its
    nearest measured ancestor, and the decision goes into its note (a deterministic metric:
    one run, compared exactly with the ancestor's recorded value). With no COMMITS, every
    `experiment(...)` commit of the current branch without a result (pending or never
    recorded) is measured, oldest first.
    """
    repo, cfg = repo_and_config()
    progress = None if as_json else (lambda msg: output.echo(f"  {msg}"))
    outcomes = measure_commits(repo, cfg, list(commits) or None, runs=runs, progress=progress)
    if as_json:
        for o in outcomes:
            output.emit_json(
                {
                    "commit": o.commit,
                    "status": o.status,
                    "reason": o.reason,
                    "value": o.value,
                    "parent": o.parent,
                }
            )
        return
    if not outcomes:
        output.echo("nothing to measure: every experiment(...) commit of this branch has a result")
        return
    for o in outcomes:
        output.echo(f"{o.commit[:10]} {o.status}: {o.reason}")
