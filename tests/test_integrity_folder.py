"""Without the sandbox, gitimprove's own folder (`.git/improve/`) is judged by what changed
while an agent worked or the measured code ran, not by the names found there: a file shaped
like gitimprove's own (an empty run lock, a `.pid` naming a live process or a thread, a
temporary file, a clone's folder, anything in `quarantine/`), a record or log replaced or
rewritten, a lock's times, a link, a FIFO, a hard link to a record, makes the attempt
`tampered` naming the path; it is undone (a record put back as it was) and the run goes on.
Hostile code in real runs; honest hooks and `log` running at the same time are no stray."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gitimprove.git import strays
from gitimprove.git.checkout import write_pid
from gitimprove.util import inodes, written
from tests.conftest import TmpRepo, cli, cli_popen
from tests.loop_helpers import run_rows, value_project
from tests.test_integrity_persist import BENCH

AGENT = Path(__file__).parent / "agents" / "folder_agent.py"


def project(repo: TmpRepo, plan: str, *, metric_delay: float = 0.0, runs: int = 3) -> None:
    bench = BENCH if not metric_delay else f"import time\ntime.sleep({metric_delay})\n{BENCH}"
    config = f"""[metric]
command = "{sys.executable} bench.py"
timeout = "20s"
runs = {runs}

[scope]
mutable = ["src/**"]
sealed = ["bench.py"]

