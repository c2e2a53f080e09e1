"""A machine that refuses writes (a read-only `.git`, a full disk) gets a clear message and
exit 1 from every command, never a traceback; the views still read what is stored.

The refusals are real: bubblewrap mounts the repository's `.git` read-only, or gives it a
tiny tmpfs that fills up. Skipped where bubblewrap cannot create its namespaces."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitimprove.agents.sandbox import bwrap_usable
from tests.conftest import TmpRepo
from tests.loop_helpers import make_project

pytestmark = pytest.mark.skipif(not bwrap_usable(), reason="bubblewrap is not usable here")


def in_bwrap(mounts: list[str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    cmd = [bwrap, "--dev-bind", "/", "/", *mounts, "--chdir", str(cwd), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def refused_cleanly(res: subprocess.CompletedProcess[str], reason: str) -> None:
    assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
    assert f"the file system refused: {reason}" in res.stderr
    assert "hint: free some space or make the repository writable" in res.stderr
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr


@pytest.mark.slow
def test_a_read_only_repository(tmp_repo: TmpRepo) -> None:
    make_project(tmp_repo, {"default": "set:90"}, guard=False)
    assert tmp_repo.cli("run", "--run", "r", "-n", "1").returncode == 0
    refs_before = tmp_repo.git("for-each-ref")
    git_dir = str(tmp_repo.path / ".git")
    ro = ["--ro-bind", git_dir, git_dir]
    py = [sys.executable, "-m", "gitimprove"]
    for args in (["run", "-n", "1"], ["run", "--resume", "--run", "r", "-n", "1"]):
        refused_cleanly(in_bwrap(ro, tmp_repo.path, *py, *args), "Read-only file system")
    for args in (
        ["signal", "add", "--type", "gotcha", "--content", "use make"],
        ["sync"],
        ["doctor", "--repair"],
    ):
        res = in_bwrap(ro, tmp_repo.path, *py, *args)
        assert res.returncode in (0, 1) and "Traceback" not in res.stderr, (args, res.stderr)
    # reading needs no write: the views answer from what is stored
    for args in (["log"], ["log", "--format", "tsv"], ["status"], ["show", "improve/r"]):
        res = in_bwrap(ro, tmp_repo.path, *py, *args)
        assert res.returncode == 0, (args, res.stderr)
        assert res.stdout == tmp_repo.cli(*args).stdout
    assert tmp_repo.git("for-each-ref") == refs_before


def test_a_full_disk(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    make_project(tmp_repo, {"default": "set:90"}, guard=False)
    small = tmp_path / "small"
    small.mkdir()
    script = (
        f"cp -a {tmp_repo.path} {small}/repo && cd {small}/repo && "
        f"(dd if=/dev/zero of={small}/fill bs=4096 2>/dev/null || true) && "
        f"{sys.executable} -m gitimprove run -n 1; echo exit=$?"
    )
    res = in_bwrap(["--size", "4000000", "--tmpfs", str(small)], tmp_path, "sh", "-c", script)
    assert "exit=1" in res.stdout, (res.stdout, res.stderr)
    refused_cleanly(
        subprocess.CompletedProcess(res.args, 1, res.stdout, res.stderr), "No space left on device"
    )
