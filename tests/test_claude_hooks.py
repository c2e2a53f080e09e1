"""Claude Code hook contract: real-shaped payloads in, at most one JSON object out, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitimprove.git import memory
from gitimprove.memory import signals
from tests.conftest import PY, TmpRepo

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "claude-transcripts"


def payload(repo: TmpRepo, event: str, **extra: object) -> dict[str, object]:
    return {
        "session_id": "3f2b8c1e-9a7d-4c6b-8e21-5d0f4a6b7c8d",
        "transcript_path": str(FIXTURES / "spotter" / "short.jsonl"),
        "cwd": str(repo.path),
        "permission_mode": "default",
        "hook_event_name": event,
        **extra,
    }


def fire(
    repo: TmpRepo,
    event: str,
    stdin: str | bytes,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    data = stdin if isinstance(stdin, str) else stdin.decode()
    return (
        repo.cli("hook", event, input=data, env=env)
        if cwd is None
        else subprocess.run(
            [PY, "-m", "gitimprove", "hook", event],
            cwd=cwd,
            input=data,
            capture_output=True,
            text=True,
            env=env,
        )
    )


@pytest.fixture
def configured(tmp_repo: TmpRepo) -> TmpRepo:
    tmp_repo.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n', "a.txt": "a"})
    return tmp_repo


def spooled(repo: TmpRepo) -> list[Path]:
    folder = repo.path / ".git" / "improve" / "spool"
    return sorted(folder.iterdir()) if folder.exists() else []


def test_every_event_follows_the_protocol(configured: TmpRepo) -> None:
    repo = configured
    res = fire(repo, "SessionStart", json.dumps(payload(repo, "SessionStart", source="startup")))
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)  # exactly one JSON object
    ctx = out["hookSpecificOutput"]
    assert ctx["hookEventName"] == "SessionStart" and ctx["additionalContext"].startswith(
        "# gitimprove context"
    )
    assert "initial" in ctx["additionalContext"] and len(ctx["additionalContext"]) < 10_000
    assert len(repo.git("for-each-ref", "refs/improve/sessions/").splitlines()) == 1

    fail = payload(
        repo,
        "PostToolUseFailure",
        tool_name="Bash",
        tool_input={"command": "npm test"},
        tool_use_id="toolu_01",
        error="Exit code 1\nnpm ERR! missing script: test",
    )
    res = fire(repo, "PostToolUseFailure", json.dumps(fail))
    assert (res.returncode, res.stdout) == (0, "")
    res = fire(
        repo,
        "PreCompact",
        json.dumps(payload(repo, "PreCompact", trigger="auto", custom_instructions="")),
    )
    assert (res.returncode, res.stdout) == (0, "")
    res = fire(
        repo,
        "Stop",
        json.dumps(payload(repo, "Stop", stop_hook_active=False, last_assistant_message="Done.")),
    )
    assert (res.returncode, res.stdout) == (0, "")
    res = fire(
        repo,
        "TaskCompleted",
        json.dumps(payload(repo, "TaskCompleted", task_id="1", task_subject="x")),
    )
    assert (res.returncode, res.stdout) == (0, "")
    assert len(spooled(repo)) == 3  # one failure + two rejections mined from the transcript

    repo.commit("feat(x): a feature", {"b.txt": "b"})
    repo.commit("fix(x): a fix", {"b.txt": "c"})
    start = time.monotonic()
    res = fire(
        repo, "SessionEnd", json.dumps(payload(repo, "SessionEnd", reason="prompt_input_exit"))
    )
    assert res.returncode == 0 and res.stdout == ""
    assert time.monotonic() - start < 5
    deadline = time.monotonic() + 30
    while not list(memory.iter_entries(repo.open(), "sessions/")):
        assert time.monotonic() < deadline, "the detached summary never landed"
        time.sleep(0.1)
    ((_, data),) = memory.iter_entries(repo.open(), "sessions/")
    summary = json.loads(data)
    assert (
        summary["commit_types"] == {"feat": 1, "fix": 1}
        and summary["stop_reason"] == "prompt_input_exit"
    )
    assert summary["files_most_modified"] == ["b.txt"] and len(summary["commits"]) == 2
    assert summary["tools_failed"] == 1
    types = sorted(s["type"] for s in signals.all_signals(repo.open()))
    assert types == ["correction", "correction", "failure"]
    assert not spooled(repo)  # flushed


@pytest.mark.slow
@pytest.mark.parametrize("stdin", ["", "not json at all", "[1, 2, 3]", '{"truncated": '])
def test_bad_payloads_exit_0_log_and_write_nothing(configured: TmpRepo, stdin: str) -> None:
    for event in (
        "SessionStart",
        "PostToolUseFailure",
        "PreCompact",
        "Stop",
        "SessionEnd",
        "TaskCompleted",
    ):
        res = fire(configured, event, stdin)
        assert (res.returncode, res.stdout) == (0, ""), event
    log = (configured.path / ".git" / "improve" / "hooks.log").read_text()
    assert log.count("nothing done") == 6
    assert not spooled(configured)
    assert configured.git("for-each-ref", "refs/improve/", "refs/heads/improve/") == ""


@pytest.mark.slow
def test_missing_transcript_and_unreadable_repo(configured: TmpRepo, tmp_path: Path) -> None:
    res = fire(
        configured,
        "PreCompact",
        json.dumps(payload(configured, "PreCompact", transcript_path=str(tmp_path / "gone.jsonl"))),
    )
    assert (res.returncode, res.stdout) == (0, "")
    assert not spooled(configured)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / ".git").write_text("gitdir: /nonexistent/place\n")
    (broken / ".gitimprove.toml").write_text('[metric]\ncommand = "x"\n')
    p = payload(configured, "SessionStart")
    p["cwd"] = str(broken)
    res = fire(configured, "SessionStart", json.dumps(p), cwd=broken)
    assert (res.returncode, res.stdout) == (0, "")
    objects = configured.path / ".git" / "objects"
    objects.rename(objects.with_name("objects.away"))  # unreadable (chmod means nothing to root)
    try:
        res = fire(configured, "SessionStart", json.dumps(payload(configured, "SessionStart")))
    finally:
        objects.with_name("objects.away").rename(objects)
    assert (res.returncode, res.stdout) == (0, "")
    assert (
        "internal error, ignored"
        in (configured.path / ".git" / "improve" / "hooks.log").read_text()
    )


def test_no_config_or_child_session_does_nothing(tmp_repo: TmpRepo, configured: TmpRepo) -> None:
    fail = json.dumps(payload(configured, "PostToolUseFailure", tool_name="Bash", error="boom"))
    assert (
        fire(configured, "PostToolUseFailure", fail, env={"GITIMPROVE_CHILD": "1"}).returncode == 0
    )
    assert not spooled(configured)


def test_gate_blocks_once_then_lets_go(configured: TmpRepo) -> None:
    cfg = '[metric]\ncommand = "echo 1"\n[gate]\ncommand = "echo tests failing: 3 errors; exit 1"\n'
    configured.commit("gate", {".gitimprove.toml": cfg})
    res = fire(configured, "Stop", json.dumps(payload(configured, "Stop", stop_hook_active=False)))
    assert res.returncode == 2 and "tests failing: 3 errors" in res.stderr and res.stdout == ""
    res = fire(configured, "Stop", json.dumps(payload(configured, "Stop", stop_hook_active=True)))
    assert res.returncode == 0
    res = fire(configured, "TaskCompleted", json.dumps(payload(configured, "TaskCompleted")))
    assert res.returncode == 2 and "exited with 1" in res.stderr
    configured.commit("gate ok", {".gitimprove.toml": cfg.replace("; exit 1", "")})
    assert (
        fire(
            configured, "Stop", json.dumps(payload(configured, "Stop", stop_hook_active=False))
        ).returncode
        == 0
    )


WRITER = """
import json, subprocess, sys
for i in range(25):
    p = {"session_id": f"s{sys.argv[2]}", "cwd": sys.argv[1], "hook_event_name": "PostToolUseFailure",
         "tool_name": "Bash", "tool_input": {"command": f"cmd {sys.argv[2]}-{i}"}, "error": f"failure {sys.argv[2]}-{i}"}
    r = subprocess.run([sys.executable, "-m", "gitimprove", "hook", "PostToolUseFailure"], input=json.dumps(p), text=True, cwd=sys.argv[1])
    assert r.returncode == 0