[agent]
name = "command"
command = "{sys.executable} {AGENT} {plan}"
timeout = "20s"
sandbox = "none"
"""
    files = {"bench.py": bench, "src/prog.py": "print(100)\n"}
    repo.commit("project", {**files, ".gitimprove.toml": config})


def _improve(repo: TmpRepo) -> Path:
    return repo.path / ".git" / "improve"


def _run(repo: TmpRepo, n: int = 2) -> list[dict[str, object]]:
    res = repo.cli("run", "--run", "p", "-n", str(n))
    assert res.returncode == 0, res.stdout + res.stderr
    return run_rows(repo, "p")


CASES = [
    ("run-lock", ".git/improve/locks/run-zz.lock"),
    ("pid-live", ".git/improve/work/m-0123456789abcdef.pid"),
    ("pid-harness", ".git/improve/work/x-0badcafe"),
    ("pid-thread", ".git/improve/work/y-0badcafe"),
    ("pid-parent", ".git/improve/work/m-00000000000000aa.pid"),
    ("temp", ".git/improve/.integrity.jsonl.123.0badcafe.tmp"),
    ("quarantine", ".git/improve/quarantine/key.1.abcdef"),
    ("integrity", ".git/improve/integrity.jsonl"),
    ("witness", ".git/improve/refs.witness"),
    ("log-truncated", ".git/improve/hooks.log"),
    ("lock-mtime", ".git/improve/locks/notes.lock"),
    ("lock-bytes", ".git/improve/locks/notes.lock"),
    ("lock-link", ".git/improve/locks/spool.lock.x"),
    ("fifo", ".git/improve/spool/note__2026__01__20260101T000000Z-h-abcdef.json"),
    ("spool-junk", ".git/improve/spool/carried"),
    ("hard-link", ".git/improve/refs.witness"),
    ("clone-folder", ".git/improve/work/p-9-0-0badcafe"),
    ("log-xattr", ".git/improve/refs.witness"),
    ("agent:pid-live", ".git/improve/work/m-0123456789abcdef.pid"),
    ("agent:integrity", ".git/improve/integrity.jsonl"),
]
FAST = {"run-lock", "pid-thread", "integrity", "lock-mtime", "hard-link", "agent:pid-live"}


@pytest.mark.parametrize(
    ("plan", "named"),
    [c if c[0] in FAST else pytest.param(*c, marks=pytest.mark.slow) for c in CASES],
)
@pytest.mark.slow
def test_a_change_shaped_like_gitimprove_own_is_tampered_and_undone(
    tmp_repo: TmpRepo, plan: str, named: str
) -> None:
    project(tmp_repo, plan)
    imp = _improve(tmp_repo)
    if plan.endswith(("log-truncated", "lock-bytes", "lock-mtime")):
        imp.mkdir(parents=True, exist_ok=True)
        (imp / "hooks.log").write_text("an honest hook's line\n")
    rows = _run(tmp_repo)
    assert [r["status"] for r in rows] == ["baseline", "tampered", "keep"], rows
    reason = str(rows[1]["reason"])
    who = "the agent" if plan.startswith("agent:") else "the metric run"
    assert f"{who} wrote into gitimprove's folder" in reason, reason
    assert named in reason, reason
    assert rows[2]["metric"]["value"] == 90  # the next attempt measured honestly, never 80
    assert 80 not in rows[1]["metric"].get("samples", []) if rows[1].get("metric") else True
    assert 80 not in rows[2]["metric"]["incumbent_samples"]
    assert strays.find(imp) == []
    if plan.endswith("log-truncated"):  # put back as it was
        assert (imp / "hooks.log").read_text().startswith("an honest hook's line\n")
    if plan.endswith("integrity") and (imp / "integrity.jsonl").exists():
        assert "mark" not in (imp / "integrity.jsonl").read_text(errors="replace")
    if plan.endswith("hard-link"):
        assert os.stat(imp / "refs.witness").st_nlink == 1  # a new file: the link is left alone


@pytest.mark.slow
def test_a_forged_incident_log_is_put_back_and_doctor_reads_it(tmp_repo: TmpRepo) -> None:
    project(tmp_repo, "integrity")
    imp = _improve(tmp_repo)
    imp.mkdir(parents=True, exist_ok=True)
    honest = {"ts": "2026-01-01T00:00:00Z", "run": "old", "what": "x", "paths": ["HEAD"]}
    (imp / "integrity.jsonl").write_text(json.dumps(honest) + "\n")
    rows = _run(tmp_repo)
    assert [r["status"] for r in rows] == ["baseline", "tampered", "keep"], rows
    assert json.loads((imp / "integrity.jsonl").read_text()) == honest
    doctor = tmp_repo.cli("doctor")
    assert "run old at 2026-01-01T00:00:00Z" in doctor.stdout, doctor.stdout
    assert "None" not in doctor.stdout


def _window(imp: Path, start: threading.Event, go: threading.Event, out: list[list[str]]) -> None:
    with strays.owning(f"w{len(out)}"), strays.watched(imp, reachable=True) as left:
        start.set()
        go.wait(5)
    out.append(left)


def test_a_change_with_two_windows_open_is_laid_on_both(tmp_path: Path) -> None:
    imp = tmp_path / "improve"
    (imp / "locks").mkdir(parents=True)
    (imp / "work").mkdir()
    first: list[list[str]] = []
    a_in, a_go = threading.Event(), threading.Event()
    a = threading.Thread(target=_window, args=(imp, a_in, a_go, first))
    a.start()
    a_in.wait(5)
    with strays.owning("b"), strays.watched(imp, reachable=True) as left_b:
        (imp / "locks" / "run-x.lock").touch()  # who wrote it, a or b, cannot be told
        a_go.set()
        a.join()
    assert first == [[".git/improve/locks/run-x.lock (a file gitimprove did not write there)"]]
    assert left_b == first[0]  # named in both, whichever closed first
    assert not (imp / "locks" / "run-x.lock").exists()
    # alone, a window is blamed only for what changed while it was open
    with strays.owning("c"), strays.watched(imp, reachable=True) as left_c:
        pass
    assert left_c == []
    (imp / "locks" / "run-y.lock").touch()  # while no window was open
    with strays.owning("d"), strays.watched(imp, reachable=True) as left_d:
        pass
    assert left_d == [
        ".git/improve/locks/run-y.lock (a file gitimprove did not write there), while nothing "
        "was watched"
    ]


def test_a_change_seen_after_a_window_closed_is_laid_on_it_late(tmp_path: Path) -> None:
    imp = tmp_path / "improve"
    (imp / "work").mkdir(parents=True)
    done = threading.Event()
    opened, close_b = threading.Event(), threading.Event()
    got: list[list[str]] = []

    def b() -> None:
        with strays.owning("late-b"), strays.watched(imp, reachable=True) as left:
            opened.set()
            close_b.wait(5)
        got.append(left)
        done.set()

    with strays.owning("late-a"), strays.watched(imp, reachable=True) as left_a:
        t = threading.Thread(target=b)
        t.start()
        opened.wait(5)
        close_b.set()  # b closes clean, then something is written while a is still open
        done.wait(5)
        (imp / "work" / "q.pid").write_text("1\n")
    t.join()
    assert got == [[]]
    assert left_a == [".git/improve/work/q.pid (a file gitimprove did not write there)"]
    assert strays.late("late-b") == left_a  # a round keeps neither


def test_this_process_own_writes_are_no_stray_while_anyone_else_s_are(tmp_path: Path) -> None:
    imp = tmp_path / "improve"
    (imp / "work").mkdir(parents=True)
    with strays.watched(imp, reachable=True) as left:
        write_pid(imp / "work" / "m-3333333333333333.pid", "measure")
        (imp / "work" / "m-3333333333333333").mkdir()
        (imp / "work" / "mine.prompt.md").write_text("x")
        written.mark(imp / "work" / "mine.prompt.md")
    assert left == []
    with strays.watched(imp, reachable=True) as left:
        (imp / "work" / "mine.prompt.md").write_text("rewritten by another")
        (imp / "work" / "m-3333333333333333.pid").write_text(f"{os.getpid()}\nmeasure\n")
    assert left == [
        ".git/improve/work/m-3333333333333333.pid (changed in place)",
        ".git/improve/work/mine.prompt.md (changed in place)",
    ]
    assert not (imp / "work" / "mine.prompt.md").exists()
    assert written.mine(imp / "work" / "m-3333333333333333.pid")  # written anew as it was


HOOK_EVENTS = [
    ("SessionStart", {"source": "startup"}),
    ("PostToolUseFailure", {"tool_name": "Bash", "tool_input": {}, "error": "boom"}),
    ("PreCompact", {"trigger": "auto", "custom_instructions": ""}),
    ("Stop", {"stop_hook_active": False, "last_assistant_message": "Done."}),
    ("SessionEnd", {"reason": "prompt_input_exit"}),
]


@pytest.mark.slow
def test_honest_hooks_and_log_during_a_run_are_no_stray(tmp_repo: TmpRepo) -> None:
    from tests.test_claude_hooks import payload

    project(tmp_repo, "honest", metric_delay=0.3, runs=2)
    run = cli_popen(tmp_repo.path, "run", "--run", "p", "-n", "3")
    fired = 0
    deadline = time.monotonic() + 120
    while run.poll() is None and time.monotonic() < deadline:
        for event, extra in HOOK_EVENTS:
            data = json.dumps(payload(tmp_repo, event, **extra))
            tmp_repo.cli("hook", event, input=data)
            fired += 1
        tmp_repo.cli("log")
    out, err = run.communicate(timeout=60)
    assert run.returncode == 0, out + err
    assert fired >= 5
    rows = run_rows(tmp_repo, "p")
    assert "tampered" not in [r["status"] for r in rows], rows


@pytest.mark.slow
def test_doctor_names_look_alikes_that_are_there_now(tmp_repo: TmpRepo) -> None:
    project(tmp_repo, "honest")
    _run(tmp_repo, 1)
    imp = _improve(tmp_repo)
    assert strays.find(imp) == []
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        tid = next(int(t) for t in os.listdir("/proc/self/task") if int(t) != os.getpid())
    except StopIteration:  # this process has one thread: start one
        ready = threading.Event()
        threading.Thread(target=lambda: (ready.set(), time.sleep(5)), daemon=True).start()
        ready.wait(5)
        tid = next(int(t) for t in os.listdir("/proc/self/task") if int(t) != os.getpid())
    try:
        for name, pid in (
            ("m-000000000000000a", 1),
            ("x-0badcafe", tid),
            ("y-0badcafe", sleeper.pid),
        ):
            (imp / "work" / name).mkdir()
            (imp / "work" / f"{name}.pid").write_text(f"{pid}\nmeasure\n")
        (imp / "spool").mkdir(exist_ok=True)
        (imp / "spool" / "carried").write_text("1")
        (imp / "session-map").mkdir(exist_ok=True)
        (imp / "session-map" / "s").write_text("two\nlines\n")
        found = [s.split(" (")[0] for s in strays.find(imp)]
        assert found == [
            ".git/improve/session-map/s",
            ".git/improve/spool/carried",
            ".git/improve/work/m-000000000000000a.pid",
            ".git/improve/work/x-0badcafe.pid",
            ".git/improve/work/y-0badcafe.pid",
        ], found
        res = tmp_repo.cli("doctor")
        assert res.returncode != 0 and ".git/improve/work/y-0badcafe.pid" in res.stdout
        assert "x-0badcafe" in res.stdout  # a thread is no process: left by one that is gone
        tmp_repo.cli("doctor", "--repair")
        tmp_repo.cli("doctor", "--repair")  # the folders whose .pid went, the second time
        assert strays.find(imp) == []
    finally:
        sleeper.kill()
        sleeper.wait()


def test_doctor_tells_incident_lines_gitimprove_did_not_write(tmp_repo: TmpRepo) -> None:
    from gitimprove.state.integrity import forged_incidents, incidents, log_incident

    project(tmp_repo, "honest")
    repo = tmp_repo.open()
    log_incident(repo, "r1", "your repository changed while the agent worked", ["HEAD"])
    assert [i["run"] for i in incidents(repo)] == ["r1"] and forged_incidents(repo) == 0
    path = repo.improve_dir / "integrity.jsonl"
    lines = path.read_text().splitlines()
    forged = json.loads(lines[0])
    forged["run"] = "r2"  # the tag no longer verifies
    with path.open("a") as f:
        f.write("{}\n" + json.dumps(forged) + "\n")
    assert [i["run"] for i in incidents(repo)] == ["r1"] and forged_incidents(repo) == 2
    res = tmp_repo.cli("doctor")
    assert "2 line(s) of .git/improve/integrity.jsonl were not written by gitimprove" in res.stdout
    assert "None" not in res.stdout


@pytest.mark.parametrize("case", ["run-lock", pytest.param("integrity", marks=pytest.mark.slow)])
@pytest.mark.slow
def test_a_change_in_a_tournament_keeps_no_candidate_it_could_have_helped(
    tmp_repo: TmpRepo, case: str
) -> None:
    project(tmp_repo, f"c0:{case}", metric_delay=0.2)
    res = tmp_repo.cli("run", "--run", "p", "-n", "1", "--candidates", "3", "--jobs", "3")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "p")
    by = {r["candidate"]: r for r in rows if r["status"] != "baseline"}
    assert sorted(by) == [0, 1, 2], rows  # every attempt recorded
    assert by[0]["status"] == "tampered", by[0]  # the writer, whoever else was open
    for r in by.values():
        if r["status"] == "tampered":
            assert "gitimprove's folder" in str(r["reason"]), r
        if str(r["status"]).startswith("keep"):
            assert r["metric"]["value"] == 90 and 80 not in r["metric"]["samples"], r
    assert strays.find(_improve(tmp_repo)) == []


OTHER = """import fcntl, os, sys, time
from gitimprove.memory import spool
from gitimprove.util.files import append_state
imp = sys.argv[1]
append_state(os.path.join(imp, "hooks.log"), b"a hook's line\\n")
with open(os.path.join(imp, "last-error.log"), "w") as f:
    f.write("argv: ['x']\\ntraceback\\n")
