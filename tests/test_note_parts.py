"""A cold `log` parses the notes in parts, on every core (`state/noteread.py`): the same
bytes as the typed path, each part kept as a shard of the note cache, and a child that fails
or answers wrongly costs a parse of its part in the parent, never a wrong or missing row and
never a process left behind."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from gitimprove.errors import GitImproveError
from gitimprove.git import notes
from gitimprove.state import logview, notecache, noteread, records, tsvrows
from gitimprove.util import gitdir
from tests.conftest import TmpRepo, copy_scenario, fast_commits, without_digests
from tests.test_log_cold import _line, _requests, typed_log
from tests.test_note_cache import _loc


@pytest.fixture
def parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small notes counts are parsed in three parts (as ten thousand are on three cores)."""
    monkeypatch.setattr(noteread, "_PER_PROCESS", 10)
    monkeypatch.setattr(noteread, "_cores", lambda: 3)


def _cache(loc: gitdir.Location) -> Path:
    return Path(loc.improve_dir) / "cache"


def _no_child_left() -> None:
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


@pytest.mark.slow
def test_notes_parsed_in_parts_print_what_the_typed_path_prints(
    log_corpus: Path, tmp_path: Path, parts: None
) -> None:
    loc = _loc(without_digests(copy_scenario(log_corpus, tmp_path / "c")))
    n_notes = len(list(notecache_paths(loc)))
    assert noteread.processes(n_notes) == 3
    for req in _requests(loc):
        for f in _cache(loc).glob("*"):
            f.unlink()
        try:
            got: object = logview.produce(loc, req)
        except GitImproveError as exc:  # compared with the oracle's refusal
            got = str(exc)
        assert got == typed_log(loc, req), (req.fmt, req.run)
        # each part kept its shard; together they hold every note with content (the TSV
        # formats read digests, the others rows)
        name = tsvrows.NAME if req.fmt.startswith("tsv") else notecache.NAME
        shards = sorted(f.name for f in _cache(loc).glob(f"{name}*"))
        assert shards == [name, f"{name}.1", f"{name}.2"], req.fmt
        assert len(notecache.load(loc, name)) == n_notes
    _no_child_left()


def notecache_paths(loc: gitdir.Location) -> list[str]:
    from gitimprove.git import catfile, refs

    tip = gitdir.read_ref(loc, refs.NOTES)
    assert tip
    tree = catfile.tree_blobs(loc, tip)
    assert tree is not None
    return [p for p, _ in tree if len(p.replace("/", "")) == 40]


