"""Installing gitimprove's hooks into Claude Code settings and git.

The project's `.claude/settings.json` is a file teams commit, so its entries are in shell
form, resolved at run time: `git improve hook <Event>` through PATH, and one line on stderr
(exit 0) where gitimprove is not installed. An absolute interpreter path (this machine's
`python -c … <Event>`, which skips git and click) goes only to `.claude/settings.local.json`
(not committed: it is added to the repository's `info/exclude` unless git ignores it
already) or the user's `~/.claude/settings.json`. Every other setting and hook is preserved;
installing twice changes nothing; uninstall removes only entries that run gitimprove, in
either form.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from gitimprove.errors import GitImproveError
from gitimprove.state.findings import Finding
from gitimprove.util.files import atomic_write

MARK = "-m gitimprove hook "
# Claude Code runs its hooks often: `-c` skips runpy, which `-m` pays for on every call.
ENTRY = "import sys; from gitimprove.hooks.entry import main; sys.exit(main(sys.argv[1:]))"
SCOPES = ("project", "local", "user")

# event -> (matcher or None, extra fields)
CLAUDE_HOOKS: dict[str, dict[str, Any]] = {
    "SessionStart": {"timeout": 30},
    "PostToolUseFailure": {"matcher": "*", "async": True, "timeout": 10},
    "PreCompact": {"timeout": 60},
    "Stop": {"timeout": 600},
    "TaskCompleted": {"timeout": 600},
    "SessionEnd": {"timeout": 10},
}


def settings_path(scope: str, work_tree: Path | None) -> Path:
    if scope == "user":
        return Path(os.environ.get("HOME", str(Path.home()))) / ".claude" / "settings.json"
    if work_tree is None:
        raise GitImproveError(
            "project and local scopes need a work tree",
            hint="use --scope user, or run inside a clone",
        )
    name = "settings.json" if scope == "project" else "settings.local.json"
    return work_tree / ".claude" / name


SHELL_MARK = "git improve hook "


def command_for(event: str, python: str | None = None) -> str:
    """This machine's interpreter, absolute (settings.local.json and user scope)."""
    return f'{shlex.quote(python or sys.executable)} -c "{ENTRY}" {event}'


def shell_command_for(event: str) -> str:
    """Resolved at run time, for a settings file that travels with the repository: where
    gitimprove is not installed it says so in one line and lets the session go on."""
    return (
        f"command -v git-improve >/dev/null 2>&1 && exec {SHELL_MARK}{event} || "
        f"echo 'gitimprove hook {event} skipped: git-improve is not on PATH "
        "(pip install gitimprove)' >&2"
    )


def command_in_scope(scope: str, event: str, python: str | None = None) -> str:
    return shell_command_for(event) if scope == "project" else command_for(event, python)


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    from gitimprove.util import reader

    data = reader.loads(path.read_bytes() or b"{}", max_bytes=16 << 20, max_depth=64)
    if isinstance(data, reader.Unreadable):
        raise GitImproveError(
            f"{path} cannot be read: {data.reason}; nothing was changed",
            hint="fix the file, then run the command again",
        )
    if not isinstance(data, dict):
        raise GitImproveError(f"{path} does not hold a JSON object; nothing was changed")
    return data


def _ours(hook: Any) -> bool:
    command = str(hook.get("command", "")) if isinstance(hook, dict) else ""
    return MARK in command or SHELL_MARK in command or "gitimprove.hooks.entry" in command


def _strip(settings: dict[str, Any]) -> dict[str, Any]:
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return settings
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                inner = [h for h in group["hooks"] if not _ours(h)]
                if inner:
                    kept.append({**group, "hooks": inner})
                elif not group["hooks"]:
                    kept.append(group)
            else:
                kept.append(group)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        settings.pop("hooks", None)
    return settings


def hooks_config(scope: str = "project", python: str | None = None) -> dict[str, Any]:
    """The `hooks` object for a settings file of `scope` (and, in shell form, the plugin's
    hooks/hooks.json): one group per event, in Claude Code's settings schema."""
    hooks: dict[str, Any] = {}
    for event, extra in CLAUDE_HOOKS.items():
        entry: dict[str, Any] = {
            "type": "command",
            "command": command_in_scope(scope, event, python),
        }
        entry.update({k: v for k, v in extra.items() if k != "matcher"})
        group: dict[str, Any] = {"hooks": [entry]}
        if "matcher" in extra:
            group = {"matcher": extra["matcher"], **group}
        hooks[event] = [group]
    return hooks