spool.put(imp, "signals/2026/01/20260101T000000Z-h-abcdef.json", {"kind": "signal"})
open(os.path.join(imp, "locks", "spool.lock"), "a").close()
fd = os.open(os.path.join(imp, "locks", "run-other.lock"), os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
print("ready", flush=True)
time.sleep(30)
"""


def test_what_other_gitimprove_processes_do_is_no_stray(tmp_path: Path) -> None:
    imp = tmp_path / "improve"
    (imp / "locks").mkdir(parents=True)
    (imp / "hooks.log").write_text("old line\n")
    with strays.watched(imp, reachable=True) as left:
        other = subprocess.Popen(
            [sys.executable, "-c", OTHER, str(imp)], stdout=subprocess.PIPE, text=True
        )
        assert other.stdout is not None and other.stdout.readline() == "ready\n"
    try:
        assert left == []  # an append, an error log, a spool entry, a lock, a run's held lock
        with strays.watched(imp, reachable=True) as left:
            (imp / "hooks.log").write_text("rewritten\n")  # not an append
            (imp / "spool" / "junk").write_text("1")
            (imp / "locks" / "run-none.lock").touch()  # a run lock no process holds
        assert [s.split(" (")[0] for s in left] == [
            ".git/improve/hooks.log",
            ".git/improve/locks/run-none.lock",
            ".git/improve/spool/junk",
        ], left
        assert (imp / "hooks.log").read_text() == "old line\na hook's line\n"  # put back
    finally:
        other.kill()
        other.communicate()


@pytest.mark.slow
def test_a_record_too_large_to_put_back_stops_the_run_naming_it(tmp_repo: TmpRepo) -> None:
    project(tmp_repo, "integrity")
    imp = _improve(tmp_repo)
    imp.mkdir(parents=True, exist_ok=True)
    line = json.dumps({"ts": "t", "run": "old", "what": "x" * 1000, "paths": []}) + "\n"
    (imp / "integrity.jsonl").write_text(line * 9000)  # over the 8 MB kept of a record
    res = tmp_repo.cli("run", "--run", "p", "-n", "2")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    assert "could not be put back: .git/improve/integrity.jsonl" in res.stderr, res.stderr
    assert [r["status"] for r in run_rows(tmp_repo, "p")] == ["baseline"]  # nothing kept


@pytest.mark.slow
def test_more_entries_than_one_listing_holds_are_all_judged(tmp_repo: TmpRepo) -> None:
    """A listing stops at 20,000 entries: what the first one after the window did not reach
    is judged before the window closes, never taken as the next window's starting point."""
    project(tmp_repo, "flood", runs=1)
    imp = _improve(tmp_repo)
    rows = _run(tmp_repo)
    assert [r["status"] for r in rows] == ["baseline", "tampered", "keep"], rows
    assert "the metric run wrote into gitimprove's folder" in str(rows[1]["reason"])
    assert rows[2]["metric"]["value"] == 90
    assert 80 not in rows[2]["metric"]["incumbent_samples"]
    for folder in ("quarantine", "backups"):
        assert not (imp / folder / "carried").exists(), folder
        assert not list((imp / folder).glob("f*")), folder
    assert strays.find(imp) == []


def test_the_backup_reflect_keeps_while_a_window_is_open_is_no_stray(tmp_repo: TmpRepo) -> None:
    """`git improve reflect --apply --to global`, run by the user while an agent works, keeps
    the CLAUDE.md it changes in `backups/`: another gitimprove process's honest write, never a
    stray (the attempt is not `tampered`, the backup is not removed)."""
    from gitimprove.memory import signals

    tmp_repo.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n'})
    home = Path(os.environ["HOME"])
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "CLAUDE.md").write_text("# Mine\n")
    sig = signals.make_signal(
        type_="correction", content="prefer short subjects", session="s", hook="test", now=None
    )
    signals.add_now(tmp_repo.open(), sig)
    imp = _improve(tmp_repo)
    with strays.watched(imp, reachable=True) as left:
        res = tmp_repo.cli("reflect", "--apply", str(sig["id"]), "--to", "global", "--json")
        assert res.returncode == 0, res.stdout + res.stderr
    assert left == []
    backup = Path(json.loads(res.stdout)["backup"])
    assert backup.parent == imp / "backups" and backup.read_text() == "# Mine\n"
    with strays.watched(imp, reachable=True) as left:  # one of any other name still is
        (imp / "backups" / "carried").write_text("x")
    assert left == [".git/improve/backups/carried (a file gitimprove did not write there)"]


