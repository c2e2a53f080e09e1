"""The user's work tree's status, taken without hanging on what git reads there.

`git status` reads every `.gitignore` and `.gitattributes` it meets and, for a folder git does
not track, its `.git` (HEAD, config…) to tell a nested repository: a FIFO in one's place would
hang it for ever, a huge one exhaust its memory. Those files are checked first
(`listing.git_inputs`), skipping the folders the previous status found ignored (git does not
enter them; their own `.git` is still checked). A status that still does not finish within
`STATUS_TIMEOUT` is stopped, and the whole work tree is searched for what it waited on, so
the reason names it.

`git status` also runs programs the repository's configuration names: a filter driver's
`clean` command (or `process`) hashes a tracked file whose `lstat` changed, for every path an
attribute (`.gitattributes`, `.git/info/attributes`) gives `filter=<driver>`. An agent without
the sandbox can write both, and the harness's own status would then run its program, outside
any attempt's supervision (no token, no mark). Every filter driver the configuration names is
blanked for the status (`GIT_CONFIG_COUNT`: any name, dots and `=` included), those of the
submodules' configurations too (`.git/modules/**/config`: the status runs one in each): a
file is hashed as it is on disk, and nothing configured runs. No object is fetched either (a
"promisor" remote an agent configures would run its `uploadpack` or `sshCommand` for an
object it removed): the status allows no transport.

The status trusts the index: a file marked `skip-worktree` or `assume-unchanged` is not looked
at, nor is one whose recorded `lstat` matches the file on disk. An agent without the sandbox
that marks your sealed benchmark so (`git update-index --skip-worktree bench.py`), or writes
your index again with the new file's `lstat` beside the old blob, then rewrites the file,
leaves a status that says nothing. So the index's entries (path, flags, mode, blob, stage) are
compared too (`index_state`, read again only when the index file moved), and an entry whose
recorded `lstat` alone changed must be the file's as git hashes it now (`index_lies`): a
refresh by your own `git status` passes, a forged one is named. Nor does the status take what a
configuration relaxes (`_DISTRUSTFUL`: `core.trustctime=false`, `core.checkStat=minimal`, the
untracked cache). Ignored entries are left out of
the status but for the `.gitignore` files that are ignored themselves (`*` in a folder's own
`.gitignore`): one planted with a file beside it hides that file from every status. A known
tool's cache, its rule file as the tool writes it (`TOOL_CACHES`), is left out.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from gitimprove.git import gitfiles, listing
from gitimprove.util import proc
from gitimprove.util.files import open_state

__all__ = [
    "STATUS_TIMEOUT", "Index", "ignored_paths", "index_lies", "index_state", "work_tree_status",
]  # fmt: skip

STATUS_TIMEOUT = 60.0

# the folders each work tree's last status found ignored (git never enters them)
_IGNORED: dict[str, frozenset[bytes]] = {}


def work_tree_status(work_tree: Path, common_dir: Path | None = None) -> tuple[bytes, list[str]]:
    """(`git status --porcelain -z` without ignored entries, problems): with problems (each
    `work tree: <path> (why)`), the status was not taken."""
    key = str(work_tree)
    cap = gitfiles.LIMITS["list"]
    found = listing.git_inputs(work_tree, cap, _IGNORED.get(key, frozenset()))
    if found:
        return b"", [f"work tree: {item}" for item in found]
    res = proc.git(
        ["--no-optional-locks", *_DISTRUSTFUL, "status", "--porcelain", "-z",
         "--untracked-files=all", "--ignored=matching"],
        cwd=work_tree,
        env=_no_filters(work_tree, common_dir),
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
    kept, ignored, hidden = [], set(), set()
    for item in res.raw.split(b"\0"):
        if item.startswith(b"!! "):
            if item.endswith(b"/"):
                ignored.add(item[3:-1])
            rule = _ignoring_itself(work_tree, item[3:])
            if rule is not None:
                kept.append(b"!! " + rule)
            if not _tool_cache_folder(work_tree, item[3:]):
                hidden.add(item[3:].rstrip(b"/"))
        else:
            kept.append(item)
    _IGNORED[key] = frozenset(ignored)
    _HIDDEN[key] = frozenset(hidden)
    return b"\0".join(kept), []


# the ignored files and folders each work tree's last status named, tool caches left out
_HIDDEN: dict[str, frozenset[bytes]] = {}


def ignored_paths(work_tree: Path) -> frozenset[bytes]:
    """What the last status of `work_tree` found ignored (folders without their `/`), but a
    known tool's cache (`TOOL_CACHES`): git/ignored.py watches them."""
    return _HIDDEN.get(str(work_tree), frozenset())


