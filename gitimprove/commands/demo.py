from __future__ import annotations

import shutil
from pathlib import Path

import click

from gitimprove import output
from gitimprove.commands.run import render
from gitimprove.git import refs
from gitimprove.git.repo import open_repo
from gitimprove.loop import demo
from gitimprove.loop.engine import Engine, RunOptions
from gitimprove.loop.setup import set_rewrite_ref
from gitimprove.state import views
from gitimprove.util import gitdir


@click.command("demo")
@click.argument(
    "directory", default="gitimprove-demo", type=click.Path(file_okay=False, path_type=Path)
)
@click.option("--iterations", "-n", type=click.IntRange(1), default=30, show_default=True)
@click.option(
    "--candidates",
    "-k",
    type=click.IntRange(1, 7),
    default=1,
    show_default=True,
    help="Candidates per round (a tournament).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the scripted agent.")
@click.option("--json", "as_json", is_flag=True, help="One JSON event per line.")
def command(directory: Path, iterations: int, candidates: int, seed: int, as_json: bool) -> None:
    """Run the whole loop on a built-in example, offline: a new repository holding a
    black-box minimizer scored on Rastrigin, Rosenbrock and Ackley (lower is better;
    random search scores about 2.5), improved by the built-in scripted agent.
    """
    path = demo.create(directory.resolve(), iterations, candidates)
    if not as_json:
        output.echo(f"created {path} (minimizer.py is improved; evaluate.py is sealed)")
    repo = open_repo(path)
    set_rewrite_ref(repo)  # as `init` does: amend and rebase keep the notes
    try:
        summary = Engine(
            repo,
            RunOptions(run="demo", seed=seed, candidates=candidates),
            output.emit_json if as_json else render,
        ).run()
    except BaseException:
        if repo.ref_target(refs.run_branch("demo")) is None:  # interrupted before it began
            shutil.rmtree(path, ignore_errors=True)
        raise
    if as_json:
        return
    loc = gitdir.discover(str(path))
    assert loc is not None
    rows = views.select(views.load_rows(loc), run="demo")
    headers, cells = views.table_cells(rows, "lower")
    output.echo("")
    output.write(output.table(headers, cells))
    output.echo("")
    if summary.baseline is not None and summary.best is not None:
        output.echo(
            f"score {summary.baseline:.4f} -> {summary.best:.4f} ({summary.keeps} kept of {summary.attempts} attempts)"
        )
    output.echo(f"every record lives in git, in {path}:")
    output.echo("  improve/demo            the kept experiments (git log improve/demo)")
    output.echo(
        "  refs/notes/improve      one note per attempt (git improve log, git improve show <commit>)"
    )
    output.echo(
        "  refs/improve/archive    every attempt, kept alive (git log refs/improve/archive)"
    )
    output.echo("  refs/improve/runs/demo  the run's base and stop markers")
    output.echo(f"try: cd {path} && git improve status && git improve log --format tsv")
