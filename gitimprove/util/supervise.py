"""The per-attempt supervisor: the agent's process tree dies with the agent or with the harness.

    python -I -S supervise.py <harness pid>
        [--landlock [--write P]… [--hide P]… [--hide-like P]… [--read P]…] -- <command> [args…]

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
  `no_new_privs` and before it runs, without CAP_SYS_ADMIN (which root's `TIOCSTI` into a
  terminal of the user's takes), in a Linux Landlock domain (`landlock`, below): it and
  every descendant may write only beneath the `--write` paths, read nothing beneath the
  `--hide` paths (and every entry whose path starts with a `--hide-like` one when the domain
  is made: the harness's other temporary folders) but the `--read` and `--write` ones
  (`landlock`: reads are carved), and,
  where the kernel scopes them (ABI 6), signal only processes of that domain and connect to
  no abstract unix socket made outside it. A domain that cannot be made runs nothing
  (status 126).

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
PR_CAPBSET_DROP = 24
CAP_SYS_ADMIN = 21  # root's TIOCSTI: typing a command into another terminal of yours
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
# MAKE_SYM (1), REFER (2), TRUNCATE (3), IOCTL_DEV (5); EXECUTE, READ_FILE, READ_DIR (1) are
# handled only when something is hidden (`carve`)
_WRITE_RIGHTS = {1: 0x1FF2, 2: 0x2000, 3: 0x4000, 5: 0x8000}
_READ_RIGHTS = 0x1 | 0x4 | 0x8  # EXECUTE, READ_FILE, READ_DIR
# MAKE_CHAR, MAKE_BLOCK: handled, granted nowhere: a device made by root in its workspace
# (a disk's, /dev/mem) would be written there as a file of the workspace
_NODES = 0x40 | 0x800
# WRITE_FILE, TRUNCATE, IOCTL_DEV, EXECUTE, READ_FILE: what a rule on a file can hold
_FILE_RIGHTS = 0x2 | 0x4000 | 0x8000 | 0x1 | 0x4
_ENTRY = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC  # an entry of a carved folder, as it is
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


def _beneath(path: str, tops: list[str]) -> bool:
    return any(path == top or path.startswith(top.rstrip("/") + "/") for top in tops)


def _holds(path: str, tops: list[str]) -> bool:
    return any(path == top or top.startswith(path.rstrip("/") + "/") for top in tops)


def carve(hidden: list[str], kept: list[str]) -> list[tuple[str, list[tuple[str, int]]]]:
    """The read rules that leave every file readable but what lies beneath `hidden` and not
    beneath `kept` (absolute, resolved paths), by folder: (folder, [(entry's name, rights)]).
    A rule reaches everything beneath its folder, so a folder on the way to a hidden one gets
    none: each of its entries gets one instead, but the next folder of that way, which is
    carved in turn; beneath a hidden folder only the way to a kept one is carved. Links are
    left out (what they lead to is judged where it lies). A carved folder itself cannot be
    listed, and an entry made in it later is not readable: the rules hold the entries there
    now."""
    if _beneath("/", kept):
        return [("/", [(".", _READ_RIGHTS)])]
    out: list[tuple[str, list[tuple[str, int]]]] = []
    todo = ["/"]
    while todo:
        folder = todo.pop()
        prefix = folder.rstrip("/") + "/"
        # by the name of the next step from here: "kept" (a rule of its own), "walk" (carved
        # in turn), "hidden" (nothing); every other entry is granted whole
        steps: dict[str, str] = {}
        inside = _beneath(folder, hidden)  # then nothing but the way to a kept one is granted
        for top in () if inside else hidden:
            if top.startswith(prefix):
                name, _, below = top[len(prefix) :].partition("/")
                steps[name] = "walk" if below or steps.get(name) == "walk" else "hidden"
        for top in kept:
            if not top.startswith(prefix):
                continue
            name = top[len(prefix) :].split("/")[0]
            if top == prefix + name:
                steps[name] = "kept"
            elif steps.get(name) != "kept" and (inside or steps.get(name) == "hidden"):
                steps[name] = "walk"  # a hidden folder holding a kept one
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        rules = []
        for entry in entries:
            step = steps.get(entry.name)
            if step == "walk":
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
            elif step is None and not inside and not entry.is_symlink():
                dir_ = entry.is_dir(follow_symlinks=False)
                rules.append((entry.name, _READ_RIGHTS if dir_ else _READ_RIGHTS & _FILE_RIGHTS))
        out.append((folder, rules))
    return out


def landlock(
    writable: list[str],
    abi: int,
    hidden: list[str] | None = None,
    readable: list[str] | None = None,
    like: list[str] | None = None,
) -> str:
    """Restrict this process (and what it runs) to writing beneath `writable`, the devices of
    `_DEVICES` and `/dev/shm`, with signals and abstract unix sockets scoped to it where `abi`
    has them; with `hidden`, to reading (and running) nothing beneath those folders but what
    lies beneath `readable` or `writable` (`carve`). Each entry whose path starts with one of
    `like` is hidden too, as it is now: one made later is unreadable anyway (`carve`). Returns
    "" once in force, else why not."""
    import ctypes

    hidden = [*(hidden or []), *_alike(like or [])]

    class Ruleset(ctypes.Structure):
        _fields_ = [
            ("handled_access_fs", ctypes.c_uint64),
            ("handled_access_net", ctypes.c_uint64),
            ("scoped", ctypes.c_uint64),
        ]

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    reads = _READ_RIGHTS if hidden else 0
    rights = sum(bits for since, bits in _WRITE_RIGHTS.items() if since <= abi) | reads
    libc = ctypes.CDLL(None, use_errno=True)
    attr = Ruleset(rights, 0, _SCOPES if abi >= LANDLOCK_ABI_SCOPED else 0)
    fd = libc.syscall(LANDLOCK_CREATE_RULESET, ctypes.byref(attr),
                      ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))  # fmt: skip
    if fd < 0:
        return f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}"
    try:
        rule = PathBeneath(0, -1)
        add = (fd, LANDLOCK_RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0))
        rules = [(p, rights & ~_NODES) for p in writable] + [(d, _FILE_RIGHTS) for d in _DEVICES]
        rules.append(("/dev/shm", rights & ~_NODES))
        hidden = [os.path.realpath(p) for p in hidden or []]
        # a readable folder that holds a hidden one (a command naming the repository) is left
        # out: its rule would reach all of it
        readable = [p for p in readable or [] if not _holds(os.path.realpath(p), hidden)]
        rules += [(p, reads) for p in readable]
        for path, allowed in rules:
            try:
                parent = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # not there: nothing to allow
            try:
                if os.fstat(parent).st_mode & 0o170000 != 0o040000:
                    allowed &= _FILE_RIGHTS  # a file takes no right on entries
                rule.allowed_access, rule.parent_fd = allowed & rights, parent
                if rule.allowed_access and libc.syscall(LANDLOCK_ADD_RULE, *add) != 0:
                    return f"landlock_add_rule {path}: {os.strerror(ctypes.get_errno())}"
            finally:
                os.close(parent)
        kept = [os.path.realpath(p) for p in [*writable, *readable]]
        carved = carve(hidden, kept) if hidden else []
        for folder, entries in carved:
            try:
                at = os.open(folder, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                for name, allowed in entries:  # opened by name in the folder: one lookup each
                    try:
                        parent = os.open(name, _ENTRY, dir_fd=at)
                    except OSError:
                        continue
                    rule.allowed_access, rule.parent_fd = allowed, parent
                    failed = libc.syscall(LANDLOCK_ADD_RULE, *add) != 0
                    os.close(parent)
                    if failed:
                        return f"landlock_add_rule {folder}/{name}: " + os.strerror(
                            ctypes.get_errno()
                        )
            finally:
                os.close(at)
        if libc.syscall(LANDLOCK_RESTRICT_SELF, fd, ctypes.c_uint32(0)) != 0:
            return f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}"
    finally:
        os.close(fd)
    return ""


def _alike(prefixes: list[str]) -> list[str]:
    """The entries whose path starts with one of `prefixes` ("/tmp/gitimprove-state-")."""
    out: list[str] = []
    for prefix in prefixes:
        folder, _, start = prefix.rpartition("/")
        try:
            names = os.listdir(folder or "/")
        except OSError:
            continue
        out += [f"{folder}/{name}" for name in names if name.startswith(start)]
    return out


def _on_signal(signum: int, frame: object) -> None:
    kill_tree()
    os._exit(128 + signum)


def main(argv: list[str]) -> int:
    paths: dict[str, list[str]] = {"--write": [], "--hide": [], "--hide-like": [], "--read": []}
    contained = len(argv) > 2 and argv[2] == "--landlock"
    rest = argv[3:] if contained else argv[2:]
    while len(rest) > 1 and rest[0] in paths:
        paths[rest[0]].append(rest[1])
        rest = rest[2:]
    if len(argv) < 4 or not rest or rest[0] != "--" or len(rest) < 2:
        sys.stderr.write(
            "usage: supervise.py <harness pid> [--landlock [--write PATH]... [--hide PATH]... "
            "[--hide-like PATH]... [--read PATH]...] -- <command> [args...]\n"
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
            # Landlock grants the command's own new terminals (`/dev/pts`) only with each of
            # yours: root, which alone holds the capability, gives it up for what it runs
            _prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN)
            try:
                why = landlock(paths["--write"], landlock_abi(), paths["--hide"], paths["--read"],
                               paths["--hide-like"])  # fmt: skip
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
