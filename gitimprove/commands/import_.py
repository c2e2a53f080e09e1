from __future__ import annotations

from pathlib import Path

import click

from gitimprove import output
from gitimprove.git.repo import open_repo
from gitimprove.state.imports import import_file


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def command(file: Path, as_json: bool) -> None:
    """Import results: Karpathy's results.tsv, autoresearch's TSV, pi-autoresearch's JSONL.

    Rows whose commit exists become notes on it; rows whose commit is gone are kept on the
    memory branch under imports/ and still appear in `git improve log`. The file is checked
    whole first, so a bad row imports nothing; importing the same rows again adds nothing.
    """
    report = import_file(open_repo(need_work_tree=False), file)
    if as_json:
        output.emit_json(report.__dict__)
        return
    output.echo(
        f"{file.name} ({report.fmt}): {report.rows} rows; {report.as_notes} recorded as notes, "
        f"{report.kept_aside} kept under imports/ (commit gone), {report.already} already imported"
    )
