"""The note cache: each note's rows kept by its blob id, so a `log` after a new experiment
parses only the notes that changed. It must never change a byte of what `log` prints (the
typed path of `test_log_cold` stays the oracle), whatever the cache file holds, and processes
writing it at once must each leave a complete file."""

from __future__ import annotations

import marshal
import random
import subprocess
from pathlib import Path

import pytest

from gitimprove.errors import GitImproveError
from gitimprove.git import notes
from gitimprove.state import logview, notecache, noteentries, records, tsvrows
from gitimprove.util import gitdir
from tests.conftest import (
    PY,
    TmpRepo,
    build_once,
    copy_scenario,
    fast_commits,
    git,
    without_digests,
)
from tests.test_hostile_records import HOSTILE_LINES
from tests.test_log_cold import _line, _requests, build_corpus, typed_log


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_once(tmp_path_factory, "log-corpus", build_corpus)


def _loc(root: Path) -> gitdir.Location:
    loc = gitdir.discover(str(root))
    assert loc is not None
    return loc


def _drop_views(loc: gitdir.Location) -> None:
    """The rendered outputs and the rows cache go; the note caches (rows and the TSV view's
    digests, and their shards) stay."""
    for f in (Path(loc.improve_dir) / "cache").glob("*"):
        if not f.name.startswith((notecache.NAME, tsvrows.NAME)):
            f.unlink()


def _log_matches_oracle(loc: gitdir.Location, reqs: list[logview.Request]) -> None:
    for req in reqs:
        _drop_views(loc)
        try:
            got: object = logview.produce(loc, req)
        except GitImproveError as exc:  # compared with the oracle's refusal
            got = str(exc)
        assert got == typed_log(loc, req), (req.fmt, req.run, req.round_)


def _note_paths(root: Path) -> list[str]:
    out = git(root, "ls-tree", "-r", "--name-only", "refs/notes/improve")
    return [p for p in out.split() if len(p.replace("/", "")) == 40]


@pytest.mark.slow
def test_after_notes_change_log_prints_what_the_typed_path_prints(
    corpus: Path, tmp_path: Path
) -> None:
    root = without_digests(copy_scenario(corpus, tmp_path / "c"))
    repo = TmpRepo(root)
    loc = _loc(root)
    reqs = _requests(loc)
    _log_matches_oracle(loc, reqs)  # a cold log leaves the note caches (rows; TSV digests)
    assert set(notecache.load(loc)) == set(_note_paths(root))
    assert set(notecache.load(loc, tsvrows.NAME)) == set(_note_paths(root))
    rng = random.Random(7)
    noted = [p.replace("/", "") for p in _note_paths(root)]
    fresh = fast_commits(repo, 4, "more")
    steps = [
        # a new experiment (the bench's case), then one of a new run
        lambda: {fresh[0]: [records.make_line("create", _line(rng, 500, "r1"))]},
        lambda: {fresh[1]: [records.make_line("create", _line(rng, 501, "r9"))]},
        # an update on an existing note, and a hostile line appended to another
        lambda: {noted[3]: [records.make_line("update", {"status": "keep", "reason": "x"})]},
        lambda: {noted[5]: [HOSTILE_LINES[0]], fresh[2]: [HOSTILE_LINES[-1]]},
    ]
    some = [logview.Request("jsonl"), logview.Request("tsv", run="r1"), logview.Request("table")]
    for step in steps:
        notes.append_lines(repo.open(), step())
        _log_matches_oracle(loc, some)
    # a note replaced by hand, and one removed
    (root / "n").write_text('{"v":1,"run":"r1","status":"keep","iteration":77}\n')
    git(root, "notes", "--ref=improve", "add", "-f", "-F", str(root / "n"), noted[7])
    git(root, "notes", "--ref=improve", "remove", noted[8])
    _log_matches_oracle(loc, reqs)
    # a few changed notes are parsed again by each log; after many, the cache is written
    # again, holding every note of the tip and nothing else
    assert set(notecache.load(loc)) != set(_note_paths(root))
    line = records.make_line("create", {"run": "r1", "status": "keep"})
    many = fast_commits(repo, noteentries._REWRITE + 1, "many")
    notes.append_lines(repo.open(), {c: [line] for c in many})
    _log_matches_oracle(loc, some)
    assert set(notecache.load(loc)) == set(_note_paths(root))


