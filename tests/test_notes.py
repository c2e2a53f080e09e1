from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gitimprove.git import notes
from gitimprove.state import experiments
from gitimprove.state.records import fold, make_line, parse_note
from tests.conftest import TmpRepo, fast_commits

WRITER = """
import sys
from gitimprove.git.repo import open_repo
from gitimprove.state import experiments
repo = open_repo(sys.argv[1])
for commit in sys.argv[2:]:
    experiments.record(repo, commit, {"status": "pending", "description": commit})
"""


def test_note_lines_round_trip_and_show_in_git_log(tmp_repo: TmpRepo) -> None:
    c = tmp_repo.commit("experiment(x): one", {"a": "1"})
    repo = tmp_repo.open()
    experiments.record(repo, c, {"status": "pending", "description": "one"})
    experiments.record(repo, c, {"status": "keep", "reason": "better"}, op="update")
    exp = experiments.get(repo, c)
    assert exp is not None
    assert exp.status == "keep"
    assert exp.state["description"] == "one"
    # 2/38 fanout
    assert _note_paths(tmp_repo) == [f"{c[:2]}/{c[2:]}"]
    shown = tmp_repo.git("log", "-1", "--notes=improve", "--format=%N", c)
    lines = [json.loads(ln) for ln in shown.splitlines() if ln]
    assert [ln["op"] for ln in lines] == ["create", "update"]
    assert all(ln["v"] == 1 and ln["host"] == "testhost" for ln in lines)


def _note_paths(repo: TmpRepo) -> list[str]:
    """The notes tree's paths but the digests stored beside the notes (state/noteindex.py)."""
    listing = repo.git("ls-tree", "-r", "--name-only", "refs/notes/improve").splitlines()
    return [p for p in listing if not p.startswith("gitimprove-digests/")]


def test_git_notes_append_is_read_and_our_append_survives_git_fanout(tmp_repo: TmpRepo) -> None:
    c = tmp_repo.commit("experiment(x): one", {"a": "1"})
    repo = tmp_repo.open()
    experiments.record(repo, c, {"status": "pending"})
    line = make_line("update", {"status": "discard", "reason": "by hand"})
    tmp_repo.git("notes", "--ref=improve", "append", "-m", line, c)
    exp = experiments.get(repo, c)
    assert exp is not None and exp.status == "discard"
    # git rewrote the notes tree with its own fanout; we still find and extend the note
    experiments.record(repo, c, {"description": "later"}, op="update")
    exp = experiments.get(repo, c)
    assert exp is not None
    assert exp.status == "discard" and exp.state["description"] == "later"
    assert len(parse_note(notes.read_note(repo, c).decode()).lines) == 3
    assert len(_note_paths(tmp_repo)) == 1


def test_cat_sort_uniq_merge_of_diverged_notes_keeps_every_record(tmp_repo: TmpRepo) -> None:
    a = tmp_repo.commit("experiment(x): a", {"a": "1"})
    b = tmp_repo.commit("experiment(x): b", {"a": "2"})
    repo = tmp_repo.open()
    experiments.record(repo, a, {"status": "pending", "description": "a"})
    tmp_repo.git("update-ref", "refs/notes/other", "refs/notes/improve")
    experiments.record(repo, a, {"status": "keep"}, op="update")
    experiments.record(repo, b, {"status": "discard", "description": "b"})
    # the other side diverges with git's own writer
    other = make_line("update", {"reason": "from the other clone"})
    tmp_repo.git("notes", "--ref=other", "append", "-m", other, a)
    tmp_repo.git("notes", "--ref=improve", "merge", "-s", "cat_sort_uniq", "refs/notes/other")
    exp_a = experiments.get(repo, a)
    exp_b = experiments.get(repo, b)
    assert exp_a is not None and exp_b is not None
    assert exp_a.status == "keep" and exp_a.state["reason"] == "from the other clone"
    assert exp_b.status == "discard"
    assert not exp_a.raw and not exp_b.raw


def test_fold_order_and_tolerance() -> None:
    text = "\n".join(
        [
            '{"v":1,"op":"update","ts":"2026-01-02T00:00:02Z","host":"h","seq":1,"status":"keep","extra":{"x":1}}',
            "",
            '{"v":1,"op":"create","ts":"2026-01-02T00:00:01Z","host":"h","seq":1,"status":"pending","description":"d"}',
            "this is not json",
            '{"v":9,"op":"update","ts":"2026-01-02T00:00:03Z","host":"h","seq":1,"status":"future"}',
            "[1, 2]",
        ]
    )
    parsed = parse_note(text)
    state = fold(parsed.lines)
    assert state["status"] == "keep"
    assert state["description"] == "d"
    assert state["extra"] == {"x": 1}  # unknown fields are kept
    assert state["ts"] == "2026-01-02T00:00:01Z"
    assert parsed.raw == ["this is not json", parsed.raw[1], "[1, 2]"]
    assert '"v":9' in parsed.raw[1]


def test_a_line_without_a_stamp_moves_neither_end() -> None:
    lines = [
        {"v": 1, "op": "create", "ts": "2026-01-02T00:00:01Z", "status": "pending"},
        {"v": 1, "op": "update", "ts": "2026-01-02T00:00:05Z", "status": "keep"},
        {"v": 1, "op": "update", "status": "discard", "description": "by hand"},
        {"v": 1, "op": "update", "ts": 7, "note": "a number for a stamp"},
    ]
    state = fold(lines)
    assert (state["ts"], state["updated"]) == ("2026-01-02T00:00:01Z", "2026-01-02T00:00:05Z")
    assert state["status"] == "keep"  # a stampless line sorts first: stamped lines win
    assert state["description"] == "by hand" and state["note"] == "a number for a stamp"


@pytest.mark.slow
def test_eight_concurrent_writers_keep_all_400_notes(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("root")
    commits = fast_commits(tmp_repo, 400, "many")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_repo.path), *commits[i * 50 : (i + 1) * 50]]
        )
        for i in range(8)
    ]
    assert [p.wait(timeout=300) for p in procs] == [0] * 8
    repo = tmp_repo.open()
    found = dict(notes.iter_notes(repo))
    assert len(found) == 400
    assert set(found) == set(commits)
    for commit, data in found.items():
        state = fold(parse_note(data.decode()).lines)
        assert state["description"] == commit
    tmp_repo.git("fsck", "--no-progress")
