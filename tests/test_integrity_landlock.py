"""`[agent] sandbox = "landlock"`: without bubblewrap, agents and the measured code are kept to
their own folders by a Landlock domain their supervisor enters before it runs them
(util/supervise.py, docs/integrity.md "Landlock").

A write of the user's work tree, `.git/config`, `~/.gitconfig`, the incumbent's checkout or a
sibling's workspace fails at the write (EACCES) where `none` lets it through and detects it
after the fact; so does a read of the run's folder (its key, the other workspaces and
checkouts: reads are carved); a stop (SIGSTOP) of the harness, of a sibling's agent or, with
`--measure-jobs 2`, of another candidate's benchmark fails (EPERM): the signal scope of
Landlock ABI 6.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from gitimprove.agents import sandbox
from gitimprove.util import proc, supervise
from tests.conftest import PY, TmpRepo
from tests.loop_helpers import SRC_VALUE_BENCH, run_rows, value_project
from tests.test_integrity import needs_landlock

AGENT = Path(__file__).parent / "agents" / "contained_agent.py"
ABI = supervise.landlock_abi()
needs_scopes = pytest.mark.skipif(
    ABI < supervise.LANDLOCK_ABI_SCOPED, reason="this kernel's Landlock scopes no signal"
)
# refused at the call: the writes, and the reads of what bwrap hides (the carved reads)
ATTACKS = ("work tree", ".git/config", "~/.gitconfig", "read the key", "list workspaces")


def untouched(repo: TmpRepo) -> None:
    assert "written by an agent" not in (repo.path / "bench.py").read_text()
    assert "written by an agent" not in (repo.path / ".git" / "config").read_text()
    gitconfig = Path.home() / ".gitconfig"
    assert not gitconfig.exists() or "written by an agent" not in gitconfig.read_text()


# what a command under the supervisor tries, one line each: "<what> ok" or "<what> <errno>"
PROBE = """import errno, os, pathlib, signal, stat, subprocess, sys
def attempt(name, action):
    try:
        action()
        print(name, "ok")
    except OSError as exc:
        print(name, errno.errorcode[exc.errno])
outside = pathlib.Path(sys.argv[1])
attempt("write outside", lambda: (outside / "x").write_text("x"))
attempt("truncate outside", lambda: os.truncate(outside / "kept", 0))
attempt("rename out", lambda: os.rename("mine", outside / "moved"))
attempt("write inside", lambda: pathlib.Path("mine2").write_text("x"))
attempt("write own tmp", lambda: pathlib.Path(os.environ["TMPDIR"], "t").write_text("x"))
attempt("write /dev/null", lambda: open("/dev/null", "w").write("x"))
child = subprocess.Popen(["sleep", "5"])
attempt("stop own child", lambda: os.kill(child.pid, signal.SIGSTOP))
attempt("write child's /proc mem", lambda: open(f"/proc/{child.pid}/mem", "r+b").close())
child.kill()
attempt("stop the harness", lambda: os.kill(int(sys.argv[2]), signal.SIGSTOP))
attempt("hard link outside", lambda: os.link(outside / "kept", "linked"))
attempt("make a device", lambda: os.mknod("kmsg", 0o600 | stat.S_IFCHR, os.makedev(1, 11)))
attempt("harness's cwd", lambda: os.listdir(f"/proc/{sys.argv[2]}/cwd"))
attempt("harness's files", lambda: os.readlink(f"/proc/{sys.argv[2]}/fd/0"))
def take_descriptor():  # pidfd_getfd (438 on every architecture): a copy of its stdin
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(438, os.pidfd_open(int(sys.argv[2])), 0, 0) < 0:
        raise OSError(ctypes.get_errno(), "pidfd_getfd")
