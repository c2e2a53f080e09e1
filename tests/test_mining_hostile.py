"""Hostile transcripts and hook payloads, through the real hook entry in a subprocess:
mining moves past any line it cannot parse, reads in bounded chunks (a gigabyte line is
never held whole), and a payload never leaves a temp file or loses its signal."""

from __future__ import annotations

import json
import os
import resource
import subprocess
from pathlib import Path

import pytest

from gitimprove.memory import deferred, mining
from gitimprove.memory.spool import read_entry
from gitimprove.util.seal import unseal
from tests.conftest import PY, TmpRepo, main_in_process

SESSION = "5f0c1d2e-aaaa-bbbb-cccc-000000000001"


def user(text: str) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n"


def fire(
    repo: TmpRepo, event: str, payload: dict[str, object], *, memory_mb: int | None = None
) -> subprocess.CompletedProcess[str]:
    def limit() -> None:  # pragma: no cover - runs in the child
        if memory_mb:
            size = memory_mb << 20
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    return subprocess.run(
        [PY, "-m", "gitimprove", "hook", event],
        cwd=repo.path,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        preexec_fn=limit,
        timeout=120,
    )


@pytest.fixture
def configured(tmp_repo: TmpRepo) -> TmpRepo:
    tmp_repo.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n'})
    return tmp_repo


def spool(repo: TmpRepo) -> list[str]:
    folder = repo.path / ".git" / "improve" / "spool"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def spooled_contents(repo: TmpRepo) -> list[str]:
    folder = repo.path / ".git" / "improve" / "spool"
    return [
        deferred.finish(json.loads(read_entry(str(p))))["content"] for p in sorted(folder.iterdir())
    ]


def watermark(repo: TmpRepo) -> dict[str, object]:
    path = mining.watermark_path(str(repo.path / ".git" / "improve"), SESSION)
    return json.loads(unseal(Path(path).read_bytes()))  # without the hook's seal line


POISON = [
    '{"type":"user","message":{"content":' + "[" * 3000 + "]" * 3000 + "}}\n",
    '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1"}]}}\n',
    '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":{"a":1},"input":[1]}]}}\n',
    '{"type":"user","message":{"content":"\\ud800 actually, use pnpm instead"}}\n',
    "\xff\xfe not even text\n",
    "[1, 2, 3]\n",
    '{"type":"user","message":{"content":' + "9" * 5000 + "}}\n",
    '{"type":"user","message":{"content":NaN}}\n',
]


def test_poisoned_lines_are_passed_and_later_lines_still_mined(
    configured: TmpRepo, tmp_path: Path
) -> None:
    transcript = tmp_path / "t.jsonl"
    with open(transcript, "w", encoding="utf-8", errors="surrogateescape") as fh:
        fh.write(user("hello there"))
        for line in POISON:
            fh.write(line)
    payload = {
        "session_id": SESSION,
        "cwd": str(configured.path),
        "transcript_path": str(transcript),
    }
    res = fire(configured, "PreCompact", {**payload, "hook_event_name": "PreCompact"})
    assert res.returncode == 0 and res.stderr == "" and res.stdout == ""
    assert watermark(configured)["offset"] == transcript.stat().st_size
    with open(transcript, "a") as fh:
        fh.write(user("no, don't use npm here; use pnpm"))
    res = fire(configured, "PreCompact", {**payload, "hook_event_name": "PreCompact"})
    assert res.returncode == 0 and res.stderr == ""
    assert any("pnpm" in c for c in spooled_contents(configured))
    assert watermark(configured)["offset"] == transcript.stat().st_size
    assert not [n for n in spool(configured) if n.startswith(".")]


