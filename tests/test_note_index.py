"""The TSV view's digests stored with the notes (`state/noteindex.py`): every notes commit
gitimprove writes carries a shard per fanout folder; a `log` with no cache reads them and
prints what the typed path prints; a folder whose shard is stale, missing, damaged or forged
is read from its notes instead, never shown wrong."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from gitimprove.errors import GitImproveError
from gitimprove.git import notes
from gitimprove.state import logview, noteindex, records
from gitimprove.util import gitdir
from tests.conftest import (
    TmpRepo,
    copy_scenario,
    fast_commits,
    git,
    hash_blob,
    mktree,
    set_notes_tree,
    without_digests,
)
from tests.test_log_cold import _line, _requests, typed_log
from tests.test_note_cache import _loc

TSV = ("tsv", "tsv6", "karpathy")


def _stored(loc: gitdir.Location) -> noteindex.Stored | None:
    tip = gitdir.read_ref(loc, "refs/notes/improve")
    assert tip
    return noteindex.load(loc, tip)


def _folders(root: Path) -> list[str]:
    return [
        line.split("\t")[1]
        for line in git(root, "ls-tree", "refs/notes/improve").splitlines()
        if line.split()[1] == "tree" and noteindex.is_folder(line.split("\t")[1])
    ]


def _shards(root: Path) -> dict[str, str]:
    """shard name -> blob id."""
    out = git(root, "ls-tree", f"refs/notes/improve:{noteindex.FOLDER}")
    return {line.split("\t")[1]: line.split()[2] for line in out.splitlines()}


def _matches_oracle(loc: gitdir.Location) -> int:
    """Every TSV request (no cache at all) against the typed path; returns how many."""
    n = 0
    for req in _requests(loc):
        if req.fmt not in TSV:
            continue
        cache = Path(loc.improve_dir) / "cache"
        for f in cache.glob("*") if cache.is_dir() else []:
            f.unlink()
        try:
            got: object = logview.produce(loc, req)
        except GitImproveError as exc:
            got = str(exc)
        assert got == typed_log(loc, req), (req.fmt, req.run)
        n += 1
    return n


def _replace_shard(root: Path, shard: str, data: bytes) -> None:
    """The shard `shard` given other content under the same name, in a new notes commit."""
    blob = hash_blob(root, data)
    index = git(root, "ls-tree", f"refs/notes/improve:{noteindex.FOLDER}")
    lines = [
        f"100644 blob {blob}\t{shard}" if line.endswith("\t" + shard) else line
        for line in index.splitlines()
    ]
    sub = mktree(root, lines)
    top = [
        f"040000 tree {sub}\t{noteindex.FOLDER}" if line.endswith("\t" + noteindex.FOLDER) else line
        for line in git(root, "ls-tree", "refs/notes/improve").splitlines()
    ]
    set_notes_tree(root, top, "a shard replaced")


@pytest.mark.slow
def test_every_folder_has_its_shard_and_a_cold_log_reads_only_them(
    log_corpus: Path, tmp_path: Path
) -> None:
    """The corpus (notes by gitimprove, by `git notes`, hostile lines, imports) ends with a
    gitimprove write: every folder's shard names the folder's tree; the TSV formats come from
    the shards alone and match the typed path byte for byte."""
    root = copy_scenario(log_corpus, tmp_path / "c")
    loc = _loc(root)
    folders = git(root, "ls-tree", "refs/notes/improve").splitlines()
    ver = noteindex.version()
    want = {
        noteindex.name(line.split("\t")[1], line.split()[2], ver)
        for line in folders
        if noteindex.is_folder(line.split("\t")[1])
    }
    assert set(_shards(root)) == want
    stored = _stored(loc)
    assert stored is not None and stored.complete is not None and not stored.missing()
    assert _matches_oracle(loc) >= 6
    assert not list((Path(loc.improve_dir) / "cache").glob("note-digests*"))  # none parsed


@pytest.mark.slow
def test_a_folder_git_notes_wrote_is_read_from_its_notes_until_the_next_write(
    log_corpus: Path, tmp_path: Path
) -> None:
    root = copy_scenario(log_corpus, tmp_path / "c")
    loc = _loc(root)
    repo = TmpRepo(root)
    (late,) = fast_commits(repo, 1, "late")
    line = records.make_line("create", _line(random.Random(5), 998, "r1"))
    git(root, "notes", "--ref=improve", "add", "-m", line, late)  # git's own write
    stored = _stored(loc)
    assert stored is not None and stored.complete is None
    assert stored.missing() == [late[:2]] or late[:2] not in _folders(root)
    assert _matches_oracle(loc) >= 6
    # the next gitimprove write stores the digests of that folder too
    (more,) = fast_commits(repo, 1, "more")
    notes.append_lines(repo.open(), {more: [records.make_line("create", {"run": "r1"})]})
    stored = _stored(loc)
    assert stored is not None and stored.complete is not None
    assert _matches_oracle(loc) >= 6


@pytest.mark.slow
@pytest.mark.parametrize(
    "content",
    [
        b"not json at all\n",
        b"[1,2]\n",
        b'[["r1",1,null,null,[],[0,1,0,"x"],"x",null,null],[]]\n[1\n',
        b"[" * 5000 + b"\n",
        b'[["forged",1,"lower","ms",[],[0,1,0,"t"],"t",null,'
        b'[["1","t","abc","1.0"],null,["pass","-","keep","forged"],null,1.0,true,"x"]],[]]\n',
    ],
    ids=["garbage", "not-entries", "cut-short", "deep", "wrong-header"],
)
def test_a_damaged_shard_costs_a_parse_never_a_wrong_row(
    log_corpus: Path, tmp_path: Path, content: bytes
) -> None:
    root = copy_scenario(log_corpus, tmp_path / "c")
    loc = _loc(root)
    shard = sorted(_shards(root))[3]
    header = b"" if content.startswith(b'[["forged') else shard.encode() + b"\n"
    _replace_shard(root, shard, header + content)
    assert _matches_oracle(loc) >= 6


@pytest.mark.slow
def test_a_tree_with_notes_outside_the_fanout_is_read_from_its_notes(
    log_corpus: Path, tmp_path: Path
) -> None:
    root = copy_scenario(log_corpus, tmp_path / "c")
    loc = _loc(root)
    repo = TmpRepo(root)
    (flat,) = fast_commits(repo, 1, "flat")
    line = records.make_line("create", _line(random.Random(9), 997, "r3"))
    blob = hash_blob(root, line.encode() + b"\n")
    top = [*git(root, "ls-tree", "refs/notes/improve").splitlines(), f"100644 blob {blob}\t{flat}"]
    set_notes_tree(root, top, "a note outside the fanout")
    assert _stored(loc) is None
    assert _matches_oracle(loc) >= 6


@pytest.mark.slow
def test_a_merge_by_sync_stores_the_digests_of_both_sides(tmp_path: Path) -> None:
    """Two clones record experiments apart; `sync` merges the notes by union and the merged
    tree carries every folder's shard, read by a cold log as the typed path reads it."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    a, b = tmp_path / "a", tmp_path / "b"
    git(tmp_path, "init", "-q", str(a))
    ra = TmpRepo(a)
    ra.commit("initial", {"f": "0"})
    git(a, "remote", "add", "origin", str(origin))
    git(a, "push", "-q", "origin", "HEAD:refs/heads/main")
    git(tmp_path, "clone", "-q", str(origin), str(b))
    rb = TmpRepo(b)
    rng = random.Random(11)
    for repo, branch in ((ra, "ea"), (rb, "eb")):
        made = fast_commits(repo, 30, branch)
        git(repo.path, "push", "-q", "origin", f"{branch}:refs/heads/{branch}")
        batch = {c: [records.make_line("create", _line(rng, i, "r1"))] for i, c in enumerate(made)}
        notes.append_lines(repo.open(), batch)
    for repo in (ra, rb, ra):
        res = repo.cli("sync")
        assert res.returncode == 0, res.stderr
    loc = _loc(a)
    stored = _stored(loc)
    assert stored is not None and stored.complete is not None
    assert len(stored.complete) == 60
    assert _matches_oracle(loc) >= 3