def install_claude(
    scope: str, work_tree: Path | None, python: str | None = None
) -> tuple[Path, bool]:
    path = settings_path(scope, work_tree)
    before = _load(path)
    settings = _strip(json.loads(json.dumps(before)))
    hooks = settings.setdefault("hooks", {})
    for event, groups in hooks_config(scope, python).items():
        hooks.setdefault(event, []).extend(groups)
    changed = settings != before
    if changed:
        atomic_write(path, json.dumps(settings, indent=2) + "\n")
    return path, changed


LOCAL_SETTINGS = ".claude/settings.local.json"


def ignore_local_settings(work_tree: Path) -> str | None:
    """`.claude/settings.local.json` holds this machine's interpreter path, so git must ignore
    it, as Claude Code does when it creates one: through the repository's own `info/exclude`
    (never a file the team shares). What was done, or None when it was ignored already."""
    from gitimprove.util import proc

    if proc.git(["ls-files", "--error-unmatch", LOCAL_SETTINGS], cwd=work_tree).ok:
        return (
            f"warning: {LOCAL_SETTINGS} is tracked by git, so teammates get this machine's "
            f"interpreter path; untrack it: git rm --cached {LOCAL_SETTINGS}"
        )
    if proc.git(["check-ignore", "-q", "--no-index", LOCAL_SETTINGS], cwd=work_tree).ok:
        return None
    where = proc.git(["rev-parse", "--git-path", "info/exclude"], cwd=work_tree).stdout.strip()
    exclude = Path(where) if os.path.isabs(where) else work_tree / where
    try:
        text = exclude.read_text(encoding="utf-8")
    except OSError:
        text = ""
    if text and not text.endswith("\n"):
        text += "\n"
    text += (
        f"# this machine's Claude Code settings (git improve hooks install)\n/{LOCAL_SETTINGS}\n"
    )
    atomic_write(exclude, text)
    return f"git ignores {LOCAL_SETTINGS} now (added to {exclude})"


def uninstall_claude(scope: str, work_tree: Path | None) -> tuple[Path, bool]:
    path = settings_path(scope, work_tree)
    if not path.exists():
        return path, False
    before = _load(path)
    after = _strip(json.loads(json.dumps(before)))
    if after != before:
        atomic_write(path, json.dumps(after, indent=2) + "\n")
        return path, True
    return path, False


def status_claude(work_tree: Path | None) -> dict[str, dict[str, bool]]:
    out: dict[str, dict[str, bool]] = {}
    for scope in SCOPES:
        try:
            path = settings_path(scope, work_tree)
            data = _load(path)
        except GitImproveError:
            continue
        hooks = data.get("hooks") if isinstance(data.get("hooks"), dict) else {}
        assert isinstance(hooks, dict)
        out[scope] = {
            event: any(
                _ours(h)
                for g in hooks.get(event, [])
                if isinstance(g, dict)
                for h in g.get("hooks", [])
            )
            for event in CLAUDE_HOOKS
        }
    return out


# --- git hooks ----------------------------------------------------------------------------

GIT_HOOKS = ("post-commit", "pre-push")
SHIM_ID = "# gitimprove-shim v"


def shim_template(event: str) -> str:
    """The shim as shipped: in the wheel as gitimprove.githooks, in a checkout as githooks/."""
    from importlib import resources

    try:
        return resources.files("gitimprove.githooks").joinpath(event).read_text(encoding="utf-8")
    except ModuleNotFoundError:
        import gitimprove

        return (Path(gitimprove.__file__).resolve().parents[1] / "githooks" / event).read_text(
            encoding="utf-8"
        )


def shim_text(event: str, python: str | None = None) -> str:
    return shim_template(event).replace(
        "@PYTHON@", (python or sys.executable).replace("'", "'\\''")
    )


def _git(args: list[str], cwd: Path) -> str:
    from gitimprove.util import proc

    res = proc.git(args, cwd=cwd)
    return res.stdout.strip() if res.ok else ""


