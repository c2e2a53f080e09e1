"""Processes that leave the agent's tree through a server the user already runs: a tmux server
(a new session, or keys sent to the user's shell), `systemd-run --user`, `at now`, `docker run
-d`; and `nohup setsid` after `env -i` (no token). Real servers, real tools: a way whose tool
or server is missing here is left out of the plan (docs/integrity.md).

In the sandbox none of them starts anything: every server is reached through a unix socket
(refused) or a spool the agent cannot write. Without it, what a server started is no
descendant of the agent and outlives the run (documented: "What `sandbox = "none"` cannot
protect"); the run's first words name each such server of yours, and a daemon that stayed a
descendant (`env -i nohup setsid`) is killed all the same.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitimprove.agents.sandbox import reachable_servers
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project
from tests.test_integrity import needs_bwrap

AGENT = Path(__file__).parent / "agents" / "server_escaper.py"
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _works(*argv: str) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def system_ways() -> list[str]:
    """The ways through a system service that work here, outside any sandbox."""
    ways = []
    if shutil.which("systemd-run") and _works("systemctl", "--user", "show-environment"):
        ways.append("systemd-run")
    if shutil.which("at") and any(Path(p).exists() for p in ("/run/atd.pid", "/var/run/atd.pid")):
        ways.append("at")
    if shutil.which("docker") and _works("docker", "image", "inspect", "busybox"):
        ways.append("docker")
    return ways


@pytest.fixture
def user_tmux() -> Iterator[tuple[Path, dict[str, str]]]:
    """A tmux server of the user's, running before the run, with a session `user` running a
    shell: its socket, and the environment under which tmux (and gitimprove) find it. Its
    folder is outside /tmp (the sandbox's /tmp is private: the socket stays visible)."""
    top = Path(tempfile.mkdtemp(prefix="gitimprove-servers-", dir="/var/tmp"))
    folder = top / f"tmux-{os.getuid()}"
    folder.mkdir(mode=0o700)
    sock = folder / "default"
    env = {"TMUX_TMPDIR": str(top)}
    subprocess.run(
        ["tmux", "-S", str(sock), "new-session", "-d", "-s", "user", "/bin/sh"],
        check=True, env={**os.environ, **env},
    )  # fmt: skip
    try:
        yield sock, env
    finally:
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True)
        shutil.rmtree(top, ignore_errors=True)


