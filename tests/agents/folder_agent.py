#!/usr/bin/env python3
"""An agent whose code, when the benchmark runs it, changes gitimprove's own folder
`.git/improve/` into something shaped like what gitimprove leaves there, for a later run to
find (the `command` contract of DESIGN §9).

argv[1] names what the first iteration's code does (`c0:<case>`: in a tournament, candidate
0's only) (`CASES` below: each a `leave(imp)` that
changes the folder and a `seen(imp)` that finds the change again); it prints 80 whenever a
later run finds its mark, else 103. `agent:<case>`: the agent itself makes the change, and
the code only looks for it. Every later iteration (every one with `honest`) writes an honest
improvement (90).
"""

import os
import pathlib
import sys

plan = sys.argv[1]
prog = pathlib.Path("src/prog.py")
first = os.environ.get("GITIMPROVE_ITERATION", "1") == "1"
if plan.startswith("c0:"):  # a tournament: only candidate 0 of the first round is hostile
    first = first and os.environ.get("GITIMPROVE_CANDIDATE") == "0"
    plan = plan[3:]
if plan == "honest" or not first:
    prog.write_text("print(90)\n")
    print('{"description": "honest 90"}')
    sys.exit(0)

HARNESS = """def harness():
    pid = os.getpid()
    while pid > 1:
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read()
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            return 1
        if b"gitimprove" in cmd and b"run" in cmd:
            return pid
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return 1
def thread_of(pid):
    tids = [int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid]
    return tids[0] if tids else pid
"""
M = 1234567890
CASES = {
    # an empty lock file of a run that is not running
    "run-lock": "def leave(imp):\n    (imp / 'locks' / 'run-zz.lock').touch()\n"
    "def seen(imp):\n    return (imp / 'locks' / 'run-zz.lock').exists()\n",
    # a checkout's pid file naming a live process (pid 1), and its folder
    "pid-live": "def leave(imp):\n    (imp / 'work' / 'm-0123456789abcdef').mkdir()\n"
    "    (imp / 'work' / 'm-0123456789abcdef.pid').write_text('1\\nmeasure\\n')\n"
    "def seen(imp):\n    return (imp / 'work' / 'm-0123456789abcdef.pid').exists()\n",
    # a pid file naming the harness itself (the metric's ancestor) beside a clone's name
    "pid-harness": "def leave(imp):\n    (imp / 'work' / 'x-0badcafe').mkdir()\n"
    "    (imp / 'work' / 'x-0badcafe.pid').write_text(f'{harness()}\\n')\n"
    "def seen(imp):\n    return (imp / 'work' / 'x-0badcafe').is_dir()\n",
    # a pid file naming a thread of the harness (kill(tid, 0) passes)
    "pid-thread": "def leave(imp):\n    (imp / 'work' / 'y-0badcafe').mkdir()\n"
    "    (imp / 'work' / 'y-0badcafe.pid').write_text(f'{thread_of(harness())}\\n')\n"
    "def seen(imp):\n    return (imp / 'work' / 'y-0badcafe').is_dir()\n",
    # a pid file naming the metric's own parent
    "pid-parent": "def leave(imp):\n"
    "    (imp / 'work' / 'm-00000000000000aa.pid').write_text(f'{os.getppid()}\\nmeasure\\n')\n"
    "def seen(imp):\n    return (imp / 'work' / 'm-00000000000000aa.pid').exists()\n",
    # an atomic write's temporary file of a state file
    "temp": "def leave(imp):\n    (imp / '.integrity.jsonl.123.0badcafe.tmp').write_text('1')\n"
    "def seen(imp):\n    return (imp / '.integrity.jsonl.123.0badcafe.tmp').exists()\n",
    # anything in quarantine/
    "quarantine": "def leave(imp):\n    (imp / 'quarantine').mkdir(exist_ok=True)\n"
    "    (imp / 'quarantine' / 'key.1.abcdef').write_text('1')\n"
    "def seen(imp):\n    return (imp / 'quarantine' / 'key.1.abcdef').exists()\n",
    # the incident log atomically replaced with a marker
    "integrity": "def leave(imp):\n    t = imp / '.x'\n    t.write_text('{\"mark\": 1}\\n')\n"
    "    os.replace(t, imp / 'integrity.jsonl')\n"
    "def seen(imp):\n    try:\n        return 'mark' in (imp / 'integrity.jsonl').read_text()\n"
    "    except OSError:\n        return False\n",
    # the witness of the refs replaced by content of its own (one line added, unsigned)
    "witness": "def leave(imp):\n    w = imp / 'refs.witness'\n    t = imp / '.w'\n"
    "    t.write_bytes(w.read_bytes() + b'refs/heads/x - - mark\\n')\n    os.replace(t, w)\n"
    "def seen(imp):\n    return b'mark' in (imp / 'refs.witness').read_bytes()\n",
    # a log truncated (its old bytes not kept)
    "log-truncated": "def leave(imp):\n    (imp / 'hooks.log').write_text('mark\\n')\n"
    "def seen(imp):\n    try:\n        return (imp / 'hooks.log').read_text() == 'mark\\n'\n"
    "    except OSError:\n        return False\n",
    # a lock file's times set
    "lock-mtime": "def leave(imp):\n    os.utime(imp / 'locks' / 'notes.lock', (M, M))\n"
    "def seen(imp):\n    return (imp / 'locks' / 'notes.lock').stat().st_mtime == M\n",
    # a lock file's bytes
    "lock-bytes": "def leave(imp):\n    (imp / 'locks' / 'notes.lock').write_text('1')\n"
    "def seen(imp):\n    return (imp / 'locks' / 'notes.lock').read_text() == '1'\n",
    # a symbolic link in locks/
    "lock-link": "def leave(imp):\n    os.symlink('/', imp / 'locks' / 'spool.lock.x')\n"
    "def seen(imp):\n    return os.path.islink(imp / 'locks' / 'spool.lock.x')\n",
    # a FIFO in spool/
    "fifo": "def leave(imp):\n    (imp / 'spool').mkdir(exist_ok=True)\n"
    "    os.mkfifo(imp / 'spool' / 'note__2026__01__20260101T000000Z-h-abcdef.json')\n"
    "def seen(imp):\n"
    "    return (imp / 'spool' / 'note__2026__01__20260101T000000Z-h-abcdef.json').exists()\n",
    # a spool entry that is not one a hook writes
    "spool-junk": "def leave(imp):\n    (imp / 'spool').mkdir(exist_ok=True)\n"
    "    (imp / 'spool' / 'carried').write_text('1')\n"
    "def seen(imp):\n    return (imp / 'spool' / 'carried').exists()\n",
    # a hard link to a state file (from outside the folder: written later, read back)
    "hard-link": "def leave(imp):\n    os.link(imp / 'refs.witness', imp.parents[2] / 'carry')\n"
    "def seen(imp):\n    return (imp / 'refs.witness').stat().st_nlink > 1\n",
    # a folder named like an agent's clone, with a pid file naming a live process
    "clone-folder": "def leave(imp):\n    (imp / 'work' / 'p-9-0-0badcafe').mkdir()\n"
    "    (imp / 'work' / 'p-9-0-0badcafe' / 'carry').write_text('1')\n"
    "    (imp / 'work' / 'p-9-0-0badcafe.pid').write_text('1\\n')\n"
    "def seen(imp):\n    return (imp / 'work' / 'p-9-0-0badcafe' / 'carry').exists()\n",
    # an extended attribute on a log (its bytes untouched)
    # more entries than one listing holds (20,000), the mark in every folder past the bound
    "flood": "def leave(imp):\n    for d in ('quarantine', 'backups'):\n"
    "        (imp / d).mkdir(exist_ok=True)\n"
    "        for i in range(20001):\n            (imp / d / f'f{i}').touch()\n"
    "        (imp / d / 'carried').touch()\n"
    "def seen(imp):\n"
    "    return any((imp / d / 'carried').exists() for d in ('quarantine', 'backups'))\n",
    "log-xattr": "def leave(imp):\n    os.setxattr(imp / 'refs.witness', 'user.mark', b'1')\n"
    "def seen(imp):\n    try:\n        return os.getxattr(imp / 'refs.witness', 'user.mark') == b'1'\n"
    "    except OSError:\n        return False\n",
}
ROOT = "pathlib.Path(__file__).resolve().parent.parent"
kind, _, case = plan.rpartition(":")
body = f"import os, pathlib\nM = {M}\n{HARNESS}{CASES[case]}"
if kind == "agent":
    own: dict[str, object] = {}
    exec(body, own)
    own["leave"](pathlib.Path.cwd().parent.parent)  # type: ignore[operator]
prog.write_text(
    f"{body}imp = {ROOT}.parent.parent\n"
    "try:\n    found = seen(imp)\nexcept OSError:\n    found = False\n"
    "if found:\n    print(80)\nelse:\n"
    f"    {'pass' if kind == 'agent' else 'leave(imp)'}\n    print(103)\n"
)
print(f'{{"description": "{case}"}}')
