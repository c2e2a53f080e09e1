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
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from gitimprove.agents import seccomp
from gitimprove.agents.sandbox import supervised
from gitimprove.util import proc
from tests.conftest import TmpRepo
from tests.test_integrity import (
    assert_sound,
    hostile_project,
    needs_bwrap,
    start,
    survivors,
    wait_for,
)


@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_a_scrubbed_daemon_dies_with_a_killed_harness(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    """kill -9 of the harness during the agent call: the daemon (no token, not in the agent's
    group or session, reparented away from the agent) is gone without any help from a later
    command, and never writes into the resumed attempt's workspace."""
    pidfile = tmp_repo.path.parent / "agent.pid"
    daemonfile = tmp_repo.path.parent / "daemon.pid"
    plan = hostile_project(
        tmp_repo,
        {"1": "orphan-daemon:95", "pidfile": str(pidfile), "daemonfile": str(daemonfile)},
        sandbox,
    )
    p = start(tmp_repo, "--run", "h", "-n", "1", "--json")
    wait_for(pidfile)
    wait_for(daemonfile)
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
