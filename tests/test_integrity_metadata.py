"""Nothing a metric or guard run can set on a directory entry reaches a later run: the root's
and every folder's times, mode bits and extended attributes, its parent folder's times, link
counts. Each run gets a fresh copy of the commit under a new name (`Checkout.reset`). Hostile
code in real runs, both sandbox modes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gitimprove.git.checkout import checkout
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import needs_bwrap
from tests.test_integrity_persist import persist_project


def _user_xattrs(folder: Path) -> bool:
    probe = folder / "xattr-probe"
    probe.mkdir()
    try:
        os.setxattr(probe, "user.probe", b"1")
    except OSError:
        return False
    return True


def _honest_only(tmp_repo: TmpRepo) -> None:
    res = tmp_repo.cli("run", "--run", "p", "-n", "2")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "p")
    assert rows[0]["status"] == "baseline"
    assert rows[1]["status"] in ("discard", "tampered")  # never kept on a mark
    if rows[1]["status"] == "discard":
        assert set(rows[1]["metric"]["samples"]) == {103}  # no run found the first's mark
    assert rows[2]["status"] == "keep" and rows[2]["metric"]["value"] == 90


FAST = ["root-mtime", "root-xattr"]
SLOW = ["root-atime", "root-sticky", "root-mode", "folder-xattr", "link-count", "hard-link"]
PARENT = ["parent-mtime", "parent-atime"]  # the work folder: reachable without the sandbox only


@pytest.mark.parametrize(
    "how", FAST + [pytest.param(h, marks=pytest.mark.slow) for h in SLOW + PARENT]
)
@pytest.mark.slow
def test_a_metadata_mark_never_reaches_a_later_run(
    tmp_repo: TmpRepo, tmp_path: Path, how: str
) -> None:
    if "xattr" in how and not _user_xattrs(tmp_path):
        pytest.skip("this file system has no user extended attributes")
    persist_project(tmp_repo, f"meta:{how}", "none")
    _honest_only(tmp_repo)


@needs_bwrap
@pytest.mark.parametrize("how", ["root-xattr", pytest.param("root-sticky", marks=pytest.mark.slow)])
def test_a_metadata_mark_in_the_sandbox_never_reaches_a_later_run(
    tmp_repo: TmpRepo, tmp_path: Path, how: str
) -> None:
    if "xattr" in how and not _user_xattrs(tmp_path):
        pytest.skip("this file system has no user extended attributes")
    persist_project(tmp_repo, f"meta:{how}", "bwrap")
    _honest_only(tmp_repo)


def test_reset_gives_a_fresh_folder_whatever_the_run_set(tmp_repo: TmpRepo) -> None:
    commit = tmp_repo.commit("c", {"a.py": "x = 1\n", "pkg/b.py": "y\n"})
    repo = tmp_repo.open()
    with checkout(repo, commit) as co:
        first = co.path
        before = {rel: st for rel, st in co.snapshot.items()}
        os.chmod(first, 0o1751)
        os.utime(first, (1234567890, 1234567890))
        os.utime(first / "pkg", (1234567890, 1234567890))
        (first / "pkg" / "sub").mkdir()  # pkg's link count
        with_xattrs = _user_xattrs(first)
        if with_xattrs:
            os.setxattr(first / "pkg", "user.mark", b"1")
        assert co.verify(after_run=True) == []  # nothing of the commit's files changed
        assert co.reset() == []
        assert (co.path / "pkg").stat().st_nlink == 2
        assert co.path != first and not first.exists()
        assert co.path.parent == first.parent and co.path.name.startswith("m-")
        st = co.path.stat()
        assert not st.st_mode & (stat.S_ISVTX | stat.S_ISGID | stat.S_ISUID)
        assert st.st_mtime != 1234567890 and (co.path / "pkg").stat().st_mtime != 1234567890
        assert os.listxattr(co.path / "pkg") == [] and os.listxattr(co.path) == []
        assert sorted(co.snapshot) == sorted(before)  # the same entries, all new
        assert co.verify() == []
        assert (co.path / "a.py").read_text() == "x = 1\n"
        assert (co.path / "a.py").stat().st_nlink == 1
        path = co.path
    assert not path.exists() and not path.with_name(path.name + ".pid").exists()


def test_a_change_to_the_root_between_runs_is_named(tmp_repo: TmpRepo) -> None:
    commit = tmp_repo.commit("c", {"a.py": "x = 1\n"})
    with checkout(tmp_repo.open(), commit) as co:
        os.chmod(co.path, 0o700 if stat.S_IMODE(co.path.stat().st_mode) != 0o700 else 0o755)
        assert co.verify() == [". (changed)"]
