"""Reading every object behind gitimprove's refs, and re-writing a ref's tip through the
redactor (for `git improve doctor --secrets`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import pygit2

from gitimprove.git import refs
from gitimprove.git.repo import Repo, cas_loop, update_refs
from gitimprove.git.trees import put_paths, walk_blobs
from gitimprove.redaction import redact, redact_blob, redact_path
from gitimprove.util import written


def gitimprove_refs(repo: Repo) -> list[str]:
    """Every ref gitimprove writes and shares (not the remote scratch copies)."""
    out = []
    for name in sorted(repo.raw.references):
        kind = refs.parse(name).kind
        if kind in ("notes", "memory", "archive", "run-branch", "run-marker", "session"):
            out.append(name)
    return out


def _is_remote_copy(name: str) -> bool:
    """A fetched copy of a gitimprove ref: a sync scratch ref, or a remote-tracking branch
    of a run branch or of the memory branch (`refs/remotes/origin/improve/<run>`)."""
    if name.startswith(refs.REMOTES_PREFIX):
        return True
    if not name.startswith("refs/remotes/"):
        return False
    rest = name[len("refs/remotes/") :].partition("/")[2]
    return ("refs/heads/" + rest).startswith(refs.RUN_BRANCH_PREFIX)


def remote_tips(repo: Repo) -> tuple[list[str], list[str]]:
    """(tips of fetched copies of gitimprove's refs, tips of the user's remote-tracking
    branches): commits reachable only through them are in this clone all the same."""
    ours, users = [], []
    for name in sorted(repo.raw.references):
        target = repo.ref_target(name)
        if target is None or not isinstance(repo.raw.get(target), pygit2.Commit):
            continue
        if _is_remote_copy(name):
            ours.append(target)
        elif name.startswith("refs/remotes/"):
            users.append(target)
    return ours, users


def record_copies(repo: Repo) -> list[str]:
    """Fetched copies of the notes and the memory branch: sync's scratch refs and
    remote-tracking branches (`refs/remotes/origin/improve/memory`)."""
    rests = (refs.NOTES[len("refs/") :], refs.MEMORY[len("refs/") :])
    tracking = "/" + refs.MEMORY[len("refs/heads/") :]
    scratch = tuple("/" + r for r in rests)
    return [
        name
        for name in sorted(repo.raw.references)
        if (name.startswith(refs.REMOTES_PREFIX) and name.endswith(scratch))
        or (name.startswith("refs/remotes/") and name.endswith(tracking))
    ]


def _user_tips(repo: Repo, *, remote: bool = True) -> list[str]:
    """Tips of the user's own history, whose commits are theirs, not gitimprove's (with
    `remote`, also the user's remote-tracking branches)."""
    prefixes = ("refs/heads/", "refs/tags/") + (("refs/remotes/",) if remote else ())
    out = []
    for name in repo.raw.references:
        if name.startswith(prefixes) and not (
            name.startswith(refs.RUN_BRANCH_PREFIX) or _is_remote_copy(name)
        ):
            target = repo.ref_target(name)
            if target and isinstance(repo.raw.get(target), pygit2.Commit):
                out.append(target)
    return out


def commits(
    repo: Repo,
    tips: Iterable[str],
    *,
    hide_user: bool = True,
    hide_remote: bool = True,
    hide: Iterable[str] = (),
) -> Iterator[pygit2.Commit]:
    """Every commit reachable from `tips`, but not (with `hide_user`) from the user's own
    branches and tags (with `hide_remote`, nor from their remote-tracking branches), nor
    from `hide`."""
    walker: pygit2.Walker | None = None
    for tip in tips:
        obj = repo.raw.get(tip)
        if not isinstance(obj, pygit2.Commit):
            continue
        if walker is None:
            walker = repo.raw.walk(obj.id, pygit2.enums.SortMode.TOPOLOGICAL)
        else:
            walker.push(obj.id)
    if walker is None:
        return
    if hide_user:
        for tip in _user_tips(repo, remote=hide_remote):
            walker.hide(pygit2.Oid(hex=tip))
    for tip in hide:
        if isinstance(repo.raw.get(tip), pygit2.Commit):
            walker.hide(pygit2.Oid(hex=tip))
    yield from walker


def history_blobs(repo: Repo, ref: str) -> Iterator[tuple[str, str, bytes]]:
    """(blob id, path, content) of every blob in any commit of `ref`'s history, once each."""
    seen: set[str] = set()
    for entry, path in _history_entries(repo, ref):
        if entry.type_str == "blob" and str(entry.id) not in seen:
            seen.add(str(entry.id))
            blob = repo.raw[entry.id]
            assert isinstance(blob, pygit2.Blob)
            yield str(entry.id), path, blob.data


def history_paths(repo: Repo, ref: str) -> set[str]:
    """Every blob path any commit of `ref`'s history holds (a name is shared as its tree is)."""
    return {path for _, path in _history_entries(repo, ref)}


def _history_entries(repo: Repo, ref: str) -> Iterator[tuple[pygit2.Object, str]]:
    """(entry, path) of every entry but a folder of every tree in `ref`'s history, each
    tree walked once (the first path it is met at names its entries)."""
    tip = repo.ref_target(ref)
    if tip is None:
        return
    seen: set[str] = set()
    for commit in commits(repo, [tip], hide_user=False):
        stack: list[tuple[pygit2.Tree, str]] = [(commit.tree, "")]
        while stack:
            tree, prefix = stack.pop()
            if str(tree.id) in seen:
                continue
            seen.add(str(tree.id))
            for entry in tree:
                path = prefix + (entry.name or "")
                if entry.type_str == "tree":
                    sub = repo.raw[entry.id]
                    assert isinstance(sub, pygit2.Tree)
                    stack.append((sub, path + "/"))
                else:
                    yield entry, path


def tip_blobs(repo: Repo, ref: str) -> Iterator[tuple[str, str, bytes]]:
    """(blob id, path, content) of every blob in `ref`'s tip tree."""
    tip = repo.ref_target(ref)
    if tip is None:
        return
    for path, oid in walk_blobs(repo, repo.commit(tip).tree):
        blob = repo.raw[oid]
        assert isinstance(blob, pygit2.Blob)
        yield str(oid), path, blob.data


def _mask_entry(
    changes: dict[str, pygit2.Oid | None], path: str, oid: pygit2.Oid, changed: bool
) -> None:
    """Record `path` as holding `oid` when its content or its name must be masked: a name
    holding a secret is removed and its entry written under the masked name."""
    masked = redact_path(path)
    if masked != path:
        changes[path] = None
        changes[masked] = oid
    elif changed:
        changes[path] = oid


def rewrite_tip(repo: Repo, ref: str, message: str, *, lock: str) -> list[str]:
    """A new commit on `ref` whose tree holds every blob of the tip written again through
    `Repo.write_blob` (which masks secrets), under a masked name when its path holds one;
    compare-and-swap like every write. Returns the paths whose content or name changed (none:
    no commit)."""

    def attempt() -> list[str]:
        tip = repo.ref_target(ref)
        if tip is None:
            return []
        changes: dict[str, pygit2.Oid | None] = {}
        for oid, path, data in tip_blobs(repo, ref):
            new = repo.write_blob(data)
            _mask_entry(changes, path, new, str(new) != oid)
        if not changes:
            return []
        tree = put_paths(repo, repo.commit(tip).tree, changes)
        new_tip = repo.create_commit(tree, message + "\n", [tip])
        update_refs(repo, [(ref, new_tip, tip)], message)
        return sorted(p for p, oid in changes.items() if oid is not None)

    return cas_loop(repo, attempt, what=ref, lock=lock)


def adopt_masked(repo: Repo, remote_tip: str, local: str | None, message: str) -> str:
    """The commit a fast-forward (or a first fetch) of a record ref should point at: the
    remote's tip itself when every blob it brings passed the redactor already, else a new
    commit on top of it whose tree holds them masked (a clone running an older gitimprove
    may have pushed secrets). Blobs the local tip holds already are not read again."""
    ours = {str(oid) for _, oid in walk_blobs(repo, repo.commit(local).tree)} if local else set()
    tree = repo.commit(remote_tip).tree
    changes: dict[str, pygit2.Oid | None] = {}
    for path, oid in walk_blobs(repo, tree):
        if str(oid) in ours:
            _mask_entry(changes, path, oid, False)
            continue
        blob = repo.raw[oid]
        assert isinstance(blob, pygit2.Blob)
        new = repo.write_blob(blob.data)
        _mask_entry(changes, path, new, new != oid)
    if not changes:
        return remote_tip
    return repo.create_commit(put_paths(repo, tree, changes), message + "\n", [remote_tip])


def unmasked_since(repo: Repo, tip: str, published: str | None) -> int:
    """How many commits of `tip`'s history that `published` (the remote's tip, None when
    the remote lacks the ref) does not reach hold a secret: in a blob they changed, in a
    path, or in their message. A push would carry each of them to the remote."""
    walker = repo.raw.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL)
    public: set[str] = set()
    if published is not None:
        walker.hide(pygit2.Oid(hex=published))
        public = {str(oid) for _, oid in walk_blobs(repo, repo.commit(published).tree)}
    checked: set[str] = set()
    found = 0
    for commit in walker:
        held = redact(commit.message) != commit.message
        for path, oid in _changed_blobs(repo, commit):
            if held:
                break
            key = f"{oid}:{path}"
            if str(oid) in public or key in checked:
                continue
            checked.add(key)
            blob = repo.raw[oid]
            assert isinstance(blob, pygit2.Blob)
            held = redact_path(path) != path or redact_blob(blob.data) != blob.data
        found += held
    return found