@pytest.mark.slow
def test_a_pid_file_dated_ahead_names_no_gitimprove_process_started_after_it(
    tmp_repo: TmpRepo,
) -> None:
    """A `.pid` file counts for `doctor` only while the gitimprove process it names started
    before it was written: a modification time set ahead (which anyone can) does not stretch
    that to a process started later (a pid reused, or foreseen: pids are handed out in
    order); its change time (which no program sets) bounds it."""
    tmp_repo.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n'})
    work = _improve(tmp_repo) / "work"
    work.mkdir(parents=True)
    last = int(Path("/proc/sys/kernel/ns_last_pid").read_text())
    ahead = time.time() + 3600
    for pid in range(last + 1, last + 400):  # the pids handed out next
        path = work / f"p{pid}-0badcafe.pid"
        path.write_text(f"{pid}\n")
        os.utime(path, (ahead, ahead))
    time.sleep(2.5)  # the check allows 2 s (the boot time is whole seconds)
    later = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "gitimprove"])
    try:
        time.sleep(0.3)
        found = strays.find(_improve(tmp_repo))
    finally:
        later.kill()
        later.wait()
    # the property: the file dated ahead that names the process started after it is a stray
    # (the other 398 may name processes of other tests that started before it was written)
    if not last < later.pid < last + 400:
        pytest.skip("other processes took every pid the files name")
    named = f"p{later.pid}-0badcafe.pid"
    assert any(named in s for s in found), (named, len(found))


