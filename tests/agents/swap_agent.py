#!/usr/bin/env python3
"""An agent that attacks its workspace itself, or the harness's process table (DESIGN §9).

It writes an honest-looking change (src/value.txt) and then, as argv[1]'s JSON plan says for
its iteration ("<attack>[:<value>]"):
- ws-link: its workspace folder is replaced by a link to a copy of it elsewhere in the same
  folder (`<workspace>-elsewhere`), holding the change;
- ws-link-user: replaced by a link to the user's work tree (found through the alternates);
- ws-gone: moved away (nothing left under its name);
- ws-file, ws-fifo: replaced by a regular file, or by a FIFO a reader would block on;
- ws-mode: its root made mode 000;
- zombies:<n>: n children that exit at once and are never waited for (they are reparented,
  dead, when the agent exits);
- slow-report:nest|strings: a report that costs its reader time in proportion to its length
  times its number of brackets;
- hang: deaf to SIGTERM, it sleeps past its timeout beside a child in a session of its own
  that closed every file descriptor;
- swarm:<n>: n sleeping children and a chain of n descendants, each the child of the last;
- thief: its src/mod.py returns one less than the best value.txt it finds in the folders
  beside its checkout (a sibling candidate's checkout or workspace, in a tournament);
- glue: its src/mod.py prints 10 MB of `1 ` with no line end before the benchmark's line;
- zombies-left: no attack: it reports how many dead children the harness holds unreaped;
- link-dotfile:<name>/<value>: a link of that name at the root, to src/value.txt;
- gitmodules-url: a .gitmodules whose URL git would read as an option;
- long-attributes: a .gitattributes holding a line of 3,000 bytes;
- long-text: a description and a hypothesis of 120 and 60 KB.
"""

import json
import os
import pathlib
import shutil
import sys

plan = json.loads(pathlib.Path(sys.argv[1]).read_text())
iteration = os.environ["GITIMPROVE_ITERATION"]
candidate = os.environ.get("GITIMPROVE_CANDIDATE", "0")
action = plan.get(f"{iteration}.{candidate}") or plan.get(iteration, "set:90")
attack, _, arg = action.partition(":")
ws = pathlib.Path.cwd()
value = arg.rpartition("/")[2]  # link-dotfile:<name>/<value>
(ws / "src" / "value.txt").write_text(
    (value if value and attack not in ("zombies", "swarm") else "90") + "\n"
)
top = os.getpid()
report: dict[str, str] = {"description": action}


THIEF = """import pathlib


def score():
    best = float(pathlib.Path("src/value.txt").read_text())
    here = pathlib.Path.cwd().resolve()
    for up in (here.parent, here.parent.parent):
        for other in list(up.glob("*/src/value.txt")) + list(up.glob("*/*/src/value.txt")):
            try:
                if other.resolve().parent.parent != here:
                    best = min(best, float(other.read_text()) - 1)
            except (OSError, ValueError):
                pass
    return best
"""


GLUE = """import pathlib
import sys


def score():
    sys.stdout.write("1 " * 5_000_000)  # glued to the front of the benchmark's line
    return float(pathlib.Path("src/value.txt").read_text())
"""


def user_tree() -> pathlib.Path:
    objects = (ws / ".git" / "objects" / "info" / "alternates").read_text().split()[0]
    return pathlib.Path(objects).parent.parent  # <repo>/.git/objects -> <repo>


def swap(make: str) -> None:
    """Put something else where the workspace was (the agent's own cwd stays open)."""
    user = user_tree() if make == "link-user" else None
    os.chdir("/")
    aside = ws.with_name(ws.name + "-elsewhere")
    try:
        os.rename(ws, aside)
    except OSError as exc:  # the sandbox's bind mount: it cannot move
        print(f"cannot move the workspace: {exc}", file=sys.stderr)
        return
    if make == "link":
        os.symlink(aside, ws)
    elif make == "link-user":
        shutil.rmtree(aside)
        os.symlink(user, ws)
    elif make == "file":
        ws.write_text("not a folder\n")
    elif make == "fifo":
        os.mkfifo(ws)


if attack.startswith("ws-") and attack != "ws-mode":
    swap(attack[3:])
elif attack == "ws-mode":
    (ws / "src").chmod(0)
    ws.chmod(0)
elif attack == "zombies":
    for _ in range(int(arg)):
        if os.fork() == 0:
            os._exit(0)
elif attack == "slow-report":  # each bracket starts a nest too deep to read, or a string
    print(("[1," if arg == "nest" else '{"') * 70000)
elif attack == "hang":  # deaf to SIGTERM, a child with no fds in a session of its own
    import signal
    import time

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)
    if os.fork() == 0:
        os.setsid()
        os.closerange(0, 1 << 16)
        time.sleep(600)
        os._exit(0)
    time.sleep(600)
elif attack == "swarm":  # many live processes: a wide fan and a deep chain
    import time

    for _ in range(int(arg)):
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
    for _ in range(int(arg)):
        if os.fork() != 0:
            break
    time.sleep(1)
    if os.getpid() != top:
        time.sleep(600)
        os._exit(0)
elif attack == "thief":  # the measured code takes a better number from a checkout beside it
    (ws / "src" / "mod.py").write_text(THIEF)
elif attack == "glue":  # the measured code prints 10 MB of numbers with no line end
    (ws / "src" / "mod.py").write_text(GLUE)
elif attack == "link-dotfile":  # .gitmodules (git refuses it as a link) or another
    os.symlink("src/value.txt", ws / arg.partition("/")[0])
elif attack == "gitmodules-url":  # a URL git reads as an option (CVE-2018-17456)
    (ws / ".gitmodules").write_text(
        '[submodule "x"]\n\tpath = src/x\n\turl = --upload-pack=touch${IFS}pwned\n'
    )
elif attack == "many-refused":  # thousands of names git refuses, each a long one
    for i in range(int(plan.get("count", 20000))):
        (ws / "src" / f"{'n' * 200}{i}.Git").mkdir(parents=True)
        (ws / "src" / f"{'n' * 200}{i}.Git" / "config").write_text("x")
elif attack == "long-attributes":  # a comment line of 3,000 bytes: no attribute at all
    (ws / ".gitattributes").write_text("# " + "x" * 3000 + "\n")
elif attack == "zombies-left":  # how many dead processes the harness holds unreaped
    harness = os.environ["GITIMPROVE_TOKEN"].split(":")[2]
    dead = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        dead += stat[0] == "Z" and stat[1] == harness
    report["description"] = f"zombies-left:{dead}"
elif attack == "long-text":
    report["description"] = "long " + "x" * 120_000
    report["hypothesis"] = "y" * 60_000
print(json.dumps(report))
