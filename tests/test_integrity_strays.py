"""Without the sandbox, measured code and the agent can write gitimprove's own folder
(`.git/improve/`): whatever they leave there that gitimprove does not write makes the attempt
`tampered`, naming the path, and is gone before any later run; `doctor` names strays too. In
the sandbox the folder is out of reach. Hostile code in real runs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitimprove.git import strays
from gitimprove.git.checkout import write_pid
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import needs_bwrap
from tests.test_integrity_persist import persist_project


def _run(tmp_repo: TmpRepo) -> list[dict[str, object]]:
    res = tmp_repo.cli("run", "--run", "p", "-n", "2")
    assert res.returncode == 0, res.stdout + res.stderr
    return run_rows(tmp_repo, "p")


def _improve(tmp_repo: TmpRepo) -> Path:
    return tmp_repo.path / ".git" / "improve"


@pytest.mark.parametrize(
    ("plan", "named"),
    [
        ("stray:locks/x.lock", ".git/improve/locks/x.lock"),
        ("stray:work/m-0123456789abcdef.pid", ".git/improve/work/m-0123456789abcdef.pid"),
        pytest.param("stray:mark.txt", ".git/improve/mark.txt", marks=pytest.mark.slow),
        pytest.param("stray:work/notes", ".git/improve/work/notes", marks=pytest.mark.slow),
        pytest.param(
            "stray:locks/notes.lock", ".git/improve/locks/notes.lock", marks=pytest.mark.slow
        ),
        pytest.param("stray:cachex/a/b", ".git/improve/cachex", marks=pytest.mark.slow),
        pytest.param("stray:xattr:work", "extended attribute user.mark", marks=pytest.mark.slow),
        pytest.param(
            "agentstray:locks/y.lock", ".git/improve/locks/y.lock", marks=pytest.mark.slow
        ),
        ("agentstray:work/left.txt", ".git/improve/work/left.txt"),
        # in the form gitimprove's hooks write there, but not sealed with the key as a hook
        # seals what it writes: never taken for a hook's
        ("stray:watermarks/x.json", ".git/improve/watermarks/x.json"),
        ("stray:session-map/x", ".git/improve/session-map/x"),
        ("agentstray:watermarks/y.json", ".git/improve/watermarks/y.json"),
        pytest.param(
            "stray:spool/signals__2026__01__20260101T000000Z-h-abcdef.json",
            ".git/improve/spool/signals__2026__01__20260101T000000Z-h-abcdef.json",
            marks=pytest.mark.slow,
        ),
    ],
)
@pytest.mark.slow
def test_a_stray_in_gitimprove_folder_is_tampered_and_gone(
    tmp_repo: TmpRepo, plan: str, named: str
) -> None:
    persist_project(tmp_repo, plan, "none")
    rows = _run(tmp_repo)
    assert [r["status"] for r in rows] == ["baseline", "tampered", "keep"], rows
    assert named in str(rows[1]["reason"])
    who = "the agent" if plan.startswith("agent") else "the metric run"
    assert f"{who} wrote into gitimprove's folder" in str(rows[1]["reason"])
    assert rows[2]["metric"]["value"] == 90  # the next attempt measured honestly, never 80
    assert 80 not in rows[2]["metric"]["incumbent_samples"]
    assert strays.find(_improve(tmp_repo)) == []
    target = plan.split(":", 1)[1]
    if not target.startswith("xattr:"):
        left = _improve(tmp_repo) / target
        assert not left.exists() or left.read_bytes() == b""  # a lock gitimprove took anew


@pytest.mark.slow
@needs_bwrap
@pytest.mark.parametrize(
    "plan", ["stray:locks/x.lock", "stray:mark.txt", "stray:work/stray", "agentstray:locks/y.lock"]
)
def test_gitimprove_folder_is_out_of_reach_in_the_sandbox(tmp_repo: TmpRepo, plan: str) -> None:
    target = plan.split(":", 1)[1]
    persist_project(tmp_repo, plan, "bwrap")
    rows = _run(tmp_repo)
    assert [r["status"] for r in rows] == ["baseline", "discard", "keep"]
    assert set(rows[1]["metric"]["samples"]) == {103}  # the write failed: never found
    assert not (_improve(tmp_repo) / target).exists()


@pytest.mark.slow
def test_what_gitimprove_writes_is_no_stray(tmp_repo: TmpRepo) -> None:
    persist_project(tmp_repo, "honest", "none")
    rows = _run(tmp_repo)
    assert [r["status"] for r in rows][:2] == ["baseline", "keep"]
    assert strays.find(_improve(tmp_repo)) == []
    res = tmp_repo.cli("doctor")
    assert "nothing stray in .git/improve" in res.stdout


@pytest.mark.slow
def test_doctor_names_and_removes_strays(tmp_repo: TmpRepo) -> None:
    persist_project(tmp_repo, "honest", "none")
    _run(tmp_repo)
    imp = _improve(tmp_repo)
    (imp / "locks" / "notes.lock").write_text("carried\n")  # a known name, not as left
    (imp / "work" / "abc").write_bytes(b"1")
    (imp / "work" / "m-0000000000000000").mkdir()  # a checkout's name, no process named
    os.symlink("/", imp / "rootlink")
    (imp / "work" / "p-9-0.prompt.md").write_text("no clone of that name\n")
    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait()  # a pid no process has now
    (imp / "work" / "m-1111111111111111.pid").write_text(f"{dead.pid}\nmeasure\n")
    os.chmod(imp / "work", 0o1755)
    found = strays.find(imp)
    assert [s.split(" (")[0] for s in found] == [
        ".git/improve/locks/notes.lock",
        ".git/improve/rootlink",
        ".git/improve/work",
        ".git/improve/work/abc",
        ".git/improve/work/m-0000000000000000",
        ".git/improve/work/m-1111111111111111.pid",
        ".git/improve/work/p-9-0.prompt.md",
    ]
    res = tmp_repo.cli("doctor")
    assert res.returncode != 0 and ".git/improve/work/abc" in res.stdout
    res = tmp_repo.cli("doctor", "--repair")
    assert strays.find(imp) == [] and not (imp / "rootlink").exists()
    assert not os.stat(imp / "work").st_mode & 0o1000


def test_a_pid_file_of_this_process_must_hold_what_it_wrote(tmp_path: Path) -> None:
    imp = tmp_path / "improve"
    (imp / "work").mkdir(parents=True)
    (imp / "work" / "m-2222222222222222").mkdir()
    pid_file = imp / "work" / "m-2222222222222222.pid"
    write_pid(pid_file, "measure")
    assert strays.find(imp) == []
    pid_file.write_text(f"{os.getpid()}\nforged\n")  # the right pid, another word
    assert strays.find(imp) == [
        ".git/improve/work/m-2222222222222222.pid (not a .pid file gitimprove writes, or not "
        "as it wrote it)"
    ]
    pid_file.write_text("")  # being written
    assert strays.find(imp) == []
    (imp / "locks").mkdir()
    os.setxattr(imp / "locks", "user.carried", b"1")
    found = strays.find(imp)
    assert found == [".git/improve/locks (extended attribute user.carried)"]
    strays.remove(imp, found)
    assert os.listxattr(imp / "locks") == [] and strays.find(imp) == []


def test_a_step_of_the_clock_while_watched_is_tampered(tmp_repo: TmpRepo) -> None:
    """A process running as root without the sandbox can set the clock back to a file's ctime,
    rewrite the file and set the clock forward: its `lstat` is then as gitimprove left it. A
    step of the clock while the folder is watched is named, the attempt `tampered`."""
    from tests.test_integrity_reuse import CLOCK_TESTS, _can_set_clock

    if not _can_set_clock():
        pytest.skip(f"sets the system clock: {CLOCK_TESTS}=1, root with CAP_SYS_TIME, run alone")
    persist_project(tmp_repo, "meta:clock-step", "none")
    rows = _run(tmp_repo)
    assert [r["status"] for r in rows] == ["baseline", "tampered", "keep"], rows
    assert "the system clock was set while it was watched" in str(rows[1]["reason"])
    assert rows[2]["metric"]["value"] == 90


FAKES = {
    # a command line naming gitimprove is not a gitimprove process
    "argv": lambda tmp: [sys.executable, "-c", "import time; time.sleep(120)", "gitimprove"],
    # gitimprove's own form of command line, carrying an attempt's token
    "token": lambda tmp: [sys.executable, str(_script(tmp)), "run"],
}


def _script(tmp: Path) -> Path:
    script = tmp / "bin" / "git-improve"
    script.parent.mkdir(exist_ok=True)
    script.write_text("import time\ntime.sleep(120)\n")
    return script


@pytest.mark.slow
@pytest.mark.parametrize("fake", sorted(FAKES))
def test_a_pid_file_naming_a_fake_gitimprove_process_is_a_stray(
    tmp_repo: TmpRepo, tmp_path: Path, fake: str
) -> None:
    """The measured code leaves a checkout's folder and a `.pid` file naming a live process
    that passes for gitimprove (its command line names it; or it has gitimprove's own form
    but carries an attempt's token): never taken for another run's, the attempt is
    `tampered` and nothing is left for a later run to read."""
    env = {**os.environ, "GITIMPROVE_TOKEN": "gi1:0:p:1:00"} if fake == "token" else None
    live = subprocess.Popen(FAKES[fake](tmp_path), env=env)
    try:
        (tmp_path / "fake.pid").write_text(f"{live.pid}\n")
        persist_project(tmp_repo, f"pidstray:{tmp_path / 'fake.pid'}", "none")
        rows = _run(tmp_repo)
        assert [r["status"] for r in rows] == ["baseline", "tampered", "keep"], rows
        assert ".git/improve/work/m-00000000feedface" in str(rows[1]["reason"])
        assert 80 not in rows[2]["metric"]["incumbent_samples"]
        assert not (_improve(tmp_repo) / "work" / "m-00000000feedface").exists()
        work = _improve(tmp_repo) / "work"
        (work / "m-1111111111111111").mkdir()
        (work / "m-1111111111111111.pid").write_text(f"{live.pid}\nmeasure\n")
        found = strays.find(_improve(tmp_repo))
        assert any("work/m-1111111111111111.pid" in s for s in found), found
    finally:
        live.kill()
        live.wait()


def test_a_live_gitimprove_process_is_told_from_fakes(tmp_path: Path) -> None:
    from gitimprove.agents.sandbox import supervised
    from gitimprove.util.alive import runs_gitimprove

    script = _script(tmp_path)
    honest = subprocess.Popen([sys.executable, "-I", str(script), "run"])
    hardened = tmp_path / "bin" / "gitimprove"  # non-dumpable, as a harness makes itself
    hardened.write_text(
        "import ctypes, time\nctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\ntime.sleep(120)\n"
    )
    closed = subprocess.Popen([sys.executable, str(hardened), "measure"])
    named = subprocess.Popen(FAKES["argv"](tmp_path))
    other = subprocess.Popen(["sleep", "120"])
    tokened = subprocess.Popen(
        [sys.executable, str(script)], env={**os.environ, "GITIMPROVE_TOKEN": "gi1:0:p:1:00"}
    )
    marked = subprocess.Popen(supervised([sys.executable, str(script)], shell=False))
    procs = [honest, closed, named, other, tokened, marked]
    try:
        time.sleep(0.5)
        assert runs_gitimprove(honest.pid) and runs_gitimprove(closed.pid)
        assert not runs_gitimprove(named.pid)
        assert not runs_gitimprove(other.pid)
        assert not runs_gitimprove(tokened.pid)
        kids = Path(f"/proc/{marked.pid}/task/{marked.pid}/children").read_text().split()
        assert kids and not runs_gitimprove(int(kids[0]))  # the supervised one: marked
        assert not runs_gitimprove(marked.pid)  # the supervisor itself runs supervise.py
    finally:
        for p in procs:
            p.kill()
            p.wait()


@pytest.mark.slow
def test_doctor_looks_inside_quarantine_and_backups(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    persist_project(tmp_repo, "honest", "none")
    _run(tmp_repo)
    imp = _improve(tmp_repo)
    aside, backups = imp / "quarantine", imp / "backups"
    aside.mkdir(exist_ok=True)
    backups.mkdir(exist_ok=True)
    kept = [
        aside / "key.123.abcdef",  # names gitimprove sets things aside under
        aside / "config.0badca",
        aside / ("ab" * 20),
        backups / "CLAUDE.md.20260101T000000.5Z.host-1",
    ]
    for path in kept:
        path.write_text("x")
    os.mkfifo(aside / "HEAD.c0ffee")  # a FIFO it moved aside: never read
    (aside / "cache.bin").write_text("80")  # no name it gives
    (aside / "run").mkdir()
    (backups / "result.txt").write_text("80")
    (backups / "CLAUDE.md.20260101T000000Z.big").write_bytes(b"x" * ((8 << 20) + 1))
    (tmp_path / "outside").write_text("80")
    os.link(tmp_path / "outside", backups / "CLAUDE.md.20260101T000000Z.linked")
    (backups / "CLAUDE.md.20260101T000000Z.dir").mkdir()
    os.setxattr(aside, "user.carried", b"1")
    found = strays.find(imp)
    assert [s.split(" (")[0] for s in found] == [
        ".git/improve/backups/CLAUDE.md.20260101T000000Z.big",
        ".git/improve/backups/CLAUDE.md.20260101T000000Z.dir",
        ".git/improve/backups/CLAUDE.md.20260101T000000Z.linked",
        ".git/improve/backups/result.txt",
        ".git/improve/quarantine",
        ".git/improve/quarantine/cache.bin",
        ".git/improve/quarantine/run",
    ], found
    res = tmp_repo.cli("doctor")
    assert res.returncode != 0 and ".git/improve/quarantine/cache.bin" in res.stdout, res.stdout
    tmp_repo.cli("doctor", "--repair")
    assert strays.find(imp) == []
    assert all(p.exists() for p in kept) and (aside / "HEAD.c0ffee").exists()
    assert not (aside / "cache.bin").exists() and not (backups / "result.txt").exists()


@pytest.mark.slow
@pytest.mark.parametrize("target", ["mark.txt", "work/m-0123456789abcdef.pid", "locks/x.lock"])
def test_a_stray_left_before_the_run_is_named_and_gone_before_anything_is_measured(
    tmp_repo: TmpRepo, target: str
) -> None:
    """Left in `.git/improve/` between runs (by an earlier run's measured code, an agent, any
    program): the run's first watched window would take it for what was there; the run names
    it as `doctor` does and removes it before anything is measured, and again on `--resume`."""
    persist_project(tmp_repo, f"stray:{target}", "none")
    imp = _improve(tmp_repo)
    (imp / target).parent.mkdir(parents=True, exist_ok=True)
    (imp / target).write_text("1")  # what the measured code reads as its earlier mark
    res = tmp_repo.cli("run", "--run", "p", "-n", "2")
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    assert (
        f"removed from .git/improve before the run, not written by gitimprove: .git/improve/{target}"
        in out
    ), out
    rows = run_rows(tmp_repo, "p")
    assert [r["status"] for r in rows] == ["baseline", "tampered", "keep"], rows
    assert all(80 not in r["metric"].get("samples", []) for r in rows if r.get("metric"))
    (imp / target).write_text("1")
    res = tmp_repo.cli("run", "--resume", "--run", "p", "-n", "1")
    out = res.stdout + res.stderr
    assert res.returncode == 0 and f".git/improve/{target}" in out, out
    rows = run_rows(tmp_repo, "p")
    assert rows[-1]["status"] != "keep" or rows[-1]["metric"]["value"] != 80, rows[-1]
    assert not (imp / target).exists() or (imp / target).read_bytes() == b""


@pytest.mark.slow
def test_the_label_selinux_puts_on_every_file_is_no_mark(
    tmp_repo: TmpRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On an SELinux system every file carries `security.selinux`: gitimprove's folders and
    the backups `reflect` keeps are not strays for it, while any other attribute still is.
    (The label cannot be set here without SELinux, so the listing the kernel gives is made
    to add it.)"""
    persist_project(tmp_repo, "honest", "none")
    _run(tmp_repo)
    imp = _improve(tmp_repo)
    (imp / "backups").mkdir(exist_ok=True)
    (imp / "backups" / "CLAUDE.md.20260101T000000Z.host").write_text("x")
    real = os.listxattr

    def labelled(path: object, *, follow_symlinks: bool = True) -> list[str]:
        return ["security.selinux", *real(path, follow_symlinks=follow_symlinks)]  # type: ignore[arg-type]

    monkeypatch.setattr(os, "listxattr", labelled)
    assert strays.find(imp) == []
    os.setxattr(imp / "backups", "user.carried", b"1")
    assert [s.split(" (")[0] for s in strays.find(imp)] == [".git/improve/backups"]


def _coverage_shim(tmp: Path) -> Path:
    """A stand-in for coverage with its command line (`python -m coverage run …` and the
    `coverage` script): it only waits."""
    folder = tmp / "shim"
    (folder / "coverage").mkdir(parents=True, exist_ok=True)
    (folder / "coverage" / "__init__.py").write_text("")
    (folder / "coverage" / "__main__.py").write_text("import time\ntime.sleep(120)\n")
    (tmp / "bin").mkdir(exist_ok=True)
    (tmp / "bin" / "coverage").write_text("import time\ntime.sleep(120)\n")
    return folder


def test_a_harness_under_coverage_is_a_gitimprove_process(tmp_path: Path) -> None:
    """A test suite measuring its coverage starts gitimprove under `coverage run` (as a module
    or through the `coverage` script, with options before the target): that is a gitimprove
    process; coverage running anything else, or naming gitimprove as an option's value, is
    not."""
    from gitimprove.util.alive import runs_gitimprove

    shim = _coverage_shim(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(shim)}
    py, script = sys.executable, str(tmp_path / "bin" / "coverage")
    honest = [
        [py, "-m", "coverage", "run", "-m", "gitimprove", "run", "--resume"],
        [py, "-m", "coverage", "run", "-p", "--source", "src", "-m", "gitimprove", "run"],
        [py, "-m", "coverage", "run", "--branch", "--rcfile=x.cfg", "--module", "gitimprove"],
        [py, "-S", "-m", "coverage.__main__", "run", "/venv/bin/git-improve", "doctor"],
        [py, script, "run", "--parallel-mode", "/venv/bin/git-improve", "measure"],
        [py, script, "run", "-m", "gitimprove.cli", "run"],
    ]
    fakes = [
        [py, "-m", "coverage", "run", "other.py", "gitimprove"],
        [py, "-m", "coverage", "run", "--source", "gitimprove", "other.py"],
        [py, "-m", "coverage", "report", "-m", "gitimprove"],
        [py, "-m", "coverage", "run", "-m", "gitimprovement"],
        [py, script, "run", "-m"],
    ]
    procs = [subprocess.Popen(argv, env=env) for argv in honest + fakes]
    try:
        time.sleep(0.5)
        assert all(p.poll() is None for p in procs)
        found = [runs_gitimprove(p.pid) for p in procs]
        assert found == [True] * len(honest) + [False] * len(fakes), found
    finally:
        for p in procs:
            p.kill()
            p.wait()


_COVERAGE_RUN = """import runpy, sys
args = sys.argv[2:]  # after `run`
while args[0].startswith("-") and args[0] != "-m":
    args = args[1:]
if args[0] == "-m":
    sys.argv = [args[1], *args[2:]]
    runpy.run_module(args[1], run_name="__main__", alter_sys=True)
else:
    sys.argv = args
    runpy.run_path(args[0], run_name="__main__")
"""


_ONE_ROUND = ("--run", "cov", "--iterations", "1")


def test_doctor_leaves_the_agent_of_a_harness_under_coverage_alone(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """A run started as `python -m coverage run -m gitimprove run` is a live harness: `doctor
    --repair` meanwhile kills none of its agent's processes (taken for a dead harness's
    survivors before) and names none of its files; the attempt ends as the agent meant."""
    from tests.conftest import wait_for
    from tests.loop_helpers import value_project

    shim = tmp_path / "shim" / "coverage"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("")
    (shim / "__main__.py").write_text(_COVERAGE_RUN)
    started, go = tmp_path / "started", tmp_path / "go"
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import pathlib, time\n"
        f"pathlib.Path({str(started)!r}).write_text('x')\n"
        f"while not pathlib.Path({str(go)!r}).exists():\n    time.sleep(0.05)\n"
        "pathlib.Path('src/value.txt').write_text('80\\n')\n"
    )
    value_project(tmp_repo, f"{sys.executable} {agent}", timeouts=True)
    subprocess.run(  # what `doctor --repair` would set itself
        ["git", "config", "notes.rewriteRef", "refs/notes/improve"], cwd=tmp_repo.path, check=True
    )
    env = {**os.environ, "PYTHONPATH": str(shim.parent)}
    harness = subprocess.Popen(
        [sys.executable, "-m", "coverage", "run", "-p", "-m", "gitimprove", "run", *_ONE_ROUND],
        cwd=tmp_repo.path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(started)
        doctor = tmp_repo.cli("doctor", "--repair")
        go.write_text("x")
        out, err = harness.communicate(timeout=120)
    finally:
        harness.kill()
    assert harness.returncode == 0, out + err
    assert "killed" not in doctor.stdout.lower(), doctor.stdout
    rows = run_rows(tmp_repo, "cov")
    assert [r["status"] for r in rows] == ["baseline", "keep"], [r.get("reason") for r in rows]
