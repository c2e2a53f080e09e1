"""A live process holding a file mapped shared and writable changes its bytes without moving
its times: once one write faulted the page in (which stamps mtime and ctime), every later write
through the mapping until writeback leaves the whole `lstat` as it was. A sibling agent of a
tournament without the sandbox is alive while another candidate's workspace and measurement
checkout are written and proved; if it maps a file of theirs between its creation and the
harness's listing, a record taken then proves nothing. Every listing the harness takes
(git/checkout.py `scan`, git/renew.py) gives such a file a stat that equals no other, so it is
read from disk, written anew, never taken as proven. Here the race is won on purpose: the
record is taken while the mapping is alive."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitimprove.git.checkout import checkout, finish_removals, scan
from gitimprove.git.renew import Spares
from gitimprove.git.workspace import Workspaces, hash_workspace, made_workspace
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project
from tests.test_integrity_spares import _commit_a, committed, tree_of

MAPPER = r"""
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0)
m[0:1] = m[0:1]  # the same byte: the fault stamps the times, the bytes stay
print("mapped", flush=True)
sys.stdin.readline()  # the harness has taken its record
new = sys.argv[2].encode()
m[0 : len(new)] = new  # through the mapping: no fault, no time moves
m.close()
os.close(fd)
print("written", flush=True)
"""


class Mapper:
    """A process (a child of this one, as an agent is) that maps `path` and, when told,
    writes `text` over its first bytes through the mapping."""

    def __init__(self, path: Path, text: str) -> None:
        self.p = subprocess.Popen(
            [sys.executable, "-c", MAPPER, str(path), text],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.p.stdout is not None and self.p.stdout.readline() == "mapped\n"

    def write(self) -> None:
        assert self.p.stdin is not None and self.p.stdout is not None
        self.p.stdin.write("go\n")
        self.p.stdin.flush()
        assert self.p.stdout.readline() == "written\n"
        self.p.communicate()


def test_a_file_mapped_for_writing_is_never_proven_by_its_lstat(tmp_repo: TmpRepo) -> None:
    """The workspace's hash reads the file, and the next workspace renewed from it writes
    the file anew, although its `lstat` is the one recorded."""
    a = _commit_a(tmp_repo)
    repo = tmp_repo.open()
    pool = Workspaces()
    try:
        with made_workspace(repo, a, "w-1", pool) as made:
            target = made.path / "pkg" / "a.py"
            mapper = Mapper(target, "B = 9")  # "A = 1": the same size
            made.record = scan(made.path)  # the record taken while the mapping lives
            before = os.lstat(target)
            mapper.write()
            after = os.lstat(target)
            assert (before.st_mtime_ns, before.st_ctime_ns) == (
                after.st_mtime_ns,
                after.st_ctime_ns,
            )
            assert target.read_text() == "B = 9\n"
            hashed = hash_workspace(repo, made.path, known=made)
            blob = tmp_repo.git("rev-parse", f"{hashed.tree}:pkg/a.py")
            assert tmp_repo.git("cat-file", "blob", blob) == "B = 9"
        with made_workspace(repo, a, "w-2", pool) as made:
            assert tree_of(made.path) == committed(tmp_repo, a, skip_compiled=False)
    finally:
        pool.close()
    finish_removals()


def test_a_checkout_mapped_for_writing_is_no_spare(tmp_repo: TmpRepo) -> None:
    """A measurement checkout whose file was rewritten through a mapping alive when its
    snapshot was taken is never the next checkout of the commit."""
    a = _commit_a(tmp_repo)
    repo = tmp_repo.open()
    spares = Spares()
    try:
        with checkout(repo, a, spares=spares) as co:
            mapper = Mapper(co.path / "bench.py", "print(0)")  # "print(1)"
            co.snapshot = scan(co.path)
            mapper.write()
            assert co.verify() != []  # the file can never be shown unchanged
        with checkout(repo, a, spares=spares) as co:
            assert (co.path / "bench.py").read_text() == "print(1)\n"
            assert tree_of(co.path) == committed(tmp_repo, a)
    finally:
        spares.close()
    finish_removals()


FORGER = r"""
import glob, mmap, os, pathlib, sys, time
cand = int(os.environ["GITIMPROVE_CANDIDATE"])
root = pathlib.Path.cwd()
if cand == 0:  # a candidate whose checkout takes a while to write: value.txt first
    pathlib.Path("src/value.txt").write_text("90\n")
    pathlib.Path("src/zz").mkdir()
    for i in range(3000):
        pathlib.Path(f"src/zz/f{i:05}.txt").write_text(f"{i}\n")
    print('{"description": "the candidate"}')
    sys.exit(0)
# the sibling: maps the candidate's value.txt in each checkout as soon as it is written (the
# write fault, with the same bytes, comes before the harness's listing), then forges it
work = pathlib.Path(sys.argv[1])
held = {}
deadline = time.monotonic() + 25
while time.monotonic() < deadline:
    for path in glob.glob(str(work / "m-*" / "src" / "value.txt")):
        if path in held:
            continue
        try:
            fd = os.open(path, os.O_RDWR)
            if os.read(fd, 3) != b"90\n":
                os.close(fd)
                continue
            m = mmap.mmap(fd, 0)
            m[0:1] = m[0:1]
            held[path] = (m, time.monotonic())
        except (OSError, ValueError):
            continue
    for path, (m, when) in list(held.items()):
        if m is not None and time.monotonic() - when > 1.5:
            m[0:3] = b"1\n\n"
            m.close()
            held[path] = (None, when)
    time.sleep(0.001)
print('{"description": "the sibling"}')
"""


@pytest.mark.slow
def test_a_sibling_that_forges_a_checkout_through_a_mapping_gets_nothing_kept(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """In a tournament without the sandbox, a sibling agent maps the candidate's file in its
    measurement checkout while the harness writes it and rewrites it after the proof: the
    candidate is never kept on a number the forged file gave."""
    agent = tmp_path / "forger.py"
    agent.write_text(FORGER)
    work = tmp_repo.path / ".git" / "improve" / "work"
    value_project(tmp_repo, f"{sys.executable} {agent} {work}", sandbox="none")
    res = tmp_repo.cli("run", "--run", "f", "-n", "1", "--candidates", "2", "--json")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "f")
    seen = [
        v
        for r in rows
        for part in ("metric", "confirmation")
        for v in (r.get(part) or {}).get("samples", [])
    ]
    assert 90.0 in seen or any(r["status"] == "tampered" for r in rows), rows
    assert 1.0 not in seen, rows  # no measurement ever read the forged file