@pytest.mark.slow
def test_doctor_repair_during_a_run_leaves_the_incident_log_for_after(tmp_repo: TmpRepo) -> None:
    """`git improve doctor --repair`, run by the user while a run measures, does not set the
    incident log aside: the run's watch could not tell that move from the measured code's,
    and would blame an honest attempt and undo it. Once no run holds its lock, it does."""
    from filelock import FileLock

    project(tmp_repo, "honest")
    _run(tmp_repo)
    imp = _improve(tmp_repo)
    (imp / "integrity.jsonl").write_text('{"what": "not signed"}\n')
    lock = FileLock(str(imp / "locks" / "run-p.lock"))
    with lock, strays.watched(imp, reachable=True) as left:
        res = tmp_repo.cli("doctor", "--repair")
    assert left == [], left
    assert "a run is under way" in res.stdout + res.stderr, res.stdout
    assert (imp / "integrity.jsonl").read_text() == '{"what": "not signed"}\n'
    assert not (imp / "integrity.reviewed.jsonl").exists()
    res = tmp_repo.cli("doctor", "--repair")
    assert not (imp / "integrity.jsonl").exists()
    assert (imp / "integrity.reviewed.jsonl").read_text() == '{"what": "not signed"}\n'


@pytest.mark.slow
def test_doctor_repair_keeps_every_incident_it_set_aside_before(tmp_repo: TmpRepo) -> None:
    """Each `--repair` adds the incidents it sets aside to those set aside before: a second
    repair never replaces the first one's reviewed log."""
    project(tmp_repo, "honest")
    _run(tmp_repo)
    imp = _improve(tmp_repo)
    (imp / "integrity.jsonl").write_text('{"what": "first"}\n')
    tmp_repo.cli("doctor", "--repair")
    (imp / "integrity.jsonl").write_text('{"what": "second"}')  # no final newline
    tmp_repo.cli("doctor", "--repair")
    assert not (imp / "integrity.jsonl").exists()
    reviewed = (imp / "integrity.reviewed.jsonl").read_text()
    assert reviewed == '{"what": "first"}\n{"what": "second"}\n', reviewed


