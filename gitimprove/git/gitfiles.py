"""The files of the user's git directory that git and libgit2 read, checked before they do.

libgit2 (in the harness) and git (in its subprocesses) open `HEAD`, `config` and every file it
includes (`[include]`/`[includeIf]`, recursively), `packed-refs`, the index, every loose ref,
the object alternates and the alternates of those (a chain), `info/*`, the packs' files,
`commondir`/`gitdir`, a linked worktree's and a submodule's own files (`worktrees/`,
`modules/`), and the state files of a merge or rebase, with plain blocking reads: a FIFO in
one's place would hang them for ever, a huge (sparse) one exhaust their memory. `problems`
names each that is not a regular file (a link is followed: what git would open) within the
limit of its kind (`LIMITS`), using `stat` and small reads only; the harness checks before it
touches the repository (docs/integrity.md, "Files git reads").
"""

from __future__ import annotations

import errno
import os
import re
import shlex
import stat
from collections.abc import Iterable
from pathlib import Path

from gitimprove.git import objectstore
from gitimprove.util import written

__all__ = [
    "LIMITS", "MAX_SIZE", "env_configs", "hung", "locate", "move_aside", "problems", "user_configs",
]  # fmt: skip

_KB, _MB = 1 << 10, 1 << 20
# What each kind of file honestly comes near, with room to spare: a ref is 41 bytes, a config
# with thousands of branches a few hundred KB, a huge monorepo's packed-refs ~100 MB and its
# index a few hundred MB. Anything larger is named, never read.
LIMITS = {
    "ref": 64 * _KB,  # HEAD, ORIG_HEAD, a loose ref, commondir, gitdir
    "config": 8 * _MB,  # config, config.worktree, each included file
    "list": 64 * _MB,  # info/*, alternates, shallow, FETCH_HEAD, a rebase's state
    "packed-refs": 1 << 30,
    "index": 2 << 30,
}
MAX_SIZE = max(LIMITS.values())
MAX_INCLUDE_DEPTH = 10  # git's own limit on nested includes
MAX_ALTERNATE_DEPTH = 5  # git's own limit on the alternates chain

_NAMED = {
    "HEAD": "ref", "config": "config", "config.worktree": "config", "index": "index",
    "commondir": "ref", "gitdir": "ref", "ORIG_HEAD": "ref",
}  # fmt: skip
_COMMON = {
    "config": "config", "packed-refs": "packed-refs", "shallow": "list",
    "objects/info/alternates": "list", "info/grafts": "list",
}  # fmt: skip
# folders whose every file git may read (kind "list" unless named above); their files may be
# large (packs) only where no limit applies
_FOLDERS = {"info": "list", "rebase-merge": "list", "rebase-apply": "list", "sequencer": "list"}
_UNBOUNDED = ("objects/pack", "objects/info")  # packs, commit-graphs: any size, but files


def _problem(path: str | Path, limit: int = MAX_SIZE) -> str | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None if not os.path.islink(path) else "a link that does not resolve"
    except OSError as exc:
        return None if exc.errno != errno.ELOOP else "a link that does not resolve"
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return f"{st.st_size:,} bytes, over {limit:,}" if st.st_size > limit else None
    if stat.S_ISDIR(mode):
        return None
    kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
    return f"{kind}, not a regular file"


def _refs(root: str, out: list[str]) -> None:
    todo = [(root, ".git/refs")]
    limit = LIMITS["ref"]
    while todo:
        folder, label = todo.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                todo.append((entry.path, f"{label}/{entry.name}"))
                continue
            why = _problem(entry.path, limit)  # a link, a FIFO, a huge file: what it leads to
            if why is not None:
                out.append(f"{label}/{entry.name} ({why})")


