"""The user's work tree's status, taken without hanging on what git reads there.

`git status` reads every `.gitignore` and `.gitattributes` it meets and, for a folder git does
not track, its `.git` (HEAD, config…) to tell a nested repository: a FIFO in one's place would
hang it for ever, a huge one exhaust its memory. Those files are checked first
(`listing.git_inputs`), skipping the folders the previous status found ignored (git does not
enter them; their own `.git` is still checked). A status that still does not finish within
`STATUS_TIMEOUT` is stopped, and the whole work tree is searched for what it waited on, so
the reason names it.
"""

from __future__ import annotations

from pathlib import Path

from gitimprove.git import gitfiles, listing
from gitimprove.util import proc

__all__ = ["STATUS_TIMEOUT", "work_tree_status"]

STATUS_TIMEOUT = 60.0

# the folders each work tree's last status found ignored (git never enters them)
_IGNORED: dict[str, frozenset[bytes]] = {}


def work_tree_status(work_tree: Path) -> tuple[bytes, list[str]]:
    """(`git status --porcelain -z` without ignored entries, problems): with problems (each
    `work tree: <path> (why)`), the status was not taken."""
    key = str(work_tree)
    cap = gitfiles.LIMITS["list"]
    found = listing.git_inputs(work_tree, cap, _IGNORED.get(key, frozenset()))
    if found:
        return b"", [f"work tree: {item}" for item in found]
    res = proc.git(
        ["--no-optional-locks", "status", "--porcelain", "-z", "--untracked-files=all",
         "--ignored=matching"],
        cwd=work_tree,
        isolated=True,  # ~/.gitconfig is the agent's to write: nothing of it runs
        timeout=STATUS_TIMEOUT,
    )  # fmt: skip
    if res.timed_out:
        found = listing.git_inputs(work_tree, cap)
        why = f"git status did not finish in {STATUS_TIMEOUT:.0f}s"
        return b"", [f"work tree: {item}" for item in found] or [
            f"work tree: {why} (nothing found that it waits on; look for special files)"
        ]
    if not res.ok:
        return f"error: {res.stderr}".encode(), []
    kept, ignored = [], set()
    for item in res.raw.split(b"\0"):
        if item.startswith(b"!! "):
            if item.endswith(b"/"):
                ignored.add(item[3:-1])
        else:
            kept.append(item)
    _IGNORED[key] = frozenset(ignored)
    return b"\0".join(kept), []
