from __future__ import annotations

import json
import secrets

import click

from gitimprove import output
from gitimprove.git import memory
from gitimprove.git.repo import open_repo
from gitimprove.memory import entries
from gitimprove.util.clock import utc_now


@click.group("idea")
def command() -> None:
    """Ideas for the loop: each one is shown to the agent in later rounds."""


@command.command("add")
@click.argument("text", nargs=-1, required=True)
def add(text: tuple[str, ...]) -> None:
    """Add an idea (stored on the memory branch under ideas/)."""
    body = " ".join(text).strip()
    if not body:
        raise click.BadParameter("the idea is empty")
    entry = {"v": 1, "id": secrets.token_hex(6), "ts": utc_now(), "text": body, "status": "pending"}
    path = memory.entry_name("ideas", "json")
    memory.add_entries(
        open_repo(need_work_tree=False),
        {path: json.dumps(entry, sort_keys=True) + "\n"},
        message="gitimprove: add idea",
    )
    output.echo(f"idea {entry['id']} added; the agent sees it from the next round")


@command.command("list")
def list_() -> None:
    """List the ideas."""
    repo = open_repo(need_work_tree=False)
    bad: list[entries.BadEntry] = []
    for idea in entries.ideas(repo, bad=bad):  # masked: an older gitimprove stored them as is
        text = output.shown(str(idea["text"]))
        output.echo(f"{idea.get('id')}  {idea.get('status') or 'pending':<9} {text}")
    for entry in entries.not_quarantined(repo, bad):
        output.warn(f"unreadable entry, skipped: {entry}")
