"""Every record the writer makes is read back equal, whatever text reaches it.

Records are compact JSON, one a line. Text an agent controls (its output's tail, a
description, a file name in a reason, the paths of a tampered measurement) can hold every
character `str.splitlines` splits at, lone surrogates, NUL, megabytes, or deep nesting: the
line stays one line, within the reader's limits, and a run whose record could not be read
back still never repeats the attempt."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from gitimprove.state import fit, records
from gitimprove.util import reader
from gitimprove.util.lines import raw_lines, record_lines
from tests.conftest import TmpRepo, git
from tests.loop_helpers import run_rows

AGENT = Path(__file__).parent / "agents" / "record_agent.py"
BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
ODD = [*BREAKS, "\x00", "\ud800", "\udfff", "\x01", '"', "\\", "\u202e", "é", "\U0001f600"]


def hostile_text(rng: random.Random, size: int) -> str:
    return "".join(rng.choice([*ODD, "a", "/", " "]) for _ in range(size))


def hostile_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.choice(["str", "big", "num", "list", "dict", "deep"] if depth < 4 else ["str"])
    if kind == "str":
        return hostile_text(rng, rng.choice([0, 1, 5, 300]))
    if kind == "big":
        return hostile_text(rng, 1) * rng.choice([70_000, 400_000])
    if kind == "num":
        return rng.choice([0, -0.0, 1e308, -(10**400), 2**63 + 1, float("nan"), True, 1.5])
    if kind == "list":
        return [hostile_value(rng, depth + 1) for _ in range(rng.choice([1, 3, 80]))]
    if kind == "deep":
        value: Any = "x\u2028"
        for _ in range(rng.choice([20, 40, 3000])):
            value = [value] if rng.random() < 0.5 else {"k": value}
        return value
    return {hostile_text(rng, 3): hostile_value(rng, depth + 1) for _ in range(rng.choice([1, 4]))}


def read_back(line: str) -> list[dict[str, Any]]:
    note = records.parse_note(line + "\n")
    assert note.raw == [], note.shown_raw()
    (own, _imported, raw) = records.split_note((line + "\n").encode("utf-8"))
    assert raw == []
    assert own == note.lines
    return note.lines


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(24))
def test_every_line_the_writer_makes_reads_back_equal(seed: int) -> None:
    rng = random.Random(seed)
    fields: dict[str, Any] = {
        "run": "r",
        "iteration": seed,
        "status": "crash",
        "reason": "sealed: " + hostile_text(rng, 50),
        "agent_tail": hostile_text(rng, 2000),
        "tampered": ["\x01" * 3600 + f"{i:02d}/conftest.py" for i in range(rng.choice([1, 60]))],
    }
    for _ in range(rng.randrange(1, 5)):
        fields[hostile_text(rng, 4)] = hostile_value(rng)
    line = records.make_line("create", fields)
    assert len(line.encode("utf-8")) <= fit.BUDGET < reader.MAX_BYTES
    assert not any(c in line for c in BREAKS), "a raw line break in the line"
    (got,) = read_back(line)
    assert got == json.loads(line)  # nothing the plain decoder reads differently
    assert (got["run"], got["iteration"], got["status"]) == ("r", seed, "crash")
    if "clipped" in got:  # what was left out is counted, by where it was
        assert got["clipped"] and all(n > 0 for n in got["clipped"].values())
    else:  # nothing cut: every field as given, cleaned
        for key in ("reason", "agent_tail"):
            assert got[key] == reader.scrub(fields[key])


def test_a_small_record_keeps_every_character() -> None:
    text = "a" + BREAKS + "\x00\u202e\U0001f600 z"
    line = records.make_line("create", {"run": "r", "description": text, text: [text]})
    (got,) = read_back(line)
    assert got["description"] == text and got[text] == [text] and "clipped" not in got


def test_a_list_cut_to_fit_says_how_many_were_left_out() -> None:
    paths = [("\x01" * 240 + "/") * 15 + f"{i}/conftest.py" for i in range(60)]
    line = records.make_line("create", {"run": "r", "status": "tampered", "tampered": paths})
    (got,) = read_back(line)
    left = got["clipped"]["tampered"]
    assert got["tampered"][-1] == f"… and {left} more"
    assert len(got["tampered"]) - 1 + left == 60


def test_a_field_of_the_wrong_type_does_not_cost_the_record() -> None:
    line = records.make_line("create", {"run": "r", "iteration": 3, "status": "keep", "guard": 7})
    (got,) = read_back(line)
    assert (got["run"], got["iteration"], got["status"]) == ("r", 3, "keep")
    assert "guard" not in got and "guard" in got["unstored"]


def test_notes_an_earlier_writer_stored_raw_are_still_read() -> None:
    old = '{"v":1,"run":"r","status":"crash","agent_tail":"a\u2028b\u2029c\x85d"}'
    (got,) = read_back(old)
    assert got["agent_tail"] == "a\u2028b\u2029c\x85d"
    # lines a hand or a tool separated by such characters are still split there
    text = '{"v":1,"status":"keep"}\r{"v":1,"status":"crash"}\u2028{"v":1,"reason":"x"}'
    assert record_lines(text) == [
        '{"v":1,"status":"keep"}',
        '{"v":1,"status":"crash"}',
        '{"v":1,"reason":"x"}',
    ]
    # a merge keeps every line whole
    assert raw_lines(old + "\n" + old) == [old, old]


# --- through `git improve run` -------------------------------------------------------------

BENCH = """import subprocess, sys
out = subprocess.run([sys.executable, "src/prog.py"], capture_output=True, text=True).stdout.split()
print(f"METRIC score={float(out[-1]) if out else 1e9:g}")
"""


def project(repo: TmpRepo, attack: str, iterations: int = 1) -> None:
    repo.commit(
        "project",
        {
            "bench.py": BENCH,
            "src/prog.py": "print(100)\n",
            "data/w.txt": "7\n",
            ".gitimprove.toml": f"""[metric]
