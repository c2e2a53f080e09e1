"""A seeded, bounded fuzz of everything a user or a remote can hand gitimprove: config
values, note lines, memory entries, import rows and hook payloads. Whatever comes in, no
command crashes (exit 3, a traceback, an internal error logged by a hook) and nothing is
written in part (a temp file left, a stored record rewritten, an import half done).

Commands run through `cli.main` in this process (the same boundary `git improve` uses) for
speed, and a sample of each kind through a real subprocess."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gitimprove.config import SCHEMA
from gitimprove.git import memory, notes
from gitimprove.util.seal import unseal
from tests.conftest import PY, TmpRepo, main_in_process

pytestmark = pytest.mark.slow

SEED = 20260213
ROUNDS = 60


class Fuzz:
    """Hostile values, text and JSON, from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def pick(self, options: list[Callable[[], Any]]) -> Any:
        return self.r.choice(options)()

    def text(self) -> str:
        return self.pick(
            [
                lambda: "",
                lambda: "x" * self.r.choice([1, 100, 70_000, 1_200_000]),
                lambda: "\ud800" + "ok",
                lambda: "a\0b",
                lambda: "".join(chr(self.r.randrange(1, 0x2FFFF)) for _ in range(40)),
                lambda: "١٢٣",
                lambda: "500%",
                lambda: "10m",
                lambda: "regex:" + "(" * self.r.randrange(1, 400),
                lambda: "\x1b[31mred\x07",
            ]
        )

    def number(self) -> Any:
        return self.pick(
            [
                lambda: 0,
                lambda: -1,
                lambda: 10 ** self.r.randrange(15, 400),
                lambda: -(10 ** self.r.randrange(15, 400)),
                lambda: float("nan"),
                lambda: float("inf"),
                lambda: -float("inf"),
                lambda: 1e-320,
                lambda: self.r.uniform(-1e308, 1e308),
                lambda: True,
            ]
        )

    def value(self, depth: int = 0) -> Any:
        if depth > 3:
            return self.number()
        return self.pick(
            [
                self.text,
                self.number,
                lambda: None,
                lambda: [self.value(depth + 1) for _ in range(self.r.randrange(0, 4))],
                lambda: {self.text()[:20]: self.value(depth + 1) for _ in range(3)},
            ]
        )

    def deep(self) -> str:
        n = self.r.choice([33, 200, 999, 3000, 10_000])
        return self.r.choice(["[", '{"a":']) * n

    def json_text(self, base: dict[str, Any] | None = None) -> str:
        """A JSON line: a valid record with hostile fields, or raw hostile text."""
        obj = dict(base or {})
        for _ in range(self.r.randrange(1, 4)):
            key = self.r.choice([*obj, "x", "v", "ts", "iteration", "metric", "id", "ended"])
            obj[key] = self.value()
        text = json.dumps(obj, ensure_ascii=self.r.random() < 0.5, allow_nan=True)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate travels as its JSON escape
            text = json.dumps(obj, allow_nan=True)
        return self.pick(
            [
                lambda: text,
                lambda: text[: self.r.randrange(0, len(text) + 1)],
                lambda: text[:-1] + ',"deep":' + self.deep() + "}",
                lambda: text.replace("1", "9" * self.r.choice([400, 5000]), 1),
                lambda: self.r.choice(["null", "[]", "7", '"s"', "NaN", "{}"]),
            ]
        )


def in_process(
    repo: Path,
    args: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: Any,
    stdin: bytes = b"",
) -> tuple[int, str]:
    code, out, err = main_in_process(repo, args, capsys, monkeypatch, stdin)
    text = out + err
    assert code != 3 and "Traceback" not in text and "internal error" not in text, (
        args,
        text[-1500:],
    )
    assert not (repo / ".git" / "improve" / "last-error.log").exists(), args
    return code, text


def no_temp_files(repo: Path) -> None:
    improve = repo / ".git" / "improve"
    left = [p for p in improve.rglob("*") if p.name.endswith(".tmp")] if improve.exists() else []
    assert left == [], left


def toml_value(f: Fuzz) -> str:
    return f.pick(
        [
            lambda: "nan",
            lambda: "-inf",
            lambda: "1e" + str(f.r.choice([308, 309, 999])),
            lambda: "9" * f.r.choice([19, 400, 5000]),
            lambda: (
                json.dumps(f.text()).replace("\\ud800", "\\u0000").replace("\\u001b", "\\u0000")
            ),
            lambda: "[" * f.r.choice([3, 6, 3000]) + "1" + "]" * 3 + "]" * 0,
            lambda: "[" * 5 + '"a"' + "]" * 5,
            lambda: "{ a = " * 20 + "1" + " }" * 20,
            lambda: (
                '"' + f.r.choice(["500%", "-1%", "1e999%", "0.5s", "99999999999999999999h"]) + '"'
            ),
            lambda: "true",
        ]
    )


