"""The one process runner: timeouts, process-group kill, scrubbed GIT_* environment."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

TAIL_CHARS = 4000

# Variables that would point a child git at the wrong repository or index.
_GIT_LOCATION_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
)


@dataclass(frozen=True)
class Result:
    argv: Sequence[str] | str
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def tail(self, chars: int = TAIL_CHARS) -> str:
        text = self.stdout + (("\n" + self.stderr) if self.stderr else "")
        return text[-chars:]


def clean_env(extra: Mapping[str, str] | None = None, *, keep_git: bool = False) -> dict[str, str]:
    env = dict(os.environ)
    if not keep_git:
        for name in _GIT_LOCATION_VARS:
            env.pop(name, None)
    if extra:
        env.update(extra)
    return env


def run(
    argv: Sequence[str] | str,
    *,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    shell: bool = False,
) -> Result:
    """Run a command in its own process group; on timeout kill the whole group."""
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=dict(env) if env is not None else clean_env(),
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        shell=shell,
        start_new_session=True,
    )
    timed_out = False
    try:
        out, err = proc.communicate(input=input, timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_group(proc.pid)
        out, err = proc.communicate()
    except BaseException:
        kill_group(proc.pid)
        proc.wait()
        raise
    # Children that outlived the leader (forked, detached from the pipes) die with the group.
    kill_group(proc.pid)
    return Result(argv, proc.returncode, out or "", err or "", time.monotonic() - start, timed_out)


def kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def git(
    args: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = 120,
) -> Result:
    return run(["git", *args], cwd=cwd, input=input, env=env or clean_env(), timeout=timeout)


def spawn_detached(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    log_path: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Start a process that outlives us (own session, no inherited pipes); return its pid."""
    log = open(log_path, "ab") if log_path else open(os.devnull, "wb")  # noqa: SIM115
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env) if env is not None else clean_env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        log.close()
    return proc.pid