attempt("harness's descriptor", take_descriptor)
"""


@needs_landlock
def test_the_supervisor_contains_what_it_runs(tmp_path: Path) -> None:
    """A command under `sandbox = "landlock"` writes beneath the folders it is given and
    `/dev`, signals its own processes only, hard-links no file of the user's into its own
    folder, makes no device there (root's disk, /dev/kmsg: written as its own file) and
    reaches into no process outside its domain (the harness's cwd, its open files, a copy of
    one of its descriptors): the rest fails at the call."""
    outside, work, tmp = tmp_path / "outside", tmp_path / "work", tmp_path / "tmp"
    for folder in (outside, work, tmp):
        folder.mkdir()
    (outside / "kept").write_text("kept\n")
    (work / "mine").write_text("mine\n")
    argv, shell = sandbox.Sandbox("landlock").wrap(
        [sys.executable, "-c", PROBE, str(outside), str(os.getpid())],
        shell=False, workdir=work, writable=[tmp],
    )  # fmt: skip
    res = proc.run(argv, cwd=work, shell=shell, env=proc.clean_env({"TMPDIR": str(tmp)}))
    assert res.returncode == 0, res.stderr
    got = dict(line.rsplit(" ", 1) for line in res.stdout.splitlines())
    scoped = ABI >= supervise.LANDLOCK_ABI_SCOPED
    assert got == {
        "write outside": "EACCES",
        "truncate outside": "EACCES",
        "rename out": "EACCES",
        "write inside": "ok",
        "write own tmp": "ok",
        "write /dev/null": "ok",
        "stop own child": "ok",
        "write child's /proc mem": "EACCES",
        "stop the harness": "EPERM" if scoped else "ok",
        "hard link outside": "EXDEV",  # REFER: linking needs the right where the file lies
        "make a device": "EACCES",  # root's /dev/kmsg (or a disk) in its own folder: none
        "harness's cwd": "EACCES",  # Landlock's ptrace rule, whatever the ABI
        "harness's files": "EACCES",
        "harness's descriptor": "EPERM",
    }, res.stdout
    assert (outside / "kept").read_text() == "kept\n" and sorted(outside.iterdir()) == [
        outside / "kept"
    ]


# what a command reads under the supervisor: "<name> ok" or "<name> <errno>"
# what a command reads under the supervisor, once the last path exists (made by the test
# after "ready"): "<name> ok" or "<name> <errno>"
READS = """import errno, os, sys, time
def attempt(name, path):
    try:
        os.listdir(path) if os.path.isdir(path) else open(path, "rb").close()
        print(name, "ok")
    except OSError as exc:
        print(name, errno.errorcode[exc.errno])
print("ready", flush=True)
end = time.monotonic() + 20
while not os.path.exists(sys.argv[-1].split("=", 1)[1]) and time.monotonic() < end:
    time.sleep(0.01)
for arg in sys.argv[1:]:
    if "=" in arg:  # else a path the command names
        attempt(*arg.split("=", 1))
"""


@needs_landlock
def test_the_supervisor_hides_the_run_from_reads(tmp_path: Path) -> None:
    """Under Landlock the run's folder (`.git/improve`) is carved out of the reads: the
    integrity key, a sibling's workspace and the folder of workspaces are EACCES, even when
    the command names the repository; the command's own workspace, the objects its clone
    borrows, a file its command names, its own temporary folder, the user's work tree and the
    rest of the system read as before. A file made later in a carved folder is not readable
    (the rules hold the entries there when the domain is made)."""
    repo = tmp_path / "repo"
    improve = repo / ".git" / "improve"
    mine, sibling = improve / "work" / "mine", improve / "work" / "sibling"
    objects, tmp = repo / ".git" / "objects", tmp_path / "tmp"
    for folder in (mine, sibling, objects, tmp):
        folder.mkdir(parents=True)
    for path in (improve / "key", sibling / "value.txt", mine / "value.txt", repo / "bench.py",
                 objects / "pack", improve / "prompt.md"):  # fmt: skip
        path.write_text("x\n")
    box = sandbox.Sandbox("landlock", hide=(improve,), objects=(objects,))
    probes = {
        "key": improve / "key", "sibling": sibling / "value.txt", "workspaces": mine.parent,
        "work tree": repo / "bench.py", "own": mine / "value.txt", "objects": objects / "pack",
        "named": improve / "prompt.md", "tmp": tmp, "system": Path(sys.executable).resolve(),
        "later": tmp_path / "later",
    }  # fmt: skip
    argv, _ = box.wrap(
        [sys.executable, "-c", READS, str(improve / "prompt.md"), str(repo),
         *(f"{k}={v}" for k, v in probes.items())],
        shell=False, workdir=mine, writable=[tmp],
    )  # fmt: skip
    with subprocess.Popen(argv, cwd=mine, stdout=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"  # the domain is made: the file comes later
        (tmp_path / "later").write_text("x\n")
        out, _ = child.communicate(timeout=30)
    assert child.returncode == 0, out
    got = dict(line.rsplit(" ", 1) for line in out.splitlines() if " " in line)
    hidden = {"key", "sibling", "workspaces", "later"}
    assert got == {k: "EACCES" if k in hidden else "ok" for k in probes}, out


SIGIO = """import fcntl, os, signal, socket, sys, time
a, b = socket.socketpair()
fcntl.fcntl(a, fcntl.F_SETOWN, int(sys.argv[1]))
fcntl.fcntl(a, 10, signal.SIGKILL)  # F_SETSIG: the signal the owner gets when a is readable
fcntl.fcntl(a, fcntl.F_SETFL, fcntl.fcntl(a, fcntl.F_GETFL) | os.O_ASYNC)
b.send(b"x")
time.sleep(0.2)
"""


@needs_scopes
def test_no_signal_reaches_out_through_a_descriptor_s_owner(tmp_path: Path) -> None:
    """A signal the kernel sends for a command (`F_SETOWN` a process of yours, `F_SETSIG`
    SIGKILL, `O_ASYNC`: the kill comes when its socket is readable) is scoped as its own
    `kill` is: the process outside its domain lives on."""
    with subprocess.Popen(["sleep", "30"]) as victim:
        try:
            argv, _ = sandbox.Sandbox("landlock").wrap(
                [sys.executable, "-c", SIGIO, str(victim.pid)], shell=False, workdir=tmp_path
            )
            res = proc.run(argv, cwd=tmp_path)
            assert res.returncode == 0, res.stderr
            assert victim.poll() is None
        finally:
            victim.kill()


TYPES = """import fcntl, sys, termios
fd = open(sys.argv[1], "r+b", buffering=0)
try:
    for c in b"echo typed\\n":
        fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
    print("typed")
except OSError as exc:
    print(exc.strerror)
"""


@needs_landlock
def test_root_types_nothing_into_another_terminal(tmp_path: Path) -> None:
    """Landlock grants a command its own new terminals (`/dev/pts`) only with every terminal
    of yours there: run as root, it could type a command into one of yours (`TIOCSTI`, for
    which a terminal that is not its own takes CAP_SYS_ADMIN). The supervisor drops that
    capability from what it runs: the keystrokes are refused."""
    if os.geteuid() != 0:
        pytest.skip("only root may type into a terminal that is not its own")
    if Path("/proc/sys/dev/tty/legacy_tiocsti").read_text().strip() == "0":
        pytest.skip("this kernel refuses TIOCSTI to everyone")
    master, user = os.openpty()
    try:
        argv, _ = sandbox.Sandbox("landlock").wrap(
            [sys.executable, "-c", TYPES, os.ttyname(user)], shell=False, workdir=tmp_path
        )
        res = proc.run(argv, cwd=tmp_path)
        os.set_blocking(master, False)
        try:
            seen = os.read(master, 100)
        except BlockingIOError:
            seen = b""
    finally:
        os.close(master)
        os.close(user)
    assert res.stdout == "Operation not permitted\n", res.stdout + res.stderr
    assert b"typed" not in seen


@needs_landlock
def test_a_command_reads_no_other_temporary_folder_of_the_harness(tmp_path: Path) -> None:
    """The temporary folders the harness makes for each agent call and each metric and guard
    run (a sibling's private home with its session transcripts, its `$TMPDIR`, its benchmark's
    caches and report) lie side by side in `/tmp`: under Landlock every one but the command's
    own is carved out of its reads, as bwrap gives each a private `/tmp`."""
    own = Path(tempfile.mkdtemp(prefix="gitimprove-state-"))
    sibling = Path(tempfile.mkdtemp(prefix="gitimprove-cache-"))
    try:
        (own / "tmp").mkdir()
        for path in (own / "tmp" / "mine", sibling / "number"):
            path.write_text("50\n")
        work = tmp_path / "work"
        work.mkdir()
        probes = {"sibling": sibling / "number", "sibling's folder": sibling,
                  "own": own / "tmp" / "mine"}  # fmt: skip
        argv, _ = sandbox.Sandbox("landlock").wrap(
            [sys.executable, "-c", READS, *(f"{k}={v}" for k, v in probes.items())],
            shell=False, workdir=work, writable=[own / "tmp"],
        )  # fmt: skip
        res = proc.run(argv, cwd=work)
    finally:
        shutil.rmtree(own)
        shutil.rmtree(sibling)
    assert res.returncode == 0, res.stderr
    got = dict(line.rsplit(" ", 1) for line in res.stdout.splitlines() if line != "ready")
    assert got == {"sibling": "EACCES", "sibling's folder": "EACCES", "own": "ok"}, res.stdout


@needs_landlock
def test_landlock_hides_login_keys_and_push_credentials(tmp_path: Path) -> None:
    """As bwrap empties them, Landlock carves `~/.ssh` and git's credential files out of the
    reads (the network is shared: a key or token read there logs in or pushes as you); the
    rest of the home reads as before."""
    home = Path.home()  # the tests' private HOME
    (home / ".ssh").mkdir(exist_ok=True)
    for name in (".ssh/id_ed25519", ".git-credentials", ".netrc", "notes.txt"):
        (home / name).write_text("secret\n")
    mine = tmp_path / "repo" / ".git" / "improve" / "work" / "mine"
    mine.mkdir(parents=True)
    (mine / "value.txt").write_text("1\n")
    box = sandbox.choose("landlock", [], state=tmp_path / "repo" / ".git" / "improve")
    probes = {
        "ssh key": home / ".ssh" / "id_ed25519", "git store": home / ".git-credentials",
        "netrc": home / ".netrc", "notes": home / "notes.txt", "own": mine / "value.txt",
    }  # fmt: skip
    argv, _ = box.wrap(
        [sys.executable, "-c", READS, *(f"{k}={v}" for k, v in probes.items())],
        shell=False, workdir=mine,
    )  # fmt: skip
    res = proc.run(argv, cwd=mine)
    assert res.returncode == 0, res.stderr
    got = dict(line.rsplit(" ", 1) for line in res.stdout.splitlines() if line != "ready")
    hidden = {"ssh key", "git store", "netrc"}
    assert got == {k: "EACCES" if k in hidden else "ok" for k in probes}, res.stdout


def test_carving_grants_every_entry_but_the_way_to_what_is_hidden(tmp_path: Path) -> None:
    """The read rules of a carved ruleset, by folder: on the way from `/` to the hidden folder
    every entry but the next step (links left out: what they lead to is judged where it lies);
    in the hidden folder only the way to the kept one, which gets a rule of its own."""
    tmp_path = tmp_path.resolve()  # the walk names folders as they are
    root = tmp_path / "root"
    run, mine = root / "run", root / "run" / "work" / "mine"
    for folder in (root / "a", mine, run / "work" / "sibling"):
        folder.mkdir(parents=True)
    for path in (root / "b.txt", run / "key"):
        path.write_text("x\n")
    (root / "link").symlink_to(root / "a")
    rules = dict(supervise.carve([str(run)], [str(mine)]))
    assert sorted(rules[str(root)]) == [
        ("a", supervise._READ_RIGHTS),
        ("b.txt", supervise._READ_RIGHTS & supervise._FILE_RIGHTS),
    ]
    assert rules[str(run)] == [] and rules[str(run / "work")] == []
    assert str(mine) not in rules and str(root / "a") not in rules
    assert (tmp_path.name, supervise._READ_RIGHTS) not in rules[str(tmp_path.parent)]
    assert rules[str(tmp_path)] == []  # its one entry is the way on
    assert tmp_path.parts[1] not in {name for name, _ in rules["/"]}


@pytest.mark.slow
@needs_landlock
def test_an_agent_writes_nothing_outside_its_workspace_and_signals_nothing(
    tmp_repo: TmpRepo,
) -> None:
    value_project(tmp_repo, f"{sys.executable} {AGENT}", sandbox="landlock", timeouts=True)
    name = f"gitimprove-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX) as server:  # a server of the user's, reachable in none
        server.bind("\0" + name)
        server.listen()
        res = tmp_repo.cli("run", "--run", "t", "-n", "1", env={"CONTAINED_ABSTRACT": name})
    assert res.returncode == 0, res.stderr
    assert f"sandbox: landlock (Landlock ABI {ABI}: " in res.stdout
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "keep"], rows
    description = rows[1]["description"]
    for attack in ATTACKS:
        assert f"{attack}=EACCES" in description, description
    assert "done own temporary folder" in description, description
    if ABI >= supervise.LANDLOCK_ABI_SCOPED:
        assert "stop the harness=EPERM" in description, description
        assert "abstract socket=EPERM" in description, description
    assert rows[1]["metric"]["value"] == 40
    untouched(tmp_repo)


@pytest.mark.slow
@needs_landlock
@needs_scopes
def test_a_tournament_agent_reaches_no_sibling(tmp_repo: TmpRepo) -> None:
    command = f"{sys.executable} {AGENT} tournament"
    value_project(tmp_repo, command, sandbox="landlock", timeouts=True)
    res = tmp_repo.cli("run", "--run", "t", "-n", "1", "-k", "2", "-j", "2")
    assert res.returncode == 0, res.stderr
    rows = {r.get("candidate"): r for r in run_rows(tmp_repo, "t") if r["status"] != "baseline"}
    hostile, honest = rows[1], rows[0]
    for attack in ("list workspaces again", "stop a sibling", "stop the harness"):
        code = "EPERM" if attack.startswith("stop") else "EACCES"
        assert f"{attack}={code}" in hostile["description"], hostile
    assert hostile["status"] == "keep" and hostile["metric"]["value"] == 40, hostile
    assert honest["status"] != "tampered" and honest["metric"]["value"] == 50, honest
    untouched(tmp_repo)


# candidate 1's code, while measured (2.5 s: no faster than the base's 2 s), stops (1.5 s) every
# other process running src/work.py it finds (a sibling's benchmark, measured at once with
# --measure-jobs 2, 0.5 s): found by its command line (its working folder is not readable
# across Landlock domains). Without Landlock the honest candidate is measured at 1 s or more.
STOPPER = """import os, pathlib, signal, time
end = time.monotonic() + 2.5
while time.monotonic() < end:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if command.endswith(b"src/work.py\\0") and int(pid) != os.getpid():
            try:
                os.kill(int(pid), signal.SIGSTOP)
            except PermissionError:
                continue
            time.sleep(1.5)
            os.kill(int(pid), signal.SIGCONT)
    time.sleep(0.01)
"""
STOPPER_AGENT = f"""import os, pathlib
honest = os.environ["GITIMPROVE_CANDIDATE"] == "0"
code = "import time\\ntime.sleep(0.5)\\n" if honest else {STOPPER!r}
pathlib.Path("src/work.py").write_text(code)
"""
BENCH = """import subprocess, sys, time
started = time.monotonic()
subprocess.run([sys.executable, "src/work.py"], check=True)
print(f"METRIC seconds={int(time.monotonic() - started)}")
"""


@pytest.mark.slow
@needs_landlock
@needs_scopes
def test_measured_code_stops_no_other_benchmark(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    agent = tmp_path / "stopper.py"
    agent.write_text(STOPPER_AGENT)
    value_project(
        tmp_repo,
        f"{sys.executable} {agent}",
        BENCH,
        {"src/work.py": "import time\ntime.sleep(2.0)\n"},
        sandbox="landlock",
        timeouts=True,
    )
    res = tmp_repo.cli("run", "--run", "t", "-n", "1", "-k", "2", "--measure-jobs", "2")
    assert res.returncode == 0, res.stderr
    rows = {r.get("candidate"): r for r in run_rows(tmp_repo, "t") if r["status"] != "baseline"}
    assert rows[0]["metric"]["value"] == 0, rows[0]
    assert rows[0]["status"] == "keep", rows[0]


def test_without_landlock_auto_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """`auto` with neither bubblewrap nor Landlock runs, and its first words say so; an
    explicit `landlock` the kernel lacks is a clear error."""
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(supervise, "landlock_abi", lambda: 0)
    box = sandbox.choose("auto", [])
    assert box.mode == "none"
    assert box.message.startswith(
        "sandbox: none (bubblewrap is not available, nor Landlock: this kernel has no Landlock"
    )
    with pytest.raises(sandbox.ConfigError, match='"landlock" but this kernel has no Landlock'):
        sandbox.choose("landlock", [])


# The harness under a seccomp filter that fails landlock_create_ruleset (444 on x86-64 and
# arm64) with ENOSYS, as a kernel without Landlock does: a real process, no hook of the code.
NO_LANDLOCK = """import ctypes, os, struct, sys
insns = [(0x20, 0, 0, 0), (0x15, 0, 1, 444), (0x06, 0, 0, 0x00050000 | 38),
         (0x06, 0, 0, 0x7FFF0000)]
code = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in insns))
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
prog = Prog(len(insns), ctypes.addressof(code))
assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
os.execv(sys.argv[1], sys.argv[1:])
"""


@needs_landlock
def test_a_supervisor_that_cannot_make_its_domain_runs_nothing(tmp_path: Path) -> None:
    script = tmp_path / "no_landlock.py"
    script.write_text(NO_LANDLOCK)
    argv = sandbox.supervised(f"touch {tmp_path / 'ran'}", shell=True, writable=[tmp_path])
    res = subprocess.run([PY, str(script), *argv], capture_output=True, text=True, timeout=60)
    assert res.returncode == 126, res
    assert "cannot contain the command with Landlock" in res.stderr
    assert not (tmp_path / "ran").exists()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="git is needed")
def test_auto_without_bubblewrap_nor_landlock_runs_and_says_so(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    command = f"{sys.executable} {AGENT} honest"
    value_project(tmp_repo, command, sandbox="auto", timeouts=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "sh"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    script = tmp_path / "no_landlock.py"
    script.write_text(NO_LANDLOCK)

    def run(name: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PY, str(script), PY, "-m", "gitimprove", "run", "--run", name, "-n", "1"],
            cwd=tmp_repo.path, capture_output=True, text=True, timeout=300,
            env={**os.environ, "PATH": str(bin_dir)},
        )  # fmt: skip

    res = run("t")
    assert res.returncode == 0, res.stderr
    assert (
        "sandbox: none (bubblewrap is not available, nor Landlock: this kernel has no Landlock"
        in res.stdout
    ), res.stdout
    assert [r["status"] for r in run_rows(tmp_repo, "t")] == ["baseline", "keep"]
    tmp_repo.git("config", "improve.agent.sandbox", "landlock")
    res = run("t2")
    assert res.returncode == 1, res.stdout
    assert 'agent.sandbox = "landlock" but this kernel has no Landlock' in res.stderr


@pytest.mark.slow
@needs_landlock
def test_a_metric_that_writes_outside_its_checkout_is_named(tmp_repo: TmpRepo) -> None:
    """A benchmark that keeps a file in the home fails under Landlock on the run's base: the
    error says where it may write, and how to run it anyway."""
    bench = "import pathlib\npathlib.Path.home().joinpath('bench.log').write_text('x')\n"
    value_project(tmp_repo, f"{sys.executable} {AGENT} honest", bench + SRC_VALUE_BENCH,
                  sandbox="landlock")  # fmt: skip
    res = tmp_repo.cli("run", "--run", "t", "-n", "1")
    assert res.returncode == 1, res.stdout
    assert "ran under Landlock (it may write its checkout and $TMPDIR alone)" in res.stderr
    assert not (Path.home() / "bench.log").exists()


# the benchmark runs the candidate's code in a subprocess and prints its number; candidate 1's
# code looks for 4 s for a better number in the checkouts beside its own (the honest sibling's,
# measured at once with --measure-jobs 2, or kept as a spare) and prints it less one
SCORE = "print(float(open('src/value.txt').read()))\n"
PEEKER = """import os, pathlib, time
here, best, end = pathlib.Path.cwd(), 100.0, time.monotonic() + 4
while best == 100.0 and time.monotonic() < end:
    try:
        others = [d for d in here.parent.iterdir() if d != here]
    except OSError:  # the folder of checkouts is not readable
        break
    for other in others:
        try:
            best = min(best, float((other / "src" / "value.txt").read_text()) - 1)
        except (OSError, ValueError):
            continue
    time.sleep(0.05)