def test_fuzz_config_values(
    tmp_repo: TmpRepo, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    f = Fuzz(SEED)
    tmp_repo.commit("initial", {"bench.py": "print(1)\n"})
    keys = [(s, k) for s, table in SCHEMA.items() for k in table] + [("loop", "nope")]
    refused = 0
    for i in range(ROUNDS):
        section, key = f.r.choice(keys)
        body = f'[metric]\ncommand = "{PY} bench.py"\n'
        value = toml_value(f)
        body += f"{key} = {value}\n" if section == "metric" else f"[{section}]\n{key} = {value}\n"
        data = body.encode("utf-8")
        if f.r.random() < 0.1:
            data += b"# \xff\xfe\n"
        (tmp_repo.path / ".gitimprove.toml").write_bytes(data)
        if f.r.random() < 0.3:
            name = f"improve.{section}.{key.replace('_', '-')}"
            tmp_repo.git("config", name, f.r.choice(["nan", "inf", "9" * 30, "500%", "-1", "x"]))
        code, text = in_process(tmp_repo.path, ["doctor"], capsys, monkeypatch)
        assert code in (0, 1)
        code, text = in_process(tmp_repo.path, ["measure", "--runs", "1"], capsys, monkeypatch)
        assert code in (0, 1) and ("error:" in text or code == 0)
        refused += "error:" in text
        tmp_repo.git("config", "--remove-section", "improve." + section, check=False)
        if i % 20 == 0:  # and a sample through a real process
            res = tmp_repo.cli("measure")
            assert res.returncode in (0, 1) and "Traceback" not in res.stderr
    assert refused > ROUNDS // 2  # the fuzz is hostile enough to matter


def test_fuzz_note_lines_and_memory_entries(
    tmp_repo: TmpRepo, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    f = Fuzz(SEED + 1)
    commits = [
        tmp_repo.commit(f"experiment(x): {i}", {"f.txt": str(i)}) for i in range(ROUNDS // 4)
    ]
    tmp_repo.gen({".gitimprove.toml": '[metric]\ncommand = "echo 1"\n'})
    repo = tmp_repo.open()
    good = {"v": 1, "op": "create", "ts": "2026-01-01T00:00:00Z", "status": "keep", "run": "r"}
    batch: dict[str, list[str]] = {}
    for i in range(ROUNDS * 3):
        line = f.json_text(good).replace("\n", " ")
        batch.setdefault(commits[i % len(commits)], []).append(line)
    notes.append_lines(repo, batch)
    kinds = {
        "signals": {"v": 1, "id": "SIG-1", "type": "gotcha", "content": "c"},
        "sessions": {"v": 1, "sid": "s", "ended": "2026-01-01T00:00:00Z"},
        "ideas": {"v": 1, "id": "i", "text": "t"},
        "events": {"v": 1, "targets": ["SIG-1"], "status": "dismissed"},
    }
    entries = {}
    for i in range(ROUNDS * 2):
        kind = f.r.choice([*kinds, "learnings", "proposals", "imports"])
        if kind in kinds:
            entries[f"{kind}/2026/01/{i}.json"] = f.json_text(kinds[kind])
        elif kind == "imports":
            entries[f"imports/{i:016x}.jsonl"] = f.json_text({"v": 1, "commit": "abc"}) + "\n"
        else:
            entries[f"{kind}/2026/01/{i}.md"] = "+++\ncreated = " + f.json_text() + "\n+++\nbody\n"
    memory.add_entries(repo, entries)
    notes_tip = tmp_repo.git("rev-parse", "refs/notes/improve")
    for args in (
        ["log"],
        ["log", "--format", "tsv"],
        ["log", "--format", "jsonl"],
        ["log", "--format", "karpathy"],
        ["log", "--round", "1"],
        ["show", commits[0]],
        ["show", "--json", commits[-1]],
        ["memory"],
        ["signal", "list", "--all"],
        ["idea", "list"],
        ["reflect", "--list"],
        ["doctor"],
        ["doctor", "--repair"],
    ):
        code, _ = in_process(tmp_repo.path, args, capsys, monkeypatch)
        assert code in (0, 1), args
    assert tmp_repo.git("rev-parse", "refs/notes/improve") == notes_tip  # never rewritten
    code, text = in_process(tmp_repo.path, ["doctor"], capsys, monkeypatch)
    assert "quarantined" in text or "every memory entry is readable" in text
    for args in (("log", "--format", "tsv"), ("memory",), ("doctor",)):
        res = tmp_repo.cli(*args)
        assert res.returncode in (0, 1) and "Traceback" not in res.stderr
    no_temp_files(tmp_repo.path)


def test_fuzz_import_rows(
    tmp_repo: TmpRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    f = Fuzz(SEED + 2)
    tmp_repo.commit("a")
    header = "iteration\tcommit\tmetric\tdelta\tguard\tstatus\tdescription\n"

    def cells() -> list[str]:
        return [
            f.r.choice(["1", "²", "٣", "-", "9" * 5000, "x"]),
            f.r.choice(["abc1234", "zz", "", "ABC1234"]),
            f.r.choice(["1.5", "1e999", "nan", "-inf", "١٫٥", "0x10", "1_0"]),
            "0",
            f.r.choice(["pass", "fail", "-", "?"]),
            f.r.choice(["keep", "discard", "crash", "maybe"]),
            f.text()[:200].replace("\t", " ").replace("\n", " "),
        ]

    for i in range(ROUNDS):
        path = tmp_path / f"in{i}.txt"
        if f.r.random() < 0.5:
            rows = [header, "0\tabc1234\t1.5\t0\tpass\tkeep\tbase\n"]
            rows += ["\t".join(cells()) + "\n" for _ in range(3)]
            data = "".join(rows).encode("utf-8", errors="surrogatepass")
        else:
            good = {"run": 1, "commit": "abc1234", "metric": 1.5, "status": "keep"}
            lines = ['{"type":"config","metricName":"ms"}', json.dumps(good)]
            lines += [f.json_text(good).replace("\n", " ") for _ in range(3)]
            data = "\n".join(lines).encode("utf-8", errors="surrogatepass") + b"\n"
        path.write_bytes(data)
        before = tmp_repo.git("for-each-ref")
        code, text = in_process(tmp_repo.path, ["import", str(path)], capsys, monkeypatch)
        if code == 1:
            assert tmp_repo.git("for-each-ref") == before, text  # nothing partial
        if i % 15 == 0:
            res = tmp_repo.cli("import", str(path))
            assert res.returncode in (0, 1) and "Traceback" not in res.stderr
    code, _ = in_process(tmp_repo.path, ["log", "--format", "tsv"], capsys, monkeypatch)
    assert code == 0


def test_fuzz_hook_payloads(
    tmp_repo: TmpRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    f = Fuzz(SEED + 3)
    tmp_repo.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n'})
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        "".join(
            f.json_text({"type": "user", "message": {"content": "x"}}) + "\n" for _ in range(40)
        )
    )
    events = ["PostToolUseFailure", "PreCompact", "Stop", "SessionStart", "TaskCompleted"]
    base = {
        "session_id": "s-1",
        "cwd": str(tmp_repo.path),
        "transcript_path": str(transcript),
        "tool_name": "Bash",
        "error": "boom",
    }
    logs = [
        tmp_repo.path / ".git" / "improve" / "hooks.log",
        Path(os.environ["HOME"]) / ".local" / "state" / "gitimprove" / "hooks.log",
    ]
    for i in range(ROUNDS * 2):
        event = f.r.choice(events)
        raw = f.json_text({**base, "hook_event_name": event}).encode("utf-8", "surrogatepass")
        code, text = in_process(tmp_repo.path, ["hook", event], capsys, monkeypatch, raw)
        assert code == 0
        for log in logs:
            if log.exists():
                assert "internal error" not in log.read_text(errors="replace"), (event, raw[:300])
        spool = tmp_repo.path / ".git" / "improve" / "spool"
        for entry in spool.iterdir() if spool.exists() else []:
            assert not entry.name.startswith("."), entry
            try:
                body = entry.read_bytes()
            except FileNotFoundError:
                continue  # a hook's background flush took it into memory between list and read
            json.loads(unseal(body))  # whole, never partial (its seal line left out)
        if i % 30 == 0:
            res = tmp_repo.cli("hook", event, input=raw.decode("utf-8", "replace"))
            assert res.returncode == 0 and "Traceback" not in res.stderr
    code, text = in_process(tmp_repo.path, ["signal", "list", "--all"], capsys, monkeypatch)
    assert code == 0 and "SIG-" in text  # payloads that made sense still became signals
    no_temp_files(tmp_repo.path)
