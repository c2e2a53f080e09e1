from __future__ import annotations

from pathlib import Path

import click

from gitimprove import output
from gitimprove.git import gitfiles
from gitimprove.git.gitfiles import LIMITS
from gitimprove.git.listing import git_inputs
from gitimprove.git.repo import open_repo, unreadable
from gitimprove.git.watch import packed_refs_dies, packed_refs_problem
from gitimprove.hooks import install
from gitimprove.loop.repair import check_phantoms
from gitimprove.state.doctor import Check, run_checks


@click.command("doctor")
@click.option("--repair", is_flag=True, help="Fix what can be fixed safely.")
@click.option(
    "--secrets",
    is_flag=True,
    help="Also search every gitimprove ref (notes, memory, imports, commit messages, history) "
    "for secrets already stored.",
)
@click.option(
    "--drop-history",
    is_flag=True,
    help="Together with --secrets and --repair, make the notes and the memory branch one commit each when "
    "their history holds a secret and they were never pushed.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per check.")
def command(repair: bool, secrets: bool, drop_history: bool, as_json: bool) -> int:
    """Check configuration, stored formats, notes.rewriteRef, locks and workspaces.

    Each problem is named with its fix; --repair sets notes.rewriteRef and removes stale
    workspaces, lock files and runs that never recorded anything. What changed in your
    repository while a run was killed during its agent call is named; --repair accepts it
    (you made it) so the run can go on. With --secrets it also
    finds secrets stored in gitimprove's records, and --repair masks them in a new notes /
    memory commit; old versions in the history and commit messages can only go by rewriting
    history, which it explains; --drop-history does it for the notes and the memory branch
    when they were never pushed. Secrets are shown masked, never in the clear.
    Exits 1 when a problem remains.
    """
    if drop_history and not (secrets and repair):
        raise click.UsageError("--drop-history needs --secrets --repair")
    unsafe = unreadable(Path.cwd(), refs=True)  # before anything opens them: never a hang
    if unsafe and repair:  # a loose object that is no file: moved aside, as a damaged one
        unsafe = _move_objects_aside(unsafe, as_json)
    repo = None if unsafe else open_repo(need_work_tree=False)
    if repo is not None and repo.work_tree is not None:  # what `git status` would hang on
        unsafe = [f"work tree: {p}" for p in git_inputs(repo.work_tree, LIMITS["list"])]
    if unsafe:
        fix = (
            "put a regular file back in each place (a FIFO or a huge file there hangs every "
            "git command); move the thing itself aside, never read it"
        )
        for item in unsafe:
            check = "work tree" if item.startswith("work tree: ") else "git directory"
            if as_json:
                output.emit_json({"check": check, "ok": False, "message": item, "fix": fix})
            else:
                output.echo(f"[FAIL] {check}: {item}\n        fix: {fix}")
        return 1
    assert repo is not None
    dies = packed_refs_dies(repo)  # before anything reads the refs: libgit2 fails on them
    if dies is not None:
        message = f".git/packed-refs holds a line git dies on ({dies})"
        fix = "git improve doctor --repair (writes it again as git does, every ref kept)"
        if repair:
            packed_refs_problem(repo, repair=True)
        if as_json:
            output.emit_json(
                {"check": "packed-refs", "ok": False, "repaired": repair, "message": message}
                | ({} if repair else {"fix": fix})
            )
        else:
            output.echo(f"[{'fixed' if repair else 'FAIL'}] packed-refs: {message}")
            if not repair:
                output.echo(f"        fix: {fix}")
        if not repair:
            return 1
    extra: list[Check] = [lambda r, fix: install.check_shims(r.work_tree, fix), check_phantoms]
    if secrets:
        from gitimprove.state import secrets as stored

        extra.append(lambda r, fix: stored.check(r, fix, drop=drop_history))
    findings = run_checks(repo, repair=repair, extra=extra)
    for f in findings:
        if as_json:
            output.emit_json(f.__dict__)
            continue
        mark = "ok " if f.ok else ("fixed" if f.repaired else "FAIL")
        output.echo(f"[{mark}] {f.check}: {f.message}")
        if not f.ok and f.fix and not f.repaired:
            output.echo(f"        fix: {f.fix}")
    return 0 if all(f.ok or f.repaired for f in findings) else 1


def _move_objects_aside(unsafe: list[str], as_json: bool) -> list[str]:
    """Move each loose object `unsafe` names (a FIFO, a socket, a link, a folder in its
    place) to `.git/improve/quarantine/`, never opened; what is left to name."""
    found = gitfiles.locate(Path.cwd())
    if found is None or isinstance(found, str):
        return unsafe
    git_dir, common = found
    objects = [
        item
        for item in unsafe
        if item.startswith(".git/objects/") and "/pack/" not in item and "/info/" not in item
    ]
    moved = gitfiles.move_aside(git_dir, common, common / "improve", objects)
    for path in moved:
        message = f"{path} moved to .git/improve/quarantine/ (it was no regular file)"
        if as_json:
            output.emit_json(
                {"check": "git directory", "ok": True, "repaired": True, "message": message}
            )
        else:
            output.echo(f"[fixed] git directory: {message}")
    left = [item for item in unsafe if not any(item.startswith(p + " ") for p in moved)]
    return left