def hooks_dir(work_tree: Path) -> Path:
    """Where git runs hooks for this repository: linked worktrees and submodules included."""
    hooks_path = _git(["config", "core.hooksPath"], work_tree)
    if hooks_path:
        common = Path(_git(["rev-parse", "--git-common-dir"], work_tree) or ".git")
        default = (work_tree / common if not common.is_absolute() else common) / "hooks"
        target = Path(hooks_path).expanduser()
        target = target if target.is_absolute() else work_tree / target
        if target.resolve() != default.resolve():
            lines = "\n".join(f'  {shlex.quote(sys.executable)} {MARK}{e} "$@"' for e in GIT_HOOKS)
            raise GitImproveError(
                f"core.hooksPath points to {hooks_path}, so hooks in .git/hooks would not run and gitimprove will not touch {hooks_path}",
                hint=(
                    f"add gitimprove to the hooks there yourself — in post-commit and pre-push respectively:\n{lines}\n"
                    "or, with the pre-commit framework, add the gitimprove-post-commit and gitimprove-pre-push hooks "
                    "of .pre-commit-hooks.yaml to .pre-commit-config.yaml"
                ),
            )
        return target
    common = Path(_git(["rev-parse", "--git-common-dir"], work_tree) or ".git")
    return (common if common.is_absolute() else work_tree / common).resolve() / "hooks"


def _is_ours(path: Path) -> bool:
    try:
        return SHIM_ID in path.read_text(encoding="utf-8", errors="replace")[:200]
    except OSError:
        return False


def install_git(work_tree: Path, python: str | None = None) -> dict[str, str]:
    folder = hooks_dir(work_tree)
    folder.mkdir(parents=True, exist_ok=True)
    done = {}
    for event in GIT_HOOKS:
        path = folder / event
        legacy = folder / f"{event}.legacy"
        text = shim_text(event, python)
        if path.exists() and not _is_ours(path):
            if legacy.exists():
                raise GitImproveError(
                    f"both {path} and {legacy} exist; gitimprove will not overwrite either",
                    hint=f"merge them by hand, then remove {legacy}",
                )
            os.replace(path, legacy)  # the user's hook keeps running, from the shim
            done[event] = f"installed (your hook kept as {event}.legacy)"
        elif path.exists() and path.read_text(encoding="utf-8") == text:
            done[event] = "already installed"
            continue
        else:
            done[event] = "upgraded" if path.exists() else "installed"
        atomic_write(path, text)
        path.chmod(0o755)
    return done


def uninstall_git(work_tree: Path) -> dict[str, str]:
    folder = hooks_dir(work_tree)
    done = {}
    for event in GIT_HOOKS:
        path = folder / event
        legacy = folder / f"{event}.legacy"
        if path.exists() and _is_ours(path):
            path.unlink()
            if legacy.exists():
                os.replace(legacy, path)  # byte for byte, mode included
                done[event] = "removed; your hook restored"
            else:
                done[event] = "removed"
        else:
            done[event] = "not installed"
    return done


def status_git(work_tree: Path) -> dict[str, str]:
    try:
        folder = hooks_dir(work_tree)
    except GitImproveError as exc:
        return {e: f"unavailable: {exc.message}" for e in GIT_HOOKS}
    out = {}
    for event in GIT_HOOKS:
        path = folder / event
        if not path.exists():
            out[event] = "not installed"
        elif _is_ours(path):
            current = path.read_text(encoding="utf-8")
            state = "installed" if SHIM_ID + "1" in current else "installed (older version)"
            if (folder / f"{event}.legacy").exists():
                state += ", chaining " + f"{event}.legacy"
            out[event] = state
        else:
            out[event] = "another hook is installed (gitimprove's is not)"
    return out


def check_shims(work_tree: Path | None, repair: bool) -> list[Finding]:
    """doctor: our git hook shims must point at an interpreter that still exists."""
    if work_tree is None:
        return []
    broken = []
    for event, state in status_git(work_tree).items():
        if state.startswith("installed"):
            text = (hooks_dir(work_tree) / event).read_text(encoding="utf-8")
            python = text.split("python='", 1)[1].split("'", 1)[0] if "python='" in text else ""
            if not python or not os.access(python, os.X_OK):
                broken.append(event)
    if not broken:
        return []
    f = Finding(
        "git hooks",
        False,
        f"the {', '.join(broken)} shim points to an interpreter that is gone",
        "git improve hooks install --git",
    )
    if repair:
        install_git(work_tree)
        f.repaired = True
    return [f]