def test_the_backup_reflect_keeps_carries_none_of_the_originals_marks(tmp_repo: TmpRepo) -> None:
    """The user's CLAUDE.md may carry extended attributes (a desktop's tags, an ACL) and any
    mode: the copy `reflect --apply` keeps in `backups/` holds its bytes alone, so it is no
    stray for `doctor` (a backup with an attribute would be) and `--repair` keeps it."""
    from gitimprove.memory import signals

    tmp_repo.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n'})
    home = Path(os.environ["HOME"])
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    original = home / ".claude" / "CLAUDE.md"
    original.write_text("# Mine\n")
    try:
        os.setxattr(original, "user.xdg.tags", b"notes")
    except OSError:
        pytest.skip("no user extended attributes on this file system")
    original.chmod(0o4751)
    # a link planted under the name the backup takes (the time is fixed here: a forger that
    # guesses it)
    from gitimprove.util.clock import host_id

    target = tmp_repo.path.parent / "victim"
    target.write_text("untouched\n")
    (_improve(tmp_repo) / "backups").mkdir(parents=True, exist_ok=True)
    fixed = {"GITIMPROVE_FAKE_NOW": "2026-11-22T05:52:01.123456Z"}
    planted = _improve(tmp_repo) / "backups" / f"CLAUDE.md.20261122T055201.123456Z.{host_id()}"
    planted.symlink_to(target)
    sig = signals.make_signal(
        type_="correction", content="prefer short subjects", session="s", hook="test", now=None
    )
    signals.add_now(tmp_repo.open(), sig)
    res = cli(
        tmp_repo.path, "reflect", "--apply", str(sig["id"]), "--to", "global", "--json", env=fixed
    )
    assert res.returncode == 0, res.stdout + res.stderr
    backup = Path(json.loads(res.stdout)["backup"])
    assert backup == planted and backup.read_text() == "# Mine\n"
    assert os.listxattr(backup) == [] and not backup.stat().st_mode & 0o7000
    assert target.read_text() == "untouched\n" and not backup.is_symlink()
    assert strays.find(_improve(tmp_repo)) == []
    doctor = tmp_repo.cli("doctor", "--repair")
    assert "backups" not in doctor.stdout + doctor.stderr, doctor.stdout
    assert backup.read_text() == "# Mine\n"


REMOVER = """import fcntl, os, pathlib, sys
imp = pathlib.Path.cwd().parent.parent
marker = pathlib.Path(sys.argv[1])
lock = imp / "locks" / "run-p.lock"
if os.environ["GITIMPROVE_ITERATION"] == "1":
    for name in sys.argv[2:]:
        (imp / name).unlink()
    pathlib.Path("src/prog.py").write_text("print(80)\\n")
else:
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        marker.write_text("missing")
    else:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            marker.write_text("held")
        else:
            marker.write_text("free")
    pathlib.Path("src/prog.py").write_text("print(90)\\n")
"""


def with_agent(repo: TmpRepo, command: str, message: str) -> None:
    """The honest project with another agent command, committed as `message`."""
    config = (repo.path / ".gitimprove.toml").read_text()
    config = "\n".join(
        f'command = "{command}"' if line.startswith("command = ") and AGENT.name in line else line
        for line in config.splitlines()
    )
    repo.commit(message, {".gitimprove.toml": config + "\n"})


@pytest.mark.parametrize(
    "removed", [("locks/run-p.lock",), ("refs.witness",), ("locks/run-p.lock", "refs.witness")]
)
@pytest.mark.slow
def test_a_file_of_gitimprove_removed_by_the_agent_is_tampered_and_put_back(
    tmp_repo: TmpRepo, tmp_path: Path, removed: tuple[str, ...]
) -> None:
    """The agent removes the run's lock (another `run --resume` of the same run could then
    start beside it, and `status` would show it stopped) or the witness of gitimprove's ref
    moves: the attempt is `tampered` naming the file, the lock is made again and held by the
    run, the witness written again, and the run goes on to measure the next attempt."""
    agent, marker = tmp_path / "remover.py", tmp_path / "seen"
    agent.write_text(REMOVER)
    project(tmp_repo, "honest")
    with_agent(tmp_repo, f"{sys.executable} {agent} {marker} " + " ".join(removed), "remover")
    rows = _run(tmp_repo)
    assert [r["status"] for r in rows] == ["baseline", "tampered", "keep"], rows
    reason = str(rows[1]["reason"])
    for name in removed:
        assert f".git/improve/{name} (removed)" in reason, reason
    if "locks/run-p.lock" in removed:
        assert marker.read_text() == "held"
    imp = _improve(tmp_repo)
    assert all((imp / name).is_file() for name in removed)
    assert strays.find(imp) == []
    doctor = tmp_repo.cli("doctor")
    assert "where gitimprove left them" in doctor.stdout, doctor.stdout


