"""The loop's defences against what an agent may do (docs/integrity.md).

- `Tampered`: a measurement checkout, the run's refs or the user's repository changed behind
  the harness's back. The attempt is recorded as `tampered` with the paths and never kept;
  a change to the user's repository or to the run's refs also stops the run (`IntegrityError`).
- The run's refs as the harness's last transaction left them (`Shared.refs`), checked before
  each decision: the run branch must not have moved; the notes ref may only have grown by
  other writers' records (a concurrent run, a hook, sync), never by lines of this run; the
  archive may only have grown.
- The effective configuration (the file at the run's base, plus `improve.*` git config)
  pinned in the run's baseline record; a resumed run with a different value is refused, as
  is one whose work tree's `.gitimprove.toml` sets a value otherwise, and any run with an
  `improve.*` setting git sees but the harness does not read (`GIT_CONFIG_GLOBAL`, `-c`).
- An incident log (`state/integrity.py`) that `git improve doctor` shows until `--repair`
  marks it reviewed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitimprove import config as config_mod
from gitimprove.errors import ConfigError, GitImproveError
from gitimprove.git import refs, trees
from gitimprove.git.repo import Repo
from gitimprove.git.watch import forged_notes
from gitimprove.loop import siblings
from gitimprove.loop.implicit import planted_during_run, ts_extended_in
from gitimprove.state.integrity import log_incident
from gitimprove.util import proc

__all__ = [
    "IntegrityError",
    "Tampered",
    "check_config_file",
    "check_config_pin",
    "check_config_read",
    "check_run_refs",
    "git_settings",
    "log_incident",
    "relocked",
]

if TYPE_CHECKING:
    from gitimprove.git.checkout import Checkout, Stat
    from gitimprove.git.renew import Spares
    from gitimprove.loop.context import RunContext


class Tampered(Exception):
    """What was measured or recorded is not what the harness made."""

    def __init__(
        self,
        what: str,
        paths: list[str],
        *,
        checkout: Checkout | None = None,
        stop: bool = False,
        hint: str | None = None,
    ) -> None:
        super().__init__(what)
        self.what = what
        self.paths = paths
        self.checkout = checkout
        self.stop = stop
        self.hint = hint  # what the user must do when it stops the run

    @property
    def reason(self) -> str:
        shown = ", ".join(self.paths[:8]) + (
            f" and {len(self.paths) - 8} more" if len(self.paths) > 8 else ""
        )
        return f"tampered: {self.what}: {shown}"


class IntegrityError(GitImproveError):
    """The run stopped because something outside the harness changed what it relies on."""


def fresh_checkout(
    stack: ExitStack[Any], repo: Repo, commit: str, name: str, spares: Spares | None = None
) -> Checkout:
    """A measurement checkout of `commit` entered on `stack` (made from one of `spares` when
    one proves itself); one that something rewrote while it was written makes the attempt
    `tampered`."""
    from gitimprove.git.checkout import NotAsWritten, checkout

    try:
        co = stack.enter_context(checkout(repo, commit, name, spares))
        siblings.clean(co)  # as written: a change from now on is someone's
        return co
    except NotAsWritten as exc:
        raise Tampered("the measurement checkout changed while it was written", exc.paths) from None


def after_run(ctx: RunContext, co: Checkout, what: str) -> None:
    """After a metric or guard run: the commit's files must be as written, and a file the run
    wrote that Python or the test runner loads without being named (`conftest.py`, a module
    shadowing the standard library's, `*.pth`...) makes the attempt `tampered`; the folder is
    replaced by a fresh copy of the commit either way (`Checkout.reset`), so the next run of
    any arm starts from exactly the commit, metadata included: the same folder when it is
    provably as written, else a new one. A mount stacked on the work folder, or a file-system
    flag that kept a file from being removed, makes the attempt `tampered` too; a flag this
    process cannot clear also stops the run, saying how to clear it."""
    from gitimprove.git.checkout import scan

    now = scan(co.path)  # one listing for all three: no process of the run is left
    bad = co.verify(after_run=True, now=now)
    if relocked(bad, ctx.cfg.metric_command, ctx.cfg.guard_command or ""):
        bad = []  # the run's own build tool brought its lock file up to date (see `LOCKS`)
    if bad:
        reset_checkout(co, what, rewrite=True)
        raise Tampered(f"files of the commit changed during the {what}", bad, checkout=co)
    added = co.added(every=True, now=now)
    found: list[str] = []
    if added:
        with ctx.shared.lock:
            sealed = ctx.sealed_paths
            found = planted_during_run(
                added,
                sealed,
                lambda p: trees.read_in(ctx.repo, ctx.sealed_tree, p) if p in sealed else None,
                lambda folder: os.path.lexists(co.path / folder / "__init__.py"),
                ctx.importable,
                ts_extended_in(ctx.repo, ctx.base_tree),
            )
    left = reset_checkout(co, what, now=now)
    if found:
        raise Tampered(
            f"the {what} wrote files Python or the test runner loads without being named",
            found,
            checkout=co,
        )
    if left:
        raise Tampered(
            f"the {what} marked its checkout (a mount, a file-system flag) or left files that "
            "cannot be removed",
            left,
            checkout=co,
        )


# Lock files a build tool rewrites itself when the manifest beside them changed (`cargo run`
# after a version bump or a new dependency in `Cargo.toml`, `uv run` after `pyproject.toml`):
# an honest change that left the lock file behind is no tampering. The tool read the lock
# file before it built anything, and every run gets a fresh copy of the commit (`reset`), so
# a lock file written during a run changes no later run; only a lock file of a tool the
# metric or guard command runs, changed in place, is let through.
LOCKS = {
    "Cargo.lock": "cargo",
    "uv.lock": "uv",
    "package-lock.json": "npm",
    "yarn.lock": "yarn",
    "pnpm-lock.yaml": "pnpm",
    "bun.lock": "bun",
}


def _tools(*commands: str) -> set[str]:
    """The program names the commands' words name (`cargo` for `cargo run --release`)."""
    return {w.rsplit("/", 1)[-1] for c in commands for w in c.replace(";", " ").split()}


def _relocked(entry: str, tools: set[str]) -> bool:
    """Whether a `verify` entry is a lock file of one of `tools`, changed in place."""
    path, _, state = entry.rpartition(" (")
    tool = LOCKS.get(path.rpartition("/")[2])
    return tool is not None and tool in tools and state in ("changed)", "rewritten)")


def relocked(entries: list[str], *commands: str) -> bool:
    """Whether every `verify` entry is a lock file the commands' build tool brought up to
    date (`LOCKS`); False for none."""
    tools = _tools(*commands)
    return bool(entries) and all(_relocked(entry, tools) for entry in entries)


def reset_checkout(
    co: Checkout, what: str, *, rewrite: bool = False, now: dict[str, Stat] | None = None
) -> list[str]:
    from gitimprove.git.checkout import StuckFlags

    try:
        return co.reset(rewrite=rewrite, now=now)
    except StuckFlags as exc:
        raise Tampered(
            f"the {what} set a file-system flag this process cannot clear on its checkout",
            [exc.path],
            checkout=co,
            stop=True,
            hint=exc.hint,
        ) from None


def stop_error(run: str, exc: Tampered) -> IntegrityError:
    return IntegrityError(
        f"run {run} stopped: {exc.what}: " + ", ".join(exc.paths[:20]),
        hint=exc.hint
        or "look at what changed (`git improve doctor` lists it), undo what you did not "
        "intend, then `git improve run --resume`; a sandbox ([agent] sandbox = "
        '"bwrap" or "landlock") keeps agents out of your repository',
    )


# --- the run's refs ----------------------------------------------------------------------------


def run_refs(repo: Repo, run: str) -> dict[str, str | None]:
    return {
        refs.run_branch(run): repo.ref_target(refs.run_branch(run)),
        refs.NOTES: repo.ref_target(refs.NOTES),
        refs.ARCHIVE: repo.ref_target(refs.ARCHIVE),
    }


@dataclass
class RefCheck:
    problems: list[str] = field(default_factory=list)
    forged: list[str] = field(default_factory=list)  # commits whose notes to put back


def check_run_refs(
    repo: Repo, run: str, expected: dict[str, str | None], base: str | None = None
) -> RefCheck:
    """What moved without the harness; adopts the moves other writers may make."""
    now = run_refs(repo, run)
    out = RefCheck()
    problems = out.problems
    branch = refs.run_branch(run)
    if expected[branch] is None:  # the run's markers were written after the context was built
        expected[branch] = now[branch]
    elif now[branch] != expected[branch]:
        problems.append(f"{branch} moved to {(now[branch] or 'nothing')[:12]}")
    if now[refs.NOTES] != expected[refs.NOTES]:
        forged = forged_notes(repo, expected[refs.NOTES], now[refs.NOTES], run, base)
        if forged:
            shown = ", ".join(c[:12] for c in forged[:5])
            problems.append(
                f"{refs.NOTES} (notes of run {run}'s commits written or removed outside the "
                f"harness: {shown})"
            )
            out.forged = [c for c in forged if not c.startswith("(")]
        else:
            expected[refs.NOTES] = now[refs.NOTES]
    arch_old, arch_new = expected[refs.ARCHIVE], now[refs.ARCHIVE]
    if arch_new != arch_old:
        if arch_old is not None and (
            arch_new is None or not repo.raw.descendant_of(arch_new, arch_old)
        ):
            problems.append(f"{refs.ARCHIVE} rewound to {(arch_new or 'nothing')[:12]}")
        else:
            expected[refs.ARCHIVE] = arch_new
    return out


# --- the pinned configuration ------------------------------------------------------------------


def config_pin(overrides: Mapping[str, str]) -> dict[str, Any]:
    return {"git": dict(sorted(overrides.items()))}


def check_config_pin(
    saved: Mapping[str, Any] | None, overrides: Mapping[str, str], run: str
) -> None:
    """Refuse to resume with an `improve.*` git config other than the run started with."""
    if not isinstance(saved, Mapping) or not isinstance(saved.get("git"), Mapping):
        return
    pinned: Mapping[str, Any] = saved["git"]
    for key in sorted(set(pinned) | set(overrides)):
        if pinned.get(key) != overrides.get(key):
            was, now = pinned.get(key), overrides.get(key)
            raise ConfigError(
                f"{key} changed since run {run} started (was {was!r}, now {now!r}); "
                "a run keeps the configuration it started with",
                hint=(
                    f"git config {key} {json.dumps(was)}"
                    if was is not None
                    else f"git config --unset {key}"
                )
                + ", or start a new run with `git improve run --run <new name>`",
            )


def git_settings(repo: Repo) -> dict[str, tuple[str, str]] | None:
    """The `improve.*` settings as git itself sees them in this repository (`name` -> its
    last value and the file it is set in, "" for `GIT_CONFIG_COUNT` or `git -c`), or None
    when that cannot be told (git would not read your files now: git/gitfiles.py)."""
    from gitimprove.git import gitfiles

    if repo.work_tree is None or gitfiles.outside_problems():
        return None
    got = proc.git(
        ["config", "-z", "--show-origin", "--get-regexp", r"^improve\."],
        cwd=repo.work_tree,
        env=proc.clean_env(keep_git=True),
        timeout=30,
    )
    if got.returncode not in (0, 1):  # 1: none set; a file git cannot parse is named elsewhere
        return None
    seen: dict[str, tuple[str, str]] = {}
    fields = got.stdout.split("\0") if got.returncode == 0 else []
    for origin, entry in zip(fields[0::2], fields[1::2], strict=False):
        name, _, value = entry.partition("\n")
        kind, _, path = origin.partition(":")
        seen[name] = (value, path if kind == "file" else "")
    return seen


_LEVELS = {"SYSTEM": "/etc/gitconfig", "XDG": "~/.config/git/config", "GLOBAL": "~/.gitconfig"}


def check_config_read(repo: Repo, overrides: Mapping[str, str]) -> None:
    """Refuse a run while git and the harness (libgit2) see different `improve.*` settings:
    one set where git reads it and libgit2 does not — the file `GIT_CONFIG_GLOBAL` or
    `GIT_CONFIG_SYSTEM` names, `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_<n>`,
    `GIT_CONFIG_PARAMETERS` (`git -c`) —, or one libgit2 reads from a file git does not read
    here (`~/.gitconfig` while `GIT_CONFIG_GLOBAL` names another file, `/etc/gitconfig` under
    `GIT_CONFIG_NOSYSTEM`): `git config improve.metric.command` would show one command and
    the run would measure with another."""
    seen = git_settings(repo)
    if seen is None:
        return
    for name, (value, origin) in sorted(seen.items()):
        if overrides.get(name) != value:
            where = origin or "GIT_CONFIG_PARAMETERS or GIT_CONFIG_COUNT (git -c)"
            raise ConfigError(
                f"git config {name} is set to {value!r} in {where}, where gitimprove does not "
                "read it (it reads .git/config, the files it includes, ~/.gitconfig, the XDG "
                "and system git config): the run would not use the value git shows",
                hint=f"set it in the repository (`git config {name} ...`) or remove it from "
                f"{where}",
            )
    for name in sorted(set(overrides) - set(seen)):
        levels = [
            str(getattr(e.level, "name", e.level))
            for e in repo.raw.config
            if (e.raw_name or b"").decode("utf-8", "surrogateescape") == name
        ]
        where = _LEVELS.get(levels[-1] if levels else "", "a git config file")
        raise ConfigError(
            f"gitimprove reads git config {name} = {overrides[name]!r} from {where}, which git "
            "itself does not read here (GIT_CONFIG_GLOBAL names another file, or "
            "GIT_CONFIG_NOSYSTEM is set): `git config` does not show the value the run would use",
            hint=f"remove it from {where}, or set it where git reads it",
        )


def check_config_file(repo: Repo, cfg: config_mod.Config, run: str, base: str) -> None:
    """Refuse to resume while the work tree's `.gitimprove.toml` sets a value otherwise than
    the run's configuration (the file at its base commit, with the pinned `improve.*`): a
    resumed run keeps the configuration it started with, and would not use the edit."""
    if repo.work_tree is None:
        return
    try:
        here = config_mod.load(repo.work_tree, cfg.overrides)
    except (OSError, GitImproveError):  # unreadable or invalid: the run start warns
        return
    changed = [
        f"{section}.{key}"
        for section, values in cfg.values.items()
        for key, value in values.items()
        if here.values.get(section, {}).get(key, value) != value
    ]
    if changed:
        raise ConfigError(
            f"{config_mod.CONFIG_FILE} in your work tree sets {', '.join(changed)} otherwise "
            f"than run {run} started with (the file committed at {base[:10]}); a run keeps the "
            "configuration it started with",
            hint=f"put the file back as it was (`git diff {base[:10]} -- "
            f"{config_mod.CONFIG_FILE}`), or start a new run with `git improve run --run "
            "<new name>` to use your changes",
        )
