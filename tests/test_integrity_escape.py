"""Escapes the first defences missed, tried by hostile agent executables (docs/integrity.md).

- A daemon with a scrubbed environment (`env -i`, double fork, `setsid`) survives a `kill -9`
  of the harness unless something that outlives the harness holds it: the per-attempt
  supervisor (no sandbox) or bubblewrap's pid namespace (sandbox).
"""

from __future__ import annotations

import json
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from gitimprove.agents import seccomp
from gitimprove.agents.sandbox import supervised
from gitimprove.git import witness
from gitimprove.git.watch import RepoState
from gitimprove.util import proc
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import (
    assert_sound,
    hostile_project,
    needs_bwrap,
    start,
    survivors,
)


@pytest.mark.parametrize(
    "sandbox", ["none", pytest.param("bwrap", marks=[needs_bwrap, pytest.mark.slow])]
)
def test_a_scrubbed_daemon_dies_with_a_killed_harness(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    """kill -9 of the harness during the agent call: the daemon (no token, not in the agent's
    group or session, reparented away from the agent) is gone without any help from a later
    command, and never writes into the resumed attempt's workspace."""
    # in the sandbox the agent can write only its workspace: it reports there
    where = "WS:" if sandbox == "bwrap" else str(tmp_repo.path.parent) + "/"
    plan = hostile_project(
        tmp_repo,
        {
            "1": "orphan-daemon:95",
            "pidfile": where + "agent.pid",
            "daemonfile": where + "daemon.pid",
        },
        sandbox,
    )
    p = start(tmp_repo, "--run", "h", "-n", "1", "--json")
    for name in ("agent.pid", "daemon.pid"):
        wait_reported(tmp_repo, sandbox, name)
    assert survivors(plan["mark"], tmp_repo), "the daemon did not start"
    p.send_signal(signal.SIGKILL)
    p.communicate()
    deadline = time.monotonic() + 10
    while survivors(plan["mark"], tmp_repo) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert survivors(plan["mark"], tmp_repo) == [], "the daemon outlived the harness"
    plan_file = tmp_repo.path.parent / "plan.json"
    plan_file.write_text(json.dumps({**plan, "1": "set:95"}))
    res = tmp_repo.cli("run", "--resume", "--json")
    assert res.returncode == 0, res.stderr
    rows = assert_sound(tmp_repo, "h", plan["mark"])
    assert [r["status"] for r in rows] == ["baseline", "keep"]
    assert rows[1]["metric"]["value"] == 95  # the daemon's 1 never reached the workspace


def wait_reported(repo: TmpRepo, sandbox: str, name: str, seconds: float = 60) -> None:
    """Wait for the agent's report `name`: beside the repository, or in a workspace."""
    work = repo.path / ".git" / "improve" / "work"
    deadline = time.monotonic() + seconds
    while True:
        if sandbox != "bwrap" and (repo.path.parent / name).exists():
            return
        if sandbox == "bwrap" and any(work.glob(f"*/{name}")):
            return
        assert time.monotonic() < deadline, f"{name} never appeared"
        time.sleep(0.05)


DAEMON = """import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execve(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)", "{mark}"],
                  {{"PATH": "/usr/bin:/bin"}})
    os._exit(0)
time.sleep(0.2)
sys.exit({code})
"""


def _alive(mark: str) -> list[int]:
    found = []
    for pid in Path("/proc").iterdir():
        try:
            cmd = (pid / "cmdline").read_bytes()
            state = (pid / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if mark.encode() in cmd and state != "Z":
            found.append(int(pid.name))
    return found


@pytest.mark.parametrize("code", [0, 3])
def test_the_supervisor_kills_the_tree_when_the_agent_exits(tmp_path: Path, code: int) -> None:
    """The agent's exit status comes through; its scrubbed daemon is dead when it returns."""
    mark = f"supervised-{secrets.token_hex(6)}"
    script = tmp_path / "agent.py"
    script.write_text(DAEMON.format(mark=mark, code=code))
    res = proc.run(supervised([sys.executable, str(script)], shell=False), timeout=30)
    assert res.returncode == code, res.stderr
    assert _alive(mark) == []


def test_the_supervisor_passes_a_signal_death_and_a_missing_command_through(
    tmp_path: Path,
) -> None:
    res = proc.run(supervised("kill -TERM $$", shell=True), timeout=30)
    assert res.returncode == -signal.SIGTERM
    res = proc.run(supervised([str(tmp_path / "missing")], shell=False), timeout=30)
    assert res.returncode == 127 and "cannot run" in res.stderr


class Server:
    """A unix-socket server outside the sandbox that records every connection."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind("\0" + address[1:] if address.startswith("@") else address)
        self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.got: list[bytes] = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    self.got.append(conn.recv(64) or b"(connected)")
                except OSError:
                    self.got.append(b"(connected)")

    def close(self) -> None:
        self.done.set()
        self.thread.join()
        self.sock.close()


@pytest.mark.slow
@needs_bwrap
def test_the_sandbox_reaches_no_unix_socket_outside(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    """Sockets a read-only bind still lets one connect to (a socket file in a visible folder,
    one named by SSH_AUTH_SOCK and TMUX) and an abstract socket (shared with the network
    namespace): the agent in the sandbox reaches none of them, and its run goes on."""
    visible = Path(tempfile.mkdtemp(prefix="gitimprove-sock-", dir="/var/tmp"))
    tag = secrets.token_hex(4)
    servers = [
        Server(str(visible / "docker.sock")),
        Server(str(visible / "agent.sock")),
        Server(str(visible / "tmux")),
        Server(f"@gitimprove-test-{tag}"),
    ]
    try:
        plan = hostile_project(
            tmp_repo,
            {"1": "unix-socket:95", "sockets": [servers[0].address, servers[3].address]},
            "bwrap",
        )
        env = {"SSH_AUTH_SOCK": servers[1].address, "TMUX": servers[2].address + ",1,0"}
        res = tmp_repo.cli("run", "--run", "h", "-n", "1", "--json", env=env)
        assert res.returncode == 0, res.stderr
        assert [s.got for s in servers] == [[], [], [], []]
        rows = assert_sound(tmp_repo, "h", plan["mark"])
        assert [r["status"] for r in rows] == ["baseline", "keep"]
        # the same agent without the sandbox does connect: the servers are real
        tmp_repo.git("config", "improve.agent.sandbox", "none")
        res = tmp_repo.cli("run", "--run", "h2", "-n", "1", "--json", env=env)
        assert res.returncode == 0, res.stderr
        assert all(s.got == [b"escaped\n"] for s in servers), [s.got for s in servers]
    finally:
        for s in servers:
            s.close()
        shutil.rmtree(visible, ignore_errors=True)


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_seccomp_filter_is_well_formed(machine: str) -> None:
    """Every jump of the assembled filter lands inside it, and it ends in a return."""
    code = seccomp.program(machine)
    assert code is not None and len(code) % 8 == 0
    ops = [struct.unpack("<HBBI", code[i : i + 8]) for i in range(0, len(code), 8)]
    for i, (op, jt, jf, _) in enumerate(ops):
        if op in (0x15, 0x35):
            assert i + 1 + max(jt, jf) < len(ops)
    assert ops[-1][0] == 0x06 and ops[-2][0] == 0x06
    assert seccomp.program("mips") is None


OTHER_RUN = [
    ("other-branch", "refs/heads/improve/b"),
    ("other-branch-file", "refs/heads/improve/b"),
    ("other-note", "refs/notes/improve"),
    ("other-marker", "refs/improve/runs/b/base"),
    ("other-stop", "refs/improve/runs/b/stop"),
    ("other-archive", "refs/improve/archive"),
    ("other-new-run", "refs/heads/improve/ghost"),
]


def gitimprove_refs(repo: TmpRepo) -> dict[str, str]:
    out = {}
    for line in repo.git("for-each-ref", "--format=%(refname) %(objectname)").splitlines():
        name, _, oid = line.partition(" ")
        if name.startswith(("refs/improve/", "refs/heads/improve/", "refs/notes/improve")):
            out[name] = oid
    return out


@pytest.mark.parametrize(
    ("attack", "named"),
    [
        pytest.param(a, n, marks=[] if i == 0 else [pytest.mark.slow])
        for i, (a, n) in enumerate(OTHER_RUN)
    ],
)
@pytest.mark.slow
def test_an_agent_rewriting_another_runs_refs_stops_the_run(
    tmp_repo: TmpRepo, attack: str, named: str
) -> None:
    """Run b has kept a commit; an agent of run a, without the sandbox, writes run b's branch,
    notes, markers or the archive through the user's .git: run a stops naming the ref, and
    every gitimprove ref is put back where gitimprove left it."""
    plan = hostile_project(tmp_repo, {"1": "set:99", "other": "b"}, "none")
    res = tmp_repo.cli("run", "--run", "b", "-n", "1", "--json")
    assert res.returncode == 0, res.stderr
    before = gitimprove_refs(tmp_repo)
    plan_file = tmp_repo.path.parent / "plan.json"
    plan_file.write_text(json.dumps({**plan, "1": f"{attack}:98"}))
    res = tmp_repo.cli("run", "--run", "a", "-n", "2", "--json")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "stopped" in res.stderr and named in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    rows = run_rows(tmp_repo, "a")
    assert [r["status"] for r in rows] == ["baseline", "tampered"]
    assert named in rows[1]["reason"]
    after = gitimprove_refs(tmp_repo)
    for name, oid in before.items():
        if name == "refs/notes/improve" or name == "refs/improve/archive":
            # run a's records landed on top: what run b had is still there
            assert tmp_repo.git("merge-base", "--is-ancestor", oid, after[name]) == "", name
        else:
            assert after.get(name) == oid, name
    assert (
        not set(after)
        - set(before)
        - {
            "refs/heads/improve/a",
            "refs/improve/runs/a/base",
            "refs/improve/runs/a/stop",
        }
    )
    b_rows = run_rows(tmp_repo, "b")
    assert [r["status"] for r in b_rows] == ["baseline", "keep"]
    assert b_rows[1]["metric"]["value"] == 99  # the forged 1 did not land
    doctor = tmp_repo.cli("doctor")
    assert named in doctor.stdout + doctor.stderr


WRITER = """import sys
from gitimprove.git.repo import open_repo, update_refs, cas_loop
from gitimprove.git import notes
repo = open_repo(sys.argv[1])
me, commits = sys.argv[2], sys.argv[3:]
for i, c in enumerate(commits):
    notes.append_lines(repo, {c: [f'{{"v":1,"op":"create","description":"{me}-{i}"}}']})
    def move(c=c):
        update_refs(repo, [(f"refs/heads/improve/w{me}", c, repo.ref_target(f"refs/heads/improve/w{me}"))], "t")
    cas_loop(repo, move, what="branch")
"""


@pytest.mark.slow
def test_concurrent_writers_are_all_witnessed(tmp_repo: TmpRepo) -> None:
    """Six processes move gitimprove refs at once (the notes they share, a branch each): every
    move is witnessed, so none is taken for a move outside gitimprove; a plain `git
    update-ref` afterwards is."""
    commits = [tmp_repo.commit(f"c{i}", {"f.txt": f"{i}\n"}) for i in range(6)]
    repo = tmp_repo.open()
    before = RepoState.take(repo)
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_repo.path), str(n), *commits])
        for n in range(6)
    ]
    assert [p.wait(timeout=300) for p in procs] == [0] * 6
    after = RepoState.take(tmp_repo.open())
    assert len(after.own) == 7 and before.changes(after) == []
    assert witness.stale(repo.improve_dir, after.own) == []
    tmp_repo.git("update-ref", "refs/heads/improve/w3", commits[0])
    moved = RepoState.take(tmp_repo.open())
    assert after.changes(moved) == [
        f"refs/heads/improve/w3 moved to {commits[0][:12]} outside gitimprove"
    ]
    assert witness.stale(repo.improve_dir, moved.own) == [
        f"refs/heads/improve/w3 is at {commits[0][:12]}, not where gitimprove left it"
    ]
    doctor = tmp_repo.cli("doctor")
    assert "1 gitimprove ref(s) moved outside gitimprove: refs/heads/improve/w3" in doctor.stdout
    # a forged witness line (no key) explains nothing
    with open(repo.improve_dir / witness.FILE, "a") as f:
        f.write(f"refs/heads/improve/w3 {commits[5]} {commits[0]} {'0' * 24}\n")
    assert len(after.changes(RepoState.take(tmp_repo.open()))) == 1


@pytest.mark.slow
def test_two_runs_at_once_never_trip_each_other(tmp_repo: TmpRepo) -> None:
    """Two runs of one repository at the same time: each one's records move the shared notes
    and archive while the other's agent works; neither takes that for tampering."""
    hostile_project(tmp_repo, {"default": "set:99"}, "none")
    procs = [start(tmp_repo, "--run", name, "-n", "4", "--json") for name in ("p", "q")]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    for name in ("p", "q"):
        statuses = [r["status"] for r in run_rows(tmp_repo, name)]
        assert "tampered" not in statuses and len(statuses) == 5, statuses


@pytest.mark.slow
@needs_bwrap
def test_the_sandbox_hides_the_integrity_key(tmp_repo: TmpRepo) -> None:
    """The key that tags the harness's records and its ref moves is out of the sandbox's
    reach (without it, the agent runs as the user and can read it: docs/integrity.md)."""
    keyfile = tmp_repo.path.parent / "key-report.txt"
    # in the sandbox the agent reports in its workspace, so the report is in its commit
    plan = hostile_project(
        tmp_repo, {"1": "steal-key:95", "keyfile": "WS:src/key-report.txt"}, "bwrap"
    )
    res = tmp_repo.cli("run", "--run", "h", "-n", "1", "--json")
    assert res.returncode == 0, res.stderr
    assert (tmp_repo.path / ".git" / "improve" / "key").exists()
    attempt = run_rows(tmp_repo, "h")[1]["commit"]
    report = tmp_repo.git("show", f"{attempt}:src/key-report.txt")
    assert "read" not in report and "key: " in report, report
    (tmp_repo.path.parent / "plan.json").write_text(json.dumps({**plan, "keyfile": str(keyfile)}))
    tmp_repo.git("config", "improve.agent.sandbox", "none")
    res = tmp_repo.cli("run", "--run", "h2", "-n", "1", "--json")
    assert res.returncode == 0, res.stderr
    assert "key: read 32 bytes" in keyfile.read_text()
