from __future__ import annotations

from collections.abc import Callable

import click

from gitimprove import output
from gitimprove.git.repo import open_repo
from gitimprove.hooks import install


@click.group("hooks")
def command() -> None:
    """Install, remove and inspect gitimprove's hooks: git (post-commit, pre-push) and
    Claude Code. Users of the pre-commit framework can use .pre-commit-hooks.yaml instead."""


def _options(f: Callable[..., None]) -> Callable[..., None]:
    f = click.option(
        "--scope",
        type=click.Choice(install.SCOPES),
        default="project",
        show_default=True,
        help="Claude Code settings: project (.claude/settings.json, committed: shell form "
        "`git improve hook <Event>` resolved through PATH), local (.claude/settings.local.json) "
        "or user (~/.claude/settings.json): this machine's interpreter, absolute.",
    )(f)
    f = click.option("--claude", "claude", is_flag=True, help="Claude Code hooks.")(f)
    return click.option(
        "--git", "git_", is_flag=True, help="Git hooks: post-commit and pre-push shims."
    )(f)


@command.command("install")
@_options
def install_cmd(git_: bool, claude: bool, scope: str) -> None:
    """Install hooks, keeping every other setting and hook; running it twice changes nothing.

    With neither --git nor --claude, both. An existing git hook is kept as <hook>.legacy and
    still runs before gitimprove's."""
    if not git_ and not claude:
        git_ = claude = True
    repo = open_repo(need_work_tree=git_ or scope != "user")
    if git_:
        assert repo.work_tree is not None
        for event, state in install.install_git(repo.work_tree).items():
            output.echo(f"git {event}: {state}")
    if claude:
        path, changed = install.install_claude(scope, repo.work_tree)
        output.echo(f"claude: {'installed' if changed else 'already installed'} in {path}")
        if scope == "local" and repo.work_tree is not None:
            notice = install.ignore_local_settings(repo.work_tree)
            if notice:
                output.echo(notice)


@command.command("uninstall")
@_options
def uninstall_cmd(git_: bool, claude: bool, scope: str) -> None:
    """Remove only gitimprove's hooks; a git hook it replaced comes back byte for byte."""
    if not git_ and not claude:
        git_ = claude = True
    repo = open_repo(need_work_tree=git_ or scope != "user")
    if git_:
        assert repo.work_tree is not None
        for event, state in install.uninstall_git(repo.work_tree).items():
            output.echo(f"git {event}: {state}")
    if claude:
        path, changed = install.uninstall_claude(scope, repo.work_tree)
        output.echo(f"claude: {'removed' if changed else 'nothing to remove'} in {path}")


@command.command("status")
@click.option("--json", "as_json", is_flag=True)
def status_cmd(as_json: bool) -> None:
    """Show which hooks are installed: git hooks, and Claude Code per settings scope."""
    repo = open_repo(need_work_tree=False)
    claude = install.status_claude(repo.work_tree)
    git_status = install.status_git(repo.work_tree) if repo.work_tree else {}
    if as_json:
        output.emit_json({"claude": claude, "git": git_status})
        return
    for event, state in git_status.items():
        output.echo(f"git {event}: {state}")
    for scope, events in claude.items():
        on = [e for e, v in events.items() if v]
        output.echo(f"claude ({scope}): " + (", ".join(on) if on else "not installed"))
