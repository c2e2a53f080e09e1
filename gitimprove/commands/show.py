from __future__ import annotations

import json

import click

from gitimprove import output
from gitimprove.git import history
from gitimprove.git.repo import open_repo
from gitimprove.state import experiments, views


@click.command("show")
@click.argument("commit", default="HEAD")
@click.option("--json", "as_json", is_flag=True, help="The folded record as one JSON object.")
def command(commit: str, as_json: bool) -> None:
    """Show one experiment: its commit, diff stat and every recorded field."""
    repo = open_repo(need_work_tree=False)
    info = history.info(repo, commit)
    exp = experiments.get(repo, info.id)
    if as_json:
        record = exp.to_row() if exp else {"commit": info.id}
        text = json.dumps(record, sort_keys=True, ensure_ascii=False)
        output.echo(output.shown(text, json_lines=True))
        return
    # (records and messages an older gitimprove stored unmasked are shown masked)
    say = _say
    output.echo(f"commit {info.id}")
    say(f"author {info.author}")
    output.echo("")
    for line in info.message.rstrip().splitlines():
        say(f"    {line}")
    output.echo("")
    output.write(history.diff_stat(repo, info.id))
    output.echo("")
    imported = experiments.imported_on(repo, info.id)
    for row in imported:
        source = row.state.get("source") if isinstance(row.state.get("source"), dict) else {}
        assert isinstance(source, dict)
        value = "-" if row.value is None else f"{row.value:g}"
        say(
            f"imported from {source.get('file', '?')}:{source.get('line', '?')}: "
            f"{row.status} {value} {row.description}".rstrip()
        )
    if exp is None:
        if not imported:
            output.echo("no experiment record on this commit")
        return
    for key in sorted(exp.state):
        value = exp.state[key]
        text = (
            json.dumps(value, sort_keys=True, ensure_ascii=False)
            if isinstance(value, dict | list)
            else str(value)
        )
        say(f"{key}: {text}")
    for line in exp.raw:  # `<why>: <preview>`, from the tolerant reader
        say(f"unreadable line (kept as is, see `git improve doctor`): {line}")
    if exp.round is not None:
        siblings = [
            e
            for e in experiments.all_experiments(repo)
            if e.run == exp.run and e.iteration == exp.round
        ]
        output.echo("")
        output.write(output.shown(views.render_round(siblings)))


def _say(text: str) -> None:
    output.echo(output.shown(text))
