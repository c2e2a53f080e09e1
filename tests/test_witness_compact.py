"""The witness file is compacted without losing what it proves (git/witness.py)."""

from __future__ import annotations

import subprocess
import sys

from gitimprove.git import witness
from gitimprove.util.keys import load_key
from tests.conftest import TmpRepo

# Each process moves its own ref through a chain of fake object ids (and one ref they all
# share), recording every move, and compacts the file every few moves; COMPACT_AT is made
# small so appends compact it too.
WRITER = """
import sys
from pathlib import Path
from gitimprove.git import witness
witness.COMPACT_AT = 2000
improve, me, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
ref = f"refs/heads/improve/w{me}"
old = None
for i in range(n):
    new = f"{int(me):02d}{i:038d}"
    witness.record(improve, [(ref, new, old), ("refs/notes/improve", new, None)])
    old = new
    if i % 7 == int(me):
        witness.compact(improve)
"""


def test_compaction_keeps_every_refs_last_value_under_concurrent_appends(
    tmp_repo: TmpRepo,
) -> None:
    tmp_repo.commit("c", {"f.txt": "x\n"})
    improve = tmp_repo.open().improve_dir
    assert load_key(improve) is not None
    n, writers = 60, 6
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(improve), str(w), str(n)])
        for w in range(writers)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0] * writers
    size = (improve / witness.FILE).stat().st_size
    assert witness.compact(improve)
    alive = witness._alive(improve)
    for w in range(writers):
        last = f"{w:02d}{n - 1:038d}"
        assert alive[f"refs/heads/improve/w{w}"] == {last}
        assert witness.last_written(improve, f"refs/heads/improve/w{w}", None) == (True, last)
        # every value the shared ref was given is still one it may be at (none superseded)
        for i in range(n):
            assert f"{w:02d}{i:038d}" in alive["refs/notes/improve"]
    lines = (improve / witness.FILE).read_text().splitlines()
    assert len(lines) == writers + writers * n  # one line per value that can still be current
    assert (improve / witness.FILE).stat().st_size < size * 2
    # no temporary file is left behind, and the file stays private
    assert sorted(p.name for p in improve.glob("refs.witness*")) == [witness.FILE]
    assert (improve / witness.FILE).stat().st_mode & 0o777 == 0o600


def test_compaction_drops_forged_lines_and_keeps_deletions(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("c", {"f.txt": "x\n"})
    improve = tmp_repo.open().improve_dir
    a, b = "a" * 40, "b" * 40
    ref = "refs/heads/improve/r"
    witness.record(improve, [(ref, a, None), (ref, b, a), (ref, None, b)])
    witness.record(improve, [("refs/improve/x", a, None)])
    with open(improve / witness.FILE, "a") as f:
        f.write(f"{ref} - {a} {'0' * 24}\n")
    before = witness._alive(improve)
    assert witness.compact(improve)
    assert witness._alive(improve) == before == {ref: {"-"}, "refs/improve/x": {a}}
    assert "0" * 24 not in (improve / witness.FILE).read_text()
    # compacted twice reads the same; the file is the fixed point
    text = (improve / witness.FILE).read_text()
    assert witness.compact(improve) and (improve / witness.FILE).read_text() == text
    # moves after compaction are read on top of it
    witness.record(improve, [(ref, a, None)])
    assert witness.last_written(improve, ref, None) == (True, a)


def test_a_long_run_of_moves_stays_small(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("c", {"f.txt": "x\n"})
    improve = tmp_repo.open().improve_dir
    old = None
    for i in range(6000):  # ~ 600 KB of lines uncompacted
        new = f"{i:040x}"
        witness.record(improve, [("refs/heads/improve/long", new, old)])
        old = new
    assert (improve / witness.FILE).stat().st_size <= witness.COMPACT_AT + 200
    assert witness.last_written(improve, "refs/heads/improve/long", None) == (True, old)
