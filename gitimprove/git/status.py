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
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from gitimprove.git import gitfiles, listing
from gitimprove.util import proc
from gitimprove.util.files import open_state

__all__ = ["STATUS_TIMEOUT", "work_tree_status"]

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
        ["--no-optional-locks", "status", "--porcelain", "-z", "--untracked-files=all",
         "--ignored=matching"],
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
    kept, ignored = [], set()
    for item in res.raw.split(b"\0"):
        if item.startswith(b"!! "):
            if item.endswith(b"/"):
                ignored.add(item[3:-1])
        else:
            kept.append(item)
    _IGNORED[key] = frozenset(ignored)
    return b"\0".join(kept), []


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
