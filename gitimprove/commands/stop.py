from __future__ import annotations

import click

from gitimprove import output
from gitimprove.git.repo import open_repo
from gitimprove.loop.runs import request_stop


@click.command("stop")
@click.option("--run", "run_name", help="The run to stop (default: the latest unfinished one).")
def command(run_name: str | None) -> None:
    """Ask a running loop to stop after its current round (refs/improve/runs/<run>/stop)."""
    run = request_stop(open_repo(need_work_tree=False), run_name)
    output.echo(f"run {run} will stop after its current round")