FLAGGER = """import array, fcntl, os, pathlib, sys
imp = pathlib.Path.cwd().parent.parent
if os.environ["GITIMPROVE_ITERATION"] == "1":
    for spec in sys.argv[1:]:
        name, _, flag = spec.partition(":")
        fd = os.open(imp / name, os.O_RDONLY | os.O_NOFOLLOW)
        buf = array.array("i", [0, 0])
        fcntl.ioctl(fd, 0x80086601, buf, True)
        buf[0] |= {"i": 0x10, "a": 0x20}[flag]
        fcntl.ioctl(fd, 0x40086602, buf, False)
        os.close(fd)
    pathlib.Path("src/prog.py").write_text("print(80)\\n")
else:
    pathlib.Path("src/prog.py").write_text("print(90)\\n")
"""


def _can_flag(tmp_path: Path) -> bool:
    from tests.test_integrity_reuse import _flag, _unflag

    probe = tmp_path / "probe"
    probe.write_text("x")
    if not _flag(probe, 0x10):
        return False
    _unflag(probe)
    return True


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["refs.witness:i"], "refs.witness (file-system flag immutable, chattr +i)"),
        (["work:i"], "work (file-system flag immutable, chattr +i)"),
        ([".:a"], ".git/improve (file-system flag append-only, chattr +a)"),
        (["locks:i", "locks/run-p.lock:a"], "locks/run-p.lock (file-system flag append-only"),
    ],
)
@pytest.mark.slow
def test_a_file_system_flag_in_gitimprove_folder_is_tampered_and_cleared(
    tmp_repo: TmpRepo, tmp_path: Path, flags: list[str], named: str
) -> None:
    """As root without the sandbox the agent makes a record, a lock or one of gitimprove's
    folders immutable or append-only (`chattr +i`, `+a`): every later witness line failed to
    be written (doctor then took the run's own refs for moved by another), or the run stopped
    with an internal error. The attempt is `tampered` naming the flag, the flag is cleared,
    the run goes on and `doctor` finds every ref where gitimprove left it."""
    if not _can_flag(tmp_path):
        pytest.skip("setting file-system flags needs root with CAP_LINUX_IMMUTABLE on ext4")
    agent = tmp_path / "flagger.py"
    agent.write_text(FLAGGER)
    project(tmp_repo, "honest")
    with_agent(tmp_repo, f"{sys.executable} {agent} " + " ".join(flags), "flagger")
    try:
        rows = _run(tmp_repo)
    finally:  # whatever happened, the test's folder can be removed
        inodes.clear_flags(tmp_repo.path / ".git")
    assert [r["status"] for r in rows] == ["baseline", "tampered", "keep"], rows
    assert named in str(rows[1]["reason"]), rows[1]["reason"]
    imp = _improve(tmp_repo)
    for spec in flags:
        path = imp / spec.partition(":")[0]
        assert inodes.flag_names(path) == [], path
    assert strays.find(imp) == []
    doctor = tmp_repo.cli("doctor")
    assert "where gitimprove left them" in doctor.stdout, doctor.stdout


