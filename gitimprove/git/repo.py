"""Opening repositories and the small pieces of git every writer needs."""

from __future__ import annotations

import fcntl
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pygit2
from pygit2.enums import ConfigLevel

if TYPE_CHECKING:
    from filelock import FileLock

from gitimprove.errors import (
    ConflictError,
    GitImproveError,
    NotARepositoryError,
    UnknownCommitError,
)
from gitimprove.git import gitfiles, space, witness
from gitimprove.util import proc, written
from gitimprove.util.files import read_state

ZERO = "0" * 40
T = TypeVar("T")


# Lock files this process holds, and descriptors it locked again on a lock file made anew: a
# lock file removed while held (by an agent or measured code without the sandbox) keeps no
# second process out, so git/strays.py makes it again and `hold_again` locks it again; those
# descriptors are closed when the lock is released.
_HOLDING: dict[str, set[object]] = {}
_REGAINED: dict[str, list[int]] = {}
_HOLDING_LOCK = threading.Lock()
_LOCK_CLASS: type | None = None


def _held_lock_class() -> type[FileLock]:
    """FileLock, keeping count of which lock files this process holds."""
    global _LOCK_CLASS
    if _LOCK_CLASS is None:
        from filelock import FileLock  # imported when a lock is taken: it is slow to import

        class HeldLock(FileLock):
            def acquire(self, *args: Any, **kwargs: Any) -> Any:
                proxy = super().acquire(*args, **kwargs)
                with _HOLDING_LOCK:
                    _HOLDING.setdefault(os.path.abspath(self.lock_file), set()).add(self)
                return proxy

            def release(self, force: bool = False) -> None:
                super().release(force=force)
                if self.is_locked:
                    return
                where = os.path.abspath(self.lock_file)
                with _HOLDING_LOCK:
                    holders = _HOLDING.get(where, set())
                    holders.discard(self)
                    if holders:
                        return
                    _HOLDING.pop(where, None)
                    regained = _REGAINED.pop(where, [])
                for fd in regained:
                    os.close(fd)

        _LOCK_CLASS = HeldLock
    return _LOCK_CLASS


def held_here(path: Path) -> bool:
    """Whether this process holds the lock whose file is `path`."""
    with _HOLDING_LOCK:
        return any(
            getattr(lock, "is_locked", False) for lock in _HOLDING.get(os.path.abspath(path), ())
        )


def hold_again(path: Path) -> None:
    """Make the lock file `path` again after it was removed, and lock it again when this
    process holds the lock (the lock it holds is on the removed file)."""
    written.mark(path, pending=True, data=b"")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError:
        written.forget(path)
        raise
    written.mark(path, data=b"")
    where = os.path.abspath(path)
    with _HOLDING_LOCK:
        held = any(getattr(lock, "is_locked", False) for lock in _HOLDING.get(where, ()))
        if held:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                held = False  # another process took it in between: it holds it now
            else:
                _REGAINED.setdefault(where, []).append(fd)
    if not held:
        os.close(fd)


