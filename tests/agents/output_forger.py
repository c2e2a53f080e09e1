"""A hostile agent whose code under test writes into the benchmark's own stdout.

The sealed benchmark runs the mutable `src/work.py` in a child process and prints its
`METRIC` line last. The agent makes the change worse (`src/value.txt` 100 -> 101) and has
`work.py` leave a double-forked grandchild in its own session that reaches the benchmark's
stdout while the benchmark still runs, waits (busy-polling the benchmark's `wchar`) for the
benchmark's line and writes a better one right after it, before the benchmark exits.
argv[1] is how it reaches the stdout:
- `procfd`: opens `/proc/<benchmark pid>/fd/1`;
- `getfd`: takes the descriptor itself (`pidfd_getfd`);
argv[2] is a mark the forger's process carries, so a test can look for survivors.
"""

import json
import pathlib
import sys

how, mark = sys.argv[1], sys.argv[2]
pathlib.Path("src/value.txt").write_text("101\n")
pathlib.Path("src/work.py").write_text(
    f"""import ctypes, os, sys

HOW, MARK = {how!r}, {mark!r}


def bench_pid():
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                with open(f"/proc/{{pid}}/cmdline", "rb") as f:
                    if b"bench.py" in f.read():
                        return int(pid)
            except OSError:
                pass
    return None


def reach(pid):
    if HOW == "procfd":
        return os.open(f"/proc/{{pid}}/fd/1", os.O_WRONLY)
    pidfd = os.pidfd_open(pid)
    fd = ctypes.CDLL(None, use_errno=True).syscall(438, pidfd, 1, 0)  # pidfd_getfd
    if fd < 0:
        raise OSError(ctypes.get_errno(), "pidfd_getfd")
    return fd


r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        sys.argv[0] = MARK
        null = os.open("/dev/null", os.O_RDWR)
        for i in (0, 1, 2):
            os.dup2(null, i)
        try:
            pid = bench_pid()
            out = reach(pid)
            io = os.open(f"/proc/{{pid}}/io", os.O_RDONLY)
            wchar = lambda: int(os.pread(io, 4096, 0).split(b"wchar:")[1].split()[0])
            start = wchar()
            os.write(w, b"x")  # armed: let the code under test end
            while wchar() == start:
                pass
            os.write(out, b"METRIC score=1\\n")
        except Exception:
            os.write(w, b"x")
        os._exit(0)
    os._exit(0)
os.close(w)
os.read(r, 1)
"""
)
print(json.dumps({"description": "forge the benchmark's line through " + how}))
