from __future__ import annotations

import click

from gitimprove.errors import NotARepositoryError
from gitimprove.state import logview
from gitimprove.util import gitdir


@click.command("log")
@click.option("--run", "run_name", help="Only this run (manual experiments: --run '').")
@click.option("--round", "round_", type=int, help="Only this iteration (round) number.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(logview.FORMATS)),
    default="table",
    show_default=True,
    help="tsv: the autoresearch plugin's results TSV (its current 9 columns); tsv8, tsv7, tsv6: "
    "its older layouts; karpathy: Karpathy's results.tsv; jsonl: every field.",
)
@click.option("--no-cache", is_flag=True, help="Rebuild from the notes instead of the cache.")
def command(run_name: str | None, round_: int | None, fmt: str, no_cache: bool) -> None:
    """Show the results of every experiment, rebuilt from the notes (archived ones too).

    The TSV is byte for byte what the autoresearch plugin writes for the same rows (9 columns;
    `--format tsv7` and the like for its older eras); our finer status goes in brackets at the start of the
    description, and rows not yet measured are left out. A results file has one metric and one
    direction: rows of runs that differ in them are refused (choose one with --run); with no
    known direction, no direction line is written.
    """
    loc = gitdir.discover()
    if loc is None:
        raise NotARepositoryError(
            "not inside a git repository", hint="run this inside a repository"
        )
    out, err = logview.produce(loc, logview.Request(fmt, run_name, round_, no_cache))
    logview.write(out, err)