command = "{sys.executable} bench.py"
timeout = "20s"

[scope]
mutable = ["src/**"]
sealed = ["bench.py", "data/**"]

[loop]
iterations = {iterations}
circuit_breaker = 3

[agent]
name = "command"
command = "{sys.executable} {AGENT} {attack}"
timeout = "20s"
sandbox = "none"
""",
        },
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("attack", "status"),
    [
        ("crash-breaks", "crash"),
        ("sealed-name", "sealed"),
        ("link-name", "out-of-scope"),
        ("deep-tamper", "tampered duplicate"),
        ("description", "keep no-op"),
    ],
)
def test_a_hostile_string_in_the_record_does_not_make_the_run_repeat(
    tmp_repo: TmpRepo, attack: str, status: str
) -> None:
    project(tmp_repo, attack, iterations=2)
    res = tmp_repo.cli("run", "--run", "h", "--max-time", "90s")
    assert res.returncode == 0, res.stderr
    assert "iterations reached (2)" in res.stdout + res.stderr
    rows = run_rows(tmp_repo, "h")
    assert [r["iteration"] for r in rows] == [0, 1, 2], "an iteration repeated or was lost"
    want = status.split() if " " in status else [status] * 2
    assert [r["status"] for r in rows[1:]] == want, [r.get("reason") for r in rows]
    notes = git(tmp_repo.path, "notes", "--ref=improve", "list").splitlines()
    assert len(notes) == 3
    for line in notes:
        text = git(tmp_repo.path, "notes", "--ref=improve", "show", line.split()[1])
        assert len(text.strip().split("\n")) == 1 and not any(c in text for c in "\u2028\u2029\x85")
    status_out = tmp_repo.cli("status", "--run", "h")
    assert status_out.returncode == 0 and "2 attempts" in status_out.stdout, status_out.stdout
    log = tmp_repo.cli("log", "--run", "h", "--format", "jsonl")
    assert len(log.stdout.strip().split("\n")) == 3 and "unreadable" not in log.stderr