def _changed_blobs(repo: Repo, commit: pygit2.Commit) -> Iterator[tuple[str, pygit2.Oid]]:
    """(path, blob id) of what `commit` adds or changes against each of its parents (all
    of its tree for a first commit)."""
    if not commit.parents:
        yield from walk_blobs(repo, commit.tree)
        return
    for parent in commit.parents:
        for delta in parent.tree.diff_to_tree(commit.tree).deltas:
            new = delta.new_file
            if delta.status != pygit2.enums.DeltaStatus.DELETED and new.path:
                yield new.path, new.id


def publish_masked(repo: Repo, ref: str, published: str | None, message: str) -> int:
    """Before a push of `ref`: when its history beyond `published` holds a secret (records
    an older gitimprove wrote unmasked in this clone, never pushed yet), the ref is set to
    one commit on top of `published` whose tree is its tip's, masked, so the push carries
    no version that holds a secret. Returns how many commits were left out (0: the ref is
    unchanged). Only history the remote lacks is replaced: what it has is never rewritten."""

    def attempt() -> int:
        tip = repo.ref_target(ref)
        if tip is None or tip == published:
            return 0
        dropped = unmasked_since(repo, tip, published)
        if not dropped:
            return 0
        tree = repo.commit(tip).tree
        changes: dict[str, pygit2.Oid | None] = {}
        for path, oid in walk_blobs(repo, tree):
            blob = repo.raw[oid]
            assert isinstance(blob, pygit2.Blob)
            new = repo.write_blob(blob.data)
            _mask_entry(changes, path, new, new != oid)
        masked = put_paths(repo, tree, changes) if changes else tree.id
        if ref == refs.NOTES:
            from gitimprove.git.notes import indexed

            masked = indexed(repo, masked)
        parents = [published] if published is not None else []
        new_tip = repo.create_commit(masked, message + "\n", parents)
        update_refs(repo, [(ref, new_tip, tip)], message)
        return dropped

    return cas_loop(repo, attempt, what=ref, lock="notes" if ref == refs.NOTES else "memory")


