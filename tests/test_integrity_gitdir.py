"""Files of the user's git directory that git and libgit2 read (HEAD, config, packed-refs, the
index, loose refs, alternates…) replaced by a FIFO or a huge sparse file: never a hang.

Without the sandbox an agent can reach them (tests/agents/gitdir_replacer.py). The harness
checks them with `lstat`/`stat` before libgit2 or git touches the repository: the run stops
naming the path, the thing is moved aside to `.git/improve/quarantine/`, and `doctor` (and
any command) names such a file instead of hanging on it.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project

AGENT = Path(__file__).parent / "agents" / "gitdir_replacer.py"
BENCH = "print('METRIC score=' + open('src/value.txt').read().strip())\n"


def project(repo: TmpRepo, name: str, what: str) -> None:
    value_project(repo, f"{sys.executable} {AGENT} {name} {what}", BENCH, timeouts=True)


SLOW = pytest.mark.slow  # the same mechanism, other files
CASES = [
    ("config", "fifo"), ("HEAD", "fifo"), ("packed-refs", "fifo"),
    pytest.param("refs/heads/main", "fifo", marks=SLOW),
    pytest.param("index", "fifo", marks=SLOW),
    pytest.param("objects/info/alternates", "fifo", marks=SLOW),
    pytest.param("refs/tags/deep/x", "fifo", marks=SLOW),
    pytest.param("config", "sparse", marks=SLOW),
    pytest.param("packed-refs", "sparse", marks=SLOW),
]  # fmt: skip


@pytest.mark.parametrize(("name", "what"), CASES)
def test_a_git_file_replaced_stops_the_run_naming_it(
    tmp_repo: TmpRepo, name: str, what: str
) -> None:
    project(tmp_repo, name, what)
    res = tmp_repo.cli("run", "--run", "g", "-n", "2")  # a hang fails at the cli's timeout
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert "Traceback" not in out
    assert f".git/{name}" in out, out
    path = tmp_repo.path / ".git" / name
    if os.path.lexists(path):  # moved aside: nothing left hangs the next git command
        assert stat.S_ISREG(os.lstat(path).st_mode) and os.lstat(path).st_size < 1 << 20
    aside = list((tmp_repo.path / ".git" / "improve" / "quarantine").iterdir())
    assert any(p.name.startswith(name.replace("/", "_") + ".") for p in aside), aside
    if name in ("HEAD", "config"):  # put back as it was before the agent: git works on
        assert tmp_repo.git("symbolic-ref", "HEAD") == "refs/heads/main"
        assert tmp_repo.git("config", "user.email")
        assert [r["status"] for r in run_rows(tmp_repo, "g")] == ["baseline", "tampered"]
    doctor = tmp_repo.cli("doctor")
    assert "Traceback" not in doctor.stdout + doctor.stderr
    assert "git directory" not in doctor.stdout, doctor.stdout


@pytest.mark.parametrize(
    "name", ["config", "HEAD", "packed-refs", "refs/heads/topic", "objects/info/alternates"]
)
def test_doctor_and_run_name_a_fifo_in_the_git_directory_instead_of_hanging(
    tmp_repo: TmpRepo, name: str
) -> None:
    project(tmp_repo, name, "fifo")
    path = tmp_repo.path / ".git" / name
    if path.exists():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    for args in (["doctor"], ["doctor", "--json"], ["run", "--run", "d", "-n", "1"]):
        res = tmp_repo.cli(*args)  # a hang fails at the cli's timeout
        out = res.stdout + res.stderr
        assert res.returncode == 1, (args, out)
        assert "Traceback" not in out and f".git/{name}" in out, (args, out)
    assert stat.S_ISFIFO(os.lstat(path).st_mode)  # reported, not touched


def test_a_regular_git_directory_is_no_problem(tmp_repo: TmpRepo) -> None:
    project(tmp_repo, "config", "fifo")
    tmp_repo.git("pack-refs", "--all")
    tmp_repo.git("worktree", "add", "-q", str(tmp_repo.path.parent / "wt"))
    res = tmp_repo.cli("doctor")
    assert "git directory" not in res.stdout, res.stdout
