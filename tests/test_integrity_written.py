"""A write of the harness into its own folder and its record of it (util/written.py) are two
steps: another process that writes the file over between them must not have its bytes taken
for the harness's. Real files, a real watched window (git/strays.py), the interleaving made
by hand: the harness's write, the other process's, then the harness's mark."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitimprove.git import strays
from gitimprove.git.checkout import PIDS, write_pid
from gitimprove.util import written
from gitimprove.util.files import append_state


def _folder(tmp_path: Path) -> Path:
    imp = tmp_path / "improve"
    for sub in ("locks", "work"):
        (imp / sub).mkdir(parents=True)
    return imp


@pytest.mark.parametrize("same_size", [True, False])
def test_a_file_written_over_before_its_mark_is_a_stray(tmp_path: Path, same_size: bool) -> None:
    imp = _folder(tmp_path)
    pid = imp / "work" / "m-0123456789abcdef.pid"
    (imp / "work" / "m-0123456789abcdef").mkdir()
    ours = f"{os.getpid()}\nmeasure\n".encode()
    with strays.watched(imp, reachable=True) as found:
        PIDS[pid.name] = ours
        written.mark(pid, pending=True, data=ours)
        pid.write_bytes(ours)  # the harness's write ...
        forged = b"1\nmeasure\n".ljust(len(ours), b"\n") if same_size else b"1\n"
        pid.write_bytes(forged)  # ... written over by another process before ...
        written.mark(pid, data=ours)  # ... the harness marks it
        assert not written.mine(pid)
    assert any("work/m-0123456789abcdef" in s for s in found), found
    assert not pid.exists() or pid.read_bytes() == ours  # the forged bytes are gone


def test_a_pending_write_is_the_harness_only_while_it_holds_its_bytes(tmp_path: Path) -> None:
    imp = _folder(tmp_path)
    temp = imp / ".refs.witness.1.0badcafe.tmp"
    ours = b"a signed line\n" * 10
    written.mark(temp, pending=True, data=ours)
    temp.write_bytes(ours[:20])  # under way: a beginning of its bytes
    assert written.mine(temp)
    temp.write_bytes(b"a forged line\n")
    assert not written.mine(temp)
    written.mark(temp, pending=True)  # a write of unknown bytes: any regular file, as before
    assert written.mine(temp)


def test_an_append_written_over_before_its_mark_is_not_the_harness(tmp_path: Path) -> None:
    imp = _folder(tmp_path)
    log = imp / "integrity.jsonl"
    append_state(log, b'{"a": 1}\n')
    assert written.mine(log)
    at = log.stat().st_size
    line = b'{"b": 2}\n'
    written.mark(log, pending=True, data=line, offset=at)
    with open(log, "ab") as f:
        f.write(line)
    log.write_bytes(b'{"forged": 1}\n{"b": 2}\n')  # rewritten before the mark
    written.mark(log, data=line, offset=at)
    assert not written.mine(log)


def test_what_the_harness_writes_is_still_its_own(tmp_path: Path) -> None:
    imp = _folder(tmp_path)
    pid = imp / "work" / "m-fedcba9876543210.pid"
    (imp / "work" / "m-fedcba9876543210").mkdir()
    with strays.watched(imp, reachable=True) as found:
        write_pid(pid, "measure")
        append_state(imp / "integrity.jsonl", b"{}\n")
        append_state(imp / "integrity.jsonl", b"{}\n")
    assert found == []
    assert written.mine(pid) and written.mine(imp / "integrity.jsonl")
