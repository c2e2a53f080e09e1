"""`git improve doctor`: name every problem with its fix; `--repair` applies the safe ones."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence

from gitimprove import config
from gitimprove.errors import GitImproveError
from gitimprove.git import caches, memory, notes, refs, strays
from gitimprove.git.checkout import remove_workspace, stale_workspaces
from gitimprove.git.repo import Repo
from gitimprove.memory import entries, signals, spool
from gitimprove.state import integrity
from gitimprove.state.findings import Finding
from gitimprove.state.records import parse_note
from gitimprove.util import flocks

__all__ = ["Check", "Finding", "run_checks"]

SHOWN = 10  # problems named one by one; the rest are counted


# A check that lives above this layer (e.g. the git hook shims), passed in by the command.
Check = Callable[[Repo, bool], list[Finding]]


def run_checks(repo: Repo, *, repair: bool = False, extra: Sequence[Check] = ()) -> list[Finding]:
    out: list[Finding] = []
    # configuration
    if repo.work_tree is None:  # a shared remote: records only, nothing to configure
        out.append(Finding("config", True, "bare repository: no .gitimprove.toml to check"))
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
    elif repo.work_tree is None:
        out.append(
            Finding("notes.rewriteRef", True, "not needed: nothing is amended in a bare repository")
        )
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
    # the view caches: never the source of truth, and writable by an agent without the
    # sandbox; every check below (and the next `log`) reads the notes themselves
    dropped = caches.drop_all(repo.common_dir / "improve")
    out.append(Finding("caches", True, f"view caches dropped ({dropped} files; rebuilt on use)"))
    out += _notes(repo)
    digests = _digests(repo, repair)
    out += [digests] if digests else []
    out += _memory(repo, repair)
    # locks: asked of /proc/locks, never taken (a run starting with no wait just then would
    # be told it was already running); a free lock file is left where it is: removing one
    # another process has just opened would let two processes hold "the" lock at once
    lock_dir = repo.common_dir / "improve" / "locks"
    free = 0
    for path in sorted(lock_dir.glob("*.lock")) if lock_dir.is_dir() else ():
        if flocks.held([path]):
            out.append(
                Finding(
                    "locks",
                    False,
                    f"{path.name} is held by a running process",
                    "wait for it to finish",
                )
            )
        else:
            free += 1
    out.append(Finding("locks", True, f"no lock is held ({free} free lock files)"))
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
        if repair and _repaired(f, lambda: signals.flush(repo)):
            for leftover in tmp:
                with contextlib.suppress(OSError):
                    os.unlink(leftover)
        out.append(f)
    else:
        out.append(Finding("spool", True, "no captured entries waiting"))
    for check in extra:
        try:
            out.extend(check(repo, repair))
        except GitImproveError as exc:  # a damaged record stops one check, never the others
            out.append(Finding("records", False, f"not checked: {exc.message}", exc.hint))
    # processes of interrupted runs (before their workspaces go), incidents, run branches
    out.extend(integrity.checks(repo, repair))
    out.append(_strays(repo, repair))  # before the stale workspaces, which it leaves to them
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


def _digests(repo: Repo, repair: bool) -> Finding | None:
    """The digests stored with the notes (state/noteindex.py) that a `log` would take but that
    are not those of the notes: made again from the notes by `--repair`."""
    false = notes.false_shards(repo)
    if not false:
        return None
    f = Finding(
        "note digests",
        False,
        f"{len(false)} stored digest shard(s) do not match their notes "
        f"({', '.join(n.split('.')[0] for n in false[:SHOWN])}): `log` would show other rows "
        "than the notes hold",
        "git improve doctor --repair (makes them again from the notes)",
    )
    if repair:
        notes.remake_shards(repo, false)
        f.repaired = True
    return f


def _notes(repo: Repo) -> list[Finding]:
    """Note lines the tolerant reader cannot read: shown raw, skipped, never rewritten."""
    total = 0
    bad: list[tuple[str, list[str]]] = []
    for commit, data in notes.iter_notes(repo):
        total += 1
        parsed = parse_note(data.decode("utf-8", errors="replace"))
        if parsed.raw:
            bad.append((commit, parsed.problems))
    if not bad:
        return [Finding("notes", True, f"{total} experiment notes, all readable")]
    out = [
        Finding(
            "notes",
            False,
            f"the note on {commit[:10]} has {len(why)} unreadable line(s) ({'; '.join(sorted(set(why)))[:200]}); they are shown raw and skipped",
            f"inspect with `git notes --ref=improve show {commit[:10]}`; newer-version lines need a newer gitimprove",
        )
        for commit, why in bad[:SHOWN]
    ]
    if len(bad) > SHOWN:
        out.append(
            Finding(
                "notes",
                False,
                f"{len(bad) - SHOWN} more notes have unreadable lines",
                "see `git improve log` for each one",
            )
        )
    return out


def _memory(repo: Repo, repair: bool) -> list[Finding]:
    """The FORMAT file, and entries the tolerant reader cannot read (quarantined on repair)."""
    if repo.ref_target(refs.MEMORY) is None:
        return [Finding("memory", True, "no memory branch yet")]
    out = []
    raw = memory.read_entry(repo, "FORMAT")
    fmt = memory.read_format(raw) if raw is not None else None
    if raw is None:
        out.append(
            Finding(
                "memory",
                False,
                "the memory branch has no FORMAT file",
                "it is added by the next memory write",
            )
        )
    elif fmt is None:
        out.append(
            Finding(
                "memory",
                False,
                "the memory branch's FORMAT file is unreadable: nothing is written to the "
                "memory branch until it is restored",
                f"restore it from the branch's history: git log -p {refs.MEMORY} -- FORMAT",
            )
        )
    elif (fmt.get("min_reader") or 1) > memory.LAYOUT:
        out.append(
            Finding(
                "memory",
                False,
                "the memory branch FORMAT is unreadable or newer than this gitimprove",
                "upgrade gitimprove",
            )
        )
    else:
        out.append(Finding("memory", True, f"memory branch layout {fmt.get('layout')}"))
    every = entries.every_bad_entry(repo)
    bad = entries.not_quarantined(repo, every)
    if not bad:
        held = f"; {len(every)} unreadable ones quarantined" if every else ""
        out.append(Finding("memory entries", True, f"every memory entry is readable{held}"))
        return out
    named = "; ".join(f"{b.path} ({b.reason})" for b in bad[:SHOWN]) + (
        f"; and {len(bad) - SHOWN} more" if len(bad) > SHOWN else ""
    )
    f = Finding(
        "memory entries",
        False,
        f"{len(bad)} memory entries cannot be read and are skipped: {named}",
        "git improve doctor --repair quarantines them (an events/ entry; nothing is deleted)",
    )
    if repair:
        _repaired(f, lambda: entries.quarantine(repo, bad))
    out.append(f)
    return out


def _repaired(f: Finding, repair: Callable[[], object]) -> bool:
    """Run `repair` for `f`; when a damaged record refuses it (the memory branch's FORMAT
    file unreadable), `f` stays a problem naming why, and the other repairs go on."""
    try:
        repair()
    except GitImproveError as exc:
        f.message += f"; not repaired: {exc.message}"
        f.fix = "make the memory branch writable first (the memory check says how), then repair"
        return False
    f.repaired = True
    return True


def _strays(repo: Repo, repair: bool) -> Finding:
    """What in `.git/improve/` gitimprove did not write (git/strays.py): a file there can carry
    a result from one measured run to a later one."""
    improve_dir = repo.common_dir / "improve"
    stale = [
        f".git/improve/work/{p.name}{end} " for p in stale_workspaces(repo) for end in ("", ".pid")
    ]
    found = [s for s in strays.find(improve_dir) if not s.startswith(tuple(stale))]
    if not found:
        return Finding("strays", True, "nothing stray in .git/improve")
    shown = ", ".join(found[:10]) + (f" and {len(found) - 10} more" if len(found) > 10 else "")
    f = Finding(
        "strays",
        False,
        f"not written by gitimprove: {shown}",
        "git improve doctor --repair removes them (measured code or an agent without the "
        "sandbox left them for a later run to read)",
    )
    if repair:
        strays.remove(improve_dir, found)
        f.repaired = True
    return f
