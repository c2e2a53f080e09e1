"""EPERM from kill(pid, 0) means another user's live process, never a dead one."""

from __future__ import annotations

import os
import subprocess

import pytest

from gitimprove.util.alive import pid_alive


def _in_child_as_nobody(pid: int) -> int:
    """Exit code of a forked child that drops to uid 65534 and asks whether `pid` is alive."""
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        try:
            os.setgid(65534)
            os.setuid(65534)
            os._exit(0 if pid_alive(pid) else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(child, 0)
    return os.waitstatus_to_exitcode(status)


def test_own_and_dead_pids() -> None:
    assert pid_alive(os.getpid())
    child = os.fork()
    if child == 0:  # pragma: no cover
        os._exit(0)
    os.waitpid(child, 0)
    assert not pid_alive(child)
    assert not pid_alive(0)
    assert not pid_alive(-1)


def test_another_users_live_process_is_alive() -> None:
    if os.geteuid() != 0:
        # unprivileged already: pid 1 belongs to root, so kill(1, 0) gives EPERM
        assert pid_alive(1)
        return
    assert _in_child_as_nobody(1) == 0
    assert _in_child_as_nobody(os.getpid()) == 0  # this root process, seen from uid 65534


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to another uid")
def test_another_users_dead_pid_is_dead() -> None:
    child = os.fork()
    if child == 0:  # pragma: no cover
        os._exit(0)
    os.waitpid(child, 0)
    assert _in_child_as_nobody(child) == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to another uid")
def test_stale_workspaces_keeps_another_users_live_checkout() -> None:
    """Seen from uid 65534, a checkout whose .pid names a live root process is not stale."""
    import shutil
    import tempfile
    from pathlib import Path

    from gitimprove.git.checkout import stale_workspaces
    from gitimprove.git.repo import open_repo

    top = Path(tempfile.mkdtemp(prefix="gi-shared-"))
    try:
        os.chmod(top, 0o755)
        subprocess.run(["git", "init", "-q", str(top / "r")], check=True)
        work = top / "r" / ".git" / "improve" / "work"
        work.mkdir(parents=True)
        (work / "m-live0000").mkdir()
        (work / "m-live0000.pid").write_text(f"{os.getpid()}\n")
        (work / "m-dead0000").mkdir()
        (work / "m-dead0000.pid").write_text("999999999\n")
        for dirpath, _, _ in os.walk(top):
            os.chmod(dirpath, 0o755)
        repo = open_repo(top / "r")  # opened as root; the child only reads the folder
        child = os.fork()
        if child == 0:  # pragma: no cover - runs in the child
            try:
                os.setgid(65534)
                os.setuid(65534)
                names = [p.name for p in stale_workspaces(repo)]
                os._exit(0 if names == ["m-dead0000"] else 1)
            except BaseException:
                os._exit(2)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        shutil.rmtree(top)
