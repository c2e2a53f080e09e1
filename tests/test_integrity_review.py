"""Attacks a hostile review found past the first defences (docs/integrity.md), each tried by a
hostile program in the real sandbox, on real repositories: capabilities of root inside the
sandbox, writable folders named in a command, a metric's output rewritten at an offset,
io_uring, an agent-written alternates file, and the claude adapter's home folder."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitimprove.agents.claude import ClaudeAgent
from gitimprove.agents.homes import binds as _state_binds
from gitimprove.agents.sandbox import Sandbox, choose
from gitimprove.git.workspace import agent_workspace
from gitimprove.loop.metrics import run_metric
from gitimprove.util import proc
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import assert_sound, hostile_project, needs_bwrap


def boxed(repo: TmpRepo) -> Sandbox:
    r = repo.open()
    box = choose("bwrap", [repo.path, r.git_dir, r.common_dir], r.common_dir / "objects")
    assert box.mode == "bwrap"
    return box


def run_in(box: Sandbox, script: str, ws: Path, **kw: object) -> proc.Result:
    argv, shell = box.wrap(script, shell=True, workdir=ws, **kw)  # type: ignore[arg-type]
    return proc.run(argv, cwd=ws, shell=shell, timeout=60)


@pytest.fixture
def visible() -> Iterator[Path]:
    """A folder outside /tmp (which the sandbox replaces): seen read-only inside."""
    path = Path(tempfile.mkdtemp(prefix="gitimprove-review-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


ROOT_ATTACK = r"""
grep CapEff /proc/self/status
umount "$R" 2>/dev/null; umount -l "$R" 2>/dev/null
mount -o remount,rw / 2>/dev/null; mount --bind / /mnt 2>/dev/null
unshare -Urm sh -c 'umount -l "$R"; mount -o remount,rw /' 2>/dev/null
python3 - <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r = os.environ["R"].encode()
for flags in (0, 2):  # umount2(MNT_DETACH)
    libc.umount2(r, flags)
libc.mount(b"none", b"/", None, 32 | 1 << 12 | 0, None)  # MS_REMOUNT|MS_BIND, rw
PY
test -e "$R/a.txt" && echo visible || echo hidden
(echo pwned > "$P") 2>/dev/null || echo read-only
(echo pwned > "$R/a.txt") 2>/dev/null || echo repo-read-only
true
"""


@needs_bwrap
def test_root_in_the_sandbox_has_no_capability_to_unhide_anything(tmp_repo: TmpRepo) -> None:
    """The harness (and these tests) may run as root: inside the sandbox that root can neither
    unmount the tmpfs hiding the repository nor remount / read-write, directly, through a new
    user namespace, or by raw system calls."""
    tmp_repo.commit("c", {"a.txt": "1\n"})
    box, head = boxed(tmp_repo), tmp_repo.git("rev-parse", "HEAD")
    with agent_workspace(tmp_repo.open(), head, "w") as ws:
        pwned = Path(f"/usr/gitimprove-pwned-{os.getpid()}-{ws.name}")
        script = f"R={tmp_repo.path}; P={pwned}; export R P\n" + ROOT_ATTACK
        res = run_in(box, script, ws)
        assert res.ok, res.stderr
        lines = res.stdout.split("\n")
        assert lines[0].split() == ["CapEff:", "0000000000000000"]
        assert lines[1] == "hidden"  # the work tree is still an empty folder
        assert "read-only" in lines
    assert (tmp_repo.path / "a.txt").read_text() == "1\n"
    try:
        assert not pwned.exists()
    finally:
        pwned.unlink(missing_ok=True)


@needs_bwrap
@pytest.mark.parametrize("measure", [False, True])
def test_a_folder_named_in_a_command_is_read_only(tmp_repo: TmpRepo, measure: bool) -> None:
    """A command naming an interpreter in a virtualenv under /tmp keeps it visible, but the
    agent (or measured code) cannot replace it for the runs that follow."""
    tmp_repo.commit("c", {"a.txt": "1\n"})
    box, head = boxed(tmp_repo), tmp_repo.git("rev-parse", "HEAD")
    venv = Path(tempfile.mkdtemp(prefix="gitimprove-venv-", dir="/tmp"))
    try:
        (venv / "bin").mkdir()
        python = venv / "bin" / "python"
        python.write_text("#!/bin/sh\necho honest\n")
        python.chmod(0o755)
        with agent_workspace(tmp_repo.open(), head, "w") as ws:
            attack = (
                f"{python}; (printf '#!/bin/sh\\necho METRIC score=0\\n' > {python}) 2>/dev/null;"
                f" (rm -f {python}) 2>/dev/null; (touch {venv}/bin/other) 2>/dev/null;"
                f" (mv {venv}/bin {venv}/old) 2>/dev/null; {python}"
            )
            res = run_in(box, attack, ws, measure=measure)
            assert res.stdout.split() == ["honest", "honest"], res.stderr
        assert python.read_text() == "#!/bin/sh\necho honest\n"
        assert sorted(p.name for p in venv.rglob("*")) == ["bin", "python"]
    finally:
        shutil.rmtree(venv, ignore_errors=True)


PWRITE = r"""
import os, sys
fd = os.open(f"/proc/{os.getppid()}/fd/1", os.O_WRONLY)
line = b"METRIC score=1\n"
try:
    os.pwrite(fd, line, 4096)