def known_remotes(repo: Repo, ref: str) -> list[str]:
    """Remotes this clone knows to hold `ref` (a sync scratch copy or a remote-tracking
    branch of it exists): what was pushed there cannot be taken back by a local repair."""
    out = set()
    rest = ref[len("refs/") :]
    for name in repo.raw.references:
        if name.startswith(refs.REMOTES_PREFIX) and name.endswith("/" + rest):
            out.add(name[len(refs.REMOTES_PREFIX) :].split("/", 1)[0])
        if ref.startswith("refs/heads/") and name.startswith("refs/remotes/"):
            remote, _, branch = name[len("refs/remotes/") :].partition("/")
            if branch == ref[len("refs/heads/") :]:
                out.add(remote)
    return sorted(out)


def bad_loose_objects(repo: Repo) -> list[str]:
    """Loose objects whose content does not hash to their name (planted or damaged: reading
    one fails wherever it is needed). Every loose object is read; packs are git's to check.
    One that is no regular file (a FIFO, a link to `/dev/zero`, a folder: `lstat`) is bad
    and never opened; a file is opened without following a link or blocking."""
    import hashlib
    import stat
    import zlib

    from gitimprove.util.files import open_state

    bad = []
    objects = repo.common_dir / "objects"
    for folder in sorted(objects.glob("[0-9a-f][0-9a-f]")):
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            continue  # named by the git directory's check (git/gitfiles.py)
        for path in sorted(folder.iterdir()):
            name = folder.name + path.name
            if len(name) not in (40, 64):
                continue
            try:
                if not stat.S_ISREG(os.lstat(path).st_mode):
                    bad.append(name)
                    continue
                with os.fdopen(open_state(path), "rb") as fh:
                    data = zlib.decompress(fh.read())
            except (OSError, zlib.error):
                bad.append(name)
                continue
            digest = hashlib.new("sha1" if len(name) == 40 else "sha256", data).hexdigest()
            if digest != name:
                bad.append(name)
    return bad


def quarantine(repo: Repo, names: Iterable[str]) -> Path:
    """Move the loose objects `names` out of the object store into improve/quarantine/."""
    to = repo.common_dir / "improve" / "quarantine"
    to.mkdir(parents=True, exist_ok=True)
    for name in names:
        src = repo.common_dir / "objects" / name[:2] / name[2:]
        if os.path.lexists(src):  # a link itself, never what it leads to
            os.replace(src, to / name)
            written.mark(to / name)
    return to
