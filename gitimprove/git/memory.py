"""The orphan memory branch `improve/memory`: one file per entry, never edited in place.

Writes build blobs and trees in memory and commit with the old tip as the only parent; the
ref moves compare-and-swap. The user's index and work tree are never touched (DESIGN §5).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pygit2

from gitimprove.errors import GitImproveError
from gitimprove.git import refs
from gitimprove.git.repo import Repo, cas_loop, update_refs
from gitimprove.git.trees import put_paths, read_path, walk_blobs
from gitimprove.redaction import redact_path
from gitimprove.util import reader
from gitimprove.util.clock import host_id, utc_now

LAYOUT = 1
FORMAT_TEXT = json.dumps({"layout": LAYOUT, "min_reader": 1}, sort_keys=True) + "\n"
KINDS = ("signals", "sessions", "learnings", "proposals", "ideas", "imports", "events")


def entry_name(kind: str, ext: str, *, now: str | None = None) -> str:
    """`<kind>/<yyyy>/<mm>/<ts>-<host>-<rand>.<ext>`: unique across machines."""
    if kind not in KINDS:
        raise ValueError(f"unknown memory kind {kind!r}")
    import secrets  # not at the top: a hook that writes no entry never needs it

    stamp = now or utc_now()
    compact = stamp.replace("-", "").replace(":", "").replace(".", "")
    return f"{kind}/{stamp[:4]}/{stamp[5:7]}/{compact}-{host_id()}-{secrets.token_hex(3)}.{ext}"


def _tree(repo: Repo, tip: str | None) -> pygit2.Tree | None:
    if tip is None:
        return None
    commit = repo.raw[tip]
    assert isinstance(commit, pygit2.Commit)
    return commit.tree


def check_format(repo: Repo, tip: str | None = None) -> None:
    """Refuse to write a memory branch laid out by a newer gitimprove."""
    tree = _tree(repo, tip if tip is not None else repo.ref_target(refs.MEMORY))
    raw = read_path(repo, tree, "FORMAT")
    if raw is None:
        return
    fmt = read_format(raw)
    if fmt is None:
        raise GitImproveError(
            "the memory branch's FORMAT file is unreadable",
            hint="run `git improve doctor` to see what is wrong",
        )
    min_reader = fmt.get("min_reader") or 1
    if min_reader > LAYOUT:
        raise GitImproveError(
            f"the memory branch needs a newer gitimprove (layout reader {min_reader})",
            hint="upgrade gitimprove: pip install -U gitimprove",
        )


def read_format(raw: bytes) -> dict[str, Any] | None:
    """The FORMAT object, through the tolerant reader; None when it cannot be read."""
    fmt = reader.load_object(raw, {"layout": "int?", "min_reader": "int?"}, version=None)
    return None if isinstance(fmt, reader.Unreadable) else fmt


def add_entries(
    repo: Repo,
    entries: Mapping[str, bytes | str],
    *,
    message: str = "gitimprove: add memory entries",
    ref: str = refs.MEMORY,
) -> int:
    """Add new files to the memory branch in one commit. Existing paths are left alone

    (entries are never edited in place), so repeating a write adds nothing. Returns how many
    files were added."""
    if not entries:
        return 0

    def attempt() -> int:
        tip = repo.ref_target(ref)
        check_format(repo, tip)
        tree = _tree(repo, tip)
        changes: dict[str, pygit2.Oid | None] = {}
        for path, data in entries.items():
            if read_path(repo, tree, path) is None and (
                (masked := redact_path(path)) == path or read_path(repo, tree, masked) is None
            ):
                changes[path] = repo.write_blob(data)
        if "FORMAT" not in changes and read_path(repo, tree, "FORMAT") is None:
            changes["FORMAT"] = repo.write_blob(FORMAT_TEXT)
        added = sum(1 for p in changes if p != "FORMAT")
        if not added and tree is not None and "FORMAT" not in changes:
            return 0
        new_tree = put_paths(repo, tree, changes)
        new = repo.create_commit(new_tree, message + "\n", [tip] if tip else [])
        update_refs(repo, [(ref, new, tip)], message)
        return added

    return cas_loop(repo, attempt, what=ref, lock="memory")


def iter_entries(
    repo: Repo, prefix: str = "", *, tip: str | None = None, ref: str = refs.MEMORY
) -> Iterator[tuple[str, bytes]]:
    """(path, content) of every entry under `prefix` (e.g. "imports/"), in path order."""
    tree = _tree(repo, tip if tip is not None else repo.ref_target(ref))
    if tree is None:
        return
    if prefix:
        try:
            entry = tree[prefix.rstrip("/")]
        except KeyError:
            return
        sub = repo.raw[entry.id]
        if not isinstance(sub, pygit2.Tree):
            return
        base = prefix.rstrip("/") + "/"
    else:
        sub, base = tree, ""
    for path, oid in sorted(walk_blobs(repo, sub, base)):
        blob = repo.raw[oid]
        assert isinstance(blob, pygit2.Blob)
        yield path, blob.data


def read_entry(repo: Repo, path: str, *, ref: str = refs.MEMORY) -> bytes | None:
    return read_path(repo, _tree(repo, repo.ref_target(ref)), path)
