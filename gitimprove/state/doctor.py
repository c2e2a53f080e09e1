"""`git improve doctor`: name every problem with its fix; `--repair` applies the safe ones."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Sequence

from filelock import FileLock, Timeout

from gitimprove import config
from gitimprove.errors import GitImproveError
from gitimprove.git import memory, notes, refs
from gitimprove.git.checkout import remove_workspace, stale_workspaces
from gitimprove.git.repo import Repo
from gitimprove.memory import signals, spool
from gitimprove.state import integrity
from gitimprove.state.findings import Finding
from gitimprove.state.records import parse_note

__all__ = ["Check", "Finding", "run_checks"]


# A check that lives above this layer (e.g. the git hook shims), passed in by the command.
Check = Callable[[Repo, bool], list[Finding]]


def run_checks(repo: Repo, *, repair: bool = False, extra: Sequence[Check] = ()) -> list[Finding]:
    out: list[Finding] = []
    # configuration
    if repo.work_tree is None:
        out.append(
            Finding(
                "config",
                False,
                "bare repository: no .gitimprove.toml to check",
                "use a clone with a work tree",
            )
        )
    else:
        try:
            config.load(repo.work_tree, repo.config_items("improve."))
            out.append(Finding("config", True, f"{config.CONFIG_FILE} is valid"))
        except GitImproveError as exc:
            out.append(Finding("config", False, exc.message, exc.hint or "fix the file"))
    # notes.rewriteRef
    try:
        values = list(repo.raw.config.get_multivar("notes.rewriteRef"))
    except Exception:
        values = []
    if refs.NOTES in values:
        out.append(Finding("notes.rewriteRef", True, "set: amend and rebase keep experiment notes"))
    else:
        f = Finding(
            "notes.rewriteRef",
            False,
            "notes.rewriteRef does not include refs/notes/improve: amend and rebase drop experiment notes",
            f"git config --add notes.rewriteRef {refs.NOTES}",
        )
        if repair:
            repo.raw.config.set_multivar("notes.rewriteRef", "^$", refs.NOTES) if values else None
            if not values:
                repo.raw.config["notes.rewriteRef"] = refs.NOTES
            f.repaired = True
        out.append(f)
    # notes readable
    total = bad = 0
    for commit, data in notes.iter_notes(repo):
        total += 1
        parsed = parse_note(data.decode("utf-8", errors="replace"))
        if parsed.raw:
            bad += 1
            out.append(
                Finding(
                    "notes",
                    False,
                    f"the note on {commit[:10]} has {len(parsed.raw)} unreadable line(s); they are shown raw and skipped",
                    f"inspect with `git notes --ref=improve show {commit[:10]}`; newer-version lines need a newer gitimprove",
                )
            )
    if not bad:
        out.append(Finding("notes", True, f"{total} experiment notes, all readable"))
    # memory FORMAT
    raw = memory.read_entry(repo, "FORMAT")
    if repo.ref_target(refs.MEMORY) is None:
        out.append(Finding("memory", True, "no memory branch yet"))
    elif raw is None:
        out.append(
            Finding(
                "memory",
                False,
                "the memory branch has no FORMAT file",
                "it is added by the next memory write",
            )
        )
    else:
        try:
            fmt = json.loads(raw)
            ok = int(fmt.get("min_reader", 1)) <= memory.LAYOUT
        except (ValueError, AttributeError, TypeError):
            ok = False
        out.append(
            Finding("memory", True, f"memory branch layout {fmt.get('layout')}")
            if ok
            else Finding(
                "memory",
                False,
                "the memory branch FORMAT is unreadable or newer than this gitimprove",
                "upgrade gitimprove",
            )
        )
    # stale locks
    lock_dir = repo.common_dir / "improve" / "locks"
    stale_locks = []
    if lock_dir.is_dir():
        for path in sorted(lock_dir.glob("*.lock")):
            lock = FileLock(str(path), timeout=0)
            try:
                with lock:
                    stale_locks.append(path)
            except Timeout:
                out.append(
                    Finding(
                        "locks",
                        False,
                        f"{path.name} is held by a running process",
                        "wait for it to finish",
                    )
                )
    if stale_locks and repair:
        for path in stale_locks:
            try:
                path.unlink()
            except OSError:
                pass
    out.append(Finding("locks", True, f"no lock is held ({len(stale_locks)} free lock files)"))
    # the capture spool
    improve_dir = str(repo.common_dir / "improve")
    waiting = spool.pending(improve_dir)
    tmp = spool.stale_tmp(improve_dir)
    if waiting or tmp:
        f = Finding(
            "spool",
            False,
            f"{len(waiting)} captured entries wait in the spool"
            + (f", {len(tmp)} stale temp files" if tmp else ""),
            "git improve doctor --repair (or any memory command) moves them to the memory branch",
        )
        if repair:
            signals.flush(repo)
            for leftover in tmp:
                with contextlib.suppress(OSError):
                    os.unlink(leftover)
            f.repaired = True
        out.append(f)
    else:
        out.append(Finding("spool", True, "no captured entries waiting"))
    for check in extra:
        out.extend(check(repo, repair))
    # processes of interrupted runs (before their workspaces go), incidents, run branches
    out.extend(integrity.checks(repo, repair))
    # stale workspaces
    stale = stale_workspaces(repo)
    if stale:
        f = Finding(
            "workspaces",
            False,
            f"{len(stale)} workspace(s) left by a process that is gone: "
            + ", ".join(p.name for p in stale),
            "git improve doctor --repair",
        )
        if repair:
            for path in stale:
                remove_workspace(path)
            f.repaired = True
        out.append(f)
    else:
        out.append(Finding("workspaces", True, "no stale workspaces"))
    return out
