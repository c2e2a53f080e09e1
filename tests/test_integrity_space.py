"""Disk space: an agent's workspace is bounded (`[agent] workspace_size`), and a full disk
met while an attempt is hashed, committed or measured is recorded as that attempt's `crash`
("no space left on device …"), never an exit 3; when nothing can be written the run stops
(exit 1) saying what to free, and `run --resume` goes on once space is back. The full disk is
a real one: a small tmpfs the repository lives on (where one can be mounted)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import TmpRepo, git
from tests.loop_helpers import run_rows, value_project
from tests.test_integrity_persist import persist_project

AGENT = Path(__file__).parent / "agents" / "fill_agent.py"


def project(repo: TmpRepo, where: str, extra: dict[str, str] | None = None) -> None:
    value_project(repo, f"{sys.executable} {AGENT} {where}", timeouts=True)
    if extra:
        config = (repo.path / ".gitimprove.toml").read_text()
        for key, value in extra.items():
            config = config.replace("[agent]\n", f"[agent]\n{key} = {value}\n")
        repo.commit("config", {".gitimprove.toml": config})


@pytest.mark.slow
def test_a_workspace_over_its_size_is_out_of_scope_and_the_run_goes_on(tmp_repo: TmpRepo) -> None:
    project(tmp_repo, f"bytes:{3 << 20}", {"workspace_size": '"2MB"'})
    res = tmp_repo.cli("run", "--run", "s", "-n", "2")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "s")
    assert [r["status"] for r in rows] == ["baseline", "out-of-scope", "keep"]
    assert "[agent] workspace_size" in str(rows[1]["reason"])
    # nothing of the workspace was stored: the attempt's commit holds the incumbent's tree
    commit = str(rows[1]["commit"])
    assert tmp_repo.git("rev-parse", f"{commit}^{{tree}}") == tmp_repo.git(
        "rev-parse", f"{commit}^^{{tree}}"
    )


@pytest.mark.parametrize("where", ["files:2000", "dirs:2000", "gitfiles:2000"])
@pytest.mark.slow
def test_a_workspace_of_too_many_files_is_out_of_scope_and_the_run_goes_on(
    tmp_repo: TmpRepo, where: str
) -> None:
    """Empty files take no space on disk, yet 100,000 of them took 40 s and 200 MB to hash:
    an agent that leaves more entries than `[agent] workspace_files` (here 1,000; ten times
    the incumbent's would be more when its tree is larger) — empty files, empty folders git
    would not even store, files in its clone's `.git` — has its attempt `out-of-scope`,
    counted before anything is hashed, and the run goes on to keep the honest change."""
    project(tmp_repo, where, {"workspace_files": "1000"})
    started = time.monotonic()
    res = tmp_repo.cli("run", "--run", "s", "-n", "2")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "s")
    assert [r["status"] for r in rows] == ["baseline", "out-of-scope", "keep"], rows
    assert "[agent] workspace_files" in str(rows[1]["reason"])
    assert "more than 1,000 files and folders" in str(rows[1]["reason"])
    commit = str(rows[1]["commit"])
    assert tmp_repo.git("rev-parse", f"{commit}^{{tree}}") == tmp_repo.git(
        "rev-parse", f"{commit}^^{{tree}}"
    )
    assert time.monotonic() - started < 60


@pytest.mark.slow
def test_the_file_cap_grows_with_the_incumbent(tmp_repo: TmpRepo) -> None:
    """A project of many files is not held to the configured number: ten times the
    incumbent's entries are allowed (here 300 files in the tree, a cap of 100 configured, an
    agent adding 2,000 empty files stays under 3,000 and is hashed and measured)."""
    project(tmp_repo, "files:2000", {"workspace_files": "100"})
    tmp_repo.commit("many files", {f"data/{i}.txt": "x\n" for i in range(300)})
    res = tmp_repo.cli("run", "--run", "s", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "s")
    assert [r["status"] for r in rows] == ["baseline", "keep"], rows


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "disk"
    where.mkdir()
    res = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if res.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def disk_repo(where: Path) -> TmpRepo:
    path = where / "repo"
    path.mkdir()
    git(path, "init", "-q")
    return TmpRepo(path)


@pytest.mark.slow
def test_an_agent_that_fills_the_disk_is_a_crash_and_the_run_goes_on(small_disk: Path) -> None:
    repo = disk_repo(small_disk)
    project(repo, "workspace")
    res = repo.cli("run", "--run", "s", "-n", "2")
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    assert "Traceback" not in out
    rows = run_rows(repo, "s")
    assert [r["status"] for r in rows] == ["baseline", "crash", "keep"]
    assert "no space left on device" in str(rows[1]["reason"])


@pytest.mark.slow
def test_a_disk_filled_outside_the_workspace_stops_the_run_and_resume_goes_on(
    small_disk: Path,
) -> None:
    repo = disk_repo(small_disk)
    project(repo, "outside")
    res = repo.cli("run", "--run", "s", "-n", "2")
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert "no space left on device" in res.stderr.lower() and "--resume" in res.stderr, out
    assert "Traceback" not in out
    (small_disk / "junk").unlink()  # the user frees space
    res = repo.cli("run", "--resume", "--run", "s")
    assert res.returncode == 0, res.stdout + res.stderr
    statuses = [r["status"] for r in run_rows(repo, "s")]
    assert statuses[0] == "baseline" and "keep" in statuses, statuses


@pytest.mark.slow
@pytest.mark.parametrize("where", ["work/fill.bin", "locks/fill.lock", "fill.bin"])
def test_a_disk_filled_in_gitimprove_folder_is_tampered_not_a_raw_error(
    small_disk: Path, where: str
) -> None:
    repo = disk_repo(small_disk)
    persist_project(repo, f"fill:{where}", "none")
    res = repo.cli("run", "--run", "p", "-n", "2")
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    assert "Traceback" not in out and "update_ref" not in out
    rows = run_rows(repo, "p")
    assert [r["status"] for r in rows] == ["baseline", "tampered", "keep"]
    assert f".git/improve/{where}" in str(rows[1]["reason"])


@pytest.mark.slow
def test_a_disk_filled_by_the_metric_outside_stops_with_what_to_free(small_disk: Path) -> None:
    repo = disk_repo(small_disk)
    persist_project(repo, "fill:../../../junk", "none")
    res = repo.cli("run", "--run", "p", "-n", "2")
    out = res.stdout + res.stderr
    assert "Traceback" not in out and "update_ref" not in out and "libgit2" not in out, out
    assert res.returncode == 1, out  # the next workspace cannot be made: what to free
    assert "no space left on device while creating the agent's workspace" in res.stderr, out
    assert "bytes free" in res.stderr and "--resume" in res.stderr
    (small_disk / "junk").unlink()
    res = repo.cli("run", "--resume", "--run", "p")
    assert res.returncode == 0, res.stdout + res.stderr
    statuses = [r["status"] for r in run_rows(repo, "p")]
    assert statuses[0] == "baseline" and "keep" in statuses, statuses


def _fill(where: Path, leave: int) -> None:
    """Write `where/junk` until the disk holds fewer than `leave` free bytes."""
    import os

    with open(where / "junk", "wb") as f:
        while True:
            st = os.statvfs(where)
            if st.f_bavail * st.f_frsize <= leave:
                break
            try:
                f.write(b"\0" * min(1 << 20, st.f_bavail * st.f_frsize - leave))
                f.flush()
            except OSError:
                break


@pytest.mark.slow
@pytest.mark.parametrize("command", ["init", "measure"])
def test_a_full_disk_hint_names_the_command_the_user_ran(small_disk: Path, command: str) -> None:
    repo = disk_repo(small_disk)
    project(repo, "honest")
    if command == "measure":
        res = repo.cli("init", "--yes", "--runs", "1")
        assert res.returncode == 0, res.stdout + res.stderr
        repo.commit("experiment(perf): smaller", {"src/value.txt": "90\n"})
    _fill(small_disk, 4096)
    res = repo.cli(command, *(["--yes", "--force", "--runs", "1"] if command == "init" else []))
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert "Traceback" not in out and "no space left on device" in res.stderr.lower(), out
    assert f"`git improve {command}` again" in res.stderr, out
    assert "--resume" not in res.stderr, out
    (small_disk / "junk").unlink()
    assert (
        repo.cli(
            command, *(["--yes", "--force", "--runs", "1"] if command == "init" else [])
        ).returncode
        == 0
    )
