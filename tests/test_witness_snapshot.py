"""A snapshot of gitimprove's refs is judged by what the witness file held when it was taken
(git/witness.py `position`): a value gitimprove moved on from after the snapshot is still its
own, a value it had moved on from before is not (a ref put back to an old value)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gitimprove.git import memory, refs, witness
from gitimprove.git.watch import RepoState, put_back
from gitimprove.util.keys import load_key
from tests.conftest import TmpRepo
from tests.test_flocks import held_elsewhere


def _remember(repo_path: object, n: int, start: int = 0) -> None:
    from gitimprove.git.repo import open_repo

    repo = open_repo(repo_path)  # type: ignore[arg-type]
    for i in range(start, start + n):
        memory.add_entries(repo, {f"signals/s{i}.json": f'{{"i": {i}}}'})


def test_a_snapshot_taken_before_a_hooks_flush_moved_on_is_explained(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("c", {"f.txt": "x\n"})
    repo = tmp_repo.open()
    before = RepoState.take(repo)
    _remember(tmp_repo.path, 1)  # the memory branch is made while the agent works
    after = RepoState.take(tmp_repo.open())
    _remember(tmp_repo.path, 3, start=1)  # and moves on before the snapshot is judged
    assert after.own[refs.MEMORY] != tmp_repo.open().ref_target(refs.MEMORY)
    assert before.changes(after) == []
    assert put_back(tmp_repo.open(), before, after) == []
    # without the position, the snapshot's value is one gitimprove superseded
    assert witness.unexplained(repo.improve_dir, before.own, after.own, settle=0) == [refs.MEMORY]


@pytest.mark.slow
def test_a_ref_put_back_to_an_old_value_is_named_even_when_moved_on_after(
    tmp_repo: TmpRepo,
) -> None:
    tmp_repo.commit("c", {"f.txt": "x\n"})
    _remember(tmp_repo.path, 1)
    first = tmp_repo.open().ref_target(refs.MEMORY)
    _remember(tmp_repo.path, 2, start=1)
    before = RepoState.take(tmp_repo.open())
    tmp_repo.git("update-ref", refs.MEMORY, str(first))  # entries 1 and 2 dropped
    after = RepoState.take(tmp_repo.open())
    _remember(tmp_repo.path, 1, start=3)  # a hook adds on top of the old value meanwhile
    started = time.monotonic()
    assert before.changes(after) == [f"{refs.MEMORY} moved to {str(first)[:12]} outside gitimprove"]
    assert time.monotonic() - started < 30


def test_compaction_waits_while_another_run_holds_its_lock(tmp_repo: TmpRepo) -> None:
    """Another run's snapshot is judged by where the witness file ended when it was taken; a
    compaction would replace the file, so a compaction that can wait waits for that run."""
    tmp_repo.commit("c", {"f.txt": "x\n"})
    repo = tmp_repo.open()
    assert load_key(repo.improve_dir) is not None
    _remember(tmp_repo.path, 3)
    path = repo.improve_dir / witness.FILE
    other = repo.lock("run-other").lock_file  # made here, held by another process
    with held_elsewhere(Path(other)):
        ino = path.stat().st_ino
        assert not witness.compact(repo.improve_dir, deferrable=True)
        assert path.stat().st_ino == ino
        with repo.lock("run-mine", timeout=10):  # this process's own run is no other
            assert not witness.compact(repo.improve_dir, deferrable=True)
    assert witness.compact(repo.improve_dir, deferrable=True)
    assert path.stat().st_ino != ino
    assert witness.compact(repo.improve_dir)  # one that cannot wait does not
