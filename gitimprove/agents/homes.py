"""What of the user's home an agent may write in the sandbox: one table for every agent.

Everything of the home is read-only in the sandbox (agents/sandbox.py) except what an
agent's row below names, each with the reason it is there:

- `~/x/` (ends in "/"): a folder the agent writes for its session: a fresh private folder
  per call is bound over it (the real one stays as it was, unseen): what the agent writes
  there is thrown away after the call. Claude Code sources the files of its
  `shell-snapshots/` and `session-env/` before every Bash command of later sessions, and
  `claude --resume` (and gitimprove's mining) reads `projects/`: no folder of a tool is ever
  shared between the agent and what runs later;
- `~/x`: a file it writes that names no command (history, credentials a login refreshes);
- `~copy:~/x`: a file the agent rewrites that also holds what runs later, outside the
  sandbox (MCP servers, a `notify` program, hooks, options that name a linter or a test
  command): the agent writes a private copy of it, thrown away after the call.

The rule, enforced here whatever a row says (`binds`): no folder is shared-writable, and a
file that a tool sources, executes or resumes later, or that can name a command —
settings, configuration, `.env` files, hooks, rules, prompts, skills, plugins, instructions
read by later sessions (`names_command`) — is never writable. Such a file is given a private
copy instead, such a folder stays read-only; a writable folder is never one of them nor
inside one, and never a tool's whole folder (`session_folder`). See docs/integrity.md
("Agent homes").
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

# agent -> ((path, why), ...)
HOMES: dict[str, tuple[tuple[str, str], ...]] = {
    "claude": (
        ("~/.claude/projects/", "session transcripts"),
        ("~/.claude/todos/", "the session's to-do lists"),
        ("~/.claude/statsig/", "feature-flag cache"),
        ("~/.claude/shell-snapshots/", "the shell environment of Bash tool calls"),
        ("~/.claude/session-env/", "per-session environment"),
        ("~/.claude/file-history/", "checkpoints of edited files"),
        ("~/.claude/debug/", "debug logs"),
        ("~/.claude/plans/", "plan-mode plans"),
        ("~/.claude/.credentials.json", "the login, refreshed during a session"),
        ("~copy:~/.claude.json", "rewritten every session; holds mcpServers (commands)"),
    ),
    "codex": (
        ("~/.codex/sessions/", "session rollouts"),
        ("~/.codex/archived_sessions/", "archived rollouts"),
        ("~/.codex/log/", "logs"),
        ("~/.codex/history.jsonl", "prompt history"),
        ("~/.codex/session_index.jsonl", "session names"),
        ("~/.codex/auth.json", "the login, refreshed during a session"),
        ("~copy:~/.codex/config.toml", "names commands: notify, mcp_servers, profiles"),
    ),
    "aider": (
        ("~/.aider/caches/", "the repository map's cache"),
        ("~copy:~/.aider/analytics.json", "rewritten at start; a private copy is enough"),
        ("~copy:~/.aider/oauth-keys.env", "read as environment: AIDER_TEST_CMD, AIDER_LINT_CMD"),
        ("~/.aider.chat.history.md", "chat history when kept in the home"),
        ("~/.aider.input.history", "input history when kept in the home"),
    ),
}

# Names (of a file or of any folder above it) whose content can make a program run later:
# configuration and settings of agents and tools, environment files, hooks and rules, and
# instructions or prompts that later sessions read.
COMMAND_NAMES = (
    "*settings*", "*config*", ".claude.json", "*.toml", "*.conf", "*.conf.*", ".ssh", ".gnupg",
    "*.yml", "*.yaml", ".env", "*.env", ".envrc", "*rc", ".profile", "hooks", "rules",
    "commands", "agents", "plugins", "skills", "prompts", "output-styles", "bin",
    "agents.md", "claude.md", "*.mcp.json", "mcp*.json", ".mcp.json", "*.sh", "*.py",
)  # fmt: skip


def names_command(path: Path, home: Path | None = None) -> bool:
    """Whether `path` (or a folder it is in, below `home`) can name a command run later."""
    home = home if home is not None else Path.home()
    try:
        parts = path.relative_to(home).parts
    except ValueError:
        parts = path.parts
    return any(
        fnmatch.fnmatch(part.lower(), pattern) for part in parts for pattern in COMMAND_NAMES
    )


def session_folder(path: Path, home: Path) -> bool:
    """A folder that may be writable: two levels or more below the home (never the home, nor
    a tool's whole folder such as `~/.codex`, where its configuration lives), and neither it
    nor a folder above it names a command."""
    try:
        depth = len(path.relative_to(home).parts)
    except ValueError:
        return False
    return depth >= 2 and not names_command(path, home)


def state_of(agent: str) -> tuple[str, ...]:
    """The path specs of `agent`'s row (empty for an agent with no row)."""
    return tuple(spec for spec, _ in HOMES.get(agent, ()))


def binds(state: Sequence[str], scratch: Path) -> tuple[list[Path], list[tuple[Path, Path]]]:
    """(writable files, [(private copy, path it covers)]) for `state`, under the rule above:
    a folder becomes a fresh private folder bound over it, a writable file that names a
    command becomes a private copy; a folder where configuration lives is dropped."""
    home = Path.home()
    writable: list[Path] = []
    overlays: list[tuple[Path, Path]] = []
    for i, name in enumerate(state):
        copy = name.startswith("~copy:")
        path = Path(name.removeprefix("~copy:")).expanduser()
        folder = name.endswith("/") or path.is_dir()
        if folder and (copy or not session_folder(path, home)):
            continue  # a folder is never copied, and never writable where config can live
        if not copy and names_command(path, home):
            copy = True
        if copy:
            if path.is_file() and not path.is_symlink():
                private = scratch / f"{i}-{path.name}"
                shutil.copyfile(path, private)
                overlays.append((private, path))
        elif folder:  # never shared: what the agent writes there is gone after the call
            private = scratch / f"{i}-{path.name}"
            try:
                path.mkdir(parents=True, exist_ok=True)  # a mount point must exist
                private.mkdir()
            except OSError:
                continue
            overlays.append((private, path))
        else:
            writable.append(path)
    return writable, overlays


def private_home(state: Sequence[str], scratch: Path) -> tuple[Path, list[Path]]:
    """(a home for the agent, what of it is writable) where no bind can give private folders
    (Landlock): a folder of `scratch` that mirrors the user's home by links, with `binds`'s
    private folders and copies in place of what they cover. Writes through a link reach the
    user's file and are refused (Landlock judges the file linked to) unless `binds` made it
    writable; what the agent makes in the mirror is thrown away with it. Claude Code stops
    (or hangs) when it cannot write `~/.claude.json` or its transcripts: here it writes them,
    privately, as in bwrap."""
    real, root = Path.home(), scratch / "home"
    root.mkdir()
    writable, overlays = binds(state, scratch)
    placed: dict[Path, Path] = {}  # a path in the mirror -> what it holds (a link's target)
    for path in writable:
        placed[path] = path
    for private, path in overlays:
        placed[path] = private
    mirrored: set[Path] = set()
    for path, target in placed.items():
        try:
            rel = path.relative_to(real)
        except ValueError:
            continue
        for depth in range(len(rel.parts)):
            folder = real.joinpath(*rel.parts[:depth])
            if folder in mirrored:
                continue
            mirrored.add(folder)
            mirror = root.joinpath(*rel.parts[:depth])
            if mirror.is_symlink():  # linked by the folder above: made a folder of its own
                mirror.unlink()
            mirror.mkdir(exist_ok=True)
            try:
                names = [entry.name for entry in os.scandir(folder)]
            except OSError:
                names = []
            for name in names:
                if not (mirror / name).exists() and not (mirror / name).is_symlink():
                    (mirror / name).symlink_to(folder / name)
        spot = root / rel
        if spot.is_symlink():
            spot.unlink()
        spot.symlink_to(target)
    if not mirrored:  # nothing of the row is placed: the home is all links
        with contextlib.suppress(OSError):
            for name in os.listdir(real):
                (root / name).symlink_to(real / name)
    return root, [root, *(private for private, _ in overlays), *writable]
