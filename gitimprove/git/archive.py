"""`refs/improve/archive`: one keep-alive chain of merge commits whose second parents are the
attempts (git-appraise style), so no attempt is ever garbage-collected and no ref per loser."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pygit2

from gitimprove.git import refs
from gitimprove.git.repo import Repo, cas_loop, update_refs
from gitimprove.git.trees import empty_tree

MERGE_PREFIX = "gitimprove: merge archive"


def archive_commit(repo: Repo, tip: str | None, attempts: Sequence[str], message: str) -> str:
    """A new archive link on top of `tip` keeping `attempts` reachable (not yet on the ref)."""
    parents: list[str] = [tip] if tip else []
    parents += list(attempts)
    if not tip:
        # The first link needs a first parent of its own so attempts stay second parents.
        root = repo.create_commit(empty_tree(repo), "gitimprove: archive root\n", [])
        parents = [root, *attempts]
    return repo.create_commit(empty_tree(repo), message + "\n", parents)


def append(
    repo: Repo, attempts: Sequence[str], message: str = "gitimprove: archive attempts"
) -> str:
    def attempt() -> str:
        tip = repo.ref_target(refs.ARCHIVE)
        new = archive_commit(repo, tip, attempts, message)
        update_refs(repo, [(refs.ARCHIVE, new, tip)], message)
        return new

    return cas_loop(repo, attempt, what=refs.ARCHIVE, lock="archive")


def archived(repo: Repo) -> Iterator[str]:
    """Every attempt kept alive by the archive chain, newest link first. A link made by sync
    (MERGE_PREFIX) joins another clone's chain: both chains are followed."""
    stack = [t for t in [repo.ref_target(refs.ARCHIVE)] if t]
    seen: set[str] = set()
    while stack:
        tip = stack.pop()
        while tip and tip not in seen:
            seen.add(tip)
            link = repo.raw[tip]
            assert isinstance(link, pygit2.Commit)
            ids = [str(p) for p in link.parent_ids]
            if not ids:
                break
            if link.message.startswith(MERGE_PREFIX):
                stack.extend(ids[1:])
            else:
                yield from ids[1:]
            tip = ids[0]
