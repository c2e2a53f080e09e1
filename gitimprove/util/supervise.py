"""The per-attempt supervisor: the agent's process tree dies with the agent or with the harness.

    python -I -S supervise.py <harness pid> [--landlock [--write PATH]…] -- <command> [args…]

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
  output while nothing reads) is seen as if it had stopped the harness;
- with `--landlock` (`[agent] sandbox = "landlock"`), puts the agent's process, after
  `no_new_privs` and before it runs, in a Linux Landlock domain (`landlock`, below): it and
  every descendant may write only beneath the `--write` paths, and, where the kernel scopes
  them (ABI 6), signal only processes of that domain and connect to no abstract unix socket
  made outside it. A domain that cannot be made runs nothing (status 126).

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
# Landlock (linux/landlock.h): the same system-call numbers on x86-64, arm64 and the others
LANDLOCK_CREATE_RULESET, LANDLOCK_ADD_RULE, LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
LANDLOCK_ABI_NEEDED = 3  # the first that can refuse a truncate()
LANDLOCK_ABI_SCOPED = 6  # signals and abstract unix sockets scoped to the domain
# every right that changes the file system, by the ABI that brought it: ACCESS_FS_WRITE_FILE,
# REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK,
# MAKE_SYM (1), REFER (2), TRUNCATE (3), IOCTL_DEV (5); EXECUTE, READ_FILE, READ_DIR are never
# handled: reads stay allowed everywhere
_WRITE_RIGHTS = {1: 0x1FF2, 2: 0x2000, 3: 0x4000, 5: 0x8000}
_FILE_RIGHTS = 0x2 | 0x4000 | 0x8000  # WRITE_FILE, TRUNCATE, IOCTL_DEV: a rule on a file
_SCOPES = 0x1 | 0x2  # LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET, LANDLOCK_SCOPE_SIGNAL
# the devices bubblewrap's `--dev` gives, writable (a disk's device, even to root, is not)
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty",
            "/dev/ptmx", "/dev/pts")  # fmt: skip
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


def landlock_abi() -> int:
    """The Landlock ABI version of the running kernel, 0 where it has none (or refuses it)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        version = libc.syscall(LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0),
                               ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))  # fmt: skip
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def landlock(writable: list[str], abi: int) -> str:
    """Restrict this process (and what it runs) to writing beneath `writable`, the devices of
    `_DEVICES` and `/dev/shm`, with signals and abstract unix sockets scoped to it where `abi`
    has them. Returns "" once in force, else why not."""
    import ctypes

    class Ruleset(ctypes.Structure):
        _fields_ = [
            ("handled_access_fs", ctypes.c_uint64),
            ("handled_access_net", ctypes.c_uint64),
            ("scoped", ctypes.c_uint64),
        ]

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    rights = sum(bits for since, bits in _WRITE_RIGHTS.items() if since <= abi)
    libc = ctypes.CDLL(None, use_errno=True)
    attr = Ruleset(rights, 0, _SCOPES if abi >= LANDLOCK_ABI_SCOPED else 0)
    fd = libc.syscall(LANDLOCK_CREATE_RULESET, ctypes.byref(attr),
                      ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))  # fmt: skip
    if fd < 0:
        return f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}"
    try:
        rules = [(p, rights) for p in writable] + [(d, _FILE_RIGHTS) for d in _DEVICES]
        rules.append(("/dev/shm", rights))
        for path, allowed in rules:
            try:
                parent = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # not there: nothing to allow
            try:
                if os.fstat(parent).st_mode & 0o170000 != 0o040000:
                    allowed &= _FILE_RIGHTS  # a file takes no right on entries
                rule = PathBeneath(allowed & rights, parent)
                if libc.syscall(LANDLOCK_ADD_RULE, fd, LANDLOCK_RULE_PATH_BENEATH,
                                ctypes.byref(rule), ctypes.c_uint32(0)) != 0:  # fmt: skip
                    return f"landlock_add_rule {path}: {os.strerror(ctypes.get_errno())}"
            finally:
                os.close(parent)
        if libc.syscall(LANDLOCK_RESTRICT_SELF, fd, ctypes.c_uint32(0)) != 0:
            return f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}"
    finally:
        os.close(fd)
    return ""


def _on_signal(signum: int, frame: object) -> None:
    kill_tree()
    os._exit(128 + signum)


def main(argv: list[str]) -> int:
    writable: list[str] = []
    contained = len(argv) > 2 and argv[2] == "--landlock"
    rest = argv[3:] if contained else argv[2:]
    while len(rest) > 1 and rest[0] == "--write":
        writable.append(rest[1])
        rest = rest[2:]
    if len(argv) < 4 or not rest or rest[0] != "--" or len(rest) < 2:
        sys.stderr.write(
            "usage: supervise.py <harness pid> [--landlock [--write PATH]...] -- <command> "
            "[args...]\n"
        )
        return 2
    parent, command = int(argv[1]), rest[1:]
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
        if contained:  # after no_new_privs (_mark), which Landlock needs without privileges
            try:
                why = landlock(writable, landlock_abi())
            except (OSError, AttributeError, ValueError) as exc:  # no ctypes, no syscall()
                why = str(exc) or type(exc).__name__
            if why:
                sys.stderr.write(f"cannot contain the command with Landlock: {why}\n")
                os._exit(126)
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
