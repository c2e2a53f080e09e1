"""A FIFO (or a huge file) an agent without the sandbox plants where git reads the user's own
files — `~/.gitconfig`, the XDG config, a file one of them includes, the XDG `ignore` and
`attributes` — held every later `git improve` command for ever: the harness's git reading its
own notes waited on the FIFO. Every reading command now answers, `doctor` names the file, a
resumed run stops naming it, and `sync` (which needs the user's config for the remote)
refuses naming it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PY, TmpRepo
from tests.loop_helpers import run_rows, value_project

# round 1 an honest gain, round 2 the file planted (with another gain)
AGENT = """import os, pathlib, sys
where, kind = pathlib.Path.home() / sys.argv[1], sys.argv[2]
if os.environ["GITIMPROVE_ITERATION"] == "1":
    pathlib.Path("src/value.txt").write_text("99\\n")
    sys.exit(0)
where.parent.mkdir(parents=True, exist_ok=True)
if where.exists():
    where.unlink()
if kind == "fifo":
    os.mkfifo(where)
else:  # a sparse file of 3 GB
    with open(where, "wb") as f:
        f.truncate(3 << 30)
pathlib.Path("src/value.txt").write_text("50\\n")
"""


def answer(repo: TmpRepo, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        got = subprocess.run(
            [PY, "-m", "gitimprove", *args],
            cwd=repo.path,
            capture_output=True,
            text=True,
            timeout=60,
            start_new_session=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`git improve {' '.join(args)}` hung")
    assert "Traceback" not in got.stderr, got.stderr
    return got


@pytest.mark.slow
@pytest.mark.parametrize(
    ("where", "kind"),
    [
        (".gitconfig", "fifo"),
        (".config/git/config", "fifo"),
        ("shared.gitconfig", "fifo"),  # a file ~/.gitconfig includes
        (".config/git/ignore", "fifo"),
        (".config/git/attributes", "fifo"),
        (".gitconfig", "big"),
    ],
)
def test_a_file_planted_where_git_reads_the_users_config_hangs_no_command(
    tmp_repo: TmpRepo, tmp_path: Path, where: str, kind: str
) -> None:
    home = Path.home()
    if where == "shared.gitconfig":
        (home / ".gitconfig").write_text("[include]\n\tpath = shared.gitconfig\n")
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    value_project(tmp_repo, f"{sys.executable} {agent} {where} {kind}", sandbox="none")
    remote = tmp_path / "shared.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    tmp_repo.git("remote", "add", "origin", str(remote))
    target = home / where
    label = "include shared.gitconfig" if where == "shared.gitconfig" else "~/" + where
    try:
        run = answer(tmp_repo, "run", "--run", "t", "-n", "2")
        assert run.returncode == 1 and label in run.stderr, run.stdout + run.stderr
        assert [r["status"] for r in run_rows(tmp_repo, "t")] == ["baseline", "keep", "tampered"]
        log = answer(tmp_repo, "log")
        assert log.returncode == 0 and "keep" in log.stdout, log.stdout + log.stderr
        for args in (["status"], ["show", "improve/t"], ["memory"], ["idea", "list"]):
            assert answer(tmp_repo, *args).returncode == 0, args
        doctor = answer(tmp_repo, "doctor")
        assert doctor.returncode == 1 and label in doctor.stdout, doctor.stdout
        sync = answer(tmp_repo, "sync")
        assert sync.returncode == 1 and label in sync.stderr, sync.stderr
        # refused before any agent runs: every git it, the metric or the harness ran would wait
        resumed = answer(tmp_repo, "run", "--resume", "--run", "t", "-n", "2")
        assert resumed.returncode == 1 and label in resumed.stderr, resumed.stderr
        statuses = [r["status"] for r in run_rows(tmp_repo, "t")]
        assert statuses == ["baseline", "keep", "tampered"]
    finally:
        if target.exists() or target.is_fifo():
            target.unlink()
