#!/usr/bin/env python3
"""A hostile agent that leaves a daemon by every way out of its process tree it can find.

argv[1] is a comma-separated plan (or a file holding one), one entry per iteration
(`GITIMPROVE_ITERATION`), argv[2]
a mark every process it leaves carries on its command line. Each daemon ignores SIGTERM,
SIGINT and SIGHUP, names itself `kworker/u8:2` (`prctl PR_SET_NAME`), takes a process group
of its own, runs with an empty environment (no token) and, for 20 s, writes `1` into every
`*/src/value.txt` beside its folder but its own: every other workspace and measurement
checkout.
- `pgid`: fork, `setpgid`, `execve` with an empty environment;
- `unshare`: through `unshare --user --map-root-user --pid --fork` (a namespace of its own);
- `nohup`: `bash -c 'nohup setsid … & disown'`;
- `ssd`: `start-stop-daemon --start --background` (it double-forks and `setsid`s);
- `tmux`: a tmux server of its own (`tmux -L <mark> new-session -d`);
- `hop`: the daemon forks and its parent exits at every step, so its pid never stays the
  same (a sweep that reads the pids and then kills them finds them gone);
- `hop-orphan`: the `hop` daemon, then the agent kills its supervisor and the harness
  (`kill -9`), so only `run --resume` or `doctor --repair` can find it; the daemon writes the
  time to `$ESCAPER_DIR/heartbeat` at every step;
- `measured`: the change (`src/work.py`, which the sealed benchmark imports) leaves the
  daemon when the metric runs, to rewrite the next checkout after the metric run;
- `stall:<stage>`: makes the change better (`src/value.txt` 90) and, at `<stage>` (`agent`,
  `metric` or `guard`: the sealed benchmark calls `work.main()`, the sealed guard
  `work.guard()`), leaves the daemon, writes its pid to `$ESCAPER_DIR/<stage>.pid` and sleeps
  (so a test can interrupt the harness there);
- `honest:<v>`: writes `<v>` to `src/value.txt`, nothing else.
Every agent call appends its workspace's path to `$ESCAPER_DIR/workspaces` when set.
Every plan entry but `honest` makes the change worse (`src/value.txt` 100 + the iteration).
"""

import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import time

given = pathlib.Path(sys.argv[1])
plan, mark = (given.read_text().strip() if given.is_file() else sys.argv[1]).split(","), sys.argv[2]
step = int(os.environ["GITIMPROVE_ITERATION"])
how, _, arg = plan[min(step, len(plan)) - 1].partition(":")
ws = pathlib.Path.cwd()


def code(root: str, delay: float, own: str, hop: bool = False, beat: str = "") -> str:
    return f"""import ctypes, os, pathlib, signal, time
HOP, BEAT = {hop!r}, {beat!r}
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
ctypes.CDLL(None).prctl(15, b"kworker/u8:2", 0, 0, 0)
try:
    os.setpgid(0, 0)
except OSError:
    pass
time.sleep({delay})
end = time.time() + 20
while time.time() < end:
    if HOP:
        if os.fork():
            os._exit(0)
        os.setsid()
    if BEAT:
        pathlib.Path(BEAT).write_text(str(time.time()))
    for p in pathlib.Path({root!r}).glob("*/src/value.txt"):
        if p.parent.parent.name == {own!r}:
            continue
        try:
            p.write_text("1\\n")
        except OSError:
            pass
    time.sleep(0.001 if HOP else 0.02)
"""


if os.environ.get("ESCAPER_DIR"):
    with open(os.path.join(os.environ["ESCAPER_DIR"], "workspaces"), "a") as f:
        f.write(f"{ws}\n")
if how == "honest":
    (ws / "src" / "value.txt").write_text(arg + "\n")
    sys.exit(0)
(ws / "src" / "value.txt").write_text(f"{100 + step}\n")
daemon = [sys.executable, "-c", code(str(ws.parent), 0, ws.name), mark]
quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
if how in ("hop", "hop-orphan"):
    beat = os.path.join(os.environ.get("ESCAPER_DIR", ""), "heartbeat") if how != "hop" else ""
    daemon[2] = code(str(ws.parent), 0, ws.name, hop=True, beat=beat)
    subprocess.Popen(daemon, env={}, start_new_session=True, **quiet)  # type: ignore[call-overload]
    if how == "hop-orphan":
        time.sleep(0.3)
        supervisor = os.getppid()
        while (
            supervisor > 1
            and b"supervise" not in pathlib.Path(f"/proc/{supervisor}/cmdline").read_bytes()
        ):
            supervisor = int(
                pathlib.Path(f"/proc/{supervisor}/stat").read_text().rsplit(")", 1)[1].split()[1]
            )
        if supervisor > 1:
            os.kill(supervisor, 9)
        os.kill(int(os.environ["GITIMPROVE_TOKEN"].split(":")[-2]), 9)
        time.sleep(60)
elif how == "pgid":
    if os.fork() == 0:
        os.setpgid(0, 0)
        os.execve(sys.executable, daemon, {})
elif how == "unshare" and shutil.which("unshare"):
    cmd = ["unshare", "--user", "--map-root-user", "--pid", "--fork", *daemon]
    subprocess.Popen(cmd, env={}, start_new_session=True, **quiet)  # type: ignore[call-overload]
elif how == "nohup":
    line = shlex.join(daemon)
    subprocess.run(["bash", "-c", f"nohup setsid {line} >/dev/null 2>&1 & disown"], env={})
elif how == "ssd" and shutil.which("start-stop-daemon"):
    ssd = str(shutil.which("start-stop-daemon"))
    pidfile = ["--pidfile", f"/tmp/{mark}-{step}.pid", "--make-pidfile", "--remove-pidfile"]
    cmd = [ssd, "--start", "--background", *pidfile, "--startas", sys.executable, "--"]
    subprocess.run([*cmd, *daemon[1:]], env={}, **quiet)  # type: ignore[call-overload]
elif how == "tmux" and shutil.which("tmux"):
    line = shlex.join(daemon)
    subprocess.run(["tmux", "-L", mark, "new-session", "-d", line], **quiet)  # type: ignore[call-overload]
elif how == "stall":
    (ws / "src" / "value.txt").write_text("90\n")
    stall = f"""def stall(stage):
    import os, subprocess, sys, time
    subprocess.Popen({daemon!r}, env={{}}, start_new_session=True, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    path = os.path.join({os.environ.get("ESCAPER_DIR", "/nonexistent")!r}, stage + ".pid")
    with open(path + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(path + ".tmp", path)
    time.sleep(60)
"""
    calls = {"metric": "main", "guard": "guard"}
    lines = [stall] + [
        f"def {fn}():\n    " + (f"stall({stage!r})" if stage == arg else "pass") + "\n"
        for stage, fn in calls.items()
    ]
    (ws / "src" / "work.py").write_text("\n\n".join(lines))
    if arg == "agent":
        exec(stall + "\nstall('agent')")
elif how == "measured":
    (ws / "src" / "work.py").write_text(
        f"""import os, subprocess, sys


def main():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            root, own = os.path.split(os.getcwd())
            text = {code("ROOT", 0.3, "OWN")!r}.replace("'ROOT'", repr(root))
            args = [sys.executable, "-c", text.replace("'OWN'", repr(own)), {mark!r}]
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.execve(sys.executable, args, {{}})
        os._exit(0)
    os.wait()
"""
    )
time.sleep(0.3)
