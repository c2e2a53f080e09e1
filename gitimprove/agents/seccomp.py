"""The sandbox's seccomp filter: no process in it can create an AF_UNIX socket.

io_uring (`io_uring_setup`, `io_uring_enter`, `io_uring_register`) is refused too: its
`IORING_OP_SOCKET` and `IORING_OP_CONNECT` run in the kernel, past any system-call filter.

A read-only bind mount does not stop `connect()` on a socket file, and abstract sockets
(`\\0name`) live in the network namespace the sandbox shares, so hiding folders cannot keep
an agent from a tmux server, the user's ssh-agent, a docker socket or a D-Bus bus. Refusing
`socket(AF_UNIX, …)` (EPERM) can: without a socket there is nothing to connect with.
`socketpair()` (what pipes between a process and its children use) stays allowed.

The metric's and the guard's filter (`measure=True`) also refuses reaching into another
process: `ptrace`, `process_vm_readv`/`process_vm_writev` and `pidfd_getfd`. The code the
benchmark runs shares its user: without this it could take the benchmark's stdout descriptor
(`pidfd_getfd`) or write into its memory and add a line after the benchmark's last one.

The filter is classic BPF, assembled here (a few instructions, no library) and handed to
bubblewrap with `--seccomp FD`. On x86-64 the x32 system calls are refused and 32-bit
programs may not use `socketcall` (through which `socket` cannot be checked) or
`socket(AF_UNIX)`. On other machines there is no filter (see docs/integrity.md).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import platform
import struct
import tempfile
import threading

# classic BPF
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_EPERM = 0x00050000 | 1
_AF_UNIX = 1
_X32_BIT = 0x40000000

# (audit arch, socket syscall number) of the machines the filter knows
_NATIVE = {
    "x86_64": (0xC000003E, 41),
    "aarch64": (0xC00000B7, 198),
}
_I386 = (0x40000003, 359, 102)  # arch, socket, socketcall
# ptrace, process_vm_readv, process_vm_writev, pidfd_getfd: refused to measured code
_REACH = {"x86_64": (101, 310, 311, 438), "aarch64": (117, 270, 271, 438)}
_REACH_I386 = (26, 347, 348, 438)
# io_uring_setup, io_uring_enter, io_uring_register: the same numbers on every architecture.
# An io_uring submits socket() and connect() from the kernel, where no filter sees them.
_IO_URING = (425, 426, 427)


def _assemble(program: list[tuple[str, int, str, str]]) -> bytes:
    """[(op, k, jump-if-true label, jump-if-false label)], labels "" (next) or a name given by
    an ("label", 0, name, "") entry; returns the `struct sock_filter` array."""
    labels: dict[str, int] = {}
    code: list[tuple[str, int, str, str]] = []
    for op, k, jt, jf in program:
        if op == "label":
            labels[jt] = len(code)
        else:
            code.append((op, k, jt, jf))
    ops = {"ld": _LD_W_ABS, "jeq": _JEQ_K, "jge": _JGE_K, "ret": _RET_K}
    out = b""
    for i, (op, k, jt, jf) in enumerate(code):
        t = labels[jt] - i - 1 if jt else 0
        f = labels[jf] - i - 1 if jf else 0
        out += struct.pack("<HBBI", ops[op], t, f, k)
    return out


def program(machine: str | None = None, *, measure: bool = False) -> bytes | None:
    """The filter for this machine (None where it is not known); with `measure`, the one for
    the metric and the guard (no reaching into another process either)."""
    machine = machine or platform.machine()
    found = _NATIVE.get(machine)
    if found is None:
        return None
    arch, socket_nr = found
    x86 = machine == "x86_64"
    reach = _REACH[machine] if measure else ()
    code: list[tuple[str, int, str, str]] = [
        ("ld", 4, "", ""),  # seccomp_data.arch
        ("jeq", arch, "", "other_arch"),
        ("ld", 0, "", ""),  # seccomp_data.nr
    ]
    if x86:
        code.append(("jge", _X32_BIT, "deny", ""))
    code += [("jeq", nr, "deny", "") for nr in (*_IO_URING, *reach)]
    code += [
        ("jeq", socket_nr, "", "allow"),
        ("ld", 16, "", ""),  # the low word of args[0]: the domain (an int)
        ("jeq", _AF_UNIX, "deny", "allow"),
        ("label", 0, "other_arch", ""),
    ]
    if x86:
        i386, socket32, socketcall = _I386
        code += [
            ("jeq", i386, "", "allow"),
            ("ld", 0, "", ""),
            ("jeq", socketcall, "deny", ""),
            *[("jeq", nr, "deny", "") for nr in (*_IO_URING, *(_REACH_I386 if measure else ()))],
            ("jeq", socket32, "", "allow"),
            ("ld", 16, "", ""),
            ("jeq", _AF_UNIX, "deny", "allow"),
        ]
    code += [
        ("label", 0, "allow", ""),
        ("ret", _RET_ALLOW, "", ""),
        ("label", 0, "deny", ""),
        ("ret", _RET_EPERM, "", ""),
    ]
    return _assemble(code)


_lock = threading.Lock()
_files: dict[bool, str] = {}


def filter_file(*, measure: bool = False) -> str | None:
    """A file holding the filter, private to this process (removed at exit); None where
    there is no filter for this machine."""
    with _lock:
        known = _files.get(measure)
        if known is not None and os.path.exists(known):
            return known
        data = program(measure=measure)
        if data is None:
            return None
        fd, path = tempfile.mkstemp(prefix="gitimprove-seccomp-", suffix=".bpf")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        _files[measure] = path
        atexit.register(_remove, path)
        return path


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