@pytest.mark.slow
def test_the_sharded_cache_serves_the_next_log_and_a_smaller_split_drops_old_shards(
    log_corpus: Path, tmp_path: Path, parts: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = without_digests(copy_scenario(log_corpus, tmp_path / "c"))
    loc = _loc(root)
    req = logview.Request("tsv", run="r1")
    for f in _cache(loc).glob("*"):
        f.unlink()
    logview.produce(loc, req)
    assert (_cache(loc) / f"{tsvrows.NAME}.2").exists()
    # one more experiment: the shards serve every other note
    repo = TmpRepo(root)
    (commit,) = fast_commits(repo, 1, "late")
    line = records.make_line("create", _line(random.Random(3), 999, "r1"))
    notes.append_lines(repo.open(), {commit: [line]})
    without_digests(root)  # (the append stored every folder's digests)
    for f in _cache(loc).glob("view-*"):
        f.unlink()
    assert logview.produce(loc, req) == typed_log(loc, req)
    # a cold log on one core leaves one whole cache file, no stale shard beside it
    monkeypatch.setattr(noteread, "_cores", lambda: 1)
    for f in _cache(loc).glob("*"):
        f.unlink()
    notecache.store(loc, {}, 2, 3)  # a shard a larger split left
    notecache.store(loc, {}, 2, 3, tsvrows.NAME)
    logview.produce(loc, logview.Request("jsonl"))
    logview.produce(loc, req)
    assert sorted(f.name for f in _cache(loc).glob("note-*")) == [tsvrows.NAME, notecache.NAME]
    assert logview.produce(loc, req) == typed_log(loc, req)


def _serial(part: noteread.Part, k: int, n: int) -> noteread.Parsed:
    return {path: (blob, {"path": path, "k": None}, []) for path, blob in part}


NOTES = [(f"{i:02x}/{i:038x}", f"{i:040x}") for i in range(95)]


@pytest.mark.parametrize("failure", ["exits", "raises", "wrong-blob", "not-a-dict", "killed"])
def test_a_child_that_fails_costs_a_parse_of_its_part_here(parts: None, failure: str) -> None:
    parent = os.getpid()
    parsed_here: list[int] = []

    def parse(part: noteread.Part, k: int, n: int) -> noteread.Parsed:
        if os.getpid() == parent:
            parsed_here.append(k)
            return _serial(part, k, n)
        if failure == "exits":
            os._exit(4)
        if failure == "raises":
            raise RuntimeError("boom")
        if failure == "killed":
            os.kill(os.getpid(), 9)
        if failure == "not-a-dict":
            return [1, 2]  # type: ignore[return-value]
        return {path: ("f" * 40, {}, []) for path, _ in part}

    got = noteread.parse_all(NOTES, parse, notecache.usable)
    merged = {k: v for part in got for k, v in part.items()}
    assert merged == _serial(NOTES, 0, 1)
    assert sorted(parsed_here) == [0, 1, 2]  # the parent parsed the failed parts itself
    _no_child_left()


def test_a_child_answer_is_taken_as_it_is_when_it_fits(parts: None) -> None:
    parent = os.getpid()

    def parse(part: noteread.Part, k: int, n: int) -> noteread.Parsed:
        out = _serial(part, k, n)
        for entry in out.values():
            entry[1]["k"] = k if os.getpid() != parent else "here"
        return out

    got = noteread.parse_all(NOTES, parse, notecache.usable)
    assert [{e[1]["k"] for e in part.values()} for part in got] == [{"here"}, {1}, {2}]
    assert [p for part in got for p in part] == [p for p, _ in NOTES]  # the tree's order
    _no_child_left()


def test_an_interrupt_in_the_parent_leaves_no_child(parts: None) -> None:
    parent = os.getpid()

    def parse(part: noteread.Part, k: int, n: int) -> noteread.Parsed:
        if os.getpid() == parent:
            raise KeyboardInterrupt
        import time

        time.sleep(30)
        return _serial(part, k, n)

    with pytest.raises(KeyboardInterrupt):
        noteread.parse_all(NOTES, parse, notecache.usable)
    _no_child_left()


def test_few_notes_or_one_core_are_parsed_here() -> None:
    assert noteread.processes(999) == 1
    assert noteread.processes(0) == 1


def test_a_process_with_other_threads_parses_alone(parts: None) -> None:
    import threading

    assert noteread.processes(95) == 3
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert noteread.processes(95) == 1
        got = noteread.parse_all(NOTES, _serial, notecache.usable)
        assert len(got) == 1 and list(got[0]) == [p for p, _ in NOTES]
    finally:
        stop.set()
        other.join()
    _no_child_left()


@pytest.mark.slow
def test_a_cold_log_of_thousands_of_notes_through_the_cli_is_the_typed_path(
    tmp_path: Path,
) -> None:
    """Enough notes for the real split (two thousand and more on a machine of two cores)."""
    repo = TmpRepo(tmp_path / "big")
    repo.path.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo.path, check=True)
    commits = fast_commits(repo, 2500, "exp")
    rng = random.Random(11)
    notes.append_lines(
        repo.open(),
        {
            c: [records.make_line("create", _line(rng, i, ["r1", "r2"][i % 2]))]
            for i, c in enumerate(commits)
        },
    )
    subprocess.run(["git", "gc", "-q"], cwd=repo.path, check=True)
    loc = _loc(repo.path)
    for args, req in [
        (["--format", "tsv", "--run", "r1"], logview.Request("tsv", run="r1")),
        (["--format", "jsonl"], logview.Request("jsonl")),
    ]:
        for f in _cache(loc).glob("*"):
            f.unlink()
        res = repo.cli("log", *args)
        assert res.returncode == 0, res.stderr
        want = typed_log(loc, req)
        assert isinstance(want, tuple)
        assert (res.stdout.encode(), res.stderr.encode()) == want