print(best)
"""
PEEKER_AGENT = f"""import os, pathlib
if os.environ["GITIMPROVE_CANDIDATE"] == "0":
    pathlib.Path("src/value.txt").write_text("50\\n")
else:
    pathlib.Path("src/score.py").write_text({PEEKER!r})
"""
PEEKER_BENCH = """import subprocess, sys
out = subprocess.run([sys.executable, "src/score.py"], capture_output=True, text=True).stdout
print(f"METRIC score={float(out):g}")
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "mode",
    [
        pytest.param("landlock", marks=needs_landlock),
        pytest.param(
            "bwrap",
            marks=pytest.mark.skipif(
                not sandbox.bwrap_usable(), reason="bubblewrap is not usable here"
            ),
        ),
    ],
)
def test_measured_code_reads_no_siblings_number(
    tmp_repo: TmpRepo, tmp_path: Path, mode: str
) -> None:
    """Under Landlock the folder of the measurement checkouts is carved out of the measured
    code's reads (bwrap hides it): candidate 1's code cannot find candidate 0's number beside
    it and live on it (49 against 50); the honest candidate is kept. Without a sandbox it can
    (docs/integrity.md); whether it finds it then depends on timing, so that case is no test."""
    agent = tmp_path / "peeker.py"
    agent.write_text(PEEKER_AGENT)
    value_project(
        tmp_repo,
        f"{sys.executable} {agent}",
        PEEKER_BENCH,
        {"src/score.py": SCORE},
        sandbox=mode,
        timeouts=True,
    )
    res = tmp_repo.cli("run", "--run", "t", "-n", "1", "-k", "2", "--measure-jobs", "2")
    assert res.returncode == 0, res.stderr
    rows = {r.get("candidate"): r for r in run_rows(tmp_repo, "t") if r["status"] != "baseline"}
    assert rows[1]["metric"]["value"] == 100, rows[1]
    assert rows[0]["status"] == "keep" and rows[0]["metric"]["value"] == 50, rows[0]
