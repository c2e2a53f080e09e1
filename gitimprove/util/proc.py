"""The one process runner: timeouts, process-group kill, scrubbed GIT_* environment.

It also owns what happens on SIGINT, SIGTERM and SIGHUP (`termination_signals`): every
process group it started is killed at once, every later `run` (in any thread) raises
`Terminated`, and the main thread unwinds like Ctrl-C, so context managers remove their
workspaces; the CLI then exits 128 + the signal number (130, 143, 129).
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import FrameType

from gitimprove.util.pipe import Capped, drain, pending, read_until_exit, stream
from gitimprove.util.result import TAIL_CHARS, Result

TYPE_CHECKING = False  # not `typing`'s: a cold `log` must not pay for importing it
if TYPE_CHECKING:
    from typing import IO, Any

__all__ = ["TAIL_CHARS", "Result"]  # re-exported: callers know them as proc.Result

# Variables that would point a child git at the wrong repository or index.
_GIT_LOCATION_VARS = (
    # `git config` alone reads this file in place of every other: the harness's look for the
    # filter drivers of `.git/config` (git/status.py) found none, and `git status` ran them
    "GIT_CONFIG",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
)


# The children some `run` call is waiting for, so `util/reaper.py` can tell an orphan that
# was reparented to us (kill it) from a child another thread owns (leave it).
_registry = threading.RLock()
_live: set[int] = set()


@contextmanager
def registry_lock() -> Iterator[None]:
    with _registry:
        yield


def live_children() -> set[int]:
    with _registry:
        return set(_live)


class Terminated(KeyboardInterrupt):
    """A termination signal arrived: unwind (cleaning up) and exit with 128 + `signum`."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    @property
    def name(self) -> str:
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"


# The signal that ended us (None: running). The children to kill are `_live` (each leads
# its own process group); `_registry` is re-entrant, as the signal handler runs in the main
# thread, possibly while it holds the lock.
_stopping: int | None = None
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_signals = 0  # how many arrived: a `last_step` lasts until the next one
_step = threading.local()  # `allowed`: the count of signals when this thread's step began


def stopping() -> int | None:
    return _stopping


def _stopped() -> bool:
    """Whether this thread is to unwind: a signal arrived, and not before its `last_step`."""
    return _stopping is not None and getattr(_step, "allowed", None) != _signals


def check_stopping() -> None:
    """Raise `Terminated` when a termination signal has arrived (for threads between steps)."""
    if _stopped():
        raise Terminated(_stopping or 0)


def stop_children(signum: int) -> None:
    """Mark the process as stopping and kill every process group it started."""
    global _stopping, _signals
    with _registry:
        _signals += 1
        if _stopping is None:
            _stopping = signum
        for pgid in list(_live):
            kill_group(pgid)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    first = _stopping is None
    stepping = getattr(_step, "allowed", None) is not None  # the main thread's `last_step`
    stop_children(signum)
    if first or stepping:  # later signals only kill again: the unwinding is not cut short
        raise Terminated(signum)


@contextmanager
def last_step() -> Iterator[None]:
    """A step of the unwinding after a termination signal that runs the harness's own
    commands (the comparison of the user's repository with the snapshot taken before an agent
    call): `run` starts them again in this thread until another signal arrives, which kills
    them and raises `Terminated` (in the main thread at once, from the handler; in another at
    its next `run`), so a second Ctrl-C still exits at once."""
    was = getattr(_step, "allowed", None)
    _step.allowed = _signals
    try:
        yield
    finally:
        _step.allowed = was


_depth = 0  # nested `termination_signals` blocks: only the outermost installs and resets


