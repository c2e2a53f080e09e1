"""Adapters against real-shaped output of the agent CLIs, through fake executables on PATH."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from gitimprove.agents import aider, claude, codex, make
from gitimprove.agents.base import AgentResult, AgentTask
from gitimprove.errors import GitImproveError

CLAUDE_RESULT = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "duration_ms": 81234,
    "num_turns": 7,
    "result": 'Cached the tokenizer.\n{"description": "cache the tokenizer", "hypothesis": "tokenizing dominates", "approach": "optimization"}',
    "session_id": "3f0c",
    "total_cost_usd": 0.1234,
    "usage": {
        "input_tokens": 12,
        "cache_creation_input_tokens": 3000,
        "cache_read_input_tokens": 20000,
        "output_tokens": 900,
        "server_tool_use": {"web_search_requests": 0},
        "service_tier": "standard",
    },
    # per model, subagents included (the main loop's `usage` leaves the haiku subagent out)
    "modelUsage": {
        "claude-sonnet-4-5-20250929": {
            "inputTokens": 12,
            "outputTokens": 900,
            "cacheReadInputTokens": 20000,
            "cacheCreationInputTokens": 3000,
            "webSearchRequests": 0,
            "costUSD": 0.11,
            "contextWindow": 200000,
        },
        "claude-haiku-4-5-20251001": {
            "inputTokens": 400,
            "outputTokens": 60,
            "cacheReadInputTokens": 1000,
            "cacheCreationInputTokens": 0,
            "webSearchRequests": 0,
            "costUSD": 0.0134,
            "contextWindow": 200000,
        },
    },
    "permission_denials": [],
    "uuid": "1c2d",
}
# what Claude Code prints when --max-turns runs out (an error result, exit status 1)
CLAUDE_MAX_TURNS = {
    "type": "result",
    "subtype": "error_max_turns",
    "is_error": True,
    "duration_ms": 300000,
    "num_turns": 31,
    "session_id": "3f0d",
    "total_cost_usd": 0.5,
    "usage": {"input_tokens": 40, "output_tokens": 5000},
    "modelUsage": {"claude-sonnet-4-5-20250929": {"inputTokens": 40, "outputTokens": 5000}},
    "permission_denials": [],
}
CODEX_EVENTS = [
    {"type": "thread.started", "thread_id": "th_1"},
    {"type": "turn.started"},
    {
        "type": "item.completed",
        "item": {
            "id": "i0",
            "type": "command_execution",
            "command": "pytest",
            "status": "completed",
        },
    },
    {
        "type": "item.completed",
        "item": {
            "id": "i1",
            "type": "agent_message",
            "text": 'Done.\n{"description": "vectorize the loop", "approach": "optimization"}',
        },
    },
    {
        "type": "turn.completed",
        "usage": {"input_tokens": 24763, "cached_input_tokens": 24448, "output_tokens": 122},
    },
]
# codex-rs/exec emits ThreadEvent::Error for a stream it retries, and keeps running
CODEX_RECONNECT = {
    "type": "error",
    "message": "Reconnecting... 1/5 (stream disconnected before completion: idle timeout)",
}
AIDER_OUT = """Aider v0.86.1
Main model: sonnet with diff edit format
Applied edit to src/parse.py
Tokens: 4.2k sent, 1.1k received. Cost: $0.03 message, $0.05 session.
{"description": "memoize parse", "approach": "optimization"}
"""


def test_claude_output_parsing() -> None:
    out = AgentResult(0, 1.0)
    claude.parse_output(json.dumps(CLAUDE_RESULT), out)
    assert out.cost_usd == 0.1234 and out.turns == 7
    assert out.tokens == {
        "input": 24412,
        "output": 960,
        "cache_read": 21000,
        "cache_creation": 3000,
    }
    assert out.description == "cache the tokenizer" and out.approach == "optimization"
    # an older result with no modelUsage: the main loop's usage
    old = AgentResult(0, 1.0)
    claude.parse_output(
        json.dumps({k: v for k, v in CLAUDE_RESULT.items() if k != "modelUsage"}), old
    )
    assert old.tokens == {
        "input": 23012,
        "output": 900,
        "cache_read": 20000,
        "cache_creation": 3000,
    }


def test_claude_max_turns_is_a_finished_attempt() -> None:
    out = AgentResult(1, 1.0)
    claude.parse_output(json.dumps(CLAUDE_MAX_TURNS), out)
    assert (out.exit_code, out.stop_reason, out.turns) == (0, "max_turns", 31)
    assert out.record("claude")["stop_reason"] == "max_turns"
    failed = AgentResult(0, 1.0)
    claude.parse_output(
        json.dumps({**CLAUDE_MAX_TURNS, "subtype": "error_during_execution"}), failed
    )
    assert failed.exit_code == 1 and failed.stop_reason is None


@pytest.mark.parametrize(
    "stdout",
    [
        json.dumps(CLAUDE_RESULT, indent=2),  # pretty-printed
        json.dumps(
            [
                {"type": "system", "subtype": "init", "session_id": "3f0c"},
                {"type": "assistant"},
                CLAUDE_RESULT,
            ]
        ),  # --verbose: every message, the result last
        "warning: something on stdout first\n" + json.dumps(CLAUDE_RESULT),
    ],
)
def test_claude_output_in_any_shape(stdout: str) -> None:
    out = AgentResult(0, 1.0)
    claude.parse_output(stdout, out)
    assert out.cost_usd == 0.1234 and out.description == "cache the tokenizer"


@pytest.mark.parametrize(
    "text",
    [
        'Done.\n```json\n{\n  "description": "cache the tokenizer",\n  "approach": "optimization"\n}\n```\n',
        'Done. {"description": "cache the tokenizer", "approach": "optimization"} That is all.',
        '{"description": "an older idea"}\nthen\n{\n "description": "cache the tokenizer",\n "metrics": {"x": 1},\n "approach": "optimization"\n}',
    ],
)
def test_reports_in_any_json_layout(text: str) -> None:
    out = AgentResult(0, 1.0)
    claude.parse_output(json.dumps({**CLAUDE_RESULT, "result": text}), out)
    assert (out.description, out.approach) == ("cache the tokenizer", "optimization")


def test_claude_argv_denies_sealed_paths_and_keeps_sessions_out() -> None:
    task = AgentTask(Path("/p"), "r", 1, sealed=("bench.py", "tests/**"), commands=("pytest  -q",))
    argv = claude.build_argv("claude", task)
    assert argv[:4] == ["claude", "-p", "--output-format", "json"]
    assert "--no-session-persistence" in argv and "acceptEdits" in argv
    # Edit rules cover every file-editing tool; Claude Code has no Write(...) rule
    assert "Edit(bench.py)" in argv and "Edit(tests/**)" in argv
    assert not [a for a in argv if a.startswith("Write(")]
    allowed = argv[argv.index("--allowedTools") + 1 : argv.index("--disallowedTools")]
    assert allowed == ["Bash(pytest -q:*)"]  # the agent can run the guard it must fix
    assert "Bash(git commit:*)" in argv[argv.index("--disallowedTools") :]
    assert "--allowedTools" not in claude.build_argv("claude", AgentTask(Path("/p"), "r", 1))


@pytest.mark.parametrize(
    ("guard", "rules"),
    [
        ("pytest -q && ruff check .", ["Bash(pytest -q:*)", "Bash(ruff check .:*)"]),
        (
            "make lint; make test || exit 1",
            ["Bash(make lint:*)", "Bash(make test:*)", "Bash(exit 1:*)"],
        ),
        (
            "cd web && npm test 2>&1 | tail -20",
            ["Bash(cd web:*)", "Bash(npm test:*)", "Bash(tail -20:*)"],
        ),
        (
            'pytest -k "a and not b" | tee out',
            ['Bash(pytest -k "a and not b":*)', "Bash(tee out:*)"],
        ),
        (
            "pytest $(git ls-files 'test_*.py' | head -3)",
            ["Bash(pytest $(git ls-files 'test_*.py' | head -3):*)"],
        ),
        ("python -m pytest -q\nmypy", ["Bash(python -m pytest -q:*)", "Bash(mypy:*)"]),
    ],
)
def test_the_guard_is_allowed_one_simple_command_at_a_time(guard: str, rules: list[str]) -> None:
    """Claude Code matches each simple command of a compound one against the rules on its
    own (a prefix rule never matches `a && b`): one rule per simple command, redirections
    dropped, each once."""
    task = AgentTask(Path("/p"), "r", 1, commands=(guard, "pytest -q"))
    argv = claude.build_argv("claude", task)
    allowed = argv[argv.index("--allowedTools") + 1 : argv.index("--disallowedTools")]
    assert allowed == list(dict.fromkeys([*rules, "Bash(pytest -q:*)"]))


def test_codex_event_parsing() -> None:
    out = AgentResult(0, 1.0)
    codex.parse_events("\n".join(json.dumps(e) for e in CODEX_EVENTS), out)
    assert out.tokens == {"input": 24763, "output": 122, "cache_read": 24448} and out.turns == 1
    assert out.description == "vectorize the loop"
    failed = AgentResult(0, 1.0)
    codex.parse_events(json.dumps({"type": "turn.failed", "error": {"message": "x"}}), failed)
    assert failed.exit_code == 1
    # codex's `error` event is a problem it goes on from (a retried stream): the turn decides
    retried = AgentResult(0, 1.0)
    events = [CODEX_RECONNECT, *CODEX_EVENTS]
    codex.parse_events("\n".join(json.dumps(e) for e in events), retried)
    assert (retried.exit_code, retried.description) == (0, "vectorize the loop")
    gave_up = AgentResult(1, 1.0)  # retries exhausted: errors, then codex exits 1
    codex.parse_events(json.dumps(CODEX_RECONNECT), gave_up)
    assert gave_up.exit_code == 1 and gave_up.summary.startswith("Reconnecting... 1/5")


def test_aider_output_parsing() -> None:
    out = AgentResult(0, 1.0)
    aider.parse_output(AIDER_OUT, out)
    assert out.tokens == {"input": 4200, "output": 1100} and out.cost_usd == 0.05
    assert out.description == "memoize parse"


def _fake(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text("#!/usr/bin/env python3\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.mark.parametrize("name", ["claude", "codex", "aider"])
def test_adapters_run_real_processes(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    prompt = tmp_path / "program.md"
    prompt.write_text("# Your task\nmake it faster\n")
    body = {
        "claude": f"import sys, json, os, pathlib\nassert 'make it faster' in sys.stdin.read()\nassert os.environ['GITIMPROVE_CHILD'] == '1'\npathlib.Path('f.txt').write_text('x')\nprint({json.dumps(json.dumps(CLAUDE_RESULT))})\n",
        "codex": "import sys, json, pathlib\nassert 'make it faster' in sys.stdin.read()\nassert '--json' in sys.argv\npathlib.Path('f.txt').write_text('x')\n"
        + "".join(f"print({json.dumps(json.dumps(e))})\n" for e in CODEX_EVENTS),
        "aider": f"import sys, pathlib\nprompt = sys.argv[sys.argv.index('--message-file') + 1]\nassert 'make it faster' in pathlib.Path(prompt).read_text()\nassert '--no-auto-commits' in sys.argv\npathlib.Path('f.txt').write_text('x')\nprint({AIDER_OUT!r})\n",
    }[name]
    _fake(bin_dir, name, body)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    agent = make(name)
    agent.check()
    result = agent.run(AgentTask(prompt, "r", 1), work, 30)
    assert result.exit_code == 0, result.tail
    assert (work / "f.txt").read_text() == "x"
    assert result.tokens and result.description


@pytest.mark.parametrize(
    ("events", "exit_status", "expected"),
    [
        ([CODEX_RECONNECT, CODEX_RECONNECT, *CODEX_EVENTS], 0, 0),  # retried, then finished
        ([CODEX_RECONNECT, {"type": "turn.failed", "error": {"message": "stream"}}], 1, 1),
        ([CODEX_RECONNECT, {"type": "turn.failed", "error": {"message": "stream"}}], 0, 1),
        ([{"type": "thread.started", "thread_id": "t"}], 1, 1),  # no turn event: the exit
    ],
)
def test_codex_fails_on_a_failed_turn_or_its_exit_status(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    events: list[dict[str, object]],
    exit_status: int,
    expected: int,
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    prompt = tmp_path / "program.md"
    prompt.write_text("make it faster\n")
    lines = "".join(f"print({json.dumps(json.dumps(e))}, flush=True)\n" for e in events)
    _fake(bin_dir, "codex", "import sys\nsys.stdin.read()\n" + lines + f"sys.exit({exit_status})\n")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = make("codex").run(AgentTask(prompt, "r", 1), work, 30)
    assert result.exit_code == expected, result.tail


def test_missing_executables_are_clear_errors(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    for name in ("claude", "codex", "aider"):
        with pytest.raises(GitImproveError, match="not on PATH"):
            make(name).check()
    with pytest.raises(GitImproveError, match=r"needs agent\.command"):
        make("command", "").check()
    with pytest.raises(GitImproveError, match="unknown placeholder"):
        make("command", "run {prompt}").check()


def test_claude_out_of_turns_keeps_its_edits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fake `claude` that edits, prints the error_max_turns result and exits 1, as the
    real one does: the attempt is finished (exit 0, stop_reason), so the loop measures it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    prompt = tmp_path / "program.md"
    prompt.write_text("make it faster")
    _fake(
        bin_dir,
        "claude",
        "import sys, pathlib\nsys.stdin.read()\npathlib.Path('f.txt').write_text('edited')\n"
        f"print({json.dumps(json.dumps(CLAUDE_MAX_TURNS))})\nsys.exit(1)\n",
    )
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    agent = make("claude")
    agent.check()
    result = agent.run(AgentTask(prompt, "r", 1), work, 30)
    assert (result.exit_code, result.stop_reason) == (0, "max_turns")
    assert (work / "f.txt").read_text() == "edited"
