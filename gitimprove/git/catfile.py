"""Reading every blob under a tree with two git processes (`ls-tree -r`, `cat-file --batch`).

For the read paths that must not pay for importing pygit2 (a cold `log`, DESIGN §13): on a
packed repository, git reads ten thousand small blobs faster than the import takes. Imports
no pygit2; `None` means git could not answer, and the caller falls back to pygit2.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from gitimprove.util import gitdir, proc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import IO


class Unanswered(Exception):
    """git could not answer (an old git without `ls-tree --format`, a missing object)."""


def _git(loc: gitdir.Location, args: Sequence[str]) -> proc.Result:
    return proc.git(args, cwd=loc.git_dir, env=_env(loc), timeout=300)


def tree_blobs(loc: gitdir.Location, tip: str, *prefixes: str) -> list[tuple[str, str]] | None:
    """(path, blob id) of every blob (under `prefixes`, when given) in the tree of `tip`."""
    args = ["ls-tree", "-r", "-z", "--full-tree", tip]
    if prefixes:
        args += ["--", *prefixes]
    res = _git(loc, args)
    return _blob_entries(res.raw) if res.ok else None


@contextmanager
def tree_listing(loc: gitdir.Location, tip: str) -> Iterator[Callable[[], list[tuple[str, str]]]]:
    """`tree_blobs(loc, tip)` started now and read when the caller asks (it can do other work
    while git lists the tree); the call raises Unanswered when git could not answer."""
    argv = ["git", "ls-tree", "-r", "-z", "--full-tree", tip]
    with proc.pipeline([argv], cwd=loc.git_dir, env=_env(loc)) as pipe:

        def listing() -> list[tuple[str, str]]:
            raw = pipe.out.read()
            if not pipe.ok():
                raise Unanswered("git ls-tree failed")
            return _blob_entries(raw)

        yield listing


def _blob_entries(raw: bytes) -> list[tuple[str, str]]:
    out = []
    for entry in raw.split(b"\0"):
        meta, tab, path = entry.partition(b"\t")
        parts = meta.split()
        if tab and len(parts) == 3 and parts[1] == b"blob":
            out.append((path.decode("utf-8", errors="surrogateescape"), parts[2].decode()))
    return out


def read_blobs(loc: gitdir.Location, oids: Sequence[str]) -> list[bytes] | None:
    """The content of each blob, in order (b"" for one that is missing); None when git
    could not answer."""
    try:
        return list(stream_blobs(loc, oids, missing_ok=True))
    except Unanswered:
        return None


def stream_blobs(
    loc: gitdir.Location, oids: Sequence[str], *, missing_ok: bool = False
) -> Iterator[bytes]:
    """The content of each blob in `oids`, in order, as git reads them. Raises Unanswered
    when git could not answer or an id is not a blob (a missing one is b"" when
    `missing_ok`)."""
    if not oids:
        return
    n = 0
    with _batch(loc, oids) as pipe:
        for _, kind, _, data in _batch_output(pipe.out):
            if kind == b"missing" and missing_ok:
                data = b""
            elif kind != b"blob":
                raise Unanswered(f"{oids[n]} is a {kind.decode(errors='replace')}")
            n += 1
            yield data
        if not pipe.ok() or n != len(oids):
            raise Unanswered("git cat-file failed")


@contextmanager
def session(
    loc: gitdir.Location,
) -> Iterator[Callable[[Sequence[str]], list[tuple[bytes, bytes] | None]]]:
    """One `cat-file --batch` answering requests in rounds: `ask(names)` gives (type, content)
    of each object named (`<commit>^{tree}`, `<commit>:<path>`, an id), None for one git does
    not have, so the caller can name the objects of a round after the one before without
    another git process. `ask` raises Unanswered when git could not answer."""
    feed_r, feed_w = os.pipe()
    try:
        with proc.pipeline(
            [_BATCH[:2] + _BATCH[3:]], cwd=loc.git_dir, env=_env(loc), stdin=feed_r
        ) as pipe:
            os.close(feed_r)
            feed_r = -1
            answers = _batch_output(pipe.out)

            def ask(requests: Sequence[str]) -> list[tuple[bytes, bytes] | None]:
                data = "".join(f"{r}\n" for r in requests).encode("utf-8", "surrogateescape")
                while data:
                    data = data[os.write(feed_w, data) :]
                out: list[tuple[bytes, bytes] | None] = []
                for _ in requests:
                    got = next(answers, None)
                    if got is None:
                        raise Unanswered("git cat-file ended early")
                    out.append(None if got[1] == b"missing" else (got[1], got[3]))
                return out

            yield ask
    except OSError as exc:  # git gone: a broken pipe
        raise Unanswered(str(exc)) from None
    finally:
        for fd in (feed_r, feed_w):
            if fd >= 0:
                os.close(fd)


@contextmanager
def _batch(loc: gitdir.Location, requests: Sequence[str]) -> Iterator[proc.Pipeline]:
    """One `cat-file --batch` answering `requests` (object names, one per line), read from an
    in-memory file so that nothing waits on a full pipe."""
    names = os.memfd_create("object-names") if hasattr(os, "memfd_create") else _temp_fd()
    try:
        os.write(names, "".join(f"{r}\n" for r in requests).encode("utf-8", "surrogateescape"))
        os.lseek(names, 0, os.SEEK_SET)
        with proc.pipeline([_BATCH], cwd=loc.git_dir, env=_env(loc), stdin=names) as pipe:
            os.close(names)
            names = -1
            yield pipe
    finally:
        if names >= 0:
            os.close(names)


_BATCH = [
    "git",
    "cat-file",
    "--buffer",
    "--batch=%(objectname) %(objecttype) %(objectsize) %(rest)",
]


def _env(loc: gitdir.Location) -> dict[str, str]:
    # no lazy fetch (a promisor remote's `uploadpack` would run): an object is there or not;
    # no config file outside the repository (reading objects needs none, and an agent
    # without the sandbox can put a FIFO at ~/.gitconfig that git would wait on for ever)
    return proc.isolated_env(
        proc.clean_env({"GIT_DIR": loc.git_dir, "GITIMPROVE_CHILD": "1", "GIT_NO_LAZY_FETCH": "1"})
    )


def _temp_fd() -> int:
    import tempfile

    return os.dup(tempfile.TemporaryFile().fileno())


def _batch_output(out: IO[bytes]) -> Iterator[tuple[bytes, bytes, bytes, bytes]]:
    """(object id, type, rest of the request line, content) of each object `cat-file
    --batch` prints (type `missing`, no content, for an id git does not have); Unanswered
    at an output cut short."""
    readline, read = out.readline, out.read
    while True:
        header = readline()
        if not header:
            return
        parts = header.rstrip(b"\n").split(b" ", 3)
        if len(parts) == 2 and parts[1] == b"missing":  # "<oid> missing"
            yield parts[0], b"missing", b"", b""
            continue
        if len(parts) == 3:
            parts.append(b"")
        if len(parts) != 4 or not parts[2].isdigit():
            raise Unanswered(header[:200].decode("utf-8", errors="replace"))
        size = int(parts[2])
        data = read(size + 1)
        if len(data) != size + 1 or data[size:] != b"\n":
            raise Unanswered("cat-file output ended early")
        yield parts[0], parts[1], parts[3], data[:size]
