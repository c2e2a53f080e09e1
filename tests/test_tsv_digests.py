"""The TSV formats read digests (`state/tsvrows.py`), kept by note blob in a cache of their
own: a digest kept under the note's blob is taken as it is, one under another blob is not,
and a damaged digests cache costs a re-read, never a wrong row."""

from __future__ import annotations

import marshal
import random
from pathlib import Path

import pytest

from gitimprove.errors import GitImproveError
from gitimprove.state import logview, notecache, tsvrows
from gitimprove.util import gitdir
from tests.conftest import TmpRepo, copy_scenario, without_digests
from tests.test_log_cold import _requests, typed_log
from tests.test_note_cache import _loc


def _drop_views(loc: gitdir.Location) -> None:
    for f in (Path(loc.improve_dir) / "cache").glob("view-*"):
        f.unlink()


def _tsv_matches_oracle(loc: gitdir.Location) -> int:
    seen = 0
    for req in _requests(loc):
        if not req.fmt.startswith("tsv"):
            continue
        _drop_views(loc)
        try:
            got: object = logview.produce(loc, req)
        except GitImproveError as exc:
            got = str(exc)
        assert got == typed_log(loc, req), (req.fmt, req.run)
        seen += 1
    return seen


@pytest.mark.slow
def test_a_cached_digest_is_taken_under_its_blob_only(log_corpus: Path, tmp_path: Path) -> None:
    loc = _loc(without_digests(copy_scenario(log_corpus, tmp_path / "c")))
    for f in (Path(loc.improve_dir) / "cache").glob("*"):
        f.unlink()
    assert _tsv_matches_oracle(loc) > 4
    entries = notecache.load(loc, tsvrows.NAME)
    path, (blob, own, imported) = next(
        (p, e) for p, e in entries.items() if e[1] is not None and e[1][8] is not None
    )
    run = own[0]
    head, delta, (guard, guard_metric, word, _), *rest = own[8]
    marked = (*own[:8], (head, delta, (guard, guard_metric, word, "from the cache"), *rest))
    entries[path] = (blob, marked, imported)
    notecache.store(loc, entries, name=tsvrows.NAME)
    _drop_views(loc)
    req = logview.Request("tsv", run=run)
    assert b"\tfrom the cache\n" in logview.produce(loc, req)[0]
    entries[path] = ("0" * 40, marked, imported)  # another blob: the note is read again
    notecache.store(loc, entries, name=tsvrows.NAME)
    _drop_views(loc)
    assert logview.produce(loc, req) == typed_log(loc, req)


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["garbage", "bad-entries", "bad-digests", "not-a-dict"])
def test_a_damaged_digests_cache_costs_a_reread_never_a_wrong_row(
    log_corpus: Path, tmp_path: Path, damage: str
) -> None:
    root = without_digests(copy_scenario(log_corpus, tmp_path / "c"))
    loc = _loc(root)
    _tsv_matches_oracle(loc)
    cache = Path(notecache.path(loc, 0, tsvrows.NAME))
    data = cache.read_bytes()
    header = data[: data.index(b"\n") + 1]
    entries = notecache.load(loc, tsvrows.NAME)
    bad: dict[str, object] = {}
    for i, (p, e) in enumerate(entries.items()):
        own = e[1]
        bad[p] = {
            "bad-entries": [e, "text", (e[0],), (e[0], "own", e[2]), (e[0], e[1], "rows")],
            "bad-digests": [
                e,
                (e[0], (1, 2), e[2]),
                (e[0], own, [("x",)]),
                (e[0], own and (*own[:8], (1, 2, 3)), e[2]),
                (e[0], own and (*own[:5], None, *own[6:]), e[2]),
            ],
        }.get(damage, [e] * 5)[i % 5]
    cache.write_bytes(
        {
            "garbage": header + bytes(random.Random(2).randrange(256) for _ in range(4000)),
            "bad-entries": header + marshal.dumps(bad),
            "bad-digests": header + marshal.dumps(bad),
            "not-a-dict": header + marshal.dumps([1, 2]),
        }[damage]
    )
    assert _tsv_matches_oracle(loc) > 4
    _drop_views(loc)
    res = TmpRepo(root).cli("log", "--format", "tsv", "--run", "r1")  # no crash, same bytes
    assert res.returncode == 0, res.stderr
    want = typed_log(loc, logview.Request("tsv", run="r1"))
    assert isinstance(want, tuple)
    assert (res.stdout.encode(), res.stderr.encode()) == want