@contextmanager
def termination_signals() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP unwind the main thread as `Terminated` (a KeyboardInterrupt)
    after killing every child's process group; the previous handlers come back after.
    Re-entrant: an inner block (the loop's, inside the CLI's) changes nothing."""
    global _stopping, _depth
    if threading.current_thread() is not threading.main_thread() or _depth:
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in SIGNALS}
    for sig in SIGNALS:
        signal.signal(sig, _on_signal)
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        with _registry:
            _stopping = None


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
    before_read: Callable[[], object] | None = None,
    limit: int | None = None,
) -> Result:
    """Run a command in its own process group; on timeout kill the whole group.

    Output goes to temporary files rather than pipes, so a detached grandchild that keeps
    the descriptors open cannot make us wait for it. `before_read` runs once the command
    is done and before its output is read (to kill what it left, which could still write).
    With `limit` (what the agent, the metric and the guard run: untrusted output) stdout and
    stderr are streams (socket pairs) read until the command exits (util/pipe.py), nothing is written to disk,
    and of a stream over `limit` bytes only its start and end are kept (`Result.over` says
    so); what its stdout receives after it exited (from a process that outlived it) is not
    output: `Result.late` counts those bytes."""
    check_stopping()
    start = time.monotonic()
    piped = limit is not None
    streams = {"stdout": Capped(limit or 0), "stderr": Capped(limit or 0)}
    with contextlib.ExitStack() as stack:
        if piped:
            fds = [stream(), stream()]  # not pipes: no process can reopen them via /proc
            outs: list[Any] = [fds[0][1], fds[1][1]]
        else:
            outs = [stack.enter_context(scratch_file()) for _ in range(2)]
        stdin: Any = subprocess.DEVNULL
        if input is not None:  # from a file: the command's output can never block our write
            stdin = stack.enter_context(scratch_file())
            stdin.write(input.encode("utf-8"))
            stdin.seek(0)
        with _registry:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=dict(env) if env is not None else clean_env(),
                stdin=stdin,
                stdout=outs[0],
                stderr=outs[1],
                shell=shell,
                start_new_session=True,
            )
            _live.add(proc.pid)
            if piped:
                for _, w in fds:
                    os.close(w)
                readers = {fds[0][0]: streams["stdout"], fds[1][0]: streams["stderr"]}
                for r in readers:
                    stack.callback(os.close, r)
            if _stopped():  # a signal came while it started
                kill_group(proc.pid)
        timed_out = False
        try:
            if not piped:
                _wait(proc, timeout)
            elif not read_until_exit(readers, proc.pid, lambda: proc.poll() is not None, timeout):
                raise subprocess.TimeoutExpired(proc.args, timeout or 0.0)
            else:  # the output is what is in the pipes when it exits, nothing written later
                for fd, buf in readers.items():
                    drain(fd, buf)
                proc.wait()
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_group(proc.pid)
            proc.wait()
        except BaseException:
            kill_group(proc.pid)
            proc.wait()
            raise
        finally:
            with _registry:
                _live.discard(proc.pid)
            if piped:  # untrusted: what it changed of the harness's limits is set back first
                from gitimprove.util import inherited  # not at the top: a cold `log`

                inherited.settle()
        # Children that outlived the leader in its group die with it.
        kill_group(proc.pid)
        late = 0
        if piped and timed_out:
            for fd, buf in readers.items():
                drain(fd, buf)
        if before_read is not None:
            before_read()
        if piped and not timed_out:  # what a process that outlived it wrote since: counted
            late = pending(fds[0][0])
        check_stopping()  # killed by a termination signal: this thread unwinds too
        if piped:
            raw, err_raw = streams["stdout"].value(), streams["stderr"].value()
        else:
            for f in outs:
                f.seek(0)
            raw, err_raw = outs[0].read(), outs[1].read()
    over = "; ".join(
        f"its {name} held {buf.total:,} bytes, over the limit of {buf.limit:,}"
        for name, buf in streams.items()
        if piped and buf.over
    )
    out = raw.decode("utf-8", errors="replace")
    err = err_raw.decode("utf-8", errors="replace")
    seconds = time.monotonic() - start
    return Result(argv, proc.returncode, out, err, seconds, timed_out, raw, over, late)


def _wait(proc: subprocess.Popen[bytes], timeout: float | None) -> None:
    """`proc.wait(timeout)` without its polling: Popen polls with sleeps that grow to 50 ms,
    so a 30 ms command would cost up to 60. A pidfd becomes readable the moment the process
    exits (Linux 5.3+); elsewhere Popen's own wait."""
    if timeout is None or not hasattr(os, "pidfd_open"):
        proc.wait(timeout=timeout)
        return
    try:
        fd = os.pidfd_open(proc.pid)
    except OSError:
        proc.wait(timeout=timeout)
        return
    try:  # poll, not select: select cannot watch a descriptor numbered 1024 or more
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        ready = poller.poll(max(0, int(timeout * 1000) + 1))
    finally:
        os.close(fd)
    if not ready:
        raise subprocess.TimeoutExpired(proc.args, timeout)
    proc.wait()


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
    isolated: bool = False,
) -> Result:
    """`git ARGS`. `isolated` is for the harness's own look at a repository an agent may have
    touched: no global or system configuration (an agent can write ~/.gitconfig) and no
    fsmonitor, so nothing the agent configured runs. A call that may read the user's files
    outside the repository runs isolated too when one of them is a FIFO or too large
    (git/gitfiles.py `outside_problems`): git would wait on it for ever, and an agent
    without the sandbox can plant one there; a run's watch and `doctor` name it."""
    if not isolated:
        from gitimprove.git import gitfiles

        isolated = bool(gitfiles.outside_problems())
    if isolated:
        env = isolated_env(env or clean_env())
        args = [*ISOLATED_GIT_ARGS, *args]
    return run(["git", *args], cwd=cwd, input=input, env=env or clean_env(), timeout=timeout)