@pytest.mark.parametrize(
    ("flag", "named"),
    [
        ("../objects:i", ".git/objects/ (file-system flag immutable, chattr +i)"),
        ("../refs/notes:i", ".git/refs/notes/ (file-system flag immutable, chattr +i)"),
        ("../refs/heads:a", ".git/refs/heads/ (file-system flag append-only, chattr +a)"),
    ],
)
@pytest.mark.slow
def test_a_file_system_flag_in_the_git_directory_stops_the_run_naming_it(
    tmp_repo: TmpRepo, tmp_path: Path, flag: str, named: str
) -> None:
    """As root without the sandbox the agent makes the repository's `objects/` or a refs
    folder immutable: the harness could no longer write its records (an internal error, exit
    3, or "other writers kept moving it"). The run stops naming the flag (cleared), the
    attempt is recorded, and `run --resume` goes on."""
    if not _can_flag(tmp_path):
        pytest.skip("setting file-system flags needs root with CAP_LINUX_IMMUTABLE on ext4")
    agent = tmp_path / "flagger.py"
    agent.write_text(FLAGGER)
    project(tmp_repo, "honest")
    with_agent(tmp_repo, f"{sys.executable} {agent} {flag}", "flagger")
    git_dir = tmp_repo.path / ".git"
    try:
        res = tmp_repo.cli("run", "--run", "p", "-n", "2")
        left = inodes.flag_names(git_dir / flag.partition(":")[0][3:])
    finally:  # whatever happened, the test's folder can be removed
        inodes.clear_flags(git_dir)
    assert res.returncode == 1, res.stdout + res.stderr
    assert named in res.stderr and "internal error" not in res.stderr, res.stderr
    assert left == []
    assert [r["status"] for r in run_rows(tmp_repo, "p")] == ["baseline", "tampered"]
    res = tmp_repo.cli("run", "--resume", "--run", "p", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    assert [r["status"] for r in run_rows(tmp_repo, "p")][-1] == "keep"


NESTED = """import os, pathlib, subprocess, sys
repo, out = pathlib.Path.cwd().parents[3], pathlib.Path(sys.argv[1])
if os.environ["GITIMPROVE_ITERATION"] == "1":
    lines = []
    for args in (["idea", "add", "the tests are wrong: print the number directly"],
                 ["stop"], ["run", "--run", "nested", "-n", "1"], ["doctor", "--repair"],
                 ["log"], ["idea", "list"], ["doctor"]):
        res = subprocess.run([sys.executable, "-m", "gitimprove", *args], cwd=repo,
                             capture_output=True, text=True)
        refused = res.returncode == 1 and "inside an attempt" in res.stderr
        lines.append(f"{args[0]} {'refused' if refused else 'ran'}")
    out.write_text("\\n".join(lines) + "\\n")
pathlib.Path("src/prog.py").write_text("print(90)\\n" if os.environ["GITIMPROVE_ITERATION"] == "2" else "print(100)\\n# tidy\\n")
"""


@pytest.mark.slow
def test_gitimprove_commands_that_write_do_not_run_inside_an_attempt(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """Without the sandbox the agent runs `git improve idea add` (an idea every later agent
    reads as the user's), `stop`, a nested `run`, `doctor --repair` in the user's repository:
    as gitimprove itself they would be signed and witnessed like the harness's own writes.
    Each is refused inside an attempt (exit 1); the read-only ones still work; no idea and no
    nested run is recorded, and the run goes on to its next round."""
    agent, out = tmp_path / "nested.py", tmp_path / "codes"
    agent.write_text(NESTED)
    project(tmp_repo, "honest")
    with_agent(tmp_repo, f"{sys.executable} {agent} {out}", "nested")
    rows = _run(tmp_repo)
    assert [r["status"] for r in rows] == ["baseline", "discard", "keep"], rows
    assert out.read_text().split("\n")[:-1] == [
        "idea refused", "stop refused", "run refused", "doctor refused",
        "log ran", "idea ran", "doctor ran",
    ]  # fmt: skip
    ideas = tmp_repo.cli("idea", "list")
    assert "the tests are wrong" not in ideas.stdout, ideas.stdout
    assert run_rows(tmp_repo, "nested") == []


NESTED_AGENT = Path(__file__).parent / "agents" / "nested_agent.py"


def _unshare_works() -> bool:
    """Whether this machine lets a user make a user and pid namespace (`unshare -Urpf`)."""
    try:
        probe = ["unshare", "-Urpf", "--mount-proc", "true"]
        return subprocess.run(probe, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.mark.parametrize(
    "args",
    ["idea add planted-idea", "run --run other -n 1", "stop", "--unshare idea add planted-idea"],
)
@pytest.mark.slow
def test_a_scrubbed_environment_does_not_let_gitimprove_run_inside_an_attempt(
    tmp_repo: TmpRepo, args: str
) -> None:
    """The agent runs gitimprove with `env -i` and `setsid` (no token): it is still below its
    supervisor (util/marks.py `attempt_above`), so the write is refused all the same; no idea,
    no second run, no stop. So is one run in a user and pid namespace of its own, where no
    process above it is seen (its namespace's first process carries the attempt's mark)."""
    if args.startswith("--unshare") and not _unshare_works():
        pytest.skip("no user namespaces here (unshare -Urpf)")
    value_project(tmp_repo, f"{sys.executable} {NESTED_AGENT} {args}", timeouts=True)
    res = tmp_repo.cli("run", "--run", "r", "-n", "2")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "r")
    assert [r["status"] for r in rows] == ["baseline", "keep", "no-op"], rows
    assert "exit 1:" in rows[1]["description"] and "inside an attempt" in rows[1]["description"]
    assert "planted-idea" not in tmp_repo.cli("idea", "list").stdout
    assert run_rows(tmp_repo, "other") == []


@pytest.mark.slow
def test_gitimprove_runs_inside_an_attempt_on_another_repository(tmp_repo: TmpRepo) -> None:
    """The same scrubbed call on a repository of its own is not the attempt's repository: it
    runs (this project's test suite, run as the guard of an attempt, does so)."""
    agent = f"{sys.executable} {NESTED_AGENT} --elsewhere idea add elsewhere-idea"
    value_project(tmp_repo, agent, timeouts=True)
    res = tmp_repo.cli("run", "--run", "r", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "r")
    assert rows[1]["description"].startswith("exit 0:"), rows[1]
    assert "elsewhere-idea" in cli(tmp_repo.path.parent / "elsewhere", "idea", "list").stdout