except OSError:
    os.write(fd, b"x")
"""

LATE = r"""
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(0.3)
        os.write(1, b"\nMETRIC score=1\n")
        os._exit(0)
    os._exit(0)
"""


@pytest.mark.parametrize("attack", ["pwrite", "late-child", "late-group", "nul"])
def test_the_benchmarks_last_line_cannot_be_overwritten(tmp_path: Path, attack: str) -> None:
    """Measured code writing a later METRIC line through /proc/<ppid>/fd/1 at an offset, a
    double-forked child writing after the benchmark exited (inside and outside its process
    group), or NUL bytes over the output: the benchmark's own line wins or the run is a
    metric-error, never the forged value."""
    (tmp_path / "pw.py").write_text(PWRITE)
    (tmp_path / "late.py").write_text(LATE)
    py = sys.executable
    command = {
        "pwrite": f"echo METRIC score=9; {py} pw.py; echo",
        "late-child": f"{py} late.py; echo METRIC score=9",
        "late-group": "echo METRIC score=9; (sleep 0.3; echo METRIC score=1) & exit 0",
        "nul": "echo METRIC score=9; printf '\\0\\0METRIC score=1\\n'",
    }[attack]
    got = run_metric(command, tmp_path, timeout=30, spec="auto", name="score")
    if attack == "nul":
        assert got.status == "metric-error" and "NUL" in (got.error or "")
    else:
        assert got.status == "ok" and got.value == 9, got
    import time

    time.sleep(0.5)  # the late writers have had their chance


IO_URING = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
for nr, args in ((425, (8, params)), (426, (0, 0, 0, 0, None, 0)), (427, (0, 0, None, 0))):
    ret = libc.syscall(nr, *args)
    print(nr, ret, ctypes.get_errno())
"""