class Repo:
    """A pygit2 repository plus the paths gitimprove keeps its runtime state in."""

    def __init__(self, raw: pygit2.Repository) -> None:
        self.raw = raw
        self.git_dir = Path(raw.path).resolve()
        common = Path(getattr(raw, "commondir", None) or self.git_dir)
        commondir_file = self.git_dir / "commondir"
        if commondir_file.exists():
            rel = read_state(commondir_file).decode("utf-8").strip()
            common = (self.git_dir / rel).resolve() if not os.path.isabs(rel) else Path(rel)
        self.common_dir = common.resolve()
        self.work_tree = Path(raw.workdir).resolve() if raw.workdir else None

    @property
    def improve_dir(self) -> Path:
        path = self.common_dir / "improve"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def lock(self, name: str, timeout: float = 60.0) -> FileLock:
        folder = self.improve_dir / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.lock"
        if not os.path.lexists(path):  # made here, so the watch of the folder knows it
            written.mark(path, pending=True)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            except OSError:
                written.forget(path)
            else:
                os.close(fd)
                written.mark(path, data=b"")
        return _held_lock_class()(str(path), timeout=timeout)

    # --- objects ------------------------------------------------------------------------

    def ref_target(self, name: str) -> str | None:
        try:
            ref = self.raw.references[name]
        except KeyError:
            return None
        target = ref.resolve().target
        return str(target)

    def commit(self, rev: str) -> pygit2.Commit:
        try:
            obj = self.raw.revparse_single(rev)
            commit = obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            raise UnknownCommitError(
                f"{rev!r} does not name a commit in this repository",
                hint="use a commit id, a branch or a revision like HEAD~2",
            ) from None
        return commit

    def head_commit(self) -> pygit2.Commit | None:
        try:
            return self.raw.head.peel(pygit2.Commit)
        except (pygit2.GitError, KeyError):
            return None

    def signature(self) -> pygit2.Signature:
        try:
            return self.raw.default_signature
        except (KeyError, pygit2.GitError):
            return pygit2.Signature("gitimprove", "gitimprove@localhost")

    # The two doors through which gitimprove's text becomes git objects: every record (note,
    # memory entry, imported row) is a blob written here and every commit message passes
    # here, so each is masked by the one redactor (docs/secrets.md). Nothing else in
    # gitimprove creates blobs or commits from text; tests/test_secrets_writers.py checks that.

    def write_blob(self, data: bytes | str) -> pygit2.Oid:
        from gitimprove.redaction import redact_blob

        if isinstance(data, str):  # a note or a record: text, made storable (util/text.py)
            from gitimprove.util.text import storable

            data = storable(data)
        return self.raw.create_blob(redact_blob(data))

    def create_commit(
        self, tree: pygit2.Oid, message: str, parents: Sequence[str | pygit2.Oid]
    ) -> str:
        """A commit of `tree` on `parents`. git prints a message as it is (`git log`, `git
        log --oneline`, a web view): text in it from an agent (its description) is stored with
        every control and invisible formatting character shown escaped (`\\x1b`), newlines and
        tabs kept, so no message of gitimprove's moves the cursor of whoever reads it."""
        from gitimprove.redaction import redact
        from gitimprove.util.text import printable, storable

        sig = self.signature()
        oid = self.raw.create_commit(
            None, sig, sig, redact(printable(storable(message), lines=True)), tree,
            [pygit2.Oid(hex=str(p)) for p in parents],
        )  # fmt: skip
        return str(oid)

    def markers(self, prefix: str, owner: str) -> dict[str, dict[str, str]]:
        """Refs under `prefix` grouped as {owner: {marker: target}}; `owner` is the ParsedRef
        attribute naming the group ("run" for runs, "session" for sessions)."""
        from gitimprove.git import refs

        out: dict[str, dict[str, str]] = {}
        for name in self.raw.references:
            if name.startswith(prefix):
                parsed = refs.parse(name)
                key = getattr(parsed, owner)
                target = self.ref_target(name)
                if key and parsed.marker and target:
                    out.setdefault(key, {})[parsed.marker] = target
        return out

    def fresh_config_items(self, prefix: str) -> dict[str, str]:
        """As `config_items`, read now from the files themselves: libgit2 keeps the list of
        config files it found when the repository was opened, so a `~/.config/git/config` (or
        a `~/.gitconfig`) made since is missing from `config_items`, though the next process
        reads it. Only for files `gitfiles.problems` found regular and bounded."""
        fresh = pygit2.Config()
        levels = (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM)
        files = [
            (path, level) for (path, _), level in zip(gitfiles.user_configs(), levels, strict=True)
        ]
        files += [(self.common_dir / "config", ConfigLevel.LOCAL)]
        try:
            for path, level in files:
                if path.is_file():
                    fresh.add_file(str(path), level)
            entries = list(fresh)
        except pygit2.GitError as exc:
            return {f"{prefix}*": f"unreadable: {exc}"}
        out: dict[str, str] = {}
        for entry in sorted(entries, key=lambda e: int(e.level)):  # the last level wins
            name = (entry.raw_name or b"").decode("utf-8", errors="surrogateescape")
            if name.startswith(prefix):
                out[name] = (entry.raw_value or b"").decode("utf-8", errors="surrogateescape")
        return out

    def drop_user_config(self) -> None:
        """Stop reading the config files outside the repository (global, XDG, system) in this
        process: libgit2 reads one again whenever its times change, and one found a FIFO (an
        agent without the sandbox can write your home) would hold the harness for ever at its
        next diff or commit. The repository is opened again with their search paths emptied;
        what the run needs from them (`improve.*`) it pinned at its start."""
        forget_user_config()
        self.raw = pygit2.Repository(self.raw.workdir or self.raw.path)

    def config_items(self, prefix: str) -> dict[str, str]:
        """git config entries under `prefix`. Bytes that are not UTF-8 are kept (as lone
        surrogates) for the config validator to name, never decoded into a crash."""
        out: dict[str, str] = {}
        try:
            for entry in self.raw.config:
                name = (entry.raw_name or b"").decode("utf-8", errors="surrogateescape")
                if name.startswith(prefix):
                    raw = entry.raw_value or b""
                    out[name] = raw.decode("utf-8", errors="surrogateescape")
        except pygit2.GitError:
            pass
        return out


GIT_TIMEOUT = 120.0  # seconds any git command on the user's repository may take


def unreadable(where: Path, *, refs: bool = False) -> list[str]:
    """Files of the git directory around `where` git would hang on (a FIFO) or choke over
    (git/gitfiles.py), found before anything opens them; with `refs`, the loose refs too."""
    found = gitfiles.locate(where)
    if isinstance(found, str):
        return [found]
    return [] if found is None else gitfiles.problems(*found, refs=refs)


def forget_user_config() -> None:
    """Make libgit2 in this process read no config file outside the repository (global, XDG,
    system) in any repository it opens from now on: one of them is a FIFO or too large."""
    import tempfile

    empty = tempfile.mkdtemp(prefix="gitimprove-no-config-")
    for level in (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM, ConfigLevel.PROGRAMDATA):
        pygit2.settings.search_path[level] = empty


