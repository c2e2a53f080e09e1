from __future__ import annotations

import click

from gitimprove import output
from gitimprove.git.repo import open_repo
from gitimprove.git.sync import sync


@click.command("sync")
@click.argument("args", nargs=-1, metavar="[push|pull] [REMOTE]")
@click.option("--json", "as_json", is_flag=True, help="The report as one JSON object.")
def command(args: tuple[str, ...], as_json: bool) -> None:
    """Share experiment notes, the memory branch, the archive, session refs and run markers
    with REMOTE (default: the branch's upstream, else origin), losing no record on either side.

    Signals captured by hooks are moved from the local spool onto the memory branch first.
    `sync` fetches, merges and pushes; `sync pull` only fetches and merges; `sync push` does
    both and insists on pushing. Nothing is ever force-pushed."""
    mode, rest = "both", list(args)
    if rest and rest[0] in ("push", "pull"):
        mode = rest.pop(0)
    if len(rest) > 1:
        raise click.UsageError("give at most one remote")
    report = sync(open_repo(need_work_tree=False), rest[0] if rest else None, mode=mode)
    if as_json:
        output.emit_json(report.__dict__)
        return
    came = f"{report.notes_lines_in} note lines, {report.memory_entries_in} memory entries, {report.sessions_in} session markers, {report.runs_in} run markers"
    came += ", the archive" if report.archive_merged else ""
    output.echo(f"from {report.remote}: {came}")
    for name in report.conflicts:
        output.warn(f"{name} differs here and on {report.remote}; each side keeps its own")
    if report.held_messages:
        output.warn(
            f"refs/improve/archive not pushed: {report.held_messages} commit message(s) "
            "gitimprove wrote (an older version) hold a secret, and pushing the archive would "
            "share them; `git improve doctor --secrets` names them (docs/secrets.md)"
        )
    for ref, count in report.masked_history.items():
        output.warn(
            f"{ref}: {count} local version(s) never pushed held a secret; pushed as one masked "
            f"commit instead (the old versions stay in this clone until `git reflog expire "
            f"--expire=now --all && git gc --prune=now`; see docs/secrets.md)"
        )
    if mode != "pull":
        output.echo(
            f"to {report.remote}: "
            + (", ".join(report.pushed) if report.pushed else "nothing to push")
        )
