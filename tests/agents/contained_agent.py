#!/usr/bin/env python3
"""An agent that tries every write and signal Landlock keeps in (`[agent] sandbox =
"landlock"`), and reports in its description what was refused, and how.

Alone, or as candidate 1 of a tournament (`contained_agent.py tournament`), it is hostile: it
tries to write the user's work tree (`bench.py`), `.git/config`, `~/.gitconfig`, the
incumbent's measurement checkout, a sibling candidate's workspace (in a tournament), to stop
(SIGSTOP, then SIGCONT) the harness and a sibling's agent, and to connect to the abstract unix
socket `$CONTAINED_ABSTRACT` names; a write that went through is named under "done". It
writes its own temporary folder (`$TMPDIR`) and improves `src/value.txt` (100 → 40).
Candidate 0 of a tournament is honest (100 → 50) and works 3 s, so the hostile one finds it
at work; so is `contained_agent.py honest`, at once."""

import errno
import json
import os
import pathlib
import signal
import socket
import sys
import time

candidate = os.environ.get("GITIMPROVE_CANDIDATE", "0")
here = pathlib.Path.cwd()
work = here.parent  # <git dir>/improve/work/<workspace>
tournament = sys.argv[1:] == ["tournament"]
if sys.argv[1:] == ["honest"] or (tournament and candidate != "1"):
    pathlib.Path("src/value.txt").write_text("50\n")
    time.sleep(3 if tournament else 0)
    print(json.dumps({"description": "honest"}))
    raise SystemExit(0)

refused: list[str] = []
done: list[str] = []


def attempt(name, action):
    try:
        action()
    except OSError as exc:
        refused.append(f"{name}={errno.errorcode.get(exc.errno, exc.errno)}")
    else:
        done.append(name)


def append(path):
    def write():
        with open(path, "a") as f:
            f.write("# written by an agent\n")

    return write


def stop(pid):
    def signal_it():
        os.kill(pid, signal.SIGSTOP)
        os.kill(pid, signal.SIGCONT)

    return signal_it


def sibling_agent():
    """The pid of the sibling candidate's agent (this program, found by its command line: its
    working folder is not readable across Landlock domains), if one is at work."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(pid) != os.getpid() and command[1:2] == [__file__.encode()]:
            return int(pid)
    return None


repo = work.parents[2]  # the user's work tree: <repo>/.git/improve/work
attempt("work tree", append(repo / "bench.py"))
attempt(".git/config", append(repo / ".git" / "config"))
attempt("~/.gitconfig", append(pathlib.Path.home() / ".gitconfig"))
for d in sorted(work.iterdir()):
    if d.name.startswith("m-") and (d / "src" / "value.txt").is_file():
        attempt("incumbent checkout", append(d / "src" / "value.txt"))
        break
abstract = os.environ.get("CONTAINED_ABSTRACT")  # a server of the user's listens there
if abstract:
    attempt("abstract socket", lambda: socket.socket(socket.AF_UNIX).connect("\0" + abstract))
harness = int(os.environ["GITIMPROVE_TOKEN"].split(":")[3])
attempt("stop the harness", stop(harness))
if tournament:
    end = time.monotonic() + 2.5
    pid = None
    while pid is None and time.monotonic() < end:
        pid = sibling_agent()
        time.sleep(0.05)
    if pid is not None:
        attempt("stop a sibling", stop(pid))
    for d in sorted(work.iterdir()):  # the sibling's workspace, at work
        if d != here and not d.name.startswith("m-") and (d / "src" / "value.txt").is_file():
            attempt("sibling workspace", append(d / "src" / "value.txt"))
temp = pathlib.Path(os.environ.get("TMPDIR", "/tmp"), "scratch.txt")
attempt("own temporary folder", lambda: temp.write_text("scratch\n"))
pathlib.Path("src/value.txt").write_text("40\n")
summary = f"refused {', '.join(refused) or 'nothing'}; done {', '.join(done) or 'nothing'}"
print(json.dumps({"description": summary}))
