from __future__ import annotations

import sys

import click

from gitimprove import output
from gitimprove.git.repo import open_repo
from gitimprove.memory import entries, reflect


def _interactive() -> bool:
    return sys.stdin.isatty()


@click.command("reflect")
@click.option("--list", "list_only", is_flag=True, help="List the candidates and stop.")
@click.option("--json", "as_json", is_flag=True, help="With --list: one JSON object per candidate.")
@click.option("--apply", "apply_id", help="Approve candidate ID (needs --to).")
@click.option(
    "--to",
    "target",
    type=click.Choice(reflect.TARGETS),
    help="project / global CLAUDE.md, or an improvement proposal.",
)
@click.option("--dismiss", "dismiss_id", help="Dismiss candidate ID.")
@click.option("--dismiss-all", is_flag=True, help="Dismiss every candidate (the escape hatch).")
def command(
    list_only: bool,
    as_json: bool,
    apply_id: str | None,
    target: str | None,
    dismiss_id: str | None,
    dismiss_all: bool,
) -> None:
    """Review captured signals one at a time, oldest first: add to project CLAUDE.md, to
    global CLAUDE.md, as an improvement proposal, or skip. Each answer is written at once
    (CLAUDE.md is backed up first); stop any time and the rest stay for next time.

    Scripts and the Claude Code plugin's /reflect use it without a terminal: `--list --json`
    (one candidate a line, oldest first), `--apply ID --to TARGET`, `--dismiss ID`,
    `--dismiss-all`."""
    repo = open_repo(need_work_tree=False)
    if dismiss_all:
        cands, _ = reflect.candidates(repo)
        for c in cands:
            reflect.dismiss(repo, c.id)
        output.emit_json({"dismissed": len(cands)}) if as_json else output.echo(
            f"dismissed {len(cands)}"
        )
        return
    if apply_id:
        if not target:
            raise click.UsageError("--apply needs --to project|global|proposal")
        result = reflect.apply(repo, apply_id, target)
        output.emit_json(result) if as_json else output.echo(
            f"{result['id']} -> {result['target']}"
        )
        return
    if dismiss_id:
        result = reflect.dismiss(repo, dismiss_id)
        output.emit_json(result) if as_json else output.echo(f"dismissed {result['id']}")
        return
    bad: list[entries.BadEntry] = []
    cands, dropped = reflect.candidates(repo, bad=bad)
    for entry in entries.not_quarantined(repo, bad):
        output.warn(f"unreadable memory entry, skipped: {entry}")
    if list_only or not _interactive():
        for c in cands:
            if as_json:
                output.shown_json(c.as_dict())
            else:
                output.echo(
                    f"{c.id}  {c.type:<16} {c.scope:<7} {c.kind:<12} conf {c.confidence}  "
                    f"{output.shown_clip(c.content, 80)}"
                )
        if not as_json:
            output.echo(
                f"{len(cands)} candidates; {dropped} already in CLAUDE.md, learnings or proposals"
            )
        return
    if not cands:
        output.echo(
            "nothing to reflect on" if not dropped else "all learnings are already captured"
        )
        return
    if len(cands) >= 10:
        choice = click.prompt(
            f"{len(cands)} candidates. [g]o one by one, [s]ummary first, skip [a]ll",
            type=click.Choice(["g", "s", "a"]),
            default="g",
        )
        if choice == "a":
            for c in cands:
                reflect.dismiss(repo, c.id)
            output.echo(f"dismissed {len(cands)}")
            return
        if choice == "s":
            for i, c in enumerate(cands, 1):
                output.echo(f"{i:3}. [{c.type}] {output.shown_clip(c.content, 100)}")
    for i, c in enumerate(cands, 1):
        output.echo(
            f"\nLearning {i} of {len(cands)} — {c.type} (first seen {c.first_seen[:10]}, {c.sessions} session(s))\n"
        )
        output.echo(f"  {output.shown(c.content)}\n")
        if c.context:
            output.echo(f"  Context: {output.shown_clip(c.context, 300)}")
        output.echo(f"  Confidence: {c.confidence}; suggested: {c.scope} {c.kind}")
        answer = click.prompt(
            "[p]roject CLAUDE.md, [g]lobal CLAUDE.md, [i]mprovement proposal, [s]kip, [q]uit",
            type=click.Choice(["p", "g", "i", "s", "q"]),
            default="p" if c.kind == "agent-side" else "i",
        )
        if answer == "q":
            output.echo("stopped; the rest stay for next time")
            return
        if answer == "s":
            reflect.dismiss(repo, c.id)
            continue
        result = reflect.apply(repo, c.id, {"p": "project", "g": "global", "i": "proposal"}[answer])
        output.echo(f"  -> {result['target']}")