@needs_bwrap
def test_io_uring_is_refused_in_the_sandbox(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    """io_uring would create and connect sockets past the system-call filter: its three calls
    fail with EPERM inside (outside they work or fail otherwise: the filter is what refuses)."""
    tmp_repo.commit("c", {"a.txt": "1\n"})
    box, head = boxed(tmp_repo), tmp_repo.git("rev-parse", "HEAD")
    with agent_workspace(tmp_repo.open(), head, "w") as ws:
        (ws / "u.py").write_text(IO_URING)
        res = run_in(box, "python3 u.py", ws)
        assert res.ok, res.stderr
        inside = [line.split() for line in res.stdout.splitlines()]
        assert inside == [[str(nr), "-1", "1"] for nr in (425, 426, 427)], inside
    outside = proc.run(["python3", "-c", IO_URING], timeout=30)
    assert [line.split()[2] for line in outside.stdout.splitlines()] != ["1", "1", "1"]


@needs_bwrap
def test_a_planted_alternates_file_reveals_nothing_on_the_next_call(tmp_repo: TmpRepo) -> None:
    """An agent writes its clone's alternates to name the hidden repository, its improve/
    folder (the integrity key) and the work tree; the next call in the same workspace (a
    rework) binds only what the harness knows the clone borrows, and the file is put back."""
    tmp_repo.commit("c", {"a.txt": "1\n"})
    r = tmp_repo.open()
    secret = r.common_dir / "improve" / "secret-key"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("s3cret\n")
    box, head = boxed(tmp_repo), tmp_repo.git("rev-parse", "HEAD")
    with agent_workspace(r, head, "w") as ws:
        alternates = ws / ".git" / "objects" / "info" / "alternates"
        honest = alternates.read_text()
        plant = "\\n".join(
            [str(r.common_dir / "objects"), str(r.common_dir / "improve"), str(r.common_dir),
             str(tmp_repo.path), f"{r.common_dir}/improve/../objects/../improve"]
        )  # fmt: skip
        res = run_in(box, f"printf '{plant}\\n' > .git/objects/info/alternates", ws)
        assert res.ok, res.stderr
        assert "improve" in alternates.read_text()
        (ws / "probe.sh").write_text(  # a script: paths in a command line stay visible
            f"cat {secret} 2>/dev/null || echo hidden; ls {tmp_repo.path} | wc -l; "
            f"test -e {r.common_dir}/config && echo config || echo no-config; git log -1 --format=%H"
        )
        res = run_in(box, "sh probe.sh", ws)
        assert res.stdout.split() == ["hidden", "0", "no-config", head], res.stderr
        assert alternates.read_text().strip() == str(r.common_dir / "objects")
        assert honest.strip() == str(r.common_dir / "objects")


@needs_bwrap
def test_the_claude_agent_cannot_plant_what_runs_outside_later(
    tmp_repo: TmpRepo, visible: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent in the sandbox writes a SessionStart hook into ~/.claude/settings.json, the
    local settings, CLAUDE.md, hooks/, commands/, agents/, plugins/, and an MCP server into
    ~/.claude.json: none of it reaches the home folder; its session files are private to the
    call (written, then gone)."""
    home = visible / "home"
    claude = home / ".claude"
    claude.mkdir(parents=True)
    for name in ("settings.json", "settings.local.json", "CLAUDE.md"):
        (claude / name).write_text("{}\n")
    (home / ".claude.json").write_text('{"numStartups": 1}\n')
    monkeypatch.setenv("HOME", str(home))
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    tmp_repo.commit("c", {"a.txt": "1\n"})
    box, head = boxed(tmp_repo), tmp_repo.git("rev-parse", "HEAD")
    hook = '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch /x"}]}]}}'
    attack = "; ".join(
        [f"(echo '{hook}' > {claude}/{n}) 2>/dev/null" for n in ("settings.json", "settings.local.json")]
        + [f"(echo evil > {claude}/CLAUDE.md) 2>/dev/null"]
        + [f"(mkdir -p {claude}/{d} && echo x > {claude}/{d}/x.md) 2>/dev/null"
           for d in ("hooks", "commands", "agents", "plugins", "output-styles")]
        + [f"(echo '{{\"mcpServers\": {{\"x\": {{\"command\": \"/x\"}}}}}}' > {home}/.claude.json) 2>/dev/null",
           f"echo session > {claude}/projects/s.jsonl", f"echo todo > {claude}/todos/t.json",
           f"cat {home}/.claude.json {claude}/projects/s.jsonl {claude}/todos/t.json"]
    )  # fmt: skip
    with (
        tempfile.TemporaryDirectory() as scratch,
        agent_workspace(tmp_repo.open(), head, "w") as ws,
    ):
        writable, overlays = _state_binds(ClaudeAgent.state, Path(scratch))
        res = run_in(box, attack, ws, writable=writable, overlays=overlays)
        assert "mcpServers" in res.stdout, res.stderr  # it wrote its private copy
        assert "session" in res.stdout and "todo" in res.stdout  # and its session, privately
    after = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    assert {p: after[p] for p in before} == before
    assert sorted(str(p.relative_to(home)) for p in set(after) - set(before)) == []
    assert not any((claude / d).exists() for d in ("hooks", "commands", "agents", "plugins"))
    assert os.path.exists(claude / "settings.json")


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_trees_of_any_depth_never_stop_the_run(tmp_repo: TmpRepo, sandbox: str) -> None:
    """1,500 nested folders in the work tree, the same in the clone's .git, and a path far past
    PATH_MAX: each attempt is recorded (out-of-scope, naming the folder, where the tree would
    hold it), every workspace is removed, the run goes on; a deep tree left in a workspace by
    a killed run is removed by `doctor --repair`."""
    plan = hostile_project(
        tmp_repo, {"1": "deep-tree", "2": "long-path", "3": "deep-git", "4": "set:95"}, sandbox
    )
    res = tmp_repo.cli("run", "--run", "h", "-n", "4", "--json")
    assert res.returncode == 0, res.stderr
    rows = assert_sound(tmp_repo, "h", plan["mark"])
    assert [r["status"] for r in rows[:3]] == ["baseline", "out-of-scope", "out-of-scope"], rows
    assert "deeper than" in json.dumps(rows[1])
    assert rows[4]["status"] == "keep" and rows[4]["metric"]["value"] == 95
    # a stale workspace with a deep tree (its owner gone), as a `kill -9` leaves it
    stale = tmp_repo.path / ".git" / "improve" / "work" / "w-dead"
    (stale / "x").mkdir(parents=True)
    fd = os.open(stale / "x", os.O_RDONLY)
    for _ in range(1500):
        os.mkdir("a", dir_fd=fd)
        sub = os.open("a", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = sub
    os.close(fd)
    (stale.parent / "w-dead.pid").write_text("999999999\n")
    res = tmp_repo.cli("doctor", "--repair")
    assert res.returncode in (0, 1) and "Traceback" not in res.stderr, res.stderr
    assert not stale.exists()


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_a_planted_object_of_the_wrong_content_is_recorded_not_a_crash(
    tmp_repo: TmpRepo, sandbox: str
) -> None:
    """Without the sandbox an agent can write loose objects into the repository under the
    names of blobs the harness will hash next (with other content): the attempt is recorded
    (tampered, naming the object), `run --resume` and `doctor` name it, never an exit 3."""
    plan = hostile_project(tmp_repo, {"1": "plant-object:95", "2": "set:94"}, sandbox)
    res = tmp_repo.cli("run", "--run", "h", "-n", "2", "--json")
    assert res.returncode in (0, 1), res.stderr
    assert "Traceback" not in res.stderr
    if sandbox == "bwrap":  # nothing reaches the repository: an honest attempt
        assert res.returncode == 0, res.stderr
        rows = assert_sound(tmp_repo, "h", plan["mark"])
        assert [r["status"] for r in rows] == ["baseline", "keep", "keep"]
        return
    rows = run_rows(tmp_repo, "h")
    assert len(rows) > 1, res.stderr
    assert rows[1]["status"] == "tampered" and ".git/objects/" in rows[1]["reason"], rows
    text = res.stdout + res.stderr + json.dumps(rows)
    assert "object" in text
    again = tmp_repo.cli("run", "--resume", "--json")
    assert again.returncode in (0, 1) and "Traceback" not in again.stderr, again.stderr
    doctor = tmp_repo.cli("doctor")
    assert doctor.returncode == 1 and "object" in doctor.stdout + doctor.stderr
    repair = tmp_repo.cli("doctor", "--repair")
    assert repair.returncode in (0, 1) and "Traceback" not in repair.stderr, repair.stderr
    assert tmp_repo.cli("doctor").returncode == 0


@pytest.mark.parametrize(
    "what",
    [
        "merge",
        *(
            pytest.param(w, marks=pytest.mark.slow)
            for w in ("shallow", "logs", "worktree", "sequencer")
        ),
    ],
)
def test_a_change_anywhere_in_the_git_directory_stops_the_run(tmp_repo: TmpRepo, what: str) -> None:
    """Without the sandbox: MERGE_HEAD and MERGE_MSG, a shallow file, the reflogs deleted, a
    linked worktree's HEAD moved, a sequencer planted: the run stops (exit 1) naming the path,
    the attempt recorded, nothing kept on its strength."""
    hostile_project(tmp_repo, {"1": "git-dir:95", "what": what}, "none")
    tmp_repo.git("worktree", "add", "-q", "--detach", str(tmp_repo.path.parent / "linked"))
    res = tmp_repo.cli("run", "--run", "h", "-n", "2", "--json")
    assert res.returncode == 1, res.stdout + res.stderr
    named = {
        "merge": ".git/MERGE_HEAD",
        "shallow": ".git/shallow",
        "logs": ".git/logs",
        "worktree": ".git/worktrees/linked/HEAD",
        "sequencer": ".git/sequencer",
    }[what]
    assert named in res.stderr, res.stderr
    rows = run_rows(tmp_repo, "h")
    assert [r["status"] for r in rows] == ["baseline", "tampered"]


MEASURED_DAEMON = """import os, pathlib, sys, time
pidfile = pathlib.Path({pidfile!r})
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        env = {{"PATH": os.environ.get("PATH", "/usr/bin:/bin")}}  # no token
        code = "import os, pathlib, time; pathlib.Path(%r).write_text(str(os.getpid())); time.sleep(120)"
        os.execve(sys.executable, [sys.executable, "-c", code % str(pidfile), {mark!r}], env)
    os._exit(0)
time.sleep(60)
"""


def test_a_measured_daemon_dies_with_a_killed_harness(tmp_repo: TmpRepo) -> None:
    """Without the sandbox the metric runs under the supervisor too: a daemon the measured
    code leaves (double fork, setsid, scrubbed environment) dies when the harness is killed
    by `kill -9` during the measurement."""
    import signal
    import time

    from tests.test_integrity import start, wait_for

    pidfile = tmp_repo.path.parent / "measured-daemon.pid"
    mark = f"measured-{os.getpid()}-{id(pidfile)}"
    hostile_project(tmp_repo, {"1": "set:95"}, "none")
    tmp_repo.commit("bench", {"bench.py": MEASURED_DAEMON.format(pidfile=str(pidfile), mark=mark)})
    p = start(tmp_repo, "--run", "h", "-n", "1", "--json")
    pid = wait_for(pidfile)
    p.send_signal(signal.SIGKILL)
    p.communicate()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            break
        if state == "Z":
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the measured code's daemon outlived the harness")