def _folder_files(path: str, label: str, limit: int | None, out: list[str]) -> None:
    """Every entry at the top of a folder git reads files of (not its sub-folders)."""
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    continue
                why = _problem(entry.path, MAX_SIZE if limit is None else limit)
                if why is not None and (limit is not None or "bytes" not in why):
                    out.append(f"{label}/{entry.name} ({why})")
    except OSError:
        pass


def loose_objects(objects: str, label: str = ".git/objects") -> list[str]:
    """Each entry of the loose-object folders (`objects/ab/…`) that is not a regular file: a
    FIFO, a socket, a device, a link (to `/dev/zero`, to a FIFO), a folder; and a pack's file
    that is a link (one that is a FIFO or a device, followed, is `_folder_files`'). libgit2
    opens a loose object with a blocking read when it reads it: one such entry held the
    harness, and every git command, for ever. The kinds come with the object store's own
    listing (git/objectstore.py `odd_entries`: one `readdir` per folder, no `stat` of a
    regular entry; the watched listing itself in a process that watches the store), its
    alternates' too."""
    return objectstore.odd_problems(objectstore.odd_entries(Path(objects), label))


def _top_level(path: str, label: str, out: list[str], seen: set[str]) -> None:
    """Files at the top of a git directory git may read: MERGE_HEAD, FETCH_HEAD... (a
    socket named `*.ipc` is git's fsmonitor daemon's)."""
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                full = entry.path
                if full in seen or entry.is_dir(follow_symlinks=False):
                    continue
                why = _problem(full, LIMITS["list"])
                if why is not None and not (entry.name.endswith(".ipc") and "socket" in why):
                    seen.add(full)
                    out.append(f"{label}/{entry.name} ({why})")
    except OSError:
        pass


_SECTION = re.compile(r'\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"(?:[^"\\]|\\.)*")?\s*\]')
_PATH_KEY = re.compile(r'\s*path\s*=\s*("(?:[^"\\]|\\.)*"|[^#;]*)', re.IGNORECASE)