def _tool_cache_folder(work_tree: Path, ignored: bytes) -> bool:
    """An ignored path in (or that is) a known tool's cache folder, its rule file as the tool
    writes it: the folder's own `*` ignores each entry of it, listed one by one."""
    parts = ignored.rstrip(b"/").split(b"/")
    base = os.fsencode(work_tree)
    return any(
        part in TOOL_CACHES and tool_cache(os.path.join(base, *parts[: i + 1], b".gitignore"))
        for i, part in enumerate(parts)
    )


@dataclass(frozen=True)
class Index:
    """The index's entries: path -> (flags, mode, blob, stage) as `git ls-files -v -s` shows
    them (the flag letter: `S` skip-worktree, lower case assume-unchanged), and path -> the
    `lstat` git recorded; `unread` says why git could not list them."""

    entries: dict[bytes, bytes] = field(default_factory=dict)
    stats: dict[bytes, bytes] = field(default_factory=dict)
    unread: str = ""

    def changed(self, after: Index) -> list[str]:
        """The paths whose entry differs in `after` (added, removed, flags, blob), each with
        what changed."""
        if self.unread != after.unread:
            return [f"(git {'cannot' if after.unread else 'can'} read it)"]
        out = []
        for path in sorted(set(self.entries) | set(after.entries)):
            old, new = self.entries.get(path), after.entries.get(path)
            if old != new:
                what = "removed" if new is None else "added" if old is None else _what(old, new)
                out.append(f"{os.fsdecode(path)} ({what})")
        return out


def _what(old: bytes, new: bytes) -> str:
    tag_old, tag_new = old[:1], new[:1]
    if tag_old == tag_new:
        return "staged"
    marks = {b"S": "skip-worktree", b"s": "skip-worktree"}
    if tag_new in marks and tag_old not in marks:
        return "skip-worktree set"
    if tag_new.islower() and not tag_old.islower():
        return "assume-unchanged set"
    return f"flag {tag_old.decode(errors='replace')} -> {tag_new.decode(errors='replace')}"


# the index last listed, by the `lstat` of its file (a write always moves the ctime)
_INDEXES: dict[str, tuple[str | None, Index]] = {}


def index_state(work_tree: Path, index_file: Path, common_dir: Path | None) -> Index:
    """The index's entries; listed again only when the index file's `lstat` moved (one that is
    not a regular file within bounds is never opened)."""
    try:
        st = index_file.lstat()
        key: str | None = f"{st.st_mode}:{st.st_size}:{st.st_ino}:{st.st_mtime_ns}:{st.st_ctime_ns}"
    except OSError:
        key = None
    cached = _INDEXES.get(str(index_file))
    if cached is not None and cached[0] == key and key is not None:
        return cached[1]
    if key is None:
        found = Index()
    elif not stat.S_ISREG(st.st_mode) or st.st_size > gitfiles.LIMITS["index"]:
        found = Index(unread="not a regular file within bounds")  # never opened
    else:
        res = proc.git(
            ["--no-optional-locks", "ls-files", "-v", "-s", "--debug", "-z"],
            cwd=work_tree,
            env=_no_filters(work_tree, common_dir),
            isolated=True,
            timeout=STATUS_TIMEOUT,
        )
        found = _parsed(res.raw) if res.ok else Index(unread=res.stderr.strip()[:200] or "error")
    _INDEXES[str(index_file)] = (key, found)
    return found


_DEBUG_LINES = 5  # ctime, mtime, dev/ino, uid/gid, size/flags: git's `--debug` block


def _parsed(raw: bytes) -> Index:
    """`ls-files -v -s --debug -z`: `<flag> <mode> <blob> <stage>\t<path>\0` then five lines."""
    found = Index()
    at = 0
    while at < len(raw):
        end = raw.find(b"\0", at)
        if end < 0:
            break
        head, _, path = raw[at:end].partition(b"\t")
        at = end + 1
        stat_end = at
        for _ in range(_DEBUG_LINES):
            stat_end = raw.find(b"\n", stat_end) + 1
            if stat_end <= 0:
                return Index(unread="git ls-files: output cut short")
        block = raw[at:stat_end]
        at = stat_end
        found.entries[path] = head
        found.stats[path] = block.partition(b"flags:")[0]  # flags are git's, in memory
    return found


