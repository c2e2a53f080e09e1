from __future__ import annotations

import click

from gitimprove import output
from gitimprove.git.repo import open_repo
from gitimprove.hooks import install
from gitimprove.loop.repair import check_phantoms
from gitimprove.state.doctor import run_checks


@click.command("doctor")
@click.option("--repair", is_flag=True, help="Fix what can be fixed safely.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per check.")
def command(repair: bool, as_json: bool) -> int:
    """Check configuration, stored formats, notes.rewriteRef, locks and workspaces.

    Each problem is named with its fix; --repair sets notes.rewriteRef and removes stale
    workspaces, lock files and runs that never recorded anything. Exits 1 when a problem
    remains.
    """
    repo = open_repo(need_work_tree=False)
    findings = run_checks(
        repo,
        repair=repair,
        extra=[lambda r, fix: install.check_shims(r.work_tree, fix), check_phantoms],
    )
    for f in findings:
        if as_json:
            output.emit_json(f.__dict__)
            continue
        mark = "ok " if f.ok else ("fixed" if f.repaired else "FAIL")
        output.echo(f"[{mark}] {f.check}: {f.message}")
        if not f.ok and f.fix and not f.repaired:
            output.echo(f"        fix: {f.fix}")
    return 0 if all(f.ok or f.repaired for f in findings) else 1
