from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gitimprove.errors import GitImproveError
from gitimprove.git import archive, memory, refs, sessions
from tests.conftest import TmpRepo

WRITER = """
import sys
from gitimprove.git.repo import open_repo
from gitimprove.git import memory
repo = open_repo(sys.argv[1])
for i in range(50):
    name = memory.entry_name("signals", "json")
    memory.add_entries(repo, {name: '{"n": %d, "w": %s}' % (i, sys.argv[2])})
"""


def test_entries_are_added_without_touching_index_or_work_tree(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("initial", {"a.txt": "a"})
    tmp_repo.gen({"dirty.txt": "uncommitted"})
    tmp_repo.git("add", "dirty.txt")
    status_before = tmp_repo.git("status", "--porcelain")
    repo = tmp_repo.open()
    name = memory.entry_name("signals", "json", now="2026-11-22T05:52:01.123456Z")
    assert name.startswith("signals/2026/11/20261122T055201123456Z-testhost-")
    assert memory.add_entries(repo, {name: '{"x": 1}'}) == 1
    assert memory.add_entries(repo, {name: '{"x": 2}'}) == 0  # never edited in place
    files = tmp_repo.git("ls-tree", "-r", "--name-only", "improve/memory").splitlines()
    assert files == ["FORMAT", name]
    assert json.loads(tmp_repo.git("show", "improve/memory:FORMAT")) == {
        "layout": 1,
        "min_reader": 1,
    }
    assert tmp_repo.git("show", f"improve/memory:{name}") == '{"x": 1}'
    # an orphan branch: its history shares nothing with main
    assert tmp_repo.git("merge-base", "main", "improve/memory", check=False) == ""
    assert tmp_repo.git("status", "--porcelain") == status_before
    assert tmp_repo.git("branch", "--show-current") == "main"
    assert dict(memory.iter_entries(repo, "signals/")) == {name: b'{"x": 1}'}


def test_newer_layout_is_refused(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("initial")
    repo = tmp_repo.open()
    memory.add_entries(repo, {"FORMAT": '{"layout": 2, "min_reader": 2}\n', "ideas/x.json": "{}"})
    with pytest.raises(GitImproveError, match="newer gitimprove"):
        memory.add_entries(repo, {memory.entry_name("ideas", "json"): "{}"})


@pytest.mark.slow
def test_four_concurrent_writers_keep_all_200_entries(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("initial")
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_repo.path), str(w)])
        for w in range(4)
    ]
    assert [p.wait(timeout=300) for p in procs] == [0] * 4
    repo = tmp_repo.open()
    entries = dict(memory.iter_entries(repo, "signals/"))
    assert len(entries) == 200
    seen = {(json.loads(v)["w"], json.loads(v)["n"]) for v in entries.values()}
    assert seen == {(w, n) for w in range(4) for n in range(50)}
    tmp_repo.git("fsck", "--no-progress")


def test_archive_chain_keeps_attempts_reachable(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("initial")
    repo = tmp_repo.open()
    a = tmp_repo.commit("experiment(x): a", {"f": "a"})
    tmp_repo.git("reset", "-q", "--hard", "HEAD~1")
    b = tmp_repo.commit("experiment(x): b", {"f": "b"})
    tmp_repo.git("reset", "-q", "--hard", "HEAD~1")
    archive.append(repo, [a])
    archive.append(repo, [b])
    assert list(archive.archived(repo)) == [b, a]
    tmp_repo.git("reflog", "expire", "--expire=now", "--all")
    tmp_repo.git("gc", "-q", "--prune=now")
    assert tmp_repo.git("cat-file", "-t", a) == "commit"
    assert tmp_repo.git("cat-file", "-t", b) == "commit"
    # the chain is first-parent linear: one ref, not one per loser
    assert tmp_repo.git("for-each-ref", "refs/improve/").count("\n") == 0


@pytest.mark.slow
def test_session_refs_are_create_only(tmp_repo: TmpRepo) -> None:
    first = tmp_repo.commit("one")
    second = tmp_repo.commit("two")
    repo = tmp_repo.open()
    sid = sessions.new_session_id()
    assert sessions.mark(repo, sid, "start", first)
    assert not sessions.mark(repo, sid, "start", second)
    assert repo.ref_target(refs.session_ref(sid, "start")) == first
    assert sessions.mark(repo, sid, "end", second)
    assert sessions.list_sessions(repo) == {sid: {"start": first, "end": second}}
    with pytest.raises(ValueError):
        refs.session_ref("not-a-session", "start")


def test_ref_names_parse_back() -> None:
    assert refs.parse(refs.run_branch("r1")).run == "r1"
    marker = refs.parse(refs.run_marker("r1", "stop"))
    assert (marker.kind, marker.run, marker.marker) == ("run-marker", "r1", "stop")
    assert refs.remote_scratch("origin", refs.NOTES) == "refs/improve/remotes/origin/notes/improve"
    with pytest.raises(GitImproveError):
        refs.run_branch("memory")
    with pytest.raises(GitImproveError):
        refs.run_branch("bad name")
