"""Mining hears only the user: per real transcript (tests/fixtures/claude-transcripts, Claude
Code 1.0.x-2.1.39 from three projects), the signals expected, and the texts Claude Code put in
user turns that must not produce one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitimprove.memory import signals
from gitimprove.memory.mining import mine

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "claude-transcripts"

MULTI = "multi-edit"
# (file, [(type, first tag, start of content)], texts the user never wrote)
CASES = [
    (
        "spotter/session-258c7280.jsonl",
        [
            ("pattern", MULTI, "session_live.ex was edited 3 times"),
            ("correction", "rejection", "the user rejected TaskOutput"),
            ("pattern", MULTI, "annotation.ex was edited 3 times"),
            ("pattern", MULTI, "project_review_live_test.exs was edited 3 times"),
            ("failure", "Bash", "Bash failed repeatedly: Exit code 2"),
            ("pattern", MULTI, "project_review_live.ex was edited 3 times"),
            # the interrupt's redirect is what the user typed, not the task notification
            ("correction", "interrupt", "did you push?"),
        ],
        [
            "Read the output file to retrieve the result",  # <task-notification> trailer
            "task-notification",
            "This session is being continued",  # isCompactSummary
        ],
    ),
    (
        "spotter/258c7280/agent-a881341.jsonl",
        [],
        ["What is the output contract for Claude Code hooks"],  # isSidechain: the agent wrote it
    ),
    (
        "spotter/258c7280/agent-acompact-fffbd0.jsonl",
        [],
        ["PostToolUse:Edit hook additional context", "Your task is to create a detailed summary"],
    ),
    (
        "fasthooks/sample_main_transcript.jsonl",
        [
            # `cat nonexistent.txt` then `python x.py` failed: two commands, not a repeat
            ("command", "", "run `cat nonexistent.txt`"),
        ],
        ["This session is being continued", "Caveat:", "/compact", "Compacted"],
    ),
    ("fasthooks/sample_agent_sidechain.jsonl", [], ["Warmup"]),
    (
        "spotter/session-ae4a77f8.jsonl",
        [
            ("pattern", MULTI, f)
            for f in (
                "otel.ex",
                "notify-session.sh",
                "tool-call-capture.sh",
                "post-tool-capture.sh",
                "hooks_controller.ex",
                "otel_trace_helpers.ex",
            )
        ]
        + [("failure", "Bash", "Bash failed repeatedly: Pre-commit validation failed")]
        + [
            ("pattern", MULTI, f)
            for f in ("otel_trace_helpers.ex", "terminal_channel.ex", "hooks_controller_test.exs")
        ],
        ["This session is being continued"],
    ),
    (
        "spotter/short.jsonl",
        [
            ("correction", "rejection", "the user rejected Bash: mix phx.server"),
            ("correction", "rejection", "the user rejected Glob: mix.exs"),
        ],
        ["<command-name>", "<local-command-stdout>"],
    ),
    (
        "spotter/subagent.jsonl",
        [("correction", "interrupt", "create the beads")],
        ["<system-reminder>"],
    ),
    (
        "spotter/tool_heavy.jsonl",
        [("correction", "interrupt", "scrolling back in xterm.js still does not work")],
        ["<command-name>", "<system-reminder>"],
    ),
    ("episodic-memory/medium-conversation.jsonl", [], []),
    ("episodic-memory/short-conversation.jsonl", [], []),
    ("episodic-memory/tiny-conversation.jsonl", [], []),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "expected", "never"), CASES)
def test_real_transcripts_give_the_signals_the_user_gave(
    tmp_path: Path, name: str, expected: list[tuple[str, str, str]], never: list[str]
) -> None:
    got = mine(str(FIXTURES / name), str(tmp_path), "s1", "Stop")
    summary = [(s["type"], (s["tags"] or [""])[0], s["content"]) for s in got]
    assert len(summary) == len(expected), summary
    for (t, tag, content), (et, etag, start) in zip(summary, expected, strict=True):
        assert (t, tag) == (et, etag) and content.startswith(start), (t, tag, content)
    for text in never:
        assert not [s for s in got if text in s["content"] or text in s["context"]], text
    assert mine(str(FIXTURES / name), str(tmp_path), "s1", "Stop") == []  # watermark


def _line(role: str, content: object, **flags: object) -> str:
    msg = {"role": role, "content": content}
    return json.dumps({"type": role, "message": msg, "version": "2.1.39", **flags})


def _tool(tool: str, tid: str, inp: dict[str, object]) -> str:
    return _line("assistant", [{"type": "tool_use", "id": tid, "name": tool, "input": inp}])


def test_injected_user_turns_and_task_prompts_make_no_correction(tmp_path: Path) -> None:
    """Each shape as Claude Code writes it into a user turn, after work the agent did."""
    lines = [
        _line("user", "Refactor the parser to use a dict instead of a list, rather than tuples."),
        _tool("Bash", "t1", {"command": "pytest -q"}),
        _line("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]),
        _line("user", "Stop hook feedback:\n[make test]: no, 3 tests failed instead"),
        _line(
            "user",
            "<task-notification>\n<status>failed</status>\n<summary>no, wrong</summary>\n</task-notification>\nRead the output file to retrieve the result: /tmp/x",
        ),
        _line(
            "user",
            "<command-name>/model</command-name>\n<command-args>no, use opus instead</command-args>",
        ),
        _line("user", "<local-command-stdout>Wrong model, switched instead</local-command-stdout>"),
        _line("user", "<bash-input>git status</bash-input>"),
        _line("user", "no, do not use npm here, use pnpm instead", isSidechain=True),
        _line(
            "user",
            "This session is being continued... the user said no, wrong file",
            isCompactSummary=True,
        ),
        _line("user", "no, that's wrong", isMeta=True),
        _line(
            "user",
            [
                {
                    "type": "text",
                    "text": "<system-reminder>\nWrong: do not use X.\n</system-reminder>",
                }
            ],
        ),
        _line(
            "user",
            "Another Claude session sent a message:\n<teammate-message>no, wrong</teammate-message>",
        ),
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert [
        s for s in mine(str(path), str(tmp_path), "s", "Stop") if s["type"] == "correction"
    ] == []
    # the user's own words still count, with a system reminder beside them
    with path.open("a") as fh:
        fh.write(
            _line(
                "user",
                [
                    {
                        "type": "text",
                        "text": "no, that's wrong: keep the list.\n<system-reminder>x</system-reminder>",
                    }
                ],
            )
            + "\n"
        )
    got = mine(str(path), str(tmp_path), "s", "Stop")
    assert [(s["type"], s["content"]) for s in got] == [
        ("correction", "no, that's wrong: keep the list.")
    ]


def test_grouping_never_merges_different_files_commands_or_tools(tmp_path: Path) -> None:
    got = mine(str(FIXTURES / "spotter/session-ae4a77f8.jsonl"), str(tmp_path), "s1", "Stop")
    multi = [s for s in got if "multi-edit" in s["tags"]]
    groups = signals.groups(multi)
    files = {s["source"]["file"] for s in multi}
    assert len(multi) == 9 and len(groups) == len(files) == 8  # one file twice: one candidate
    assert sorted(len(g.signals) for g in groups) == [1] * 7 + [2]

    def sig(content: str, tags: tuple[str, ...] = ()) -> dict[str, object]:
        return {"type": "failure", "content": content, "tags": list(tags), "source": {}}

    alike = [sig("run `make test` before pushing"), sig("run `make lint` before pushing")]
    assert len(signals.groups(alike)) == 2  # different commands
    tools = [
        sig("failed repeatedly: exit code 1", ("Bash",)),
        sig("failed repeatedly: exit code 1", ("Edit",)),
    ]
    assert len(signals.groups(tools)) == 2  # different tools
    same = [sig("run `make test` before pushing"), sig("always run `make test` before pushing")]
    assert len(signals.groups(same)) == 1


def _turn(*blocks: str, **flags: object) -> str:
    return _line("user", [{"type": "text", "text": b} for b in blocks], **flags)


def _mined(tmp_path: Path, lines: list[str]) -> list[dict[str, object]]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return mine(str(path), str(tmp_path / "wm"), "s", "Stop")


@pytest.mark.slow
def test_ide_context_and_other_origins_are_not_the_user(tmp_path: Path) -> None:
    """Blocks the IDE extensions put before what the user typed (`<ide_opened_file>`,
    `<ide_selection>` holding the user's code, `<terminal name=…>`), blocks wholly one
    element of a kind not listed, and lines of another origin (`origin.kind`
    "task-notification") are not user speech, and do not count as the first prompt."""
    ide = "<ide_opened_file>The user opened the file /p/src/db.py in the IDE.</ide_opened_file>"
    lines = [
        _turn(ide),  # the IDE alone: no turn
        _turn(ide, "Add a retry to connect(). Use tenacity instead of a hand-written loop."),
        _tool("Read", "r1", {"file_path": "/p/src/db.py"}),
        _turn(
            "<ide_selection>The user selected lines 3 to 9 of /p/src/db.py:\n# NOTE: don't use"
            " the global pool, always use get_pool()\n# In this project the convention is "
            "snake_case.\nrun `make migrate` first\n</ide_selection>",
            "what does this block do?",
        ),
        _line(
            "user",
            "Background job finished. No, never use the old cache; use redis instead.",
            origin={"kind": "task-notification"},
        ),
        _turn(
            '<terminal name="build">\nnpm WARN use `npm ci` instead\nerror: wrong node, '
            "don't use node 16\n</terminal>",
            "why is the build failing?",
        ),
        _turn("<editor_state>No, that's wrong. In this repo we keep X.</editor_state>"),
        _line("user", "ok, ship it", origin={"kind": "human"}),
    ]
    got = _mined(tmp_path, lines)
    assert [(s["type"], s["content"]) for s in got] == []
    # what the user typed after an IDE tag in the same text is still the user's
    more = [*lines, _line("user", f"{ide}No, that's wrong: keep the old loop.")]
    got = _mined(tmp_path / "again", more)
    assert [(s["type"], s["content"], s["source"]["turn"]) for s in got] == [
        ("correction", "No, that's wrong: keep the old loop.", 5)
    ]


FOLLOWUPS = [
    "Great, now add a --verbose flag. Use click's count option instead of a bool flag, it "
    "doesn't take a value.",
    "Next task: add a cache layer with redis instead of the in-memory dict, no TTL needed for now.",
    "Now write the README section. Actually, don't bother with the badges yet.",
    "Thanks! Next, port the tests to pytest; the fixtures should be in conftest.py.",
    "Refactor the parser to use a dict rather than a list, we never need the order.",
    "Use a lock here, it isn't thread-safe otherwise.",
]
CORRECTIONS = [
    ("No, use pnpm here.", "No, use pnpm here."),
    ("That's not what I asked for. Keep the list.", "That's not what I asked for."),
    ("Use pnpm instead, not npm.", "Use pnpm instead, not npm."),  # the agent ran npm
    ("Don't touch the migrations.", "Don't touch the migrations."),
    ("It still fails on CI.", "It still fails on CI."),
    ("You used the wrong fixture, use tmp_repo instead.", "You used the wrong fixture, use"),
]


def test_a_new_task_with_a_negation_is_no_correction(tmp_path: Path) -> None:
    """After the agent worked, follow-up tasks that contain a weak word and a negation
    ("instead of a bool flag, it doesn't take a value") are not corrections; messages that
    refer back to what the agent did are."""
    lines = [_line("user", "Add a CLI entry point.")]
    for i, text in enumerate(FOLLOWUPS):
        lines += [_tool("Bash", f"t{i}", {"command": "npm install"}), _line("user", text)]
    assert [s for s in _mined(tmp_path, lines) if s["type"] == "correction"] == []
    for i, (text, start) in enumerate(CORRECTIONS):
        one = [_line("user", "Add a CLI entry point."), _tool("Bash", "t", {"command": "npm i"})]
        got = _mined(tmp_path / str(i), [*one, _line("user", text)])
        assert [(s["type"], str(s["content"])[: len(start)]) for s in got] == [
            ("correction", start)
        ], text
    # "not npm" refers back only when the agent's own actions named npm
    quiet = [_line("user", "Add a CLI entry point."), _tool("Read", "t", {"file_path": "/p/a"})]
    assert _mined(tmp_path / "q", [*quiet, _line("user", "Use pnpm instead, not npm.")]) == []


def _failing(tid: str, command: str) -> list[str]:
    return [
        _tool("Bash", tid, {"command": command}),
        _line(
            "user",
            [{"type": "tool_result", "tool_use_id": tid, "is_error": True, "content": "Exit 1"}],
        ),
    ]


@pytest.mark.parametrize(
    ("commands", "repeated"),
    [
        (["npm run lint", "npm run test"], []),
        (["npm run lint", "cargo build --release", "npm run lint"], []),
        (["npm run lint", "npm run lint"], ["npm run lint"]),
        (["pytest -q", "pytest -q 2>&1 | tail -20"], ["pytest -q 2>&1 | tail -20"]),
        (['git commit -m "a"', 'git commit -m "b"'], ['git commit -m "b"']),
    ],
)
def test_failures_repeat_per_command_not_per_tool(
    tmp_path: Path, commands: list[str], repeated: list[str]
) -> None:
    lines = [_line("user", "fix the lint errors and the failing tests")]
    for i, command in enumerate(commands):
        lines += _failing(f"b{i}", command)
    got = [s for s in _mined(tmp_path, lines) if s["type"] == "failure"]
    assert [s["context"] for s in got] == repeated


def test_failures_of_different_commands_are_never_one_candidate() -> None:
    def failure(command: str) -> dict[str, object]:
        return {
            "type": "failure",
            "content": "Bash failed repeatedly: Exit code 1",
            "context": command,
            "tags": ["Bash"],
            "source": {},
        }

    apart = [failure("npm run lint"), failure("cargo build --release")]
    assert len(signals.groups(apart)) == 2
    together = [failure("npm run lint"), failure("npm run lint 2>&1 | tail -5")]
    assert len(signals.groups(together)) == 1
