"""Local files that hold payload text (the watermark of each mined transcript keeps the
tool calls it has seen, the spool keeps captured signals) hold it masked: a command that
carried a secret leaves none of it under `<git-common-dir>/improve/`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import TmpRepo
from tests.secret_corpus import corpus, windows
from tests.test_mining_hostile import SESSION, fire

FAKES = [f for f in corpus(seed=61) if "\n" not in f.text][:150]


def _line(kind: str, content: list[dict[str, object]]) -> str:
    return json.dumps({"type": kind, "message": {"role": kind, "content": content}}) + "\n"


def test_watermarks_and_spool_hold_commands_masked(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    tmp_repo.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n'})
    transcript = tmp_path / "t.jsonl"
    with open(transcript, "w", encoding="utf-8") as fh:
        fh.write(_line("user", [{"type": "text", "text": "deploy it"}]))
        for n, f in enumerate(FAKES):
            use = {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": f.text}}
            fh.write(_line("assistant", [use]))
            for _ in range(2):  # failing twice in a row: a signal quoting the command
                err = {"type": "tool_result", "tool_use_id": f"t{n}", "is_error": True}
                fh.write(_line("user", [{**err, "content": f"Exit code 1\n{f.text}"}]))
    payload = {"session_id": SESSION, "cwd": str(tmp_repo.path), "transcript_path": str(transcript)}
    res = fire(tmp_repo, "PreCompact", {**payload, "hook_event_name": "PreCompact"})
    assert res.returncode == 0, res.stderr
    improve = tmp_repo.path / ".git" / "improve"
    files = [
        p
        for p in improve.rglob("*")
        if p.is_file() and p.name not in ("hooks.log", "last-error.log")
    ]
    marks = [p for p in files if p.parent.name == "watermarks"]
    assert marks and json.loads(marks[0].read_text())["tool_names"]  # the calls were kept
    dump = "".join(p.read_text(encoding="utf-8", errors="replace") for p in files)
    left = [
        f.family
        for f in FAKES
        if any(w in dump for w in windows(f.secret) if w not in f.text.replace(f.secret, ""))
    ]
    assert not left, left
