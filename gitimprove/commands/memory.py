from __future__ import annotations

from pathlib import Path

import click

from gitimprove import config, output
from gitimprove.errors import ConfigError
from gitimprove.git.repo import open_repo
from gitimprove.memory import entries, render, signals
from gitimprove.util.files import atomic_write


@click.command("memory")
@click.option(
    "--output",
    "-o",
    "path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write MEMORY.md here instead of printing it.",
)
def command(path: Path | None) -> None:
    """Print MEMORY.md: newest session summaries and approved learnings first, at most
    memory.max_lines lines (pruned to 90% so an agent can append)."""
    repo = open_repo(need_work_tree=False)
    signals.flush(repo)
    max_lines, ttl = 200, 14
    if repo.work_tree is not None:
        try:
            cfg = config.load(repo.work_tree, repo.config_items("improve."))
            max_lines, ttl = (
                int(cfg.get("memory", "max_lines")),
                int(cfg.get("memory", "signal_ttl_days")),
            )
        except ConfigError:
            pass
    bad: list[entries.BadEntry] = []
    # masked again: records an older gitimprove stored unmasked (never repaired with `doctor
    # --secrets --repair`) would otherwise reach a MEMORY.md in the work tree, one `git add`
    # from a commit (a view of at most max_lines lines: cheap)
    text = output.shown(render.render(repo, max_lines=max_lines, ttl_days=ttl, bad=bad))
    for entry in bad:
        output.warn(f"unreadable memory entry, skipped (kept as is): {entry}")
    if path is None:
        output.write(text)
    else:
        atomic_write(path, text)
        output.echo(f"wrote {path} ({text.count(chr(10))} lines)")