def index_lies(before: Index, after: Index, work_tree: Path, common_dir: Path | None) -> list[str]:
    """Entries of `after` whose recorded `lstat` alone changed since `before` but whose blob is
    not the file there as git hashes it: an index written to make `git status` pass over a
    changed file (a refresh by git itself only records a file it hashed to that blob)."""
    moved = [
        p
        for p, head in after.entries.items()
        if before.entries.get(p) == head
        and before.stats.get(p) != after.stats.get(p)
        and head[:1] == b"H"  # stage 0, no flag: the status trusts the recorded lstat
    ]
    out: list[str] = []
    links = [p for p in moved if after.entries[p].split(b" ")[1] == b"120000"]
    for path in links:  # git hashes a link's target name, `hash-object` would follow it
        blob = after.entries[path].split(b" ")[2].decode("ascii", "replace")
        try:
            target = os.readlink(work_tree / os.fsdecode(path))
        except OSError:
            continue  # gone: the status names it
        data = os.fsencode(target)
        digest = (hashlib.sha1 if len(blob) == 40 else hashlib.sha256)(
            b"blob %d\0" % len(data) + data
        ).hexdigest()
        if digest != blob:
            out.append(f"{os.fsdecode(path)} (recorded as unchanged, but it is not)")
    moved = [
        p
        for p in moved
        if after.entries[p].split(b" ")[1] in (b"100644", b"100755")
        and (work_tree / os.fsdecode(p)).is_file()  # gone or replaced: the status names it
    ]
    env = _no_filters(work_tree, common_dir)
    for start in range(0, len(moved), _HASHED_AT_ONCE):
        chunk = moved[start : start + _HASHED_AT_ONCE]
        res = proc.git(
            ["hash-object", "--", *(os.fsdecode(p) for p in chunk)],
            cwd=work_tree,
            env=env,
            isolated=True,
            timeout=STATUS_TIMEOUT,
        )
        hashed = res.stdout.split() if res.ok else []
        for i, path in enumerate(chunk):
            blob = after.entries[path].split(b" ")[2].decode("ascii", "replace")
            if i >= len(hashed) or hashed[i] != blob:
                out.append(f"{os.fsdecode(path)} (recorded as unchanged, but it is not)")
    return out


_HASHED_AT_ONCE = 500


# what a configuration may relax to make the status trust the index more than the files: no
# ctime compared (`core.trustctime=false`, then a file rewritten in place with its mtime put
# back looks unchanged), stat data ignored, a cached listing of untracked files (the index's
# untracked cache, which an agent can forge to hide a file it planted)
_DISTRUSTFUL = [
    "-c", "core.trustctime=true", "-c", "core.checkStat=default", "-c", "core.ignoreStat=false",
    "-c", "core.untrackedCache=false",
]  # fmt: skip


# the caches whose tool writes a `.gitignore` of `*` into them, as it writes it: a dot-named
# folder, never imported (no module name starts with a dot), never collected by pytest (its
# `norecursedirs` has `.*`); what they hold is data for the tool alone. A new `.venv/` (venv
# in Python 3.13, virtualenv, uv) is not one: `uv run`, poetry and editors run its python.
TOOL_CACHES = {
    b".pytest_cache": b"# Created by pytest automatically.\n*\n",
    b".mypy_cache": b"# Automatically created by mypy\n*\n",
    b".ruff_cache": b"# Automatically created by ruff.\n*\n",
}
_NO_FOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def tool_cache(path: bytes) -> bool:
    """Whether the rule file at `path` is the one a known tool wrote into its own cache folder
    (`TOOL_CACHES`): named so, a regular file holding exactly those bytes."""
    folder, name = os.path.split(path)
    want = TOOL_CACHES.get(os.path.basename(folder))
    if want is None or name != b".gitignore":
        return False
    try:
        fd = os.open(path, _NO_FOLLOW)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and os.read(fd, len(want) + 1) == want
    except OSError:
        return False
    finally:
        os.close(fd)