@needs_tmux
def test_the_run_names_the_servers_that_could_start_a_program_for_the_agent(
    user_tmux: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A live tmux server is named, a stale socket beside it (its server gone) is not."""
    sock, env = user_tmux
    stale = sock.parent / "stale"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(stale))
    monkeypatch.setenv("TMUX_TMPDIR", env["TMUX_TMPDIR"])
    monkeypatch.delenv("TMUX", raising=False)
    found = reachable_servers()
    assert f"the tmux server at {sock}" in found
    assert not any(str(stale) in f for f in found)
    subprocess.run(["tmux", "-S", str(sock), "kill-server"], check=True)
    end = time.monotonic() + 5  # the server exits after it answered
    while any("tmux" in f for f in reachable_servers()) and time.monotonic() < end:
        time.sleep(0.05)
    assert not any("tmux" in f for f in reachable_servers())


@pytest.mark.slow
@needs_tmux
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_no_server_of_yours_starts_a_program_for_a_sandboxed_agent(
    tmp_repo: TmpRepo, user_tmux: tuple[Path, dict[str, str]], sandbox: str
) -> None:
    sock, env = user_tmux
    marker = sock.parent.parent / "marker"
    marker.mkdir()
    ways = ["tmux-new", "tmux-keys", "env-i-nohup", *system_ways()]
    plan = {"ways": ways, "marker": str(marker), "tmux": str(sock), "session": "user"}
    plan_file = tmp_repo.path.parent / "plan.json"
    plan_file.write_text(json.dumps(plan))
    value_project(tmp_repo, f"{sys.executable} {AGENT} {plan_file}", sandbox=sandbox, timeouts=True)
    res = tmp_repo.cli("run", "--run", "s", "-n", "1", "--json", env=env)
    assert res.returncode == 0, res.stderr
    start = json.loads(res.stdout.splitlines()[0])
    rows = run_rows(tmp_repo, "s")
    assert [r["status"] for r in rows] == ["baseline", "keep"], [r.get("reason") for r in rows]
    time.sleep(3)  # every program started waits 1.5 s before it writes
    escaped = sorted(p.name for p in marker.iterdir())
    if sandbox == "bwrap":
        assert escaped == []
        return
    # without the sandbox: the servers' programs are out of reach, and named at the start
    assert f"the tmux server at {sock}" in start["sandbox_message"]
    assert escaped == sorted(w for w in ways if w != "env-i-nohup")


def test_the_session_bus_and_docker_are_named_when_they_listen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The session bus at `$XDG_RUNTIME_DIR/bus` and a docker socket there are named while a
    server listens on them (real sockets); a `DOCKER_HOST` over TCP is named as given."""
    runtime = Path(tempfile.mkdtemp(prefix="gitimprove-runtime-", dir="/var/tmp"))
    servers = []
    try:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
        monkeypatch.delenv("DOCKER_HOST", raising=False)
        assert not [f for f in reachable_servers() if str(runtime) in f]
        for name in ("bus", "docker.sock"):
            server = socket.socket(socket.AF_UNIX)
            server.bind(str(runtime / name))
            server.listen()
            servers.append(server)
        found = reachable_servers()
        assert f"the session bus at {runtime / 'bus'} (systemd-run --user)" in found
        assert f"docker at {runtime / 'docker.sock'}" in found
        monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:2375")
        assert "docker at tcp://127.0.0.1:2375 (DOCKER_HOST)" in reachable_servers()
    finally:
        for server in servers:
            server.close()
        shutil.rmtree(runtime, ignore_errors=True)


@needs_bwrap
@pytest.mark.parametrize("measure", [False, True])
def test_the_sandbox_hides_where_your_servers_listen(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, measure: bool
) -> None:
    """Not the seccomp filter alone (a machine without one allows unix sockets): in the
    sandbox the runtime folder of the session bus, a tmux folder outside /tmp and the socket
    `DOCKER_HOST` names are not there to connect to; outside it they listen."""
    from gitimprove.agents.sandbox import choose
    from gitimprove.util import proc

    top = Path(tempfile.mkdtemp(prefix="gitimprove-hide-", dir="/var/tmp"))
    runtime, tmux, docker = top / "runtime", top / f"tmux-{os.getuid()}", top / "docker"
    servers = []
    try:
        for folder in (runtime, tmux, docker):
            folder.mkdir()
        paths = [runtime / "bus", tmux / "default", docker / "docker.sock"]
        for path in paths:
            server = socket.socket(socket.AF_UNIX)
            server.bind(str(path))
            server.listen()
            servers.append(server)
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        monkeypatch.setenv("TMUX_TMPDIR", str(top))
        monkeypatch.setenv("DOCKER_HOST", f"unix://{docker / 'docker.sock'}")
        work = tmp_path / "work"
        work.mkdir()
        probe = "; ".join(
            f"test -S {p} && echo {p.name} there || echo {p.name} gone" for p in paths
        )
        box = choose("bwrap", [tmp_path / "repo"])
        argv, shell = box.wrap(probe, shell=True, workdir=work, measure=measure)
        res = proc.run(argv, shell=shell, cwd=work, timeout=30, limit=1 << 20)
        assert res.ok, res.stderr
        assert res.stdout.split("\n")[:3] == ["bus gone", "default gone", "docker.sock gone"]
        outside = subprocess.run(["sh", "-c", probe], capture_output=True, text=True)
        assert outside.stdout.split("\n")[:3] == ["bus there", "default there", "docker.sock there"]
    finally:
        for server in servers:
            server.close()
        shutil.rmtree(top, ignore_errors=True)