def includes(config: Path) -> list[str]:
    """The `path` values of a config file's `[include]` and `[includeIf …]` sections, as
    written (a file `problems` allowed: regular, bounded)."""
    try:  # never blocks: a FIFO put in its place since it was checked is not read
        fd = os.open(config, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        with os.fdopen(fd, "rb", closefd=False) as f:
            text = f.read(LIMITS["config"] + 1).decode("utf-8", "surrogateescape")
    except OSError:
        return []
    finally:
        os.close(fd)
    out: list[str] = []
    section = ""
    for line in text.replace("\\\n", "").splitlines():
        head = _SECTION.match(line)
        if head is not None:
            section = head.group(1).lower()
            line = line[head.end() :]
        if section in ("include", "includeif"):
            m = _PATH_KEY.match(line)
            if m is not None:
                value = m.group(1).strip()
                if value.startswith('"') and value.endswith('"') and len(value) > 1:
                    value = re.sub(r"\\(.)", r"\1", value[1:-1])
                if value:
                    out.append(value)
    return out


def _include_target(value: str, config: Path) -> Path:
    if value.startswith("~/") or value == "~":
        return Path(os.path.expanduser(value))
    found = Path(value)
    return found if found.is_absolute() else config.parent / found


def _config_chain(config: Path, label: str, out: list[str], seen: set[str], depth: int) -> None:
    """Check the files `config` includes, and theirs, up to git's depth."""
    if depth > MAX_INCLUDE_DEPTH:
        out.append(f"{label} (includes nested deeper than {MAX_INCLUDE_DEPTH})")
        return
    for value in includes(config):
        target = _include_target(value, config)
        key = os.fspath(target)
        if key in seen:
            continue
        seen.add(key)
        why = _problem(target, LIMITS["config"])
        if why is not None:
            out.append(f"{label}: include {value} ({why})")
        elif os.path.isfile(target):
            _config_chain(target, f"{label} → {value}", out, seen, depth + 1)


def _alternates(objects: Path, label: str, out: list[str], depth: int) -> None:
    """The alternates chain: each alternate object folder's own `info/alternates`, and its
    packs' files, up to git's depth."""
    listed = objects / "info" / "alternates"
    if depth > MAX_ALTERNATE_DEPTH or not os.path.isfile(listed):
        return
    try:
        with open(listed, "rb") as f:
            text = f.read(LIMITS["list"]).decode("utf-8", "surrogateescape")
    except OSError:
        return
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        alt = Path(line) if os.path.isabs(line) else objects / line
        where = f"{label} → {line}"
        for rel in ("info/alternates", "info/packs", "info/commit-graph"):
            why = _problem(alt / rel, LIMITS["list"] if rel == "info/alternates" else MAX_SIZE)
            if why is not None:
                out.append(f"{where}/{rel} ({why})")
        _folder_files(os.fspath(alt / "pack"), f"{where}/pack", None, out)
        _alternates(alt, where, out, depth + 1)


def user_configs() -> list[tuple[Path, str]]:
    """The git config files outside the repository that libgit2 reads with it (and reads
    again whenever one changes): the global `~/.gitconfig`, the XDG one and the system one,
    each with the label that names it."""
    home = os.environ.get("HOME") or os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    found = [
        (Path(home) / ".gitconfig", "~/.gitconfig"),
        (Path(xdg) / "git" / "config", f"{_tilde(xdg, home)}/git/config"),
        (Path("/etc/gitconfig"), "/etc/gitconfig"),
    ]
    return [(path, label) for path, label in found if os.path.isabs(path)]


_TRUE = ("1", "true", "yes", "on")
_INCLUDE_KEY = re.compile(r"(?i)^include(?:if\..*)?\.path$")


def _env_bool(name: str) -> bool:
    """git's reading of a boolean environment variable (`GIT_CONFIG_NOSYSTEM`)."""
    value = os.environ.get(name, "").strip().lower()
    if value in _TRUE:
        return True
    try:
        return int(value, 0) != 0
    except ValueError:
        return False


def _env_settings() -> list[tuple[str, str]]:
    """The settings your environment gives every git command: `GIT_CONFIG_COUNT` with its
    `GIT_CONFIG_KEY_<n>` / `GIT_CONFIG_VALUE_<n>`, and `GIT_CONFIG_PARAMETERS` (what `git -c`
    hands its children: `'key'='value'` words)."""
    out: list[tuple[str, str]] = []
    try:
        count = int(os.environ.get("GIT_CONFIG_COUNT", "0") or "0")
    except ValueError:
        count = 0
    for n in range(min(max(count, 0), 10_000)):
        key = os.environ.get(f"GIT_CONFIG_KEY_{n}")
        if key is not None:
            out.append((key, os.environ.get(f"GIT_CONFIG_VALUE_{n}", "")))
    params = os.environ.get("GIT_CONFIG_PARAMETERS", "")
    if params:
        try:
            words = shlex.split(params)
        except ValueError:
            words = []
        out += [tuple(w.split("=", 1)) for w in words if "=" in w]  # type: ignore[misc]
    return out


def env_configs() -> list[tuple[Path, str]]:
    """The git config files your environment names, which git reads (libgit2 does not):
    `GIT_CONFIG_GLOBAL` in place of `~/.gitconfig` and the XDG one, `GIT_CONFIG_SYSTEM` in
    place of `/etc/gitconfig` (unless `GIT_CONFIG_NOSYSTEM` is true), and the files an
    `include.path` or `includeIf.<condition>.path` given in the environment names; each with
    the label that names it (`GIT_CONFIG_GLOBAL=~/cfg/git`). `/dev/null`, which CI and the
    harness itself name to read nothing, is left out."""
    home = os.environ.get("HOME") or os.path.expanduser("~")
    named: list[tuple[str, str]] = []
    if os.environ.get("GIT_CONFIG_GLOBAL"):
        named.append(("GIT_CONFIG_GLOBAL", os.environ["GIT_CONFIG_GLOBAL"]))
    if os.environ.get("GIT_CONFIG_SYSTEM") and not _env_bool("GIT_CONFIG_NOSYSTEM"):
        named.append(("GIT_CONFIG_SYSTEM", os.environ["GIT_CONFIG_SYSTEM"]))
    named += [(key, value) for key, value in _env_settings() if _INCLUDE_KEY.match(key)]
    out: list[tuple[Path, str]] = []
    for variable, value in named:
        path = Path(os.path.expanduser(value))
        if not path.is_absolute():  # git takes it from the folder it runs in: the harness's
            path = Path.cwd() / path
        if not value or os.path.realpath(path) == os.devnull:
            continue
        out.append((path, f"{variable}={_tilde(os.fspath(path), home)}"))
    return out


def _included(config: Path, label: str, home: str, depth: int = 1) -> list[tuple[Path, str]]:
    """The files `config` includes (and theirs, up to git's depth), each labelled by its path."""
    out: list[tuple[Path, str]] = []
    if depth > MAX_INCLUDE_DEPTH:
        return out
    for value in includes(config):  # reads nothing but a regular file, bounded, never blocks
        target = _include_target(value, config)
        out.append((target, f"{_tilde(os.fspath(target), home)} ({label} includes it)"))
        out += _included(target, label, home, depth + 1)
    return out


def outside_files(named: dict[str, str], configs: Iterable[Path] = ()) -> list[tuple[Path, str]]:
    """The files outside the repository that change what your own git checks out, fetches or
    runs: the config files (global, XDG, system, and those your environment names), the XDG
    `attributes` and `ignore` files git reads by default, and the files `named` (the
    `core.attributesFile`/`core.excludesFile` values your configuration gives), and every file
    these config files or `configs` (the repository's own) include; each with the label that
    names it. An agent without the sandbox can write all of them."""
    home = os.environ.get("HOME") or os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    out = [*user_configs(), *env_configs()]
    for config, label in [*out, *((c, ".git/config") for c in configs)]:
        out += _included(config, label, home)
    if os.path.isabs(xdg):
        out += [
            (Path(xdg) / "git" / n, f"{_tilde(xdg, home)}/git/{n}")
            for n in ("attributes", "ignore")
        ]
    for value in named.values():
        given = os.path.expanduser(value)
        if os.path.isabs(given) and os.path.realpath(given) != os.devnull:
            out.append((Path(given), _tilde(given, home)))
    unique: dict[str, tuple[Path, str]] = {}
    for where, label in out:
        unique.setdefault(os.fspath(where), (where, label))
    return list(unique.values())


def outside_problems() -> list[str]:
    """What git would block on or choke over outside the repository, in the files any git
    command may read there: the user's config files (global, XDG, system, and those the
    environment names in their place or includes: `env_configs`), what they include, and
    the XDG `ignore` and `attributes` files git reads by default; each as
    `~/.gitconfig (why)`. An agent without the sandbox can write all of them."""
    out: list[str] = []
    seen: set[str] = set()
    home = os.environ.get("HOME") or os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    for path, label in [*user_configs(), *env_configs()]:
        if os.fspath(path) in seen:
            continue
        seen.add(os.fspath(path))
        why = _problem(path, LIMITS["config"])
        if why is not None:
            out.append(f"{label} ({why})")
        elif os.path.isfile(path):
            _config_chain(path, label, out, seen, 1)
    if os.path.isabs(xdg):
        for name in ("ignore", "attributes"):
            why = _problem(os.path.join(xdg, "git", name), LIMITS["list"])
            if why is not None:
                out.append(f"{_tilde(xdg, home)}/git/{name} ({why})")
    return out


def _tilde(path: str, home: str) -> str:
    return "~" + path[len(home) :] if home and (path + "/").startswith(home + "/") else path


def problems(
    git_dir: Path, common: Path, *, refs: bool = True, store: objectstore.Store | None = None
) -> list[str]:
    """What git would block on or choke over in the git directory (and what it reads from
    there: included config files, the alternates chain), each as `.git/<path> (why)`; with
    `refs`, every loose ref too (a walk of `refs/`). `store` is the object store's listing
    when the caller took it (its kinds are used, the folders not listed again)."""
    out: list[str] = []
    gd, cd = os.fspath(git_dir), os.fspath(common)
    places = [(f"{gd}/{n}", n, k) for n, k in _NAMED.items()]
    if cd != gd:
        places += [
            (f"{cd}/{n}", n, k) for n, k in _NAMED.items() if n not in ("HEAD", "index", "gitdir")
        ]
    places += [(f"{cd}/{n}", n, k) for n, k in _COMMON.items() if n != "config" or cd != gd]
    for base, prefix in ((f"{cd}/worktrees", "worktrees"), (f"{cd}/modules", "modules")):
        places += _nested_dirs(base, prefix)
    seen: set[str] = set()
    for path, label, kind in places:
        if path in seen:
            continue
        seen.add(path)
        why = _problem(path, LIMITS[kind])
        if why is not None:
            out.append(f".git/{label} ({why})")
    for root, label in {(gd, ".git"), (cd, ".git")}:
        _top_level(root, label, out, seen)
        for folder, kind in _FOLDERS.items():
            _folder_files(f"{root}/{folder}", f"{label}/{folder}", LIMITS[kind], out)
    for folder in _UNBOUNDED:
        _folder_files(f"{cd}/{folder}", f".git/{folder}", None, out)
    if store is None:
        out += loose_objects(f"{cd}/objects")  # and those of its alternates
    else:
        out += objectstore.odd_problems(store)
    # libgit2 in the harness reads the global, XDG and system config too (for `improve.*`),
    # and reads one again whenever its times change: a FIFO there (an agent without the
    # sandbox can write your home) held the harness for ever at its next look at the config
    out += outside_problems()
    if not out:  # only files found regular and bounded are read
        chain: set[str] = set()
        for config, label in (
            (common / "config", ".git/config"),
            (git_dir / "config.worktree", ".git/config.worktree"),
        ):
            _config_chain(config, label, out, chain, 1)
        _alternates(common / "objects", ".git/objects/info/alternates", out, 1)
    if refs:
        _refs(f"{cd}/refs", out)
        if gd != cd:
            _refs(f"{gd}/refs", out)
    return sorted(set(out), key=out.index)


def hung(git_dir: Path, common: Path, command: str, seconds: float) -> str:
    """What to say when a git command on the repository ran out of time: what it waits on."""
    found = problems(git_dir, common)
    said = f"`git {command}` did not finish in {seconds:.0f}s"
    return said + (f"; it waits on {', '.join(found[:5])}" if found else "")


def _nested_dirs(base: str, prefix: str, depth: int = 0) -> list[tuple[str, str, str]]:
    """The named files of each linked worktree's or submodule's git directory (submodules
    nest: `modules/a/modules/b`)."""
    places: list[tuple[str, str, str]] = []
    try:
        with os.scandir(base) as found:
            for tree in found:
                if not tree.is_dir(follow_symlinks=False):
                    continue
                label = f"{prefix}/{tree.name}"
                places += [(f"{tree.path}/{n}", f"{label}/{n}", k) for n, k in _NAMED.items()]
                places.append((f"{tree.path}/packed-refs", f"{label}/packed-refs", "packed-refs"))
                if prefix.startswith("modules") and depth < 8:
                    places += _nested_dirs(f"{tree.path}/modules", f"{label}/modules", depth + 1)
    except OSError:
        pass
    return places


def locate(where: Path) -> tuple[Path, Path] | str | None:
    """(git dir, common dir) of the repository around `where` found with `lstat` and small
    reads only, a reason when a `.git` there is not what git could read, or None."""
    env = os.environ.get("GIT_DIR")
    start = Path(env) if env else None
    folder = where.resolve()
    while start is None:
        dot = folder / ".git"
        try:
            mode = os.stat(dot).st_mode
        except OSError:
            mode = None
        if mode is not None and stat.S_ISDIR(mode):
            start = dot
        elif mode is not None and stat.S_ISREG(mode):
            text = _small(dot)
            if text is None or not text.startswith("gitdir:"):
                return f"{dot} is not a `gitdir:` file"
            found = Path(text[7:].strip())
            start = found if found.is_absolute() else folder / found
        elif mode is not None:
            return f"{dot} ({_problem(dot)})"
        elif folder.parent == folder:
            return None
        else:
            folder = folder.parent
    common = start
    why = _problem(start / "commondir")
    if why is not None:
        return f"{start / 'commondir'} ({why})"
    text = _small(start / "commondir")
    if text:
        found = Path(text.strip())
        common = found if found.is_absolute() else start / found
    return start, common


def _small(path: Path) -> str | None:
    """A small regular file's text (None when it is absent, not regular, or over 64 KB)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as f:
            data = f.read(1 << 16)
    except OSError:
        return None
    return data.decode("utf-8", "replace")


def leading_includes(found: list[str], label: str = ".git/config") -> list[str]:
    """The `path` values of `label` (as written there) that lead to a file `problems` named
    in `found`, directly (`.git/config: include ~/x (a FIFO…)`) or through other includes
    (`.git/config → ~/x: include y (…)`)."""
    out = []
    for item in found:
        for sep in (": include ", " → "):
            if item.startswith(label + sep):
                rest = item[len(label + sep) :]
                value = re.split(r" \(|: include | → ", rest, maxsplit=1)[0]
                if value and value not in out:
                    out.append(value)
    return out


def drop_includes(text: bytes, values: list[str]) -> bytes:
    """`text` of a config file without the `path = …` lines of its `[include]` and
    `[includeIf …]` sections that name one of `values` (as `includes` reads them)."""
    if not values:
        return text
    out: list[str] = []
    section = ""
    for line in text.decode("utf-8", "surrogateescape").splitlines(keepends=True):
        head = _SECTION.match(line)
        rest = line
        if head is not None:
            section = head.group(1).lower()
            rest = line[head.end() :]
        m = _PATH_KEY.match(rest) if section in ("include", "includeif") else None
        if m is not None:
            value = m.group(1).strip()
            if value.startswith('"') and value.endswith('"') and len(value) > 1:
                value = re.sub(r"\\(.)", r"\1", value[1:-1])
            if value in values:
                out.append(line[: len(line) - len(rest)] + "\n" if head is not None else "")
                continue
        out.append(line)
    return "".join(out).encode("utf-8", "surrogateescape")


def move_aside(git_dir: Path, common: Path, improve_dir: Path, found: list[str]) -> list[str]:
    """Move each file `problems` named to `<improve>/quarantine/` (never read, never
    followed: a link itself is moved), so nothing that opens the repository next hangs. For a
    file that a config includes or an alternate lists, the config or alternates file of the
    repository that leads to it is moved (the harness then puts back the config it knew);
    nothing outside the git directory is touched."""
    done = []
    aside = improve_dir / "quarantine"
    for item in found:
        if not item.startswith(".git/"):
            continue  # the work tree, the user's own config: named, left as they are
        rel = re.split(r" \(|: include | → ", item, maxsplit=1)[0].removeprefix(".git/")
        for base in (git_dir, common):
            path = base / rel
            if not os.path.lexists(path):
                continue
            if f".git/{rel}" in done:
                break
            try:
                os.makedirs(aside, exist_ok=True)
                moved = aside / f"{rel.replace('/', '_')}.{os.urandom(3).hex()}"
                os.replace(path, moved)
                written.mark(moved)
            except OSError:
                continue
            done.append(f".git/{rel}")
            break
    return done
