"""Agent homes in the sandbox (agents/homes.py): an agent writes its sessions, never what runs
later outside the sandbox."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitimprove.agents import homes
from gitimprove.agents.aider import AiderAgent
from gitimprove.agents.claude import ClaudeAgent
from gitimprove.agents.codex import CodexAgent
from gitimprove.agents.sandbox import Sandbox
from gitimprove.git.workspace import agent_workspace
from tests.conftest import TmpRepo
from tests.test_integrity import needs_bwrap, needs_landlock
from tests.test_integrity_review import boxed, run_in

PLANTER = Path(__file__).parent / "agents" / "home_planter.py"


@pytest.fixture
def visible() -> Iterator[Path]:
    """A folder outside /tmp (which the sandbox replaces): seen read-only inside."""
    path = Path(tempfile.mkdtemp(prefix="gitimprove-homes-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _home(root: Path) -> Path:
    home = root / "home"
    for rel, text in {
        ".codex/config.toml": 'model = "o3"\n',
        ".codex/auth.json": "{}\n",
        ".codex/history.jsonl": "",
        ".aider/oauth-keys.env": "OPENROUTER_API_KEY=k\n",
        ".aider/analytics.json": "{}\n",
        ".aider.conf.yml": "model: x\n",
        ".claude/settings.json": "{}\n",
        ".claude/projects/-home-user-repo/user.jsonl": '{"type": "user"}\n',
        ".claude/shell-snapshots/snapshot-bash-0-user.sh": "export PS1=x\n",
        ".claude.json": '{"numStartups": 1}\n',
        ".bashrc": "# mine\n",
    }.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text)
    return home


def test_every_row_obeys_the_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No agent's row makes writable a path that can name a command, and `binds` holds the
    rule whatever a row says: a whole tool folder, a config folder, the home, or a settings
    file named as writable is never bound writable."""
    home = _home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    for agent, rows in homes.HOMES.items():
        for spec, why in rows:
            assert why, agent
            path = Path(spec.removeprefix("~copy:")).expanduser()
            if not spec.startswith("~copy:"):
                assert not homes.names_command(path, home), spec
                if spec.endswith("/"):
                    assert homes.session_folder(path, home), spec
    assert AiderAgent.state == homes.state_of("aider")
    assert CodexAgent.state == homes.state_of("codex")
    assert ClaudeAgent.state == homes.state_of("claude")
    bad = (
        "~/.codex/", "~/.codex", "~/.aider", "~/.aider/", "~/", "~/.config/git/",
        "~/.codex/rules/", "~/.claude/hooks/", "~/.codex/config.toml", "~/.aider.conf.yml",
        "~/.bashrc", "~/.env", "~/.claude/settings.json", "~copy:~/.codex/",
    )  # fmt: skip
    (home / ".claude" / "hooks").mkdir()
    (tmp_path / "scratch").mkdir()
    writable, overlays = homes.binds(bad, tmp_path / "scratch")
    assert writable == []
    # the files that exist are given private copies, never the originals
    assert all(src != dest and dest.is_file() for src, dest in overlays)


@needs_bwrap
@pytest.mark.parametrize("agent", ["codex", "aider", "claude"])
def test_the_agent_cannot_plant_what_runs_outside_later(
    tmp_repo: TmpRepo,
    visible: Path,
    monkeypatch: pytest.MonkeyPatch,
    agent: str,
) -> None:
    """A hostile agent in the sandbox, with `agent`'s home row, writes codex's notify and MCP
    servers, its rules, aider's config and env files, Claude Code's hooks, ~/.bashrc and
    ~/.gitconfig, Claude Code's shell snapshots and session environment (sourced before every
    Bash command later) and the user's live transcripts: nothing of the home changes but the
    agent's history file; its session folders are private to the call, what it rewrites it
    rewrites in a private copy."""
    home = _home(visible)
    monkeypatch.setenv("HOME", str(home))
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    tmp_repo.commit("c", {"a.txt": "1\n"})
    box, head = boxed(tmp_repo), tmp_repo.git("rev-parse", "HEAD")
    state = homes.state_of(agent)
    with (
        tempfile.TemporaryDirectory() as scratch,
        agent_workspace(tmp_repo.open(), head, "w") as ws,
    ):
        writable, overlays = homes.binds(state, Path(scratch))
        res = run_in(box, f"{sys.executable} -I {PLANTER}", ws, writable=writable,
                     overlays=overlays, readable=[PLANTER])  # fmt: skip
    lines = res.stdout.splitlines()
    assert res.returncode == 0 and lines, res.stderr
    after = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    grown = {".codex/history.jsonl"} if agent == "codex" else set()  # a session file of its row
    assert {p: after.get(p) for p in before if str(p.relative_to(home)) not in grown} == {
        p: v for p, v in before.items() if str(p.relative_to(home)) not in grown
    }
    for rel in grown:
        assert (home / rel).read_text() == "session\n"
    new = sorted(str(p.relative_to(home)) for p in set(after) - set(before))
    assert new == []  # no session file outlives the call: each folder was private to it
    sessions = {
        "codex": [".codex/log/codex-tui.log", ".codex/sessions/2026/01/01/rollout-x.jsonl"],
        "aider": [".aider/caches/tags.cache"],
        "claude": [
            ".claude/projects/p/s.jsonl", ".claude/shell-snapshots/snapshot-bash-1-x.sh",
            ".claude/session-env/s/hook-0.sh", ".claude/file-history/s/f@v1",
        ],
    }[agent]  # fmt: skip
    wrote = {line.split(" ", 1)[1] for line in lines if line.startswith("wrote ")}
    assert set(sessions) <= wrote  # the agent could write its session, privately
    if agent == "claude":  # the user's transcripts are not even visible to it
        assert "refused .claude/projects/-home-user-repo/user.jsonl" in lines
    private = {".codex/config.toml", ".claude.json", ".aider/oauth-keys.env"}
    mine = {p.split("/")[0] for p in sessions}
    for rel in private:  # its own row's rewritten files: a private copy it could write
        if rel.startswith(tuple(mine)) or (agent == "claude" and rel == ".claude.json"):
            assert rel in wrote, (rel, lines)
    assert not (Path("/tmp/pwned")).exists()


@needs_landlock
@pytest.mark.parametrize("agent", ["codex", "claude"])
def test_under_landlock_the_agent_writes_its_history_alone(
    tmp_repo: TmpRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    """The same hostile agent under Landlock (`sandbox = "landlock"`), which has no private
    copy to give: of the home it writes only the plain files of its row that name no command
    (codex's history); its session folders (Claude Code's shell snapshots, sourced later) and
    the files it rewrites are refused at the write, not copied."""
    home = _home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    tmp_repo.commit("c", {"a.txt": "1\n"})
    box, head = Sandbox("landlock"), tmp_repo.git("rev-parse", "HEAD")
    with (
        tempfile.TemporaryDirectory() as scratch,
        agent_workspace(tmp_repo.open(), head, "w") as ws,
    ):
        writable, _ = homes.binds(homes.state_of(agent), Path(scratch))
        res = run_in(box, f"{sys.executable} -I {PLANTER}", ws, writable=writable)
    lines = res.stdout.splitlines()
    assert res.returncode == 0 and lines, res.stderr
    wrote = {line.split(" ", 1)[1] for line in lines if line.startswith("wrote ")}
    grown = {".codex/history.jsonl"} if agent == "codex" else set()
    assert wrote == grown, lines
    after = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    assert {p: v for p, v in after.items() if str(p.relative_to(home)) not in grown} == {
        p: v for p, v in before.items() if str(p.relative_to(home)) not in grown
    }
