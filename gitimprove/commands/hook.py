from __future__ import annotations

import click


@click.command("hook", context_settings={"ignore_unknown_options": True})
@click.argument("event")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def command(event: str, args: tuple[str, ...]) -> int:
    """Entry point for git hooks and Claude Code hooks (`git improve hook post-commit`).

    Never fails a commit or a session because of gitimprove's own error: it logs to
    <git-common-dir>/improve/hooks.log and exits 0.
    """
    from gitimprove.hooks import entry

    return entry.main([event, *args])
