"""The per-attempt supervisor: the agent's process tree dies with the agent or with the harness.

    python -I -S supervise.py <harness pid> -- <command> [args…]

Without the sandbox an agent runs under this small process (a child of the harness, started
as a file with no imports of the package, so it starts in a few milliseconds). It

- is a child subreaper (Linux `prctl(PR_SET_CHILD_SUBREAPER)`): whatever the agent starts —
  double-forked, `setsid`, with a scrubbed environment — stays in its tree, reparented to it;
- has `PR_SET_PDEATHSIG`: when the harness dies, even by `kill -9`, the kernel signals it and
  it kills its whole tree before it exits (the harness's own subreaper and token sweep are
  gone with the harness then);
- kills every remaining descendant once the agent exits, then exits with the agent's status;
- marks the agent's process, before it runs, with what no process can shed: `no_new_privs`
  and `MARK_FILTERS` allow-everything seccomp filters (inherited by every descendant across
  `fork`, `exec`, `setsid` and `env -i`, never removable, shown to everyone in
  `/proc/<pid>/status`). A marked process whose nearest unmarked ancestor is not a supervisor
  lost its supervisor (killed, by the agent itself or with the harness): `run --resume` and
  `doctor --repair` find and kill it (util/marks.py), token or not;
- passes a SIGCONT it gets on to the harness: a process that stopped it (to write into the
  output while nothing reads) is seen as if it had stopped the harness.

Killing is stop-then-kill, repeated until the tree is empty, so nothing in it can fork a
replacement between the kills. On systems without `prctl` it only runs the command.
"""

from __future__ import annotations

import os
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2
MARK_FILTERS = 4  # stacked on whatever filters the harness itself runs under
_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out.extend(int(x) for x in f.read().split())
        except (OSError, ValueError):
            continue
    return out


def tree(root: int) -> list[int]:
    """Every descendant of `root`, from the kernel's children lists."""
    found: list[int] = []
    todo = [root]
    while todo:
        for kid in _children(todo.pop()):
            if kid not in found:
                found.append(kid)
                todo.append(kid)
    return found


def kill_tree() -> None:
    """Stop, kill and reap every descendant until none is left."""
    me = os.getpid()
    for _ in range(200):
        pids = tree(me)
        if not pids:
            return
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        while True:  # every child of ours is ours to reap (we started or adopted it)
            try:
                got, _ = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            except InterruptedError:
                continue
            if got == 0:
                break


def _prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(option, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _mark() -> bool:
    """`no_new_privs` and MARK_FILTERS seccomp filters that allow every call: the mark every
    descendant of this process carries for good (see the module's docstring)."""
    try:
        import ctypes

        class Insn(ctypes.Structure):
            _fields_ = [
                ("code", ctypes.c_ushort),
                ("jt", ctypes.c_ubyte),
                ("jf", ctypes.c_ubyte),
                ("k", ctypes.c_uint),
            ]

        class Prog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Insn))]

        allow = (Insn * 1)(Insn(0x06, 0, 0, 0x7FFF0000))  # BPF_RET|BPF_K SECCOMP_RET_ALLOW
        prog = Prog(1, allow)
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        for _ in range(MARK_FILTERS):
            if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
                return False
        return True
    except (OSError, AttributeError):
        return False


def _on_signal(signum: int, frame: object) -> None:
    kill_tree()
    os._exit(128 + signum)


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: supervise.py <harness pid> -- <command> [args...]\n")
        return 2
    parent, command = int(argv[1]), argv[3:]
    for sig in _SIGNALS:
        signal.signal(sig, _on_signal)
    # Stopped and continued (a process of the tree stopped us to write while nothing read):
    # the harness counts its own SIGCONTs and never trusts what ran meanwhile, so pass it on.
    signal.signal(signal.SIGCONT, lambda signum, frame: os.kill(parent, signal.SIGCONT))
    if sys.platform.startswith("linux"):
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the harness died before the death signal was set
            _on_signal(signal.SIGTERM, None)
    pid = os.fork()
    if pid == 0:
        for sig in (*_SIGNALS, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCONT):
            signal.signal(sig, signal.SIG_DFL)
        if sys.platform.startswith("linux"):
            _mark()
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            sys.stderr.write(f"cannot run {command[0]}: {exc}\n")
        os._exit(127)
    status = 0
    while True:
        try:
            got, st = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if got == pid:
            status = st
            break
    kill_tree()
    if os.WIFSIGNALED(status):
        death = os.WTERMSIG(status)
        signal.signal(death, signal.SIG_DFL)
        os.kill(os.getpid(), death)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
