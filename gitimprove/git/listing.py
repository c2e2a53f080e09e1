"""Listing an agent's workspace: the files git would commit, and what it cannot hold.

The listing runs git (`ls-files --others --exclude-standard`) over a folder an agent wrote, so
no global or system configuration is read (an agent without the sandbox can write ~/.gitconfig
or ~/.config/git/ignore), and the files git itself reads there are checked first: every
`.gitignore`, `.gitattributes` and `.gitmodules`, and a nested repository's `.git` (its HEAD,
commondir, config…). Each must be a
regular file (or a link to one) within [scope] max_file_size: a FIFO would hang git, a huge
(sparse) file exhaust its memory. One that is not is removed from the throwaway workspace
before git runs and named, so the attempt is `out-of-scope` with the reason. A timeout on
every git call is the second net: git that still does not finish (or fails) leaves the
attempt `out-of-scope` too, never a hang and never a stopped run.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from gitimprove.util import proc

__all__ = ["LIST_TIMEOUT", "MAX_DEPTH", "Listing", "git_inputs", "list_files"]

# Folders a path may nest in (git's own core.maxTreeDepth is 4096; no project comes close to
# this): a deeper file is left out and the attempt is out-of-scope, naming the folder.
MAX_DEPTH = 200

# Seconds each git call over the workspace may take before the attempt is out-of-scope.
LIST_TIMEOUT = 120.0

# Files git reads from the work tree while it lists or checks it, wherever they are.
GIT_INPUTS = frozenset({b".gitignore", b".gitattributes", b".gitmodules"})


def kind(mode: int) -> str:
    return (
        "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
        else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"
    )  # fmt: skip


def _input_problem(full: bytes, cap: int) -> str | None:
    """Why git must not read `full` (a file it reads itself), or None when it may."""
    try:
        st = os.stat(full)  # through a link: what git would open
    except OSError:
        return None if not os.path.lexists(full) else "a link that does not resolve"
    if stat.S_ISDIR(st.st_mode):
        return None
    if not stat.S_ISREG(st.st_mode):
        return f"{kind(st.st_mode)}, which git would wait on for ever"
    if st.st_size > cap:
        return f"{st.st_size:,} bytes, over scope.max_file_size: git reads it whole"
    return None


def _walk(
    root: bytes, cap: int, skip: frozenset[bytes] = frozenset()
) -> tuple[list[bytes], list[tuple[bytes, str]]]:
    """Special files (FIFOs, sockets, devices) under `root` but its `.git`, which git lists
    not at all, and the files git reads itself that it must not (with why). A folder in `skip`
    (one git ignores: it never enters it) is not entered, but its own `.git` is checked: git
    looks whether a folder is a repository before whether it is ignored."""
    found: list[bytes] = []
    inputs: list[tuple[bytes, str]] = []
    stack: list[tuple[bytes, int]] = [(b"", 0)]
    while stack:
        rel, depth = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(root, rel) if rel else root))
        except OSError:
            continue  # a folder that cannot be opened is named by the listing
        for entry in entries:
            name = os.fsencode(entry.name)
            if not rel and name == b".git":
                continue
            sub = rel + b"/" + name if rel else name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                if name in GIT_INPUTS or (name == b".git" and not is_dir):
                    why = _input_problem(os.path.join(root, sub), cap)
                    if why is not None:
                        inputs.append((sub, why))
                        continue
                if name == b".git" and is_dir:  # a nested repository: git reads its HEAD...
                    inputs += _nested_git(root, sub, cap)
                if is_dir and sub in skip:
                    found_git = os.path.join(root, sub, b".git")
                    why = _input_problem(found_git, cap)
                    if why is not None:
                        inputs.append((sub + b"/.git", why))
                    elif os.path.isdir(found_git):
                        inputs += _nested_git(root, sub + b"/.git", cap)
                elif is_dir:
                    if depth < MAX_DEPTH:
                        stack.append((sub, depth + 1))
                elif not (entry.is_file(follow_symlinks=False) or entry.is_symlink()):
                    found.append(sub)
            except OSError:
                continue
    return found, inputs


def git_inputs(root: Path, cap: int, skip: frozenset[bytes] = frozenset()) -> list[str]:
    """The files git would read in a work tree that it must not (a FIFO `.gitignore`, a
    nested repository's FIFO `HEAD`, a huge `.gitattributes`...), each as `path (why)`."""
    _special, inputs = _walk(os.fsencode(root), cap, skip)
    return [f"{os.fsdecode(rel)} ({why})" for rel, why in sorted(inputs)]


def _nested_git(root: bytes, sub: bytes, cap: int) -> list[tuple[bytes, str]]:
    """The files at the top of a nested `.git` folder git reads to tell it is a repository."""
    out: list[tuple[bytes, str]] = []
    try:
        entries = list(os.scandir(os.path.join(root, sub)))
    except OSError:
        return out
    for entry in entries:
        inner = sub + b"/" + os.fsencode(entry.name)
        why = _input_problem(os.path.join(root, inner), cap)
        if why is not None:
            out.append((inner, why))
    return out


def _special(root: bytes, raw: bytes) -> str:
    try:
        what = kind(os.lstat(os.path.join(root, raw)).st_mode)
    except OSError:
        what = "not a regular file"
    name = raw.decode("utf-8", "backslashreplace")
    return f"{name} ({what}: only regular files, folders and links can be committed)"


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _remove(full: bytes) -> None:
    with contextlib.suppress(OSError):
        os.unlink(full)


class Listing:
    """What `list_files` found: the paths git lists, what cannot be committed, and (when git
    could not list the workspace at all) why."""

    def __init__(self, paths: list[bytes], refused: list[str], failed: str | None) -> None:
        self.paths, self.refused, self.failed = paths, refused, failed


def list_files(path: Path, max_file: int) -> Listing:
    """Files that are not ignored, listed with a git directory of our own (never the clone's),
    and what cannot be committed: the files git reads itself that are not regular files
    within `max_file` (removed first, so git never opens them), the folders git could not
    open (a path past the system's limit, no permission) and special files that are not
    ignored."""
    root = os.fsencode(path)
    special, inputs = _walk(root, max_file)
    for raw, _ in inputs:
        _remove(os.path.join(root, raw))
    refused = [
        f"{raw.decode('utf-8', 'backslashreplace')} ({why}; git reads it itself)"
        for raw, why in inputs
    ]
    bad = {raw for raw, _ in inputs}
    special = [s for s in special if s not in bad]
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        gitdir = Path(tmp) / "git"
        try:
            for sub in ("objects", "refs"):
                (gitdir / sub).mkdir(parents=True)
            (gitdir / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
        except OSError as exc:  # named: a full $TMPDIR is not the repository's disk
            raise OSError(exc.errno, exc.strerror, tmp) from exc
        # no global or system configuration, nor one your environment includes (an agent
        # without the sandbox can write ~/.gitconfig, or put a FIFO at ~/.config/git/ignore):
        # only the workspace's own .gitignore files, checked above, decide what is ignored
        env = proc.isolated_env(
            proc.clean_env(
                {
                    "GIT_DIR": str(gitdir),
                    "GIT_WORK_TREE": str(path),
                    "GIT_INDEX_FILE": str(Path(tmp) / "index"),
                    "XDG_CONFIG_HOME": str(Path(tmp) / "xdg"),
                },
            )
        )
        res = proc.run(
            ["git", *proc.ISOLATED_GIT_ARGS, "ls-files", "-z", "--others", "--exclude-standard"],
            cwd=path, env=env, timeout=LIST_TIMEOUT,
        )  # fmt: skip
        names = [s.decode("utf-8") for s in special if _utf8(s)]  # others are refused anyway
        if names and res.ok:  # only those git would not ignore matter
            ignored = proc.run(
                ["git", *proc.ISOLATED_GIT_ARGS, "check-ignore", "-z", "--stdin"],
                cwd=path, env=env, timeout=LIST_TIMEOUT, input="\0".join(names),
            )  # fmt: skip
            if ignored.timed_out:
                return Listing([], refused, _failure(ignored))
            skip = {s.encode("utf-8") for s in ignored.stdout.split("\0") if s}
            special = [s for s in special if s not in skip]
    if not res.ok:
        return Listing([], refused, _failure(res))
    refused += [_special(root, s) for s in special] + [
        line.split("'", 1)[1].rstrip("'")[:80] + "… (a folder git cannot open)"
        for line in res.stderr.splitlines()
        if line.startswith("warning: could not open directory '")
    ]
    return Listing([p for p in res.raw.split(b"\0") if p], refused, None)


def _failure(res: proc.Result) -> str:
    if res.timed_out:
        return f"git did not list them within {LIST_TIMEOUT:.0f}s (a file it reads blocks it?)"
    last = (res.stderr.strip().splitlines() or [f"exit {res.returncode}"])[-1]
    return f"git could not list them: {last[:200]}"
