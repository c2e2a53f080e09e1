"""The Claude Code plugin in plugin/ and its marketplace entry in .claude-plugin/: validated
against the layout and schemas of Claude Code's plugin documentation (manifest reference,
marketplace, hooks, skills), and every hook command it declares run with real payloads."""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import gitimprove
from gitimprove.hooks import install
from tests.conftest import TmpRepo
from tests.test_claude_hooks import payload

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "plugin"
KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
SEMVER = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$")
# plugin.json fields of the manifest reference (metadata and component paths)
MANIFEST_FIELDS = {
    "name": str,
    "version": str,
    "description": str,
    "author": dict,
    "homepage": str,
    "repository": str,
    "license": str,
    "keywords": list,
    "commands": (str, list),
    "agents": (str, list),
    "skills": (str, list),
    "hooks": (str, dict, list),
    "mcpServers": (str, dict, list),
    "outputStyles": (str, list),
    "lspServers": (str, dict),
}
HOOK_EVENTS = {
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "UserPromptSubmit",
    "Notification",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "SessionStart",
    "SessionEnd",
    "TaskCompleted",
    "TeammateIdle",
}
TOOL_EVENTS = {"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"}


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_manifest_follows_the_schema() -> None:
    folder = PLUGIN / ".claude-plugin"
    assert [p.name for p in folder.iterdir()] == ["plugin.json"]  # components live at the root
    manifest = _load(folder / "plugin.json")
    assert set(manifest) <= set(MANIFEST_FIELDS), set(manifest) - set(MANIFEST_FIELDS)
    for key, value in manifest.items():
        assert isinstance(value, MANIFEST_FIELDS[key]), key  # type: ignore[arg-type]
    assert KEBAB.match(manifest["name"]) and SEMVER.match(manifest["version"])
    assert manifest["version"] == gitimprove.__version__
    assert isinstance(manifest["author"].get("name"), str)
    assert all(isinstance(k, str) for k in manifest["keywords"])


def test_marketplace_entry_lets_users_add_it_by_repository() -> None:
    market = _load(ROOT / ".claude-plugin" / "marketplace.json")
    assert KEBAB.match(market["name"]) and isinstance(market["owner"]["name"], str)
    (entry,) = market["plugins"]
    assert KEBAB.match(entry["name"]) and entry["source"].startswith("./")
    plugin_dir = (ROOT / entry["source"]).resolve()
    assert plugin_dir == PLUGIN
    manifest = _load(plugin_dir / ".claude-plugin" / "plugin.json")
    assert entry["name"] == manifest["name"] and entry["version"] == manifest["version"]


def test_hooks_file_follows_the_schema_and_matches_the_installer() -> None:
    data = _load(PLUGIN / "hooks" / "hooks.json")
    assert set(data) <= {"description", "hooks"} and isinstance(data.get("description", ""), str)
    for event, groups in data["hooks"].items():
        assert event in HOOK_EVENTS, event
        assert isinstance(groups, list) and groups
        for group in groups:
            assert set(group) <= {"matcher", "hooks"}
            if "matcher" in group:
                assert event in TOOL_EVENTS and isinstance(group["matcher"], str)
            for hook in group["hooks"]:
                assert set(hook) <= {"type", "command", "timeout", "async", "statusMessage"}
                assert hook["type"] == "command" and isinstance(hook["command"], str)
                assert isinstance(hook.get("timeout", 1), int) and hook.get("timeout", 1) > 0
                assert isinstance(hook.get("async", False), bool)
                # resolved at run time: no machine path, nothing of this checkout
                assert sys.executable not in hook["command"] and str(ROOT) not in hook["command"]
    # the same hooks `git improve hooks install --claude` writes into a project's settings
    assert data["hooks"] == install.hooks_config("project")


def _frontmatter(text: str) -> dict[str, str]:
    assert text.startswith("---\n")
    head = text.split("---\n", 2)[1]
    return dict(line.split(": ", 1) for line in head.strip().splitlines())


@functools.cache
def _help(cmd: str) -> str:
    """`git improve <cmd> --help`, in-process (the CLI's own click group)."""
    from click.testing import CliRunner

    from gitimprove.cli import _build_group

    res = CliRunner().invoke(_build_group(), [*cmd.split(), "--help"])
    assert res.exit_code == 0, res.output
    return res.output


@pytest.mark.parametrize("name", ["improve", "reflect"])
def test_skills_exist_and_use_only_real_cli_flags(name: str) -> None:
    text = (PLUGIN / "skills" / name / "SKILL.md").read_text(encoding="utf-8")
    meta = _frontmatter(text)
    assert meta["name"] == name and len(meta["description"]) > 40
    used = re.findall(r"`git improve ([a-z]+)((?: [^`]*)?)`", text)
    assert used
    for cmd, rest in used:
        flags = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-[a-zA-Z])\b", rest))
        helptext = _help(cmd)
        for flag in flags:
            assert re.search(rf"(?<![\w-]){re.escape(flag)}\b", helptext), f"{cmd} {flag}"


@pytest.fixture
def configured(tmp_repo: TmpRepo) -> TmpRepo:
    tmp_repo.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n', "a.txt": "a"})
    return tmp_repo


def _run(command: str, repo: TmpRepo, event: str, path: str, **extra: object) -> Any:
    stdin = json.dumps(payload(repo, event, **extra))
    return subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=repo.path,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PATH": path, "CLAUDE_PLUGIN_ROOT": str(PLUGIN)},
    )


EXTRA: dict[str, dict[str, object]] = {
    "SessionStart": {"source": "startup"},
    "PostToolUseFailure": {
        "tool_name": "Bash",
        "tool_input": {"command": "make check"},
        "error": "Exit code 2\nmake: *** [check] Error 2",
    },
    "PreCompact": {"trigger": "auto", "custom_instructions": ""},
    "Stop": {"stop_hook_active": False, "last_assistant_message": "Done."},
    "TaskCompleted": {"task_id": "t1", "task_subject": "fix the parser"},
    "SessionEnd": {"reason": "other"},
}


def test_every_declared_hook_command_runs(configured: TmpRepo) -> None:
    bindir = Path(sys.executable).parent
    if not (bindir / "git-improve").exists():
        pytest.skip("git-improve is not installed beside this interpreter")
    data = _load(PLUGIN / "hooks" / "hooks.json")
    with_gi = f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"
    empty = configured.path.parent / "empty-bin"
    empty.mkdir()
    for event, groups in data["hooks"].items():
        for group in groups:
            for hook in group["hooks"]:
                assert shlex.split(hook["command"])  # a valid shell command line
                res = _run(hook["command"], configured, event, with_gi, **EXTRA[event])
                assert res.returncode == 0, (event, res.stderr)
                if event == "SessionStart":
                    out = json.loads(res.stdout)["hookSpecificOutput"]
                    assert out["hookEventName"] == "SessionStart" and out["additionalContext"]
                else:
                    assert res.stdout.strip() in ("", "{}") or json.loads(res.stdout)
                miss = _run(hook["command"], configured, event, str(empty), **EXTRA[event])
                assert (miss.returncode, miss.stdout) == (0, "")
                assert len(miss.stderr.splitlines()) == 1 and "not on PATH" in miss.stderr
    signals = configured.cli("signal", "list", "--json").stdout
    assert "make check" in signals  # the failure hook captured its signal