def open_repo(path: str | os.PathLike[str] | None = None, *, need_work_tree: bool = True) -> Repo:
    """Open the repository around `path` (default: the cwd), with a clear error otherwise."""
    where = Path(path) if path is not None else Path.cwd()
    unsafe = unreadable(where, refs=True)
    outside = set(gitfiles.outside_problems())
    if outside & set(unsafe):
        # a file of the user's outside the repository: opened without those files, named by
        # what checks them (a run's watch, doctor), never read here
        forget_user_config()
        unsafe = [item for item in unsafe if item not in outside]
    if unsafe:
        raise GitImproveError(
            "git would hang on or choke over files of this repository: " + "; ".join(unsafe[:5]),
            hint="put the regular file back (`git improve doctor` names each; a FIFO or a huge "
            "file there hangs every git command), then run this again",
        )
    try:
        found = pygit2.discover_repository(str(where))
    except pygit2.GitError:
        found = None
    if not found:
        raise NotARepositoryError(
            f"{where} is not inside a git repository",
            hint="run this inside a repository, or `git init` one first",
        )
    try:
        repo = Repo(pygit2.Repository(found))
    except pygit2.GitError as exc:
        raise NotARepositoryError(
            f"git cannot read this repository's configuration: {exc}",
            hint="fix the line named (git config names allow letters, digits and '-': write "
            "improve.loop.plateau-patience, not plateau_patience), or check `git status`",
        ) from None
    if need_work_tree and repo.raw.is_bare:
        raise NotARepositoryError(
            f"{repo.git_dir} is a bare repository; gitimprove needs a work tree",
            hint="run it in a clone with a work tree",
        )
    return repo


# --- compare-and-swap ref updates ---------------------------------------------------------


_RETRYABLE = (
    "cannot lock ref",
    "but expected",
    "already exists",
    "Unable to create",
    "File exists",
)


class RefMoved(Exception):
    """The ref was not at the expected old value."""


def update_refs(
    repo: Repo, updates: Iterable[tuple[str, str | None, str | None]], message: str
) -> None:
    """Move refs in one transaction, each only if it still has its expected old value.

    `updates` holds (ref, new, old): old None means "must not exist yet", new None deletes
    the ref. Raises RefMoved when any ref moved under us (then none of them changed).
    A transaction that lands is witnessed (git/witness.py)."""
    updates = list(updates)
    lines = ["start"]
    for name, new, old in updates:
        if new is None:
            lines.append(f"delete {name} {old or ''}".rstrip())
        else:
            lines.append(f"update {name} {new} {old or ZERO}")
    lines += ["prepare", "commit", ""]
    result = proc.git(
        ["update-ref", "--stdin", "-m", message],
        cwd=repo.git_dir,
        env=proc.clean_env({"GIT_DIR": str(repo.git_dir)}),
        input="\n".join(lines),
        isolated=True,  # no reference-transaction hook of a hooksPath an agent configured
        timeout=GIT_TIMEOUT,
    )
    if result.timed_out:
        raise GitImproveError(
            gitfiles.hung(repo.git_dir, repo.common_dir, "update-ref", GIT_TIMEOUT),
            hint="put a regular file back in its place (`git improve doctor` names it)",
        )
    if result.returncode != 0:
        err = result.stderr.strip()
        if any(m in err for m in _RETRYABLE):
            raise RefMoved(err)
        free = space.free_bytes(repo.common_dir)
        if free is not None and free < space.LOW:  # git says "couldn't write '…lock'" alone
            raise space.NoSpace(repo.common_dir, f"moving refs ({err})")
        raise GitImproveError(f"git update-ref failed: {err}")
    witness.record(repo.improve_dir, updates)


def cas_loop(
    repo: Repo,
    attempt: Callable[[], T],
    *,
    what: str,
    tries: int = 400,
    lock: str | None = None,
    seconds: float = 60.0,
) -> T:
    """Call `attempt` (which builds from the current tip and calls update_refs) until it wins.

    A local file lock keeps writers on this machine from thrashing; the compare-and-swap
    keeps writers on other clones (sync) and plain git commands from losing records."""
    delay = 0.001
    deadline = time.monotonic() + seconds
    last = ""
    with _maybe_lock(repo, lock):
        for _ in range(tries):
            try:
                return attempt()
            except RefMoved as exc:
                last = str(exc)
                if time.monotonic() > deadline:
                    break
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 1.6, 0.2)
    stale = re.search(r"Unable to create '([^']+\.lock)': File exists", last)
    if stale:
        raise ConflictError(
            f"could not update {what}: the lock file {stale.group(1)} has been there for {seconds:.0f}s",
            hint="if no git command is running in this repository, remove that file and try again",
        )
    raise ConflictError(
        f"could not update {what}: other writers kept moving it",
        hint="try again; if it persists, run `git improve doctor`",
    )


@contextmanager
def _maybe_lock(repo: Repo, name: str | None) -> Iterator[None]:
    if name is None:
        yield
        return
    with repo.lock(name, timeout=120):
        yield