@pytest.mark.slow
def test_a_log_without_shards_is_the_same_as_with_them(log_corpus: Path, tmp_path: Path) -> None:
    with_them = copy_scenario(log_corpus, tmp_path / "with")
    without = without_digests(copy_scenario(log_corpus, tmp_path / "without"))
    assert _stored(_loc(without)) is None
    for req in _requests(_loc(with_them)):
        if req.fmt in TSV:
            try:
                one: object = logview.produce(_loc(with_them), req)
            except GitImproveError as exc:
                one = str(exc)
            try:
                two: object = logview.produce(_loc(without), req)
            except GitImproveError as exc:
                two = str(exc)
            assert one == two, (req.fmt, req.run)


@pytest.mark.slow
@pytest.mark.parametrize(
    "forgery", ["a-row-dropped", "a-row-changed", "a-digest-of-the-wrong-shape"]
)
def test_a_forged_shard_is_named_by_doctor_and_made_again_by_repair(
    log_corpus: Path, tmp_path: Path, forgery: str
) -> None:
    """A shard under the right name whose digests are not those of the notes (a forger, or a
    damaged clone) is what a `log` would take: `doctor` names it, `--repair` makes it again
    from the notes, and the log is the typed path's again."""
    root = copy_scenario(log_corpus, tmp_path / "c")
    loc = _loc(root)
    repo = TmpRepo(root)
    shard = max(_shards(root), key=lambda n: len(git(root, "cat-file", "-p", _shards(root)[n])))
    lines = git(root, "cat-file", "-p", _shards(root)[shard]).splitlines()
    assert len(lines) >= 3
    if forgery == "a-row-dropped":
        lines = lines[:-1]
    elif forgery == "a-row-changed":  # the first row a forger can turn into a keep
        i = next(i for i, ln in enumerate(lines) if i and ('"discard"' in ln or '"crash"' in ln))
        lines[i] = lines[i].replace('"discard"', '"keep"').replace('"crash"', '"keep"')
    else:
        lines[1] = '[["r1",1,null,null,[],[0],"x",null,["a"]],[]]'
    _replace_shard(root, shard, "".join(ln + "\n" for ln in lines).encode())
    res = repo.cli("doctor")
    assert res.returncode == 1
    assert "note digests" in res.stdout and shard.split(".")[0] in res.stdout
    fixed = repo.cli("doctor", "--repair")
    assert "note digests" in fixed.stdout, fixed.stdout
    again = repo.cli("doctor")
    assert "note digests" not in again.stdout, again.stdout
    assert _matches_oracle(loc) >= 6


def test_one_cat_file_answers_in_rounds_and_leaves_no_process(
    log_corpus: Path, tmp_path: Path
) -> None:
    from gitimprove.git import catfile
    from gitimprove.util import proc

    root = copy_scenario(log_corpus, tmp_path / "c")
    loc = _loc(root)
    with catfile.session(loc) as ask:
        top, missing = ask(["refs/notes/improve^{tree}", "refs/notes/improve:no-such-path"])
        assert top is not None and top[0] == b"tree" and missing is None
        blob = git(root, "rev-parse", f"refs/notes/improve:{noteindex.FOLDER}")
        (index,) = ask([blob])  # a second round names what the first one gave
        assert index is not None and index[0] == b"tree"
        assert proc.live_children()
    assert not proc.live_children()
