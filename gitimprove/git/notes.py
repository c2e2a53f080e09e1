"""Experiment notes on refs/notes/improve, written compare-and-swap.

`Repository.create_note` and `git notes add` lose records under concurrency (DESIGN §2), so
notes are appended by building the notes tree ourselves: the note blob for a commit goes to
`ab/cdef…` (2/38 fanout), the notes commit has the old notes tip as its only parent, and the
ref moves only if it still points at that tip. Readers accept any fanout, because `git notes`
and `git notes merge` rewrite the tree with their own.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import pygit2

from gitimprove.git import refs
from gitimprove.git.repo import Repo, cas_loop, update_refs
from gitimprove.git.trees import put_paths
from gitimprove.util.lines import raw_lines

HEX = frozenset("0123456789abcdef")


def _is_hex(text: str) -> bool:
    return all(c in HEX for c in text)


def _notes_tree(repo: Repo, tip: str | None) -> pygit2.Tree | None:
    if tip is None:
        return None
    commit = repo.raw[tip]
    assert isinstance(commit, pygit2.Commit)
    return commit.tree


def iter_notes(
    repo: Repo, tip: str | None = None, *, ref: str = refs.NOTES
) -> Iterator[tuple[str, bytes]]:
    """(annotated commit id, note bytes) for every note under `ref`, any fanout."""
    if tip is None:
        tip = repo.ref_target(ref)
    tree = _notes_tree(repo, tip)
    if tree is None:
        return
    yield from _walk(repo, tree, "")


def _walk(repo: Repo, tree: pygit2.Tree, prefix: str) -> Iterator[tuple[str, bytes]]:
    for entry in tree:
        part = entry.name or ""
        name = prefix + part
        if entry.type_str == "tree" and len(name) < 40 and _is_hex(part):
            sub = repo.raw[entry.id]
            assert isinstance(sub, pygit2.Tree)
            yield from _walk(repo, sub, name)
        elif entry.type_str == "blob" and len(name) == 40 and _is_hex(name):
            blob = repo.raw[entry.id]
            assert isinstance(blob, pygit2.Blob)
            yield name, blob.data


def _locate(repo: Repo, tree: pygit2.Tree | None, commit: str) -> tuple[str | None, bytes]:
    """Path and content of an existing note for `commit`, whatever fanout wrote it."""
    if tree is None:
        return None, b""
    candidates = [f"{commit[:2]}/{commit[2:]}", commit]
    candidates += [
        f"{commit[:2]}/{commit[2:4]}/{commit[4:]}",
        f"{commit[:2]}/{commit[2:4]}/{commit[4:6]}/{commit[6:]}",
    ]
    for path in candidates:
        try:
            entry = tree[path]
        except KeyError:
            continue
        blob = repo.raw[entry.id]
        if isinstance(blob, pygit2.Blob):
            return path, blob.data
    return None, b""


def read_note(repo: Repo, commit: str, *, ref: str = refs.NOTES) -> bytes:
    return _locate(repo, _notes_tree(repo, repo.ref_target(ref)), commit)[1]


def build_commit(
    repo: Repo,
    tip: str | None,
    lines_by_commit: Mapping[str, Sequence[str]],
    message: str,
    *,
    skip_present: bool = False,
) -> tuple[str | None, int]:
    """A new notes commit on `tip` with the lines appended (not yet on any ref).

    Returns (commit id or None when nothing changed, lines written)."""
    tree = _notes_tree(repo, tip)
    changes: dict[str, pygit2.Oid | None] = {}
    written = 0
    for commit, lines in lines_by_commit.items():
        path, old = _locate(repo, tree, commit)
        text = old.decode("utf-8", errors="replace")
        if text and not text.endswith("\n"):
            text += "\n"
        present = set(raw_lines(text)) if skip_present else set()
        new_lines = [ln for ln in lines if ln not in present]
        if not new_lines:
            continue
        written += len(new_lines)
        text += "".join(ln.rstrip("\n") + "\n" for ln in new_lines)
        target = f"{commit[:2]}/{commit[2:]}"
        if path is not None and path != target:
            changes[path] = None
        changes[target] = repo.write_blob(text)
    if not changes:
        return None, 0
    new_tree = indexed(repo, put_paths(repo, tree, changes))
    return repo.create_commit(new_tree, message + "\n", [tip] if tip else []), written


def revert_notes(
    repo: Repo, tip: str, old: str | None, commits: Sequence[str], message: str
) -> str:
    """A new notes commit on `tip` in which the notes of `commits` are as they were at `old`:
    a forged note removed, a rewritten one restored. Other notes are untouched."""
    tree, old_tree = _notes_tree(repo, tip), _notes_tree(repo, old)
    changes: dict[str, pygit2.Oid | None] = {}
    for commit in commits:
        path, _ = _locate(repo, tree, commit)
        if path is not None:
            changes[path] = None
        _, data = _locate(repo, old_tree, commit)
        if data:
            changes[f"{commit[:2]}/{commit[2:]}"] = repo.write_blob(data)
    new_tree = indexed(repo, put_paths(repo, tree, changes))
    return repo.create_commit(new_tree, message + "\n", [tip])


def indexed(repo: Repo, tree_id: pygit2.Oid) -> pygit2.Oid:
    """The notes tree `tree_id` with the TSV view's digests stored beside its fanout folders
    up to date (state/noteindex.py): a shard is made for each folder whose tree has none,
    from its notes; the shards of trees no longer there go."""
    from gitimprove.state import noteindex

    tree = repo.raw[tree_id]
    assert isinstance(tree, pygit2.Tree)
    if noteindex.FOLDER in tree and tree[noteindex.FOLDER].type_str != "tree":
        return indexed(repo, put_paths(repo, tree, {noteindex.FOLDER: None}, mask=False))
    ver = noteindex.version()
    wanted = {
        noteindex.name(e.name, str(e.id), ver): e.id
        for e in tree
        if e.type_str == "tree" and e.name and noteindex.is_folder(e.name)
    }
    have = set(_shard_ids(repo, tree))
    changes: dict[str, pygit2.Oid | None] = {
        f"{noteindex.FOLDER}/{gone}": None for gone in have - wanted.keys()
    }
    for made in wanted.keys() - have:
        notes = _folder_notes(repo, wanted[made])
        data = noteindex.shard(made[:2], str(wanted[made]), notes)
        # made from note blobs only, which the redactor passed when they were stored (or
        # masked when sync adopted them): stored as made, or `doctor` would find every
        # shard changed, and each notes commit would pay for masking text already masked
        changes[f"{noteindex.FOLDER}/{made}"] = repo.raw.create_blob(data)
    # the names are ours (hex and a version): stored as they are, never masked
    return put_paths(repo, tree, changes, mask=False) if changes else tree_id


def _shard_ids(repo: Repo, tree: pygit2.Tree) -> dict[str, pygit2.Oid]:
    from gitimprove.state import noteindex

    try:
        folder = repo.raw[tree[noteindex.FOLDER].id]
    except KeyError:
        return {}
    if not isinstance(folder, pygit2.Tree):
        return {}
    return {e.name: e.id for e in folder if e.name and e.type_str == "blob"}


def false_shards(repo: Repo, tip: str | None = None) -> list[str]:
    """The stored digests' shards that name a folder's tree as it is but do not hold the
    digests of its notes (a reader would take them): damaged or forged, made again from the
    notes and compared."""
    from gitimprove.state import noteindex

    tree = _notes_tree(repo, tip or repo.ref_target(refs.NOTES))
    if tree is None:
        return []
    ver = noteindex.version()
    shards = _shard_ids(repo, tree)
    out = []
    for e in tree:
        if e.type_str != "tree" or not e.name or not noteindex.is_folder(e.name):
            continue
        name = noteindex.name(e.name, str(e.id), ver)
        if name in shards:
            made = noteindex.shard(e.name, str(e.id), _folder_notes(repo, e.id))
            if _blob(repo, shards[name]) != made:
                out.append(name)
    return out


def remake_shards(repo: Repo, names: Sequence[str]) -> None:
    """A notes commit with the shards `names` made again from the notes (`false_shards`)."""
    from gitimprove.state import noteindex

    def attempt() -> None:
        tip = repo.ref_target(refs.NOTES)
        tree = _notes_tree(repo, tip)
        if tip is None or tree is None:
            return
        gone: dict[str, pygit2.Oid | None] = {f"{noteindex.FOLDER}/{n}": None for n in names}
        new_tree = indexed(repo, put_paths(repo, tree, gone, mask=False))
        new = repo.create_commit(new_tree, "gitimprove: store the notes' digests again\n", [tip])
        update_refs(repo, [(refs.NOTES, new, tip)], "gitimprove: store the notes' digests again")

    cas_loop(repo, attempt, what=refs.NOTES, lock="notes")


def _folder_notes(repo: Repo, folder_id: pygit2.Oid) -> list[tuple[str, bytes]]:
    sub = repo.raw[folder_id]
    assert isinstance(sub, pygit2.Tree)
    return [
        (e.name, _blob(repo, e.id))
        for e in sub
        if e.type_str == "blob" and e.name and len(e.name) == 38 and _is_hex(e.name)
    ]


def _blob(repo: Repo, oid: pygit2.Oid | str) -> bytes:
    obj = repo.raw[oid]
    return obj.data if isinstance(obj, pygit2.Blob) else b""


def append_lines(
    repo: Repo,
    lines_by_commit: Mapping[str, Sequence[str]],
    *,
    message: str = "gitimprove: append experiment records",
    ref: str = refs.NOTES,
    skip_present: bool = False,
) -> int:
    """Append text lines to the notes of several commits in one notes commit, moved
    compare-and-swap. With `skip_present`, a line already in the note is not added again.
    Returns the number of lines written."""
    if not lines_by_commit:
        return 0

    def attempt() -> int:
        tip = repo.ref_target(ref)
        new, written = build_commit(repo, tip, lines_by_commit, message, skip_present=skip_present)
        if new is None:
            return 0
        update_refs(repo, [(ref, new, tip)], message)
        return written

    return cas_loop(repo, attempt, what=ref, lock="notes")
