"""Reading history: commit walks and diff stats."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pygit2

from gitimprove.git.repo import Repo


@dataclass(frozen=True)
class CommitInfo:
    id: str
    message: str
    parents: tuple[str, ...]
    author: str
    time: int


def _info(commit: pygit2.Commit) -> CommitInfo:
    return CommitInfo(
        str(commit.id),
        commit.message,
        tuple(str(p) for p in commit.parent_ids),
        f"{commit.author.name} <{commit.author.email}>",
        commit.commit_time,
    )


def ancestors_oldest_first(repo: Repo, start: str) -> Iterator[CommitInfo]:
    sort = pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE
    for commit in repo.raw.walk(pygit2.Oid(hex=start), sort):
        yield _info(commit)


def info(repo: Repo, rev: str) -> CommitInfo:
    return _info(repo.commit(rev))


def diff_stat(repo: Repo, commit: str) -> str:
    obj = repo.commit(commit)
    diff = repo.raw.diff(obj.parents[0], obj) if obj.parents else obj.tree.diff_to_tree(swap=True)
    stats = diff.stats
    text = stats.format(pygit2.enums.DiffStatsFormat.FULL, 80)
    return text if text.strip() else " (no file changes)\n"
