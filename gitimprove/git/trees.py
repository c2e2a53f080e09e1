"""Building trees in memory with TreeBuilder: insert, read and walk paths (STYLE.md §7)."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator, Mapping

import pygit2

from gitimprove.git.repo import Repo

BLOB = pygit2.enums.FileMode.BLOB
TREE = pygit2.enums.FileMode.TREE


def empty_tree(repo: Repo) -> pygit2.Oid:
    return repo.raw.TreeBuilder().write()


def _subtree(repo: Repo, tree: pygit2.Tree | None, name: str) -> pygit2.Tree | None:
    if tree is None or name not in tree:
        return None
    entry = tree[name]
    if entry.type_str != "tree":
        return None
    obj = repo.raw[entry.id]
    assert isinstance(obj, pygit2.Tree)
    return obj


def _exists(base: pygit2.Tree | None, path: str) -> pygit2.Oid | None:
    if base is None:
        return None
    try:
        return base[path].id
    except KeyError:
        return None


def masked_names(
    base: pygit2.Tree | None, files: Mapping[str, pygit2.Oid | None]
) -> dict[str, pygit2.Oid | None]:
    """`files` with every secret in a path to be written masked (`redact_path`). A masked
    path stays unique: when it would replace a different blob (of `files` or of `base`), a
    digest of the original path is added to it. Removals keep their path (a repair removes
    the leaking name)."""
    from gitimprove.redaction import redact_path

    out: dict[str, pygit2.Oid | None] = {p: oid for p, oid in files.items() if oid is None}
    for path, oid in files.items():
        if oid is None:
            continue
        name = redact_path(path)
        if name != path:
            if name in out:
                held = out[name]
            else:
                held = files[name] if name in files else _exists(base, name)
            if held is not None and held != oid:
                import hashlib

                stem, dot, ext = name.rpartition(".")
                tag = hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:12]
                name = f"{stem}-{tag}.{ext}" if dot and "/" not in ext else f"{name}-{tag}"
        out[name] = oid
    return out


def put_paths(
    repo: Repo,
    base: pygit2.Tree | None,
    files: Mapping[str, pygit2.Oid | None],
    *,
    mask: bool = True,
) -> pygit2.Oid:
    """A new tree: `base` with each path set to a blob id (or removed when None). With
    `mask` (every record: the user's own files are stored as they are), a secret in a path
    is masked like one in a blob (`masked_names`)."""
    return _put_paths(repo, base, masked_names(base, files) if mask else files)


def _put_paths(
    repo: Repo, base: pygit2.Tree | None, files: Mapping[str, pygit2.Oid | None]
) -> pygit2.Oid:
    direct: dict[str, pygit2.Oid | None] = {}
    nested: dict[str, dict[str, pygit2.Oid | None]] = {}
    for path, oid in files.items():
        head, sep, rest = path.partition("/")
        if sep:
            nested.setdefault(head, {})[rest] = oid
        else:
            direct[head] = oid
    builder = repo.raw.TreeBuilder(base) if base is not None else repo.raw.TreeBuilder()
    for name, oid in direct.items():
        if oid is None:
            if builder.get(name) is not None:
                builder.remove(name)
        else:
            builder.insert(name, oid, BLOB)
    for name, sub in nested.items():
        new_sub = _put_paths(repo, _subtree(repo, base, name), sub)
        if len(repo.raw[new_sub]) == 0:  # type: ignore[arg-type]
            if builder.get(name) is not None:
                builder.remove(name)
        else:
            builder.insert(name, new_sub, TREE)
    return builder.write()


def read_path(repo: Repo, tree: pygit2.Tree | None, path: str) -> bytes | None:
    if tree is None:
        return None
    try:
        entry = tree[path]
    except KeyError:
        return None
    if entry.filemode == pygit2.enums.FileMode.COMMIT:
        return None  # a submodule: its commit is in the submodule's store, not here
    obj = repo.raw[entry.id]
    if not isinstance(obj, pygit2.Blob):
        return None
    return obj.data


def walk_blobs(repo: Repo, tree: pygit2.Tree, prefix: str = "") -> Iterator[tuple[str, pygit2.Oid]]:
    for entry in tree:
        path = f"{prefix}{entry.name}"
        if entry.type_str == "tree":
            sub = repo.raw[entry.id]
            assert isinstance(sub, pygit2.Tree)
            yield from walk_blobs(repo, sub, path + "/")
        elif entry.type_str == "blob":
            yield path, entry.id


def changed_paths(repo: Repo, old: str, new: str) -> list[str]:
    """Paths that differ between two trees (added, deleted, modified, mode or type changed)."""
    a = repo.raw[old]
    b = repo.raw[new]
    assert isinstance(a, pygit2.Tree) and isinstance(b, pygit2.Tree)
    out: set[str] = set()
    for delta in a.diff_to_tree(b).deltas:
        for f in (delta.old_file, delta.new_file):
            if f.path:
                out.add(f.path)
    return sorted(out)


def tree_of(repo: Repo, commit: str) -> str:
    obj = repo.raw[commit]
    assert isinstance(obj, pygit2.Commit)
    return str(obj.tree_id)


def subset_tree(repo: Repo, tree: str, keep: Callable[[str], bool]) -> str:
    """A tree with only the blobs whose path passes `keep` (e.g. the sealed files)."""
    obj = repo.raw[tree]
    assert isinstance(obj, pygit2.Tree)
    files: dict[str, pygit2.Oid | None] = {p: oid for p, oid in walk_blobs(repo, obj) if keep(p)}
    return str(put_paths(repo, None, files, mask=False))


def entries(repo: Repo, tree: pygit2.Tree | None) -> Callable[[str], pygit2.Object | None]:
    """The entry of `tree` at a path, each folder's tree read once: libgit2 keeps no tree
    over 4 KB in its cache, so a lookup by path through a folder of 1,500 entries parsed it
    again each time (0.5 ms), and a candidate adding 2,000 folders took a minute to judge."""
    folders: dict[str, pygit2.Tree | None] = {"": tree}

    def folder(path: str) -> pygit2.Tree | None:
        if path not in folders:
            parent, _, name = path.rpartition("/")
            found = entry(parent, name)
            obj = repo.raw[found.id] if found is not None and found.type_str == "tree" else None
            folders[path] = obj if isinstance(obj, pygit2.Tree) else None
        return folders[path]

    def entry(parent: str, name: str) -> pygit2.Object | None:
        up = folder(parent)
        try:
            return up[name] if up is not None and name else None
        except (KeyError, ValueError):
            return None

    return lambda path: entry(*path.rpartition("/")[::2])


def blobs(repo: Repo, tree: pygit2.Tree | None) -> Callable[[str], bytes | None]:
    """`read_path` of `tree` for many paths (`entries`: each folder read once)."""
    at = entries(repo, tree)

    def read(path: str) -> bytes | None:
        found = at(path)
        if found is None or found.filemode == pygit2.enums.FileMode.COMMIT:
            return None
        obj = repo.raw[found.id]
        return obj.data if isinstance(obj, pygit2.Blob) else None

    return read


def blobs_in(repo: Repo, tree: str) -> Callable[[str], bytes | None]:
    """`blobs` of the tree `tree` (by id)."""
    obj = repo.raw[tree]
    return blobs(repo, obj if isinstance(obj, pygit2.Tree) else None)


def read_in(repo: Repo, tree: str, path: str) -> bytes | None:
    """The blob at `path` in the tree `tree` (by id), or None."""
    obj = repo.raw[tree]
    return read_path(repo, obj if isinstance(obj, pygit2.Tree) else None, path)


def blob_paths(repo: Repo, tree: str) -> list[str]:
    obj = repo.raw[tree]
    assert isinstance(obj, pygit2.Tree)
    return [p for p, _ in walk_blobs(repo, obj)]


def real_path(repo: Repo, tree: str, path: str) -> str | None:
    """`path` in the tree `tree` with every symbolic link on the way followed (as the file
    system would: a link's target is read from its folder), or None when it leaves the tree,
    loops or goes on past 40 links. A path the tree does not hold is returned as far as it
    was followed."""
    obj = repo.raw[tree]
    if not isinstance(obj, pygit2.Tree):
        return None
    parts = [p for p in path.split("/") if p]
    done: list[str] = []
    hops = 0
    while parts:
        name = parts.pop(0)
        here = "/".join([*done, name])
        try:
            entry = obj[here]
        except KeyError:
            return "/".join([*done, name, *parts])
        if entry.filemode != pygit2.enums.FileMode.LINK:
            done.append(name)
            continue
        hops += 1
        blob = repo.raw[entry.id]
        if hops > 40 or not isinstance(blob, pygit2.Blob):
            return None
        target = blob.data.decode("utf-8", "surrogateescape")
        if target.startswith("/"):
            return None
        joined = posixpath.normpath(posixpath.join(*done, target) if done else target)
        if joined == ".." or joined.startswith("../"):
            return None
        parts = [p for p in joined.split("/") if p and p != "."] + parts
        done = []
    return "/".join(done)
