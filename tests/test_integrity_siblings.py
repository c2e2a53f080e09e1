"""Tournaments without the sandbox: a hostile sibling cannot live on into another candidate's
measurement by wearing a third candidate's token. It reads the token of the sibling agent at
work the longest (its `/proc/<pid>/environ`, same user), starts a daemon in its own session
carrying that token, kills its own supervisor (so the daemon is reparented to the harness, not
to the supervisor that would have killed it) and exits. The harness's sweep spared an orphan
wearing a live attempt's token: the daemon watched (and could have written into) the next
candidate's benchmark. Every process reparented to the harness is an orphan of a supervisor
that died, whatever token it carries: it is killed at once, long before the slow sibling's
measurement."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows

BENCH = "import pathlib\nprint(f\"METRIC score={float(pathlib.Path('src/value.txt').read_text()):g}\")\n"
AGENT = r"""import json, os, pathlib, signal, sys, time
plan = json.loads(pathlib.Path(sys.argv[1]).read_text())
value = pathlib.Path("src/value.txt")
cand = os.environ["GITIMPROVE_CANDIDATE"]
if cand != "0":  # honest siblings: 1 done at once, 2 at work for a while
    value.write_text(f"9{cand}\n")
    time.sleep(plan["slow"] if cand == "2" else 0)
    sys.exit(0)
value.write_text("95\n")
mine, other = os.environ["GITIMPROVE_TOKEN"], None
harness = mine.rsplit(":", 1)[0] + ":"  # a sibling: the same harness, another attempt
deadline = time.time() + 5
while other is None and time.time() < deadline:
    for p in pathlib.Path("/proc").iterdir():
        try:
            env = (p / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        for e in env:
            t = e[17:].decode() if e.startswith(b"GITIMPROVE_TOKEN=") else ""
            slow = b"GITIMPROVE_CANDIDATE=2" in env  # the sibling still at work the longest
            if t.startswith(harness) and t != mine and slow:
                other = t
    time.sleep(0.02)
if other is None:
    sys.exit(0)
pathlib.Path(plan["found"]).write_text(other)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        env = {**os.environ, "GITIMPROVE_TOKEN": other}
        os.execve(sys.executable, [sys.executable, plan["daemon"], plan["seen"], plan["repo"]], env)
    os._exit(0)
time.sleep(0.2)
pid = os.getppid()  # the supervisor above us, killed: its tree is no longer its to kill
while pid > 1:
    if b"supervise.py" in pathlib.Path(f"/proc/{pid}/cmdline").read_bytes():
        pathlib.Path(plan["found"] + ".killed").write_text(repr(time.time()))
        os.kill(pid, signal.SIGKILL)
        break
    pid = int(pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
"""
# the daemon notes every benchmark it sees running while it lives, and when it was last alive
DAEMON = r"""import os, pathlib, sys, time
seen, repo = pathlib.Path(sys.argv[1]), sys.argv[2]
pathlib.Path(sys.argv[1] + ".pid").write_text(str(os.getpid()))
beat = pathlib.Path(sys.argv[1] + ".beat")
end = time.time() + 30
while time.time() < end:
    pathlib.Path(str(beat) + ".tmp").write_text(repr(time.time()))
    os.replace(str(beat) + ".tmp", beat)  # a kill between truncating and writing leaves none
    for p in pathlib.Path("/proc").iterdir():
        try:
            cmd = (p / "cmdline").read_bytes()
            cwd = os.readlink(p / "cwd")
        except OSError:
            continue
        if b"bench.py" in cmd and cwd.startswith(repo):
            with seen.open("a") as f:
                f.write(f"{p.name} {cwd}\n")
    time.sleep(0.01)
"""


@pytest.mark.slow
def test_a_sibling_wearing_another_candidates_token_dies_with_its_own_attempt(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    agent, daemon, plan_file = tmp_path / "agent.py", tmp_path / "daemon.py", tmp_path / "plan.json"
    agent.write_text(AGENT)
    daemon.write_text(DAEMON)
    found, seen = tmp_path / "found", tmp_path / "seen"
    plan = {
        "slow": 6,
        "daemon": str(daemon),
        "found": str(found),
        "seen": str(seen),
        "repo": str(tmp_repo.path),  # its benchmark runs: in a checkout under the git directory
    }
    plan_file.write_text(json.dumps(plan))
    tmp_repo.commit(
        "project",
        {
            "bench.py": BENCH,
            "src/value.txt": "100\n",
            ".gitimprove.toml": f"""[metric]
command = "{sys.executable} bench.py"

[scope]
mutable = ["src/**"]
sealed = ["bench.py"]

[agent]
name = "command"
command = "{sys.executable} {agent} {plan_file}"
sandbox = "none"
""",
        },
    )
    res = tmp_repo.cli("run", "--run", "t", "-n", "1", "--candidates", "3", "--jobs", "3")
    out = res.stdout + res.stderr
    assert "Traceback" not in out
    assert found.exists(), out  # the sibling's token was there to take
    # Candidate 1 may be measured while the hostile attempt is still at work (jobs run at
    # once: without the sandbox a sibling at work can watch it, docs/integrity.md); the daemon
    # must die with its own attempt, when its supervisor does, not live on wearing the slow
    # sibling's token until that one's attempt ends `slow` seconds later
    killed = float((tmp_path / "found.killed").read_text())
    last = float((tmp_path / "seen.beat").read_text())
    assert last - killed < plan["slow"] / 2, (last - killed, out)
    assert res.returncode == 0, out
    rows = run_rows(tmp_repo, "t")
    assert sorted(r["candidate"] for r in rows[1:]) == [0, 1, 2], rows  # every attempt recorded
    daemon_pid = int((tmp_path / "seen.pid").read_text())
    deadline = time.monotonic() + 5
    while Path(f"/proc/{daemon_pid}").exists() and time.monotonic() < deadline:
        try:
            if "State:\tZ" in Path(f"/proc/{daemon_pid}/status").read_text():
                break  # dead, not yet reaped
        except OSError:
            break  # gone

        time.sleep(0.05)
    else:
        assert not Path(f"/proc/{daemon_pid}").exists(), "the daemon outlived the run"
