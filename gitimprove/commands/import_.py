from __future__ import annotations

from pathlib import Path

import click

from gitimprove import output
from gitimprove.git.repo import open_repo
from gitimprove.state.imports import import_file


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--metric-column",
    metavar="NAME",
    help="The column that holds the metric, when a file has several numeric columns.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def command(file: Path, metric_column: str | None, as_json: bool) -> None:
    """Import results: Karpathy's results.tsv, autoresearch's TSV, pi-autoresearch's JSONL.

    Every row becomes a record of its own, even rows that share a commit. Rows whose commit
    exists become notes on it; rows that name no commit (`-`, `baseline`, `pending`) or whose
    commit is gone are kept on the memory branch under imports/. All appear in
    `git improve log`. Statuses are mapped and kept verbatim; pi's segments become runs of
    their own. A file that does not state which way is better gets the direction its kept
    rows show, or none. The file is checked whole first, so a bad row imports nothing;
    importing the same file again (or a later snapshot of it) adds only rows not imported yet.
    """
    from gitimprove.redaction import redact

    report = import_file(open_repo(need_work_tree=False), file, metric_column=metric_column)
    if as_json:
        output.emit_json(report.__dict__)
        return
    output.echo(
        f"{redact(file.name)} ({report.fmt}): {report.rows} rows; {report.as_notes} recorded as notes, "
        f"{report.kept_aside} kept under imports/ (no commit, or commit gone), "
        f"{report.already} already imported"
        + (f"; runs {', '.join(report.runs)}" if report.runs else "")
    )
    if report.rows and report.direction_from == "inferred":
        output.echo(
            f"the file does not say which way is better; its kept rows show {report.direction} "
            "is better, recorded as inferred"
        )
    elif report.rows and not report.direction:
        output.echo(
            "the file does not say which way is better, nor do its kept rows agree on it: "
            "no direction is recorded"
        )