def test_a_corrupt_watermark_does_not_stop_mining(configured: TmpRepo, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(user("set up the build") + user("no, don't use npm here; use pnpm"))
    path = Path(mining.watermark_path(str(configured.path / ".git" / "improve"), SESSION))
    path.parent.mkdir(parents=True)
    path.write_text('{"offset": "x", "edit_counts": [1], "turn": ' + "[" * 3000 + "]" * 3000 + "}")
    payload = {
        "session_id": SESSION,
        "cwd": str(configured.path),
        "transcript_path": str(transcript),
        "hook_event_name": "PreCompact",
    }
    assert fire(configured, "PreCompact", payload).returncode == 0
    assert any("pnpm" in c for c in spooled_contents(configured))


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(resource, "RLIMIT_AS"), reason="needs RLIMIT_AS")
def test_a_gigabyte_line_is_never_read_whole(configured: TmpRepo, tmp_path: Path) -> None:
    transcript = tmp_path / "huge.jsonl"
    with open(transcript, "wb") as fh:
        fh.write(user("first line").encode())
        fh.truncate(fh.tell() + (1 << 30))  # a sparse gigabyte with no newline in it
    first = len(user("first line"))
    payload = {
        "session_id": SESSION,
        "cwd": str(configured.path),
        "transcript_path": str(transcript),
        "hook_event_name": "PreCompact",
    }
    # far less memory than the line: reading it whole would fail
    res = fire(configured, "PreCompact", payload, memory_mb=400)
    assert res.returncode == 0 and res.stderr == ""
    mark = watermark(configured)
    assert mark["skipping"] is True
    assert first + mining.MAX_LINE < int(str(mark["offset"])) <= first + mining.MAX_PASS
    assert not list((configured.path / ".git" / "improve" / "watermarks").glob("*.tmp"))
    with open(transcript, "a") as fh:
        fh.write("\n" + user("no, don't use npm here; use pnpm"))
    improve = str(configured.path / ".git" / "improve")
    for _ in range((1 << 30) // mining.MAX_PASS + 1):  # each pass reads a bounded part
        mining.mine(str(transcript), improve, SESSION, "PreCompact")
    res = fire(configured, "PreCompact", payload, memory_mb=400)
    assert res.returncode == 0
    assert watermark(configured)["offset"] == transcript.stat().st_size
    assert watermark(configured)["skipping"] is False


def test_a_lone_surrogate_keeps_the_signal_and_leaves_no_temp_file(configured: TmpRepo) -> None:
    raw = (
        '{"session_id":"' + SESSION + '","cwd":' + json.dumps(str(configured.path)) + ","
        '"hook_event_name":"PostToolUseFailure","tool_name":"Bash\\udfff",'
        '"tool_input":{"command":"make \\ud800check"},"error":"boom \\ud83d failed"}'
    )
    res = subprocess.run(
        [PY, "-m", "gitimprove", "hook", "PostToolUseFailure"],
        cwd=configured.path,
        input=raw,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0 and res.stderr == ""
    names = spool(configured)
    assert len(names) == 1 and not names[0].startswith(".")
    (content,) = spooled_contents(configured)
    assert "boom \ufffd failed" in content
    listed = configured.cli("signal", "list", "--json")
    assert listed.returncode == 0 and "boom \ufffd failed" in listed.stdout
    assert not spool(configured)  # flushed onto the memory branch


PAYLOADS = [
    {"session_id": {"a": 1}, "tool_name": ["x"], "error": 7, "tool_input": "nope"},
    {"session_id": SESSION, "transcript_path": ["a"], "last_assistant_message": {"x": 1}},
    {"session_id": SESSION, "cwd": "bad\u0000dir", "error": "x"},
    {"session_id": SESSION, "tool_response": json.loads("[" * 60 + "]" * 60)},
    {"session_id": SESSION, "transcript_path": "/nonexistent/t.jsonl", "source": 5},
]


@pytest.mark.slow
def test_payloads_of_the_wrong_shape_exit_0_and_write_nothing_partial(
    configured: TmpRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = [
        configured.path / ".git" / "improve" / "hooks.log",
        Path(os.environ["HOME"]) / ".local" / "state" / "gitimprove" / "hooks.log",
    ]
    for i, payload in enumerate(PAYLOADS):
        for event in ("PostToolUseFailure", "Stop", "PreCompact", "SessionStart"):
            full = {"cwd": str(configured.path), **payload, "hook_event_name": event}
            raw = json.dumps(full).encode()
            code, _, err = main_in_process(
                configured.path, ["hook", event], capsys, monkeypatch, raw
            )
            assert code == 0 and "Traceback" not in err
            for log in logs:
                assert not log.exists() or "internal error" not in log.read_text(), event
            assert not [n for n in spool(configured) if n.startswith(".")]
        res = fire(configured, "PostToolUseFailure", {"cwd": str(configured.path), **payload})
        assert res.returncode == 0 and res.stderr == "", i
    assert configured.cli("signal", "list").returncode == 0
