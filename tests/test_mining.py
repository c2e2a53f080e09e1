"""Transcript mining on real Claude Code transcripts (tests/fixtures/claude-transcripts)."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest

from gitimprove.loop import program
from gitimprove.memory.mining import mine

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "claude-transcripts"


def fixture(name: str) -> Path:
    path = FIXTURES / name
    assert path.exists(), f"{path} is missing from tests/fixtures"
    return path


def kinds(signals: list[dict]) -> collections.Counter:  # type: ignore[type-arg]
    return collections.Counter((s["type"], tuple(s["tags"])) for s in signals)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # Two tool uses (Bash `mix phx.server`, Glob `mix.exs`) rejected by the user, no reason
        # given; the "[Request interrupted by user for tool use]" after them has no redirect.
        ("spotter/short.jsonl", {("correction", ("rejection",)): 2}),
        # Two interrupts; only the first is followed by a new prompt (the redirect).
        ("spotter/tool_heavy.jsonl", {("correction", ("interrupt",)): 1}),
        # One interrupt, followed by a redirect.
        ("spotter/subagent.jsonl", {("correction", ("interrupt",)): 1}),
        # 21 tool errors, of which 3 repeat the same command back to back (`git commit -m …`
        # refused by lefthook, whatever the message; `npx knip`; an Edit of one file) — not
        # `git rebase --continue` then `git add . && git rebase --continue`; one rejected Edit;
        # four interrupts, each followed by a redirect; 7 files edited 3+ times; and one
        # correction: "ok. uh. no. the ci is running on the current commit…".
        (
            "episodic-memory/large-conversation.jsonl",
            {
                ("correction", ()): 1,
                ("failure", ("Bash",)): 2,
                ("failure", ("Edit",)): 1,
                ("correction", ("rejection",)): 1,
                ("correction", ("interrupt",)): 4,
                ("pattern", ("multi-edit",)): 7,
            },
        ),
        # Nothing to learn from: a summary and file-history snapshots only.
        ("episodic-memory/medium-conversation.jsonl", {}),
    ],
)
def test_mining_finds_what_is_there(tmp_path: Path, name: str, expected: dict) -> None:  # type: ignore[type-arg]
    found = mine(str(fixture(name)), str(tmp_path), "s1", "PreCompact")
    assert dict(kinds(found)) == expected
    assert all(s["session"] == "s1" and s["source"]["hook"] == "PreCompact" for s in found)
    assert mine(str(fixture(name)), str(tmp_path), "s1", "PreCompact") == []  # twice adds nothing


def test_rejection_reason_and_interrupt_redirect_become_corrections(tmp_path: Path) -> None:
    found = mine(str(fixture("spotter/tool_heavy.jsonl")), str(tmp_path), "s", "Stop")
    (redirect,) = found
    assert redirect["type"] == "correction" and "xterm.js" in redirect["content"]
    lines = [
        {
            "type": "assistant",
            "message": {
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": "npm test"},
                    }
                ]
            },
        },
        {
            "type": "user",
            "message": {
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "is_error": True,
                        "content": "The user doesn't want to proceed with this tool use. The tool use was rejected. To tell you how to proceed, the user said:\nuse pnpm, not npm",
                    }
                ]
            },
        },
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    (sig,) = mine(str(path), str(tmp_path / "wm"), "s", "Stop")
    assert sig["content"] == "use pnpm, not npm" and "npm test" in sig["context"]


@pytest.mark.slow
def test_partial_last_line_waits_for_the_rest(tmp_path: Path) -> None:
    data = fixture("episodic-memory/large-conversation.jsonl").read_bytes()
    whole = mine(
        str(fixture("episodic-memory/large-conversation.jsonl")),
        str(tmp_path / "a"),
        "s",
        "PreCompact",
    )
    path = tmp_path / "growing.jsonl"
    cut = len(data) // 2 + 17  # in the middle of a line
    path.write_bytes(data[:cut])
    first = mine(str(path), str(tmp_path / "b"), "s", "PreCompact")
    path.write_bytes(data)
    second = mine(str(path), str(tmp_path / "b"), "s", "PreCompact")
    assert kinds(first + second) == kinds(whole)


@pytest.mark.slow
def test_no_signal_from_a_gitimprove_child_session(tmp_path: Path) -> None:
    prompt = program.build(
        goal="",
        metric_name="ms",
        direction="lower",
        metric_command="x",
        mutable=["**"],
        sealed=[],
        rows=[],
    )
    lines = [
        {"type": "user", "message": {"content": prompt}},
        {
            "type": "user",
            "message": {"content": "No, use pnpm instead of npm. Always use pnpm in this project."},
        },
    ]
    path = tmp_path / "child.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert mine(str(path), str(tmp_path / "wm"), "child", "Stop") == []


def test_keyword_detectors(tmp_path: Path) -> None:
    lines = [
        {"type": "user", "message": {"content": "Set up the project."}},  # a task, then
        {"type": "user", "message": {"content": "No, use pnpm not npm here."}},
        {
            "type": "user",
            "message": {
                "content": "In this repo we keep fixtures in tests/data. Run `make lint` before pushing."
            },
        },
    ]
    for i in range(3):
        lines.append(
            {
                "type": "assistant",
                "message": {
                    "content": [
                        {
                            "type": "tool_use",
                            "id": f"e{i}",
                            "name": "Edit",
                            "input": {"file_path": "/p/a.py"},
                        }
                    ]
                },
            }
        )
    lines.append({"type": "user", "message": {"content": "Perfect, that works."}})
    for i in range(3):
        lines.append(
            {
                "type": "assistant",
                "message": {
                    "content": [
                        {
                            "type": "tool_use",
                            "id": f"g{i}",
                            "name": "Glob",
                            "input": {"pattern": f"**/x{i}"},
                        }
                    ]
                },
            }
        )
        lines.append(
            {
                "type": "user",
                "message": {
                    "content": [
                        {"type": "tool_result", "tool_use_id": f"g{i}", "content": "No files found"}
                    ]
                },
            }
        )
    lines.append(
        {
            "type": "assistant",
            "message": {
                "content": [
                    {"type": "tool_use", "id": "g9", "name": "Grep", "input": {"pattern": "target"}}
                ]
            },
        }
    )
    lines.append(
        {
            "type": "user",
            "message": {
                "content": [
                    {"type": "tool_result", "tool_use_id": "g9", "content": "src/a.py:3: target"}
                ]
            },
        }
    )
    lines.append(
        {
            "type": "assistant",
            "message": {
                "content": [{"type": "text", "text": "Which command do you use to run the tests?"}]
            },
        }
    )
    path = tmp_path / "k.jsonl"
    path.write_text(
        "".join(json.dumps(x) + "\n" for x in lines)
        + '{"type": "future-thing", "x": 1}\n{"truncated": '
    )
    got = {
        (s["type"], s["confidence"])
        for s in mine(str(path), str(tmp_path / "wm"), "s", "PreCompact")
    }
    assert got == {
        ("correction", 3),  # "use X not Y": a workflow correction
        ("convention", 2),
        ("command", 2),
        ("pattern", 1),  # the same file edited 3 times, and approval after multi-step work
        ("project_friction", 1),
        ("discovery", 2),
    }
