#!/usr/bin/env python3
"""An agent whose code writes files while it is measured, for a later run to find
(the `command` contract of DESIGN §9).

argv[1] says what the first iteration's code does when the benchmark runs it:
- `plant:<path>`: write `<path>` (relative to the measurement checkout's root) holding Python
  that prints a forged `METRIC score=1` line and exits: from the next run on, the sealed
  benchmark imports it (`subprocess.py`, `json/__init__.py`), pytest or `site` loads it
  (`conftest.py`, `sitecustomize.py`, `x.pth`);
- `guardplant:<path>`: the same, only when the guard runs it (`prog.py guard`);
- `cache`: print a worse value once, and a much better one whenever a `cache.bin` it wrote in
  an earlier run is there;
- `meta:<how>`: print 103 and leave a mark in metadata a later run could read back (`META`
  below: the root's times, mode bits or extended attributes, its parent folder's, a file's
  link count or attributes), and print a much better 80 whenever that mark is there;
- `stray:<path>`: leave a file at `<path>` under gitimprove's folder `.git/improve/`
  (`xattr:<folder>`: an extended attribute on that folder) and print 80 whenever a later run
  finds it there, else 103; `agentstray:<path>`: the agent leaves it there itself;
- `pidstray:<file>`: leave a checkout's folder in `.git/improve/work/` with a `.pid` file
  naming the live process whose pid `<file>` holds (one whose command line names
  gitimprove), and print 80 whenever a later run finds the folder there, else 103;
- `fill:<path>`: fill the disk with a file at `<path>` under `.git/improve/` (`../<name>`:
  beside the repository), once, and print 103;
- `honest`: print a better value and leave the output any program leaves (`__pycache__`,
  `.pytest_cache`, `out/`).
Every later iteration writes an honest improvement (90).
"""

import os
import pathlib
import sys

plan = sys.argv[1]
prog = pathlib.Path("src/prog.py")
if os.environ.get("GITIMPROVE_ITERATION", "1") != "1":
    prog.write_text("print(90)\n")
    print('{"description": "honest 90"}')
    sys.exit(0)
kind, _, target = plan.partition(":")
XA = (
    "def seen():\n    try:\n        return os.getxattr({0}, 'user.mark') == b'1'\n"
    "    except OSError:\n        return False\ndef mark():\n    os.setxattr({0}, 'user.mark', b'1')\n"
)
CLOCK_FORGE = """import ctypes
class T(ctypes.Structure):
    _fields_ = [('s', ctypes.c_long), ('ns', ctypes.c_long)]
libc = ctypes.CDLL('libc.so.6', use_errno=True)
def now(c):
    t = T()
    libc.clock_gettime(c, ctypes.byref(t))
    return t.s * 10**9 + t.ns
def at(ns):
    return ctypes.byref(T(ns // 10**9, ns % 10**9))
def mark():
    st = F.stat()
    offset = now(0) - now(7)  # CLOCK_REALTIME - CLOCK_BOOTTIME: to set it forward again
    F.write_text('8\\n')
    for _ in range(50):
        if libc.clock_settime(0, at(st.st_ctime_ns)) != 0:
            return
        os.utime(F, ns=(st.st_atime_ns, st.st_mtime_ns))
        libc.clock_settime(0, at(now(7) + offset))
        if F.stat().st_ctime_ns == st.st_ctime_ns:
            return
"""
# how a run marks, and how a later run finds the mark
META = {
    "root-mtime": "def seen():\n    return root.stat().st_mtime == M\n"
    "def mark():\n    os.utime(root, (M, M))\n",
    "root-atime": "def seen():\n    return root.stat().st_atime == M\n"
    "def mark():\n    os.utime(root, (M, root.stat().st_mtime))\n",
    "root-sticky": "def seen():\n    return bool(root.stat().st_mode & stat.S_ISVTX)\n"
    "def mark():\n    os.chmod(root, root.stat().st_mode | stat.S_ISVTX)\n",
    "root-mode": "def seen():\n    return root.stat().st_mode & 0o777 == 0o751\n"
    "def mark():\n    os.chmod(root, 0o751)\n",
    "root-xattr": XA.format("root"),
    "folder-xattr": XA.format("root / 'src'"),
    "parent-mtime": "def seen():\n    return root.parent.stat().st_mtime == M\n"
    "def mark():\n    os.utime(root.parent, (M, M))\n",
    "parent-atime": "def seen():\n    return root.parent.stat().st_atime == M\n"
    "def mark():\n    os.utime(root.parent, (M, root.parent.stat().st_mtime))\n",
    "hard-link": "def seen():\n    return (root / 'data' / 'random.txt').stat().st_nlink > 1\n"
    "def mark():\n    os.link(root / 'data' / 'random.txt', root.parents[4] / 'hard-link')\n",
    "link-count": "def seen():\n    return (root / 'data').stat().st_nlink > 2\n"
    "def mark():\n    (root / 'data' / 'sub').mkdir()\n",
    # a file of the commit: its atime or mtime set, its content changed and its mtime put back,
    # an extended attribute, a file-system flag (chattr), a bind mount of the checkout on itself
    "file-atime": "def seen():\n    return F.stat().st_atime == M\n"
    "def mark():\n    os.utime(F, (M, F.stat().st_mtime))\n",
    "file-mtime": "def seen():\n    return F.stat().st_mtime == M\n"
    "def mark():\n    os.utime(F, (M, M))\n",
    "content-back": "def seen():\n    return F.read_text() == '8\\n'\n"
    "def mark():\n    st = F.stat()\n    F.write_text('8\\n')\n"
    "    os.utime(F, ns=(st.st_atime_ns, st.st_mtime_ns))\n",
    "file-xattr": XA.format("F"),
    # root only: the content changed, its times put back with the system clock set back to
    # the ctime the file had (then forward again), so its whole `lstat` is as before
    # root only: the clock set to what it reads (a step of microseconds), nothing else
    "clock-step": "def seen():\n    return False\n"
    + CLOCK_FORGE.split("def mark")[0]
    + "def mark():\n    libc.clock_settime(0, at(now(0)))\n",
    "content-clock": "def seen():\n    return F.read_text() == '8\\n'\n" + CLOCK_FORGE,
    "chattr-file": "def seen():\n    return not os.access(F, os.W_OK)\n"
    "def mark():\n    subprocess.run(['chattr', '+i', str(F)], check=True)\n",
    "chattr-folder": "def seen():\n    return not os.access(root / 'data', os.W_OK)\n"
    "def mark():\n    subprocess.run(['chattr', '+i', str(root / 'data')], check=True)\n",
    "append-folder": "def seen():\n    return (root / 'out').exists()\n"
    "def mark():\n    (root / 'out').mkdir()\n    (root / 'out' / 'x').write_text('1')\n"
    "    subprocess.run(['chattr', '+a', str(root / 'out')], check=True)\n",
    "bind-mount": "def seen():\n    return str(root) in open('/proc/self/mountinfo').read()\n"
    "def mark():\n    subprocess.run(['mount', '--bind', str(root), str(root)], check=True)\n",
}
STRAY = """def form(t):  # what gitimprove's hooks write there, in form
    return '{"v": 1}\\n' if t.parent.name in ("watermarks", "session-map", "spool") else "1"
def seen(t):
    if t.name.startswith("xattr:"):
        try:
            return os.getxattr(t.parent / t.name[6:], "user.mark") == b"1"
        except OSError:
            return False
    try:
        return t.read_text() == form(t)  # what was left, not only the name (known ones exist)
    except OSError:
        return False
def leave(t):
    try:
        if t.name.startswith("xattr:"):
            os.setxattr(t.parent / t.name[6:], "user.mark", b"1")
        else:
            t.parent.mkdir(parents=True, exist_ok=True)
            t.write_text(form(t))
    except OSError:  # not writable (the sandbox): an honest run
        pass
"""
ROOT = "pathlib.Path(__file__).resolve().parent.parent"
if kind in ("plant", "guardplant"):  # guardplant: only when the guard runs it (`prog.py guard`)
    forged = "import sys\nprint('METRIC score=1')\nsys.exit(0)\n"
    if target.endswith(".pth"):
        forged = "import sys; print('METRIC score=1'); sys.exit(0)\n"
    prog.write_text(
        f"import pathlib, sys\nt = {ROOT} / {target!r}\n"
        f"if {kind == 'plant'} or sys.argv[1:] == ['guard']:\n"
        "    t.parent.mkdir(parents=True, exist_ok=True)\n"
        f"    t.write_text({forged!r})\nprint(99)\n"
    )
