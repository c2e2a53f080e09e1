"""gitimprove's own state files replaced by the agent (no sandbox): never a hang, never a
forged key used, the run stops naming the path.

The agent (tests/agents/state_replacer.py) replaces a file under `<git-common-dir>/improve/`
with a FIFO (a blocking read would hang the harness for ever), a folder, a link, 32 random
bytes of its own (a key to sign with) or nothing. Every state file is opened without
following links and without blocking, and must be a regular file; the key this run started
with is pinned: the run stops naming the path, the key is put back (so `doctor` still
verifies the honest records), a FIFO or folder is moved aside, and nothing is kept.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from gitimprove.util.files import NotAFile, append_state, open_state, read_state
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project

AGENT = Path(__file__).parent / "agents" / "state_replacer.py"
BENCH = "print('METRIC score=' + open('src/value.txt').read().strip())\n"


def project(repo: TmpRepo, name: str, what: str) -> None:
    value_project(repo, f"{sys.executable} {AGENT} {name} {what}", BENCH, timeouts=True)


SLOW = pytest.mark.slow  # the same mechanism as the default cases, other files and kinds
CASES = [
    ("key", "fifo"), ("key", "bytes"), ("refs.witness", "fifo"),
    pytest.param("key", "dir", marks=SLOW), pytest.param("key", "empty", marks=SLOW),
    pytest.param("key", "link", marks=SLOW), pytest.param("refs.witness", "dir", marks=SLOW),
    pytest.param("integrity.jsonl", "fifo", marks=SLOW),
    pytest.param("hooks.log", "fifo", marks=SLOW),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("name", "what"), CASES)
def test_a_replaced_state_file_stops_the_run_naming_it(
    tmp_repo: TmpRepo, name: str, what: str
) -> None:
    project(tmp_repo, name, what)
    improve = tmp_repo.path / ".git" / "improve"
    res = tmp_repo.cli("run", "--run", "s", "-n", "2")  # a hang fails at the cli's timeout
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    assert f".git/improve/{name}" in res.stderr, res.stderr
    rows = run_rows(tmp_repo, "s")
    assert [r["status"] for r in rows] == ["baseline", "tampered"], rows
    assert tmp_repo.git("rev-parse", "improve/s") == tmp_repo.git(
        "rev-parse", "refs/improve/runs/s/base"
    )
    for state in ("key", "refs.witness", "integrity.jsonl", "hooks.log"):
        path = improve / state
        if os.path.lexists(path):  # nothing is left that would hang or mislead the next reader
            assert stat.S_ISREG(os.lstat(path).st_mode), state
    # the key is the one the run signed with: doctor verifies every honest record
    doctor = tmp_repo.cli("doctor")
    assert "Traceback" not in doctor.stderr
    assert "forged" not in (doctor.stdout + doctor.stderr).lower(), doctor.stdout + doctor.stderr
    # resumed, the same agent does it again: stopped again, the same way (nothing left hangs)
    again = tmp_repo.cli("run", "--resume", "--run", "s", "-n", "2")
    assert again.returncode == 1, again.stdout + again.stderr
    assert f".git/improve/{name}" in again.stderr, again.stderr
    assert [r["status"] for r in run_rows(tmp_repo, "s")] == ["baseline", "tampered", "tampered"]


@pytest.mark.parametrize("what", ["fifo", "dir", "link", "socket"])
def test_state_files_are_regular_files_or_refused(tmp_path: Path, what: str) -> None:
    """The one helper every state file is opened through: a FIFO opens at once and is
    refused (named), so are a folder, a link and a socket; `append_state` moves such a
    thing aside and writes a regular file."""
    import socket

    path = tmp_path / "state"
    if what == "fifo":
        os.mkfifo(path)
    elif what == "dir":
        path.mkdir()
    elif what == "link":
        (tmp_path / "elsewhere").write_bytes(b"x")
        path.symlink_to(tmp_path / "elsewhere")
    else:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(str(path))
    for call in (
        lambda: read_state(path),
        lambda: open_state(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT),
        lambda: open_state(path, os.O_RDWR),
    ):
        with pytest.raises(NotAFile) as got:
            call()
        assert got.value.filename == str(path)
        assert "not a regular file" in str(got.value)
    append_state(path, b"line\n")
    assert read_state(path) == b"line\n"
    assert len(list((tmp_path / "quarantine").iterdir())) == 1


@pytest.mark.parametrize(
    "what", ["fifo", pytest.param("bytes", marks=SLOW), pytest.param("dir", marks=SLOW)]
)
def test_doctor_says_the_key_was_replaced_not_that_records_were_forged(
    tmp_repo: TmpRepo, what: str
) -> None:
    """The key replaced while no run watched (between runs, or the harness killed first):
    `doctor` never hangs on it and says the key changed, not that the honest records are
    forged."""
    project(tmp_repo, "-", "bytes")  # an agent that leaves the state alone
    res = tmp_repo.cli("run", "--run", "s", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    assert run_rows(tmp_repo, "s")[1]["status"] == "keep"
    key = tmp_repo.path / ".git" / "improve" / "key"
    clean = tmp_repo.cli("doctor")
    assert "forged" not in clean.stdout.lower() and "did not write" not in clean.stdout
    key.unlink()
    if what == "bytes":
        key.write_bytes(os.urandom(32))
    elif what == "fifo":
        os.mkfifo(key)
    else:
        key.mkdir()
    doctor = tmp_repo.cli("doctor")
    out = doctor.stdout + doctor.stderr
    assert "Traceback" not in out
    assert "the key was replaced" in out, out
    assert "did not write" not in out, out
