"""Hostile records never stop a command or a sync: note lines and memory entries that are
nested thousands deep, megabytes long, or of the wrong type are shown raw, counted by
`doctor`, quarantined on request, skipped everywhere else, and never rewritten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitimprove.git import memory
from tests.conftest import TmpRepo, build_once, copy_scenario, git
from tests.loop_helpers import make_project

DEEP = "[" * 3000 + "]" * 3000


def note_line(ts: str, body: str) -> str:
    return '{"v":1,"op":"update","ts":"' + ts + '"' + body + "}"


HOSTILE_LINES = [
    note_line("2031-01-01T00:00:00Z", ',"x":' + DEEP),
    note_line("2031-01-01T00:00:01Z", ',"iteration":"x"'),
    note_line("2031-01-01T00:00:02Z", ',"metric":[1,2]'),
    note_line("2031-01-01T00:00:03Z", ',"metric":{"value":"fast"}'),
    note_line("2031-01-01T00:00:04Z", ',"metric":{"value":1e999}'),
    note_line("2031-01-01T00:00:05Z", ',"metric":{"samples":[1,"x"]}'),
    note_line("2031-01-01T00:00:06Z", ',"agent":{"cost_usd":"a lot"}'),
    note_line("2031-01-01T00:00:07Z", ',"status":NaN'),
    note_line("2031-01-01T00:00:08Z", ',"escalation":' + "9" * 400),
    note_line("2031-01-01T00:00:09Z", ',"description":"\\udc80"'),
    note_line("2031-01-01T00:00:10Z", ',"options":{"candidates":"many"}'),
    note_line("2031-01-01T00:00:11Z", ',"decision":{"window_used":[3]}'),
    note_line("2031-01-01T00:00:12Z", ',"commit":7,"raw":{"a":1}'),
    note_line("2031-01-01T00:00:13Z", ',"iteration":true'),
    '{"v":"1"}',
    "[1, 2, 3]",
    "null",
    '{"v":1,"op":"update","ts":"2031-01-01T00:00:14Z","description":"' + "a" * 1_200_000 + '"}',
]


def _run(root: Path) -> None:
    bare = root / "remote.git"
    git(root, "init", "-q", "--bare", str(bare))
    repo = TmpRepo(root / "a")
    git(root, "clone", "-q", str(bare), str(repo.path))
    make_project(repo, {"1": "set:90", "2": "set:95"}, guard=False)
    repo.git("push", "-q", "origin", "HEAD:main")
    res = repo.cli("run", "--run", "h", "-n", "2")
    assert res.returncode == 0, res.stderr


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_once(tmp_path_factory, "two-rounds", _run)


@pytest.fixture
def ran(pristine: Path, tmp_path: Path) -> tuple[TmpRepo, Path]:
    """A clone with a finished two-round run, and the bare remote it pushes to."""
    root = copy_scenario(pristine, tmp_path / "s")
    repo, bare = TmpRepo(root / "a"), root / "remote.git"
    repo.git("remote", "set-url", "origin", str(bare))
    return repo, bare


def clean(res) -> None:  # type: ignore[no-untyped-def]
    out = res.stdout + res.stderr
    assert res.returncode in (0, 1), out[-2000:]
    assert "Traceback" not in out and "internal error" not in out, out[-2000:]


def jsonl(repo: TmpRepo, *args: str) -> list[dict[str, object]]:
    return [
        json.loads(ln) for ln in repo.cli("log", "--format", "jsonl", *args).stdout.splitlines()
    ]


@pytest.mark.slow
def test_hostile_note_lines_are_shown_raw_and_stop_nothing(
    ran: tuple[TmpRepo, Path], tmp_path: Path
) -> None:
    repo, bare = ran
    before = repo.cli("log", "--format", "tsv").stdout
    rows = jsonl(repo, "--run", "h")
    targets = [str(r["commit"]) for r in rows]
    for i, line in enumerate(HOSTILE_LINES):
        file = tmp_path / f"line{i}"
        file.write_text(line)
        repo.git("notes", "--ref=improve", "append", "-F", str(file), targets[i % len(targets)])
    notes_tip = repo.git("rev-parse", "refs/notes/improve")

    log = repo.cli("log", "--format", "tsv")
    clean(log)
    assert log.stdout == before  # every readable line folds as before
    assert log.stderr.count("unreadable line in the note") == len(HOSTILE_LINES)
    for why in (
        "nested deeper than 32",
        'iteration is "x"',
        "too large for a float",
        "not valid Unicode",
    ):
        assert why in log.stderr
    assert "1200" in log.stderr and "a" * 1000 not in log.stderr  # a long line is cut
    for args in (
        ("log",),
        ("log", "--format", "jsonl"),
        ("log", "--format", "karpathy"),
        ("log", "--round", "1"),
        ("status",),
        ("show", targets[0]),
        ("show", "--json", targets[1]),
        ("doctor",),
        ("doctor", "--repair"),
    ):
        clean(repo.cli(*args))
    assert "see `git improve doctor`): nested deeper than 32" in repo.cli("show", targets[0]).stdout
    doctor = repo.cli("doctor")
    assert doctor.returncode == 1 and "unreadable line(s)" in doctor.stdout
    assert repo.git("rev-parse", "refs/notes/improve") == notes_tip  # nothing rewritten

    # the run continues over them; sync carries them and stops at nothing
    resumed = repo.cli("run", "--resume", "--run", "h", "-n", "1")
    clean(resumed)
    assert resumed.returncode == 0
    assert [r["iteration"] for r in jsonl(repo, "--run", "h")] == [0, 1, 2, 3]
    clean(repo.cli("sync"))
    other = TmpRepo(tmp_path / "b")
    git(tmp_path, "clone", "-q", str(bare), str(other.path))
    clean(other.cli("sync"))
    for args in (("log", "--format", "tsv"), ("status",), ("doctor",)):
        mine, theirs = repo.cli(*args), other.cli(*args)
        clean(theirs)
        if args[0] != "doctor":
            assert theirs.stdout == mine.stdout


HOSTILE_ENTRIES = {
    "sessions/2026/01/20260101T000000Z-aaaaaaaa-0001.json": json.dumps({"v": 1, "ended": 7}),
    "sessions/2026/01/20260101T000000Z-aaaaaaaa-0002.json": '{"v":1,"commits":' + DEEP + "}",
    "sessions/2026/01/20260101T000000Z-aaaaaaaa-0003.json": json.dumps(
        {"v": 1, "files_most_modified": "x.py"}
    ),
    "signals/2026/01/a.json": '{"v":1,"id":"SIG-a","content":' + DEEP + "}",
    "signals/2026/01/b.json": json.dumps({"v": 1, "id": "SIG-b", "tags": "one"}),
    "signals/2026/01/c.json": json.dumps({"v": 1, "id": ["SIG-c"]}),
    "signals/2026/01/d.json": json.dumps({"v": 1, "content": "no id"}),
    "signals/2026/01/e.json": json.dumps({"v": 1, "id": "SIG-e", "confidence": 1e300}),
    "signals/2026/01/f.json": '{"v":1,"id":"SIG-f","content":"' + "x" * 1_100_000 + '"}',
    "ideas/2026/01/a.json": json.dumps({"v": 1, "text": {"a": 1}}),
    "ideas/2026/01/b.json": "not json at all",
    "events/2026/01/a.json": json.dumps({"v": 1, "targets": "SIG-b", "status": "promoted"}),
    "events/2026/01/b.json": json.dumps({"v": 2, "targets": []}),
    "imports/0123456789abcdef.jsonl": '{"v":1,"commit":"abc1234","iteration":"x"}\n'
    + '{"v":1,"commit":"abc1234","metric":'
    + DEEP
    + "}\n",
}
GOOD_ENTRIES = {
    "signals/2026/01/good.json": json.dumps(
        {"v": 1, "id": "SIG-good", "type": "gotcha", "status": "captured", "content": "run make"}
    ),
    "ideas/2026/01/good.json": json.dumps({"v": 1, "id": "i1", "text": "try a cache"}),
    # stamps from other tools: no zone, a zone at the edge of time, not a time at all
    **{
        f"signals/2026/01/ts{n}.json": json.dumps(
            {"v": 1, "id": f"SIG-ts{n}", "type": "failure", "status": "captured", "ts": ts}
            | {"content": f"odd stamp {n}"}
        )
        for n, ts in enumerate(
            (
                "2026-11-22T00:00:00",
                "9999-12-31T23:59:59-23:59",
                "0001-01-01T00:00:00+23:59",
                "yesterday",
                "2026-13-45T99:00:00Z",
                "",
            )
        )
    },
}


@pytest.mark.slow
def test_hostile_memory_entries_stop_nothing_and_can_be_quarantined(
    ran: tuple[TmpRepo, Path], tmp_path: Path
) -> None:
    repo, _ = ran
    memory.add_entries(repo.open(), {**HOSTILE_ENTRIES, **GOOD_ENTRIES})
    bad_paths = set(HOSTILE_ENTRIES) - {"imports/0123456789abcdef.jsonl"} | {
        "imports/0123456789abcdef.jsonl:1",
        "imports/0123456789abcdef.jsonl:2",
    }
    for args in (
        ("memory",),
        ("signal", "list", "--all"),
        ("signal", "list", "--json"),
        ("idea", "list"),
        ("reflect", "--list"),
        ("log",),
    ):
        res = repo.cli(*args)
        clean(res)
        assert res.returncode == 0, args
    assert "SIG-good" in repo.cli("signal", "list").stdout
    assert all(f"SIG-ts{n}" in repo.cli("signal", "list", "--all").stdout for n in range(6))
    assert "try a cache" in repo.cli("idea", "list").stdout
    listed = repo.cli("signal", "list", "--all")
    assert "signals/2026/01/b.json (tags is" in listed.stderr
    shown = repo.cli("memory")
    assert "memory entries could not be read; see `git improve doctor`" in shown.stdout
    assert "sessions/2026/01/20260101T000000Z-aaaaaaaa-0001.json (ended is 7" in shown.stderr
    # the loop reads ideas and learnings for its program, over the bad ones
    resumed = repo.cli("run", "--resume", "--run", "h", "-n", "1")
    clean(resumed)
    assert resumed.returncode == 0

    doctor = repo.cli("doctor", "--json")
    clean(doctor)
    found = [json.loads(ln) for ln in doctor.stdout.splitlines()]
    entry_check = next(f for f in found if f["check"] == "memory entries")
    assert not entry_check["ok"] and f"{len(bad_paths)} memory entries" in entry_check["message"]
    tip = repo.git("rev-parse", "refs/heads/improve/memory")
    repaired = repo.cli("doctor", "--repair")
    clean(repaired)
    assert "[fixed] memory entries" in repaired.stdout
    # quarantine adds one events/ entry naming them; nothing is deleted or edited
    added = repo.git("diff", "--name-status", tip, "refs/heads/improve/memory").splitlines()
    assert len(added) == 1 and added[0].startswith("A\tevents/")
    event = json.loads(repo.git("show", f"refs/heads/improve/memory:{added[0].split()[1]}"))
    assert event["status"] == "quarantined" and set(event["targets"]) == bad_paths
    after = repo.cli("doctor")
    assert f"{len(bad_paths)} unreadable ones quarantined" in after.stdout
    assert repo.cli("memory").stderr == "" and repo.cli("signal", "list").stderr == ""


def test_jsonl_lines_hold_no_character_a_reader_takes_for_a_line_end(
    ran: tuple[TmpRepo, Path], tmp_path: Path
) -> None:
    """A description holding U+2028, U+2029 or NEL (valid JSON, raw in `ensure_ascii=False`
    output) stays inside its line: `splitlines` and JavaScript readers see one line a record."""
    repo, _ = ran
    rows = jsonl(repo, "--run", "h")
    text = "before\u2028middle\u2029after\x85end"
    file = tmp_path / "line"
    file.write_text(note_line("2031-01-01T00:00:20Z", ',"description":' + json.dumps(text)))
    repo.git("notes", "--ref=improve", "append", "-F", str(file), str(rows[0]["commit"]))
    out = repo.cli("log", "--format", "jsonl", "--run", "h").stdout
    lines = out.splitlines()
    assert len(lines) == len(rows) == out.count("\n")
    assert text in [json.loads(ln).get("description") for ln in lines]