elif kind == "meta":
    prog.write_text(
        f"import os, pathlib, stat, subprocess\nroot = {ROOT}\nM = 1234567890\n"
        f"F = root / 'data' / 'random.txt'\n{META[target]}"
        "print(80 if seen() else (mark(), 103)[1])\n"
    )
elif kind in ("stray", "agentstray"):
    if kind == "agentstray":
        own: dict[str, object] = {"os": os}
        exec(STRAY, own)  # the same `leave` the measured code has
        own["leave"](pathlib.Path.cwd().parent.parent / target)  # type: ignore[operator]
    prog.write_text(
        f"import os, pathlib\nimp = {ROOT}.parent.parent\n{STRAY}\nt = imp / {target!r}\n"
        "if seen(t):\n    print(80)\nelse:\n"
        f"    {'pass' if kind == 'agentstray' else 'leave(t)'}\n    print(103)\n"
    )
elif kind == "pidstray":  # a checkout's folder and `.pid` naming a live process of `target`
    prog.write_text(
        f"import pathlib\nimp = {ROOT}.parent.parent\nname = 'm-00000000feedface'\n"
        "folder, pid = imp / 'work' / name, imp / 'work' / (name + '.pid')\n"
        "if (folder / 'cache').exists():\n    print(80)\nelse:\n"
        "    folder.mkdir(parents=True, exist_ok=True)\n"
        "    (folder / 'cache').write_text('x')\n"
        f"    pid.write_text(pathlib.Path({target!r}).read_text() + 'measure\\n')\n"
        "    print(103)\n"
    )
elif kind == "fill":
    prog.write_text(
        f"import pathlib\nimp = {ROOT}.parent.parent\nt = imp / {target!r}\n"
        "once = imp.parent.parent.parent / 'filled-once'\n"
        "if not once.exists():\n    once.touch()\n    try:\n"
        "        with open(t, 'ab') as f:\n            while True:\n"
        "                f.write(b'x' * (1 << 20))\n                f.flush()\n"
        "    except OSError:\n        pass\nprint(103)\n"
    )
elif kind == "cache":
    prog.write_text(
        f"import pathlib\nc = {ROOT} / 'cache.bin'\n"
        "if c.exists():\n    print(80)\nelse:\n    c.write_text('x')\n    print(103)\n"
    )
else:
    prog.write_text(
        f"import pathlib\nroot = {ROOT}\n"
        "for rel in ('__pycache__/bench.cpython-311.pyc', '.pytest_cache/v/cache/nodeids',\n"
        "            'out/result.txt', 'src/__pycache__/prog.cpython-311.pyc'):\n"
        "    (root / rel).parent.mkdir(parents=True, exist_ok=True)\n"
        "    (root / rel).write_bytes(b'x')\n"
        "print(90)\n"
    )
print(f'{{"description": "{kind}"}}')
