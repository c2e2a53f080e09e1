from __future__ import annotations

import os

import click

from gitimprove import output
from gitimprove.git.repo import open_repo
from gitimprove.memory import entries, signals


@click.group("signal")
def command() -> None:
    """Learning signals on the memory branch (captured by hooks, or added here)."""


@command.command("add")
@click.option("--type", "type_", required=True, type=click.Choice(signals.TYPES))
@click.option("--content", required=True, help="The learning, one sentence.")
@click.option("--context", default="", help="Where it came from.")
@click.option("--category", type=click.Choice(signals.CATEGORIES))
@click.option("--tag", "tags", multiple=True)
@click.option("--confidence", type=click.IntRange(1, 4), default=2, show_default=True)
def add(
    type_: str,
    content: str,
    context: str,
    category: str | None,
    tags: tuple[str, ...],
    confidence: int,
) -> None:
    """Capture a signal (for agents, skills and people); secrets are masked first."""
    if not content.strip():
        raise click.BadParameter("the content is empty", param_hint="--content")
    repo = open_repo(need_work_tree=False)
    sig = signals.make_signal(
        type_=type_,
        content=content,
        context=context,
        category=category,
        tags=tags,
        confidence=confidence,
        session=os.environ.get("CLAUDE_SESSION_ID"),
        hook="cli",
    )
    signals.add_now(repo, sig)
    output.echo(f"captured {sig['id']}")


@command.command("list")
@click.option(
    "--all", "show_all", is_flag=True, help="Include promoted, dismissed and expired signals."
)
@click.option("--json", "as_json", is_flag=True)
def list_(show_all: bool, as_json: bool) -> None:
    """List signals, oldest first."""
    repo = open_repo(need_work_tree=False)
    signals.flush(repo)
    bad: list[entries.BadEntry] = []
    sigs = signals.all_signals(repo, bad=bad)
    if not show_all:
        keep = {s["id"] for g in signals.groups(sigs) for s in g.signals}
        sigs = [s for s in sigs if s["id"] in keep and s.get("status") == "captured"]
    for s in sigs:  # masked: an older gitimprove stored them as they came
        if as_json:
            output.shown_json(s)
        else:
            output.echo(
                f"{s['id']}  {s.get('status')!s:<9} {s.get('type')!s:<16} "
                f"{output.shown_clip(str(s.get('content')), 90)}"
            )
    for entry in entries.not_quarantined(repo, bad):
        output.warn(f"unreadable memory entry, skipped (kept as is): {entry}")
