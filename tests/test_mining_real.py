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
            ("command", "", "run `cat nonexistent.txt`"),
            ("failure", "Bash", "Bash failed repeatedly: Exit code 127"),
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