@pytest.mark.slow
def test_an_unchanged_note_is_not_parsed_again(corpus: Path, tmp_path: Path) -> None:
    """The cache is really used: an entry kept under the note's blob id is taken as it is
    (so it must be right), and one under another id is not taken at all."""
    root = without_digests(copy_scenario(corpus, tmp_path / "c"))
    loc = _loc(root)
    req = logview.Request("jsonl")
    _drop_views(loc)
    before = logview.produce(loc, req)[0]
    entries = notecache.load(loc)
    path, (blob, own, imported) = next((p, e) for p, e in entries.items() if e[1] is not None)
    assert own is not None
    marked = {**own, "description": "from the cache"}
    entries[path] = (blob, marked, imported)
    notecache.store(loc, entries)
    _drop_views(loc)
    assert b"from the cache" in logview.produce(loc, req)[0]
    entries[path] = ("0" * 40, marked, imported)  # another blob: the note is read again
    notecache.store(loc, entries)
    _drop_views(loc)
    assert logview.produce(loc, req)[0] == before


@pytest.mark.slow
@pytest.mark.parametrize(
    "damage",
    ["empty", "truncated", "garbage", "other-header", "not-a-dict", "bad-entries"],
)
def test_a_damaged_note_cache_costs_a_reparse_never_a_wrong_row(
    corpus: Path, tmp_path: Path, damage: str
) -> None:
    root = without_digests(copy_scenario(corpus, tmp_path / "c"))
    repo = TmpRepo(root)
    loc = _loc(root)
    reqs = [logview.Request("tsv", run="r1"), logview.Request("jsonl")]
    _log_matches_oracle(loc, reqs[1:])  # jsonl reads rows (and keeps them); the TSV, digests
    cache = Path(notecache.path(loc))
    data = cache.read_bytes()
    header = data[: data.index(b"\n") + 1]
    entries = notecache.load(loc)
    bad: dict[str, object] = {}
    for i, (p, e) in enumerate(entries.items()):
        bad[p] = [
            e,
            "text",
            (e[0],),
            (e[0], "own", e[2]),
            (e[0], e[1], ["row"]),
            (e[0], e[1], "rows"),
            (e[0].upper(), e[1], e[2]),
        ][i % 7]
    cache.write_bytes(
        {
            "empty": b"",
            "truncated": data[: len(data) // 2],
            "garbage": header + bytes(random.Random(1).randrange(256) for _ in range(5000)),
            "other-header": b"gitimprove-note-rows 0\n" + data[len(header) :],
            "not-a-dict": header + marshal.dumps([1, 2, 3]),
            "bad-entries": header + marshal.dumps(bad),
        }[damage]
    )
    _log_matches_oracle(loc, reqs)
    cache.write_bytes(data[: len(data) // 3])
    _drop_views(loc)
    res = repo.cli("log", "--format", "jsonl")  # through the CLI: no crash, the same bytes
    assert res.returncode == 0, res.stderr
    want = typed_log(loc, logview.Request("jsonl"))
    assert isinstance(want, tuple)
    assert res.stdout.encode() == want[0]


@pytest.mark.slow
def test_processes_writing_the_note_cache_at_once_each_leave_a_whole_file(
    corpus: Path, tmp_path: Path
) -> None:
    root = without_digests(copy_scenario(corpus, tmp_path / "c"))
    repo = TmpRepo(root)
    loc = _loc(root)
    more = fast_commits(repo, 6, "more")
    cache_dir = Path(loc.improve_dir) / "cache"
    script = (
        "import sys\n"
        "from gitimprove.state import logview\n"
        "from gitimprove.util import gitdir\n"
        "loc = gitdir.discover('.')\n"
        "for _ in range(3):\n"
        "    sys.stdout.buffer.write(logview.produce(loc, logview.Request('jsonl', "
        "no_cache=True))[0])\n"
    )
    for round_, commit in enumerate(more):
        # the note cache is read by some and written by all, while the notes move on
        procs = [
            subprocess.Popen(
                [PY, "-c", script]
                if k % 2
                else [PY, "-m", "gitimprove", "log", "--format", "jsonl"],
                cwd=root,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            for k in range(5)
        ]
        line = records.make_line("create", {"run": "r1", "status": "keep", "iteration": round_})
        notes.append_lines(repo.open(), {commit: [line]})
        for p in procs:
            _, err = p.communicate(timeout=300)
            assert p.returncode == 0, err
        assert not list(cache_dir.glob(".*.tmp"))
        entries = notecache.load(loc)
        assert entries  # a whole file, of one tip or the other
        assert all(notecache.usable(e, e[0]) for e in entries.values())
    _log_matches_oracle(loc, [logview.Request("jsonl"), logview.Request("tsv", run="r1")])
