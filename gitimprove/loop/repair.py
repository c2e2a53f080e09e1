"""What `git improve doctor` checks and repairs in the loop's own state."""

from __future__ import annotations

import contextlib

from gitimprove.git import refs
from gitimprove.git.repo import RefMoved, Repo, update_refs
from gitimprove.loop.runs import list_runs, running
from gitimprove.state import experiments
from gitimprove.state.findings import Finding


def phantoms(repo: Repo) -> list[str]:
    """Runs whose markers exist but that never recorded anything (left by older versions
    when a run failed before its first record), whose branch never moved, and that no process
    is running now."""
    runs = list_runs(repo)
    recorded = {e.run for e in experiments.all_experiments(repo) if e.run}
    live = running(repo)
    out = []
    for name, m in sorted(runs.items()):
        branch = repo.ref_target(refs.run_branch(name))
        if name in recorded or name in live:
            continue
        if branch in (None, m.get("base")):
            out.append(name)
    return out


def remove_phantom(repo: Repo, name: str) -> bool:
    """Remove a phantom run's markers and branch; False when it is in use (its lock is held)."""
    from filelock import Timeout

    try:
        with repo.lock(f"run-{name}", timeout=0):
            moves: list[tuple[str, str | None, str | None]] = [
                (refs.run_marker(name, k), None, v)
                for k, v in list_runs(repo).get(name, {}).items()
            ]
            branch = repo.ref_target(refs.run_branch(name))
            if branch is not None:
                moves.append((refs.run_branch(name), None, branch))
            with contextlib.suppress(RefMoved):
                update_refs(repo, moves, f"gitimprove: remove phantom run {name}")
                return True
    except Timeout:
        pass
    return False


def check_phantoms(repo: Repo, repair: bool) -> list[Finding]:
    """doctor: runs left behind by a failed start (older versions wrote markers first)."""
    found = phantoms(repo)
    if not found:
        return [Finding("runs", True, "no phantom runs")]
    f = Finding(
        "runs",
        False,
        f"{len(found)} run(s) that never recorded anything: " + ", ".join(found),
        "git improve doctor --repair removes their markers and branches",
    )
    if repair:
        f.repaired = all(remove_phantom(repo, name) for name in found)
    return [f]
