from __future__ import annotations

import click

from gitimprove import output
from gitimprove.git.repo import open_repo
from gitimprove.loop.report import plot, run_report


@click.command("plot")
@click.option("-o", "--output", "path", required=True, help="The PNG file to write.")
@click.option("--run", "run_name", help="Which run (default: the most recent).")
def command(path: str, run_name: str | None) -> None:
    """Plot every attempt of a run and the best-so-far line to a PNG (needs matplotlib)."""
    plot(run_report(open_repo(need_work_tree=False), run_name), path)
    output.echo(f"wrote {path}")