"""


@pytest.mark.slow
def test_eight_concurrent_failure_hooks_leave_200_signals(configured: TmpRepo) -> None:
    procs = [subprocess.Popen([PY, "-c", WRITER, str(configured.path), str(w)]) for w in range(8)]
    assert [p.wait(timeout=300) for p in procs] == [0] * 8
    res = configured.cli("signal", "list", "--json")
    got = [json.loads(line) for line in res.stdout.splitlines()]
    assert len(got) == 200
    assert {s["content"] for s in got} == {
        f"Bash failed: failure {w}-{i}" for w in range(8) for i in range(25)
    }
    assert len(list(memory.iter_entries(configured.open(), "signals/"))) == 200


@pytest.mark.slow
def test_session_start_after_compact_and_catch_up(configured: TmpRepo) -> None:
    repo = configured
    fire(
        repo,
        "SessionStart",
        json.dumps(payload(repo, "SessionStart", session_id="old-session", source="startup")),
    )
    fire(repo, "PreCompact", json.dumps(payload(repo, "PreCompact")))
    res = fire(repo, "SessionStart", json.dumps(payload(repo, "SessionStart", source="compact")))
    ctx = json.loads(res.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Signals captured earlier in this session" in ctx and "rejected Bash" in ctx
    # the old session never got a SessionEnd: the new start summarized it
    sessions = [json.loads(d) for _, d in memory.iter_entries(repo.open(), "sessions/")]
    assert len(sessions) == 1 and "no SessionEnd" in sessions[0]["stop_reason"]


def test_session_start_context_is_cached_until_what_it_shows_changes(configured: TmpRepo) -> None:
    from gitimprove.hooks import claude
    from gitimprove.util import gitdir

    repo = configured
    loc = gitdir.discover(str(repo.path))
    assert loc is not None
    cache = repo.path / ".git" / "improve" / "cache" / "context.json"

    def context(source: str = "startup") -> str:
        return claude.context(loc, repo.open(), payload(repo, "SessionStart", source=source))

    def planted() -> None:
        """The cached text replaced: served again only while its key holds."""
        data = json.loads(cache.read_text())
        cache.write_text(json.dumps({**data, "text": "planted"}))

    assert "initial" in context()
    planted()
    assert context() == "planted"
    repo.commit("second commit")  # HEAD
    assert "second commit" in context()
    planted()
    assert repo.cli("idea", "add", "try a wider cache").returncode == 0  # the memory tip
    assert "try a wider cache" in context()
    planted()
    repo.git("notes", "--ref=improve", "add", "-m", "not a record", "HEAD")  # the notes tip
    assert "second commit" in context()
    planted()
    repo.gen({".gitimprove.toml": '[metric]\ncommand = "echo 1"\n[memory]\nmax_lines = 30\n'})
    assert "second commit" in context()
    planted()
    assert "second commit" in context("compact")  # this session's signals: never cached
    assert context() == "planted"


def test_install_claude_hooks_preserves_settings(configured: TmpRepo) -> None:
    settings = configured.path / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "my-own-stop-hook"}]}]},
    }
    settings.write_text(json.dumps(mine))
    assert configured.cli("hooks", "install", "--claude").returncode == 0
    data = json.loads(settings.read_text())
    assert data["permissions"] == mine["permissions"]
    stop_cmds = [h["command"] for g in data["hooks"]["Stop"] for h in g["hooks"]]
    assert "my-own-stop-hook" in stop_cmds
    # the project's settings are committed: shell form, resolved at run time, no machine path
    assert any(
        c.endswith(
            "exec git improve hook Stop || echo 'gitimprove hook Stop skipped: git-improve is not on PATH (pip install gitimprove)' >&2"
        )
        for c in stop_cmds
    )
    assert (
        sys.executable not in settings.read_text() and str(Path.home()) not in settings.read_text()
    )
    assert set(data["hooks"]) == {
        "SessionStart",
        "PostToolUseFailure",
        "PreCompact",
        "Stop",
        "TaskCompleted",
        "SessionEnd",
    }
    cmd = data["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    bindir = Path(sys.executable).parent
    if not (bindir / "git-improve").exists():
        pytest.skip("git-improve is not installed beside this interpreter")
    # exec it as Claude Code does, through a shell: with gitimprove on PATH it runs the hook
    path_with = f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"
    ran = subprocess.run(
        cmd,
        shell=True,
        cwd=configured.path,
        input=json.dumps(payload(configured, "SessionStart")),
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": path_with},
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    # a teammate without gitimprove: one line on stderr, exit 0, nothing on stdout
    empty = configured.path.parent / "empty-bin"
    empty.mkdir()
    for event in ("SessionStart", "PostToolUseFailure", "Stop"):
        c = data["hooks"][event][-1]["hooks"][0]["command"]
        miss = subprocess.run(
            ["/bin/sh", "-c", c],
            cwd=configured.path,
            input=json.dumps(payload(configured, event)),
            capture_output=True,
            text=True,
            env={"PATH": str(empty), "HOME": str(configured.path)},
        )
        assert (miss.returncode, miss.stdout) == (0, "")
        assert (
            miss.stderr
            == f"gitimprove hook {event} skipped: git-improve is not on PATH (pip install gitimprove)\n"
        )
    before = settings.read_text()
    res = configured.cli("hooks", "install", "--claude")
    assert "already installed" in res.stdout and settings.read_text() == before
    assert "SessionStart" in configured.cli("hooks", "status").stdout
    assert configured.cli("hooks", "uninstall", "--claude").returncode == 0
    assert json.loads(settings.read_text()) == mine
    local = configured.cli("hooks", "install", "--claude", "--scope", "local")
    local_file = configured.path / ".claude" / "settings.local.json"
    assert local.returncode == 0 and local_file.exists()
    # settings.local.json is this machine's: the absolute interpreter, run directly
    local_cmd = json.loads(local_file.read_text())["hooks"]["SessionStart"][0]["hooks"][0][
        "command"
    ]
    assert local_cmd.split()[0] == sys.executable and Path(local_cmd.split()[0]).is_absolute()
    ran = subprocess.run(
        local_cmd,
        shell=True,
        cwd=configured.path,
        input=json.dumps(payload(configured, "SessionStart")),
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0 and "additionalContext" in ran.stdout
    settings.write_text("{broken")
    res = configured.cli("hooks", "install", "--claude")
    assert (
        res.returncode == 1 and "not valid JSON" in res.stderr and settings.read_text() == "{broken"
    )


@pytest.mark.slow
def test_local_scope_settings_are_ignored_by_git(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    """settings.local.json holds this machine's interpreter path: installing into it makes
    git ignore it (the repository's info/exclude, shared by its worktrees; never a tracked
    file), once; a repository that ignores it already is left alone; a tracked one is named."""
    from gitimprove.hooks import install

    tmp_repo.commit("initial", {"README": "x"})
    res = tmp_repo.cli("hooks", "install", "--claude", "--scope", "local")
    assert res.returncode == 0, res.stderr
    assert "git ignores .claude/settings.local.json now" in res.stdout
    assert tmp_repo.git("status", "--porcelain") == ""
    exclude = tmp_repo.path / ".git" / "info" / "exclude"
    assert exclude.read_text().count("/.claude/settings.local.json") == 1
    again = tmp_repo.cli("hooks", "install", "--claude", "--scope", "local")
    assert again.returncode == 0 and "git ignores" not in again.stdout
    assert exclude.read_text().count("/.claude/settings.local.json") == 1
    # a linked worktree: git reads the common info/exclude, already covering it
    tmp_repo.git("worktree", "add", "-q", str(tmp_path / "wt"))
    assert install.ignore_local_settings(tmp_path / "wt") is None
    # ignored by the project's own .gitignore: nothing added
    other = TmpRepo(tmp_path / "other")
    other.path.mkdir()
    other.git("init", "-q")
    other.commit("ignore", {".gitignore": ".claude/settings.local.json\n"})
    before = (other.path / ".git" / "info" / "exclude").read_text()
    install.install_claude("local", other.path)
    assert install.ignore_local_settings(other.path) is None
    assert (other.path / ".git" / "info" / "exclude").read_text() == before
    # committed by mistake: ignoring cannot help, say how to untrack it
    tracked = TmpRepo(tmp_path / "tracked")
    tracked.path.mkdir()
    tracked.git("init", "-q")
    tracked.commit("oops", {".claude/settings.local.json": "{}\n"})
    notice = install.ignore_local_settings(tracked.path)
    assert notice is not None and "git rm --cached .claude/settings.local.json" in notice