def _ignoring_itself(work_tree: Path, ignored: bytes) -> bytes | None:
    """The `.gitignore` an ignored entry is, or that an ignored folder holds at its top: a rule
    file that ignores itself (`*`) hides what lies beside it from the status — a `conftest.py`
    an agent planted in your work tree — and must be seen come and change. A known tool's
    cache (`.pytest_cache/`, `.mypy_cache/`, `.ruff_cache/` with its tool's own rule file) is
    not: your `pytest` makes one at any time, and nothing there is run."""
    base = os.fsencode(work_tree)
    if ignored.endswith(b"/"):
        rule = ignored + b".gitignore"
        if not os.path.lexists(os.path.join(base, rule)):
            return None
    elif os.path.basename(ignored) == b".gitignore":
        rule = ignored
    else:
        return None
    return None if tool_cache(os.path.join(base, rule)) else rule


_DRIVER_KEYS = ("clean", "smudge", "process")

# the filter drivers the configuration files named when they held exactly these bytes
_DRIVERS: dict[tuple[object, ...], set[str]] = {}
_MAX_CONFIG = 1 << 20


def _config_key(
    work_tree: Path, common_dir: Path | None, configs: list[Path], env: dict[str, str]
) -> tuple[object, ...] | None:
    """What the drivers found depend on, when the configuration is read from these files
    alone: the repository's and the submodules' configuration files' bytes (the caller ran
    `gitfiles.problems`: regular files within bounds) and the environment's settings. None
    (found anew each time) when a file includes another, a worktree has its own file, or the
    work tree is a linked worktree."""
    if common_dir is None:
        return None
    parts: list[object] = [os.fspath(work_tree)]
    dot_git = work_tree / ".git"  # which repository's configuration git finds from here
    try:
        st = os.lstat(dot_git)
    except OSError:
        return None
    parts += [st.st_ino, st.st_dev]
    if not stat.S_ISDIR(st.st_mode) or not os.path.samefile(dot_git, common_dir):
        return None  # a linked worktree's `.git` file, or one put in the folder's place
    for path in [common_dir / "config", *configs]:
        try:
            with os.fdopen(open_state(path), "rb") as fh:
                data = fh.read(_MAX_CONFIG + 1)
        except OSError:
            return None
        low = data.lower()
        if len(data) > _MAX_CONFIG:
            return None
        if b"include" in low or b"worktreeconfig" in low:
            return None
        parts += [os.fspath(path), data]
    parts += sorted((k, v) for k, v in env.items() if k.startswith("GIT_"))
    return tuple(parts)


def _no_filters(work_tree: Path, common_dir: Path | None) -> dict[str, str]:
    """The environment for a status that runs no filter driver a configuration names: the
    repository's, and each submodule's (the status runs one in every submodule, which
    inherits this environment)."""
    # nor a lazy fetch from a "promisor" remote an agent configured (an object it removed),
    # which would run that remote's `uploadpack` or `sshCommand`: no transport at all
    env = proc.clean_env({"GIT_NO_LAZY_FETCH": "1", "GIT_ALLOW_PROTOCOL": ""})
    found = [["config", "--null", "--name-only", "--get-regexp", r"^filter\."]]
    modules = common_dir / "modules" if common_dir is not None else None
    configs = []
    if modules is not None and modules.is_dir():
        configs = [
            path
            for path in sorted(modules.rglob("config"))
            if path.is_file() and not path.is_symlink()
        ]
        found += [["config", "--includes", "--file", str(path), *found[0][1:]] for path in configs]
    cache = _config_key(work_tree, common_dir, configs, env)
    names = _DRIVERS.get(cache) if cache is not None else None
    if names is None:
        names = set()
        for args in found:
            res = proc.git(args, cwd=work_tree, isolated=True, timeout=STATUS_TIMEOUT)
            names.update(
                key[len("filter.") :].rsplit(".", 1)[0]
                for key in res.stdout.split("\0")
                if key.startswith("filter.") and key.count(".") >= 2
            )
        if cache is not None:
            _DRIVERS.clear()
            _DRIVERS[cache] = names
    try:
        count = int(env.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        count = 0
    for name in sorted(names):
        for key, value in [*((k, "") for k in _DRIVER_KEYS), ("required", "false")]:
            env[f"GIT_CONFIG_KEY_{count}"] = f"filter.{name}.{key}"
            env[f"GIT_CONFIG_VALUE_{count}"] = value
            count += 1
    if names:
        env["GIT_CONFIG_COUNT"] = str(count)
    return env
