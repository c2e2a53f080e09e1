from __future__ import annotations

from collections.abc import Callable

import click

from gitimprove import output
from gitimprove.git.repo import open_repo
from gitimprove.hooks import install


@click.group("hooks")
def command() -> None:
    """Install, remove and inspect gitimprove's hooks (Claude Code; git hooks with --git)."""


def _scope_option(f: Callable[..., None]) -> Callable[..., None]:
    return click.option(
        "--scope",
        type=click.Choice(install.SCOPES),
        default="project",
        show_default=True,
        help="project: .claude/settings.json; local: .claude/settings.local.json; user: ~/.claude/settings.json",
    )(f)


@command.command("install")
@click.option("--claude", "claude", is_flag=True, help="Claude Code hooks.")
@_scope_option
def install_cmd(claude: bool, scope: str) -> None:
    """Install hooks, keeping every other setting and hook. Running it twice changes nothing."""
    if not claude:
        raise click.UsageError("say which hooks: --claude")
    repo = open_repo(need_work_tree=scope != "user")
    path, changed = install.install_claude(scope, repo.work_tree)
    output.echo(
        f"{'installed' if changed else 'already installed'}: gitimprove's Claude Code hooks in {path}"
    )


@command.command("uninstall")
@click.option("--claude", "claude", is_flag=True, help="Claude Code hooks.")
@_scope_option
def uninstall_cmd(claude: bool, scope: str) -> None:
    """Remove only gitimprove's hooks."""
    if not claude:
        raise click.UsageError("say which hooks: --claude")
    repo = open_repo(need_work_tree=scope != "user")
    path, changed = install.uninstall_claude(scope, repo.work_tree)
    output.echo(
        f"{'removed' if changed else 'nothing to remove'}: gitimprove's Claude Code hooks in {path}"
    )


@command.command("status")
@click.option("--json", "as_json", is_flag=True)
def status_cmd(as_json: bool) -> None:
    """Show which hooks are installed, per settings scope."""
    repo = open_repo(need_work_tree=False)
    status = install.status_claude(repo.work_tree)
    if as_json:
        output.emit_json({"claude": status})
        return
    for scope, events in status.items():
        on = [e for e, v in events.items() if v]
        output.echo(f"claude ({scope}): " + (", ".join(on) if on else "not installed"))