ISOLATED_GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def isolated_env(base: Mapping[str, str]) -> dict[str, str]:
    """`base` for the harness's own git on a repository an agent may have touched: no global
    or system config file (`ISOLATED_GIT_ENV`), and none your environment includes — an
    `include.path` (or `includeIf.….path`) among its `GIT_CONFIG_KEY_<n>` settings (the
    others are kept, renumbered) or in `GIT_CONFIG_PARAMETERS` (what `git -c` passes on):
    an agent without the sandbox can put a FIFO in place of any of them."""
    env = {**base, **ISOLATED_GIT_ENV}
    env.pop("GIT_CONFIG_PARAMETERS", None)
    env.pop("GIT_CONFIG", None)  # `git config` would read that file alone
    try:
        count = int(env.pop("GIT_CONFIG_COUNT", "0") or "0")
    except ValueError:
        count = 0
    kept: list[tuple[str, str]] = []
    for n in range(min(max(count, 0), 10_000)):
        key, value = env.pop(f"GIT_CONFIG_KEY_{n}", None), env.pop(f"GIT_CONFIG_VALUE_{n}", "")
        if key is not None and not _INCLUDE_KEY.match(key):
            kept.append((key, value))
    for n, (key, value) in enumerate(kept):
        env[f"GIT_CONFIG_KEY_{n}"], env[f"GIT_CONFIG_VALUE_{n}"] = key, value
    if kept:
        env["GIT_CONFIG_COUNT"] = str(len(kept))
    return env


_INCLUDE_KEY = re.compile(r"(?i)^include(?:if\..*)?\.path$")


def scratch_file() -> IO[bytes]:
    """A file for a command's input or output, in memory where the system allows
    (`memfd_create`), never on the file system of `$TMPDIR`: an agent without the sandbox can
    fill it, or put a file in place of the folder (a full /tmp stopped the run with the
    attempt unrecorded, blamed on the repository's disk)."""
    if hasattr(os, "memfd_create"):
        with contextlib.suppress(OSError):
            return os.fdopen(os.memfd_create("gitimprove", os.MFD_CLOEXEC), "w+b")
    import tempfile  # not at the top: a cold `log` runs git through `pipeline` only

    return tempfile.TemporaryFile()


# excludesFile/attributesFile default to ~/.config/git/*: an agent's FIFO there would hang git
ISOLATED_GIT_ARGS = (
    "-c", "core.fsmonitor=false", "-c", "core.hooksPath=" + os.devnull,
    "-c", "core.excludesFile=" + os.devnull, "-c", "core.attributesFile=" + os.devnull,
)  # fmt: skip


def spawn_detached(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    log_path: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> None:
    """Start a process that outlives us (own session, no inherited pipes), directly: a shell
    in between costs a hook 3-5 ms more. It is our child until we exit, and we do not wait
    for it: the object goes to `subprocess`'s own list of children it reaps at the next
    start of one (in a long-lived process, no zombie stays), without the warning an unwaited
    child gives."""
    import warnings

    log = open(log_path, "ab") if log_path else open(os.devnull, "wb")  # noqa: SIM115
    try:
        child = subprocess.Popen(
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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        del child  # its __del__ runs here (the only reference): still running, kept to reap


class Pipeline:
    """The output of a pipeline as it comes (`out`), and whether every command succeeded."""

    def __init__(self, procs: list[subprocess.Popen[bytes]]) -> None:
        self._procs = procs
        assert procs[-1].stdout is not None
        self.out = procs[-1].stdout

    def ok(self) -> bool:
        """Waits for every command; True when each exited 0."""
        return all(p.wait() == 0 for p in self._procs)


@contextmanager
def pipeline(
    argvs: Sequence[Sequence[str]],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    stdin: int | None = None,
) -> Iterator[Pipeline]:
    """Run commands as a pipeline (each one reads the previous one's output; the first
    reads the file descriptor `stdin`, or nothing), each in its own process group, for the
    caller to read the last one's output while they run (a cold `log` parses notes while git
    is still reading them). On leaving, every group is killed and every command reaped."""
    check_stopping()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        with _registry:
            for argv in argvs:
                procs.append(
                    subprocess.Popen(
                        list(argv),
                        cwd=cwd,
                        env=dict(env) if env is not None else clean_env(),
                        stdin=procs[-1].stdout
                        if procs
                        else (subprocess.DEVNULL if stdin is None else stdin),
                        stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL,
                        start_new_session=True,
                    )
                )
                _live.add(procs[-1].pid)
                if len(procs) > 1:
                    prev = procs[-2].stdout
                    assert prev is not None
                    prev.close()  # the next command holds it now
            if _stopped():
                for p in procs:
                    kill_group(p.pid)
        yield Pipeline(procs)
    finally:
        for p in procs:
            kill_group(p.pid)
        if procs:
            for p in procs:
                if p.stdout is not None:
                    p.stdout.close()
                p.wait()
            with _registry:
                _live.difference_update(p.pid for p in procs)
        check_stopping()
