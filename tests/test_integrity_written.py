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


@pytest.mark.slow
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


HOOK_WRITES = """
import sys
from gitimprove.memory import sessions, spool
from gitimprove.memory.transcript import State, watermark_path
imp = sys.argv[1]
spool.put(imp, "signals/2026/01/20260101T000000Z-h-abcdef.json", {"v": 1, "text": "a signal"})
sessions.sid_for(imp, "claude-session-1")
State(offset=7).save(watermark_path(imp, "claude-session-1"))
"""


def test_what_a_hook_writes_is_sealed_and_a_copy_or_edit_is_not(tmp_path: Path) -> None:
    """A hook (another process) writes a spool entry, a session map and a watermark during a
    watched window: taken for a hook's. The same bytes under another name, or the body
    changed under the same seal, are not: a seal names its place and its bytes."""
    import subprocess
    import sys

    from gitimprove.memory import sessions, spool
    from gitimprove.memory.transcript import State, watermark_path
    from gitimprove.util.keys import load_key

    imp = _folder(tmp_path)
    load_key(imp)  # the repository's key, as the harness has it
    with strays.watched(imp, reachable=True) as found:
        subprocess.run([sys.executable, "-c", HOOK_WRITES, str(imp)], check=True)
    assert found == []
    assert spool.read_pending(str(imp)) == [
        ("signals/2026/01/20260101T000000Z-h-abcdef.json", b'{"text": "a signal", "v": 1}\n')
    ]
    sid = sessions.sid_for(str(imp), "claude-session-1", create=False)
    assert sid and "\n" not in sid and "seal" not in sid
    assert State.load(watermark_path(str(imp), "claude-session-1")).offset == 7
    mark = imp / "watermarks" / "claude-session-1.json"
    with strays.watched(imp, reachable=True) as found:
        (imp / "watermarks" / "copied.json").write_bytes(mark.read_bytes())  # another place
        edited = mark.read_bytes().replace(b'"offset": 7', b'"offset": 9')
        mark.write_bytes(edited)  # another body under the same seal
        (imp / "session-map" / "forged").write_bytes(b"20260101T000000Z-forged\n")  # none
    assert sorted(s.split(" (")[0] for s in found) == [
        ".git/improve/session-map/forged",
        ".git/improve/watermarks/claude-session-1.json",
        ".git/improve/watermarks/copied.json",
    ], found
    assert State.load(str(mark)).offset != 9  # the edit is gone (the file with it)
