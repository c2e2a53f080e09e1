"""What a hostile agent leaves in its workspace in one attempt never reaches the next one's
renewed workspace (git/renew.py), with the sandbox and without: special files (a FIFO, a
socket, a device), a giant sparse file, a name of non-UTF-8 bytes, a hard link to a tracked
file, setuid/setgid/sticky bits, an extended attribute, a folder turned into a link and back,
a folder's times put back, nested empty folders, a case-only rename, and processes left to
write later (double-forked into their own session, or in a pid namespace of their own). The
agent reports a digest of everything it sees (content, kind, mode bits, link count,
extended attributes, ignored files and empty folders included)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gitimprove.agents.sandbox import bwrap_usable
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project

VIEW = r"""
import hashlib, json, os, pathlib, stat, subprocess, sys, time
log = pathlib.Path(sys.argv[1])
n = int(os.environ["GITIMPROVE_ITERATION"])
root = pathlib.Path.cwd()
view = {}
for top, dirs, files in os.walk(root):
    dirs[:] = [d for d in dirs if not (top == str(root) and d == ".git")]
    rel_top = os.path.relpath(top, root)
    for name in dirs + files:
        rel = name if rel_top == "." else rel_top + "/" + name
        full = os.path.join(top, name)
        st = os.lstat(full)
        try:
            xattrs = sorted(os.listxattr(full, follow_symlinks=False))
        except OSError:
            xattrs = []
        meta = [oct(stat.S_IMODE(st.st_mode)), st.st_nlink if not stat.S_ISDIR(st.st_mode) else 0]
        if stat.S_ISLNK(st.st_mode):
            view[rel] = ["link", os.readlink(full), xattrs]
        elif stat.S_ISDIR(st.st_mode):
            view[rel] = ["dir", "", xattrs, oct(stat.S_IMODE(st.st_mode))]
        elif stat.S_ISREG(st.st_mode):
            view[rel] = ["file", pathlib.Path(full).read_bytes().decode("utf-8", "replace"),
                         xattrs, *meta]
        else:
            view[rel] = ["special", oct(st.st_mode), xattrs]
same = {k: v for k, v in view.items() if k != "src/value.txt"}
digest = hashlib.sha256(json.dumps(same, sort_keys=True).encode()).hexdigest()[:12]
try:
    (log / f"{n}.json").write_text(json.dumps(view))
except OSError:
    pass
"""

TAMPER = r"""
import socket
def attempt(fn):
    try:
        fn()
    except Exception:
        pass
b = pathlib.Path("build")
b.mkdir(exist_ok=True)  # ignored
attempt(lambda: os.mkfifo("build/fifo"))
def sock():
    s = socket.socket(socket.AF_UNIX)
    s.bind("build/sock")
attempt(sock)
attempt(lambda: os.mknod("build/null", 0o666 | stat.S_IFCHR, os.makedev(1, 3)))
def sparse():
    with open("build/sparse", "wb") as f:
        f.truncate(1 << 40)
attempt(sparse)
attempt(lambda: open(b"build/\xff\xfe-name", "wb").write(b"bytes\n"))
attempt(lambda: os.link("d1/f.txt", "build/hard"))
attempt(lambda: os.chmod("d1/g.txt", 0o4644))
attempt(lambda: os.chmod("d2", 0o3755))
attempt(lambda: os.setxattr("d3/h.txt", "user.left", b"by the agent"))
attempt(lambda: os.setxattr("d3", "user.left", b"by the agent"))
def flip():
    os.rename("d4", "build/d4-away")
    os.symlink("build/d4-away", "d4")
    os.unlink("d4")
    os.rename("build/d4-away", "d4")
attempt(flip)
def folder_times():
    st = os.lstat("d5")
    pathlib.Path("d5/tmp.txt").write_text("x\n")
    os.unlink("d5/tmp.txt")
    os.utime("d5", ns=(st.st_atime_ns, st.st_mtime_ns))
attempt(folder_times)
attempt(lambda: os.makedirs("empty/deeper/still"))
attempt(lambda: os.makedirs("d1/empty"))
def later(folder, name):
    # holds the folder open (the workspace is renamed and renewed meanwhile), writes later
    return (
        "import os, time; fd = os.open(%r, os.O_RDONLY)\n"
        "try:\n open(%r, 'w').write(str(os.getpid()))\n"
        "except OSError:\n pass\n"
        "time.sleep(1.5)\n"
        "f = os.open(%r, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=fd)\n"
        "os.write(f, b'LATE\\n'); time.sleep(30)"
        % (folder, str(log / f"pid-{n}-{name}"), name)
    )
if os.fork() == 0:  # double-forked into its own session
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", later(str(root / "d1"), "f.txt")])
    os._exit(0)
subprocess.Popen(
    ["unshare", "-Urpf", sys.executable, "-c", later(str(root / "d2"), "k.txt")],
    start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
)
if n % 2 == 0:
    attempt(lambda: os.rename("d6/Case.txt", "d6/case.txt"))  # out of scope: never kept
    value = float(pathlib.Path("src/value.txt").read_text())
    pathlib.Path("src/value.txt").write_text(f"{value - 1:g}\n")
else:
    value = float(pathlib.Path("src/value.txt").read_text())
    pathlib.Path("src/value.txt").write_text(f"{value - 1:g}\n")
time.sleep(0.2)
print(json.dumps({"description": f"saw {digest} in {root.name}"}))
"""

FILES = {
    ".gitignore": "build/\n",
    "d1/f.txt": "f\n",
    "d1/g.txt": "g\n",
    "d2/k.txt": "k\n",
    "d3/h.txt": "h\n",
    "d4/i.txt": "i\n",
    "d4/deep/j.txt": "j\n",
    "d5/l.txt": "l\n",
    "d6/Case.txt": "case\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_nothing_an_agent_leaves_reaches_the_next_renewed_workspace(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(VIEW + TAMPER)
    log = tmp_path / "log"
    log.mkdir()
    value_project(tmp_repo, f"{sys.executable} {agent} {log}", files=FILES, sandbox=sandbox)
    if sandbox == "bwrap" and not bwrap_usable():
        pytest.skip("bubblewrap is not installed or cannot create its namespaces here")
    res = tmp_repo.cli("run", "--run", "w", "-n", "5", "--json")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "w")[1:]
    assert len(rows) == 5, rows
    first = None
    for row in rows:
        n = row["iteration"]
        if sandbox == "none":
            view = json.loads((log / f"{n}.json").read_text())
            view.pop("src/value.txt")
            if first is None:
                first = view
            assert view == first, n
        words = row["description"].split()
        assert words[0] == "saw", row
    # every attempt sees the same files (src/value.txt aside) as the first, written anew
    digests = {row["description"].split()[1] for row in rows}
    assert len(digests) == 1, [r["description"] for r in rows]
    assert [r["status"] for r in rows] == ["keep", "out-of-scope"] * 2 + ["keep"], rows
    if sandbox == "none":  # every process an agent left was killed with it
        assert len(list(log.glob("pid-*"))) == 10, sorted(p.name for p in log.iterdir())
        assert _left(str(log)) == []  # found by the path each one names (pid namespaces too)
    stop = [json.loads(line) for line in res.stdout.splitlines() if '"stop"' in line][-1]
    assert stop["checkouts"]["renewed"] == 4, stop


def _left(mark: str) -> list[int]:
    """Live processes whose command line names `mark`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if mark.encode() in cmd and state != "Z":
            found.append(int(entry.name))
    return found
