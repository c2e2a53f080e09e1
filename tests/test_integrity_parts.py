"""The parts of evaluation integrity one at a time, with real processes and real git."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gitimprove.agents.sandbox import SUPERVISOR, Sandbox, bwrap_usable, choose
from gitimprove.config import parse_size
from gitimprove.errors import ConfigError, MetricError
from gitimprove.git import notes, refs
from gitimprove.git.checkout import (
    Checkout,
    NotAsWritten,
    checkout,
    materialize,
    not_as_written,
    scan,
)
from gitimprove.git.repo import update_refs
from gitimprove.git.watch import RepoState, forged_notes
from gitimprove.git.workspace import agent_workspace, hash_workspace, refused_name
from gitimprove.loop.integrity import check_config_pin
from gitimprove.loop.metrics import extract, extract_pinned
from gitimprove.util import proc, reaper
from tests.conftest import TmpRepo

needs_proc = pytest.mark.skipif(not reaper.available(), reason="needs /proc")
needs_bwrap = pytest.mark.skipif(not bwrap_usable(), reason="bubblewrap is not usable here")


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_pidfile(path: Path) -> int:
    deadline = time.monotonic() + 10
    while not path.exists() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)
    return int(path.read_text())


DAEMON = """import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        if sys.argv[2] == "scrub":
            os.execve(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)"], {})
        open(sys.argv[1], "w").write(str(os.getpid()))
        time.sleep(60)
    os._exit(0)
time.sleep(0.2)
"""


@needs_proc
@pytest.mark.parametrize("env", ["keep", "scrub"])
def test_sweep_kills_double_forked_daemons(tmp_path: Path, env: str) -> None:
    """A daemon that double-forks and calls setsid dies with its attempt: by its token, or
    (its environment scrubbed) as an orphan reparented to the harness, the subreaper."""
    script = tmp_path / "d.py"
    script.write_text(DAEMON)
    pidfile = tmp_path / "pid"
    code = f"""
import sys, time
sys.path.insert(0, {str(Path(__file__).parents[1])!r})
from gitimprove.util import proc, reaper
assert reaper.become_subreaper()
token = reaper.Token.new("k", "r")
proc.run([sys.executable, {str(script)!r}, {str(pidfile)!r}, {env!r}], env=proc.clean_env(token.env()))
time.sleep(0.3)
import os
def parent(p):
    try:
        return open(f"/proc/{{p}}/stat").read().split(")")[-1].split()[1]
    except OSError:  # the process ended while we looked
        return None
before = sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and parent(p) == str(os.getpid()))
killed = reaper.sweep(token)
print(len(killed) >= 1, before != [])
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["True", "True"]
    if env == "keep":
        assert not alive(int(pidfile.read_text()))


@pytest.mark.slow
@needs_proc
def test_sweep_leaves_other_threads_children_alone(tmp_path: Path) -> None:
    """Only the attempt's processes and the harness's orphans die; a child another thread is
    waiting for, and its descendants, live on."""
    mine, other = reaper.Token.new("k", "r"), reaper.Token.new("k", "r")
    pidfile = tmp_path / "other.pid"
    code = f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(3)"
    results: list[proc.Result] = []
    t = threading.Thread(
        target=lambda: results.append(
            proc.run([sys.executable, "-c", code], env=proc.clean_env(other.env()))
        )
    )
    t.start()
    pid = wait_pidfile(pidfile)
    assert reaper.sweep(mine) == []
    assert alive(pid)
    t.join()
    assert results[0].ok  # it ran to its end, and was reaped by its own thread


@needs_proc
def test_kill_survivors_finds_processes_of_a_dead_harness(tmp_path: Path) -> None:
    key = reaper.repo_key(tmp_path)
    token = reaper.Token(f"gi1:{key}:r:999999999:abc")  # a harness pid that does not exist
    pidfile = tmp_path / "pid"
    code = f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    proc.run(  # started in the background by a shell that exits: nobody's child
        ["sh", "-c", f'setsid {sys.executable} -c "{code}" >/dev/null 2>&1 & sleep 0.5'],
        env=proc.clean_env(token.env()),
    )
    pid = wait_pidfile(pidfile)
    assert reaper.alive_with_prefix(reaper.run_prefix(key)) == [pid]
    assert reaper.kill_survivors(key, "other-run") == []  # another run's survivors stay
    assert reaper.kill_survivors(key, "r") == [pid]
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not alive(pid)


# --- measurement checkouts ---------------------------------------------------------------------


def test_checkout_verification(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("c", {"src/a.py": "A = 1\n", "bench.py": "print(1)\n"})
    repo = tmp_repo.open()
    head = tmp_repo.git("rev-parse", "HEAD")
    with checkout(repo, head) as co, checkout(repo, head) as co2:
        assert co.path.name != co2.path.name and co.path.name.startswith("m-")
        assert co.verify() == []
        # the run's own output is accepted after a run, never between runs
        (co.path / "src" / "__pycache__").mkdir()
        (co.path / "src" / "__pycache__" / "a.pyc").write_bytes(b"x")
        assert co.verify(after_run=True) == []
        assert co.added() == ["src/__pycache__"]
        assert co.reset() == [] and not (co.path / "src" / "__pycache__").exists()
        assert co.verify() == []
        (co.path / "src" / "__pycache__").mkdir()  # between runs: named
        assert co.verify() == ["src (changed)", "src/__pycache__ (added)"]
        # a file of the commit: changed, rewritten with the same content, replaced, removed
        with checkout(repo, head) as c3:
            (c3.path / "src" / "a.py").write_text("A = 2\n")
            assert c3.verify(after_run=True) == ["src/a.py (changed)"]
        with checkout(repo, head) as c4:
            (c4.path / "src" / "a.py").write_text("A = 1\n")
            os.utime(c4.path / "src" / "a.py", ns=(0, 0))
            assert c4.verify() == ["src/a.py (rewritten)"]
        with checkout(repo, head) as c5:
            (c5.path / "src" / "a.py").unlink()
            (c5.path / "src" / "a.py").symlink_to("/etc/hostname")
            assert c5.verify(after_run=True) == ["src/a.py (changed)"]
        with checkout(repo, head) as c6:
            (c6.path / "bench.py").unlink()
            assert c6.verify(after_run=True) == ["bench.py (removed)"]
        with checkout(repo, head) as c7:  # a new file that would shadow code, between runs
            (c7.path / "src" / "sitecustomize.py").write_text("")
            assert c7.verify() == ["src (changed)", "src/sitecustomize.py (added)"]


REWRITER = """import pathlib, sys, time
root, stop = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
while not stop.exists():
    for p in root.glob("m-*/src/a.py"):
        try: p.write_text("A = 666\\n")
        except OSError: pass
"""


def test_a_checkout_rewritten_while_it_is_written_is_never_measured(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    tmp_repo.commit("c", {"src/a.py": "A = 1\n", "bench.py": "print(1)\n"})
    repo = tmp_repo.open()
    head = tmp_repo.git("rev-parse", "HEAD")
    # the mechanism: a file rewritten before the snapshot is named by its hash
    expected: dict[str, tuple[int, str]] = {}
    materialize(repo, repo.commit(head).tree, tmp_path / "co", expected)
    (tmp_path / "co" / "src" / "a.py").write_text("A = 2\n")
    (tmp_path / "co" / "src" / "x.py").write_text("")
    co = Checkout(tmp_path / "co", head, expected, scan(tmp_path / "co"))
    assert not_as_written(co) == ["src/a.py (changed)", "src/x.py (added)"]
    # a hostile process rewriting every checkout as fast as it can: a checkout either fails
    # to be written, or is as committed and the rewrite after it is seen by verify
    stop = tmp_path / "stop"
    work = repo.improve_dir / "work"
    work.mkdir(parents=True, exist_ok=True)
    rewriter = subprocess.Popen([sys.executable, "-c", REWRITER, str(work), str(stop)])
    refused = caught = 0
    try:
        for _ in range(30):
            try:
                with checkout(repo, head) as got:
                    time.sleep(0.02)
                    text = (got.path / "src" / "a.py").read_text()
                    bad = got.verify()  # after the read: what was read is what was verified
                    assert bad or text == "A = 1\n", "a rewritten checkout passed as written"
                    caught += "src/a.py (changed)" in bad
            except NotAsWritten as exc:
                assert "src/a.py (changed)" in exc.paths
                refused += 1
    finally:
        stop.write_text("")
        rewriter.wait(10)
    assert refused + caught > 0  # the attack was live


# --- the tree hashed from the files ------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "refused"),
    [
        (".git", True), (".Git", True), (".GIT", True), ("GIT~1", True), ("git~1", True),
        (".git.", True), (".git ", True), (".g\u200cit", True), (".git::$INDEX_ALLOCATION", True),
        ("a\\b", True), (".gitignore", False), ("git", False), (".github", False), ("GIT~2", False),
    ],
)  # fmt: skip
def test_refused_names(name: str, refused: bool) -> None:
    assert refused_name(name) is refused


def test_hash_ignores_the_clone_and_names_what_it_left_out(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("c", {"src/a.py": "A = 1\n", ".gitignore": "*.log\n"})
    repo = tmp_repo.open()
    head = tmp_repo.git("rev-parse", "HEAD")
    with agent_workspace(repo, head, "w") as ws:
        base = hash_workspace(repo, ws)
        assert base.tree == tmp_repo.git("rev-parse", "HEAD^{tree}")
        (ws / ".git" / "config").write_text("[[[ broken")
        (ws / ".git" / "index").write_bytes(b"junk")
        (ws / "x.log").write_text("ignored\n")
        assert hash_workspace(repo, ws).tree == base.tree
        subprocess.run(["rm", "-rf", str(ws / ".git")], check=True)
        assert hash_workspace(repo, ws).tree == base.tree
        (ws / "src" / "dir").mkdir()
        (ws / "src" / "dir" / "GIT~1").write_text("x")
        (ws / "src" / "ok.py").write_text("B = 2\n")
        os.symlink("/etc/passwd", ws / "src" / "abs")
        os.symlink("../..", ws / "src" / "up")
        os.symlink("a.py", ws / "src" / "fine")
        got = hash_workspace(repo, ws)
        assert got.refused == ["src/dir/GIT~1"]
        assert sorted(got.escaping) == [
            "src/abs -> /etc/passwd (an absolute path)",
            "src/up -> ../.. (outside the workspace)",
        ]
        listed = tmp_repo.git("ls-tree", "-r", "--name-only", got.tree).split()
        assert listed == [".gitignore", "src/a.py", "src/fine", "src/ok.py"]
    assert hash_workspace(repo, ws).tree == tmp_repo.git("hash-object", "-t", "tree", "/dev/null")


def test_hashing_never_reads_more_than_the_caps(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    repo = tmp_repo.open()
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    with open(ws / "src" / "huge.bin", "wb") as f:  # sparse: 8 GB read whole would not fit
        f.truncate(8 * 1024**3)
    (ws / "src" / "a.txt").write_text("a" * 600)
    (ws / "src" / "b.txt").write_text("b" * 600)
    (ws / "src" / "c.txt").write_text("c" * 600)
    got = hash_workspace(repo, ws, max_file=1000, max_tree=1300)
    assert "src/huge.bin (too large: over scope.max_file_size)" in got.refused
    over_tree = [r for r in got.refused if r.endswith("(too large: over scope.max_tree_size)")]
    assert len(over_tree) == 1  # whichever of the three came last
    kept = {f"src/{e.name}" for e in repo.raw[got.tree] / "src"}  # type: ignore[operator]
    assert len(kept) == 2 and kept | {over_tree[0].split(" ")[0]} == {
        "src/a.txt",
        "src/b.txt",
        "src/c.txt",
    }
    assert parse_size("100MB", "k") == 100_000_000 and parse_size("500kB", "k") == 500_000
    assert parse_size(2048, "k") == 2048
    with pytest.raises(ConfigError, match="is not a size"):
        parse_size("lots", "scope.max_file_size")


def test_workspace_has_no_remote_and_a_fresh_path(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("c", {"a": "1\n"})
    repo = tmp_repo.open()
    head = tmp_repo.git("rev-parse", "HEAD")
    with agent_workspace(repo, head, "r-1-0") as one, agent_workspace(repo, head, "r-1-0") as two:
        assert one != two
        assert tmp_repo.git("-C", str(one), "remote") == ""
        res = subprocess.run(["git", "push", "origin", "HEAD"], cwd=one, capture_output=True)
        assert res.returncode != 0


# --- the metric's own output ------------------------------------------------------------------


def test_extraction_is_pinned_to_what_the_baseline_printed() -> None:
    base = extract("warming up\nMETRIC score=100\n", "auto", "score")
    assert base.form == "metric:score"
    # an earlier line of the same name, or a line of another name, never replaces it
    got = extract_pinned("METRIC score=1\nMETRIC zzz=0\nMETRIC score=90\n", base.form, "metric")
    assert got.value == 90
    got = extract_pinned("METRIC aaa=0\nMETRIC score=90\n", base.form, "metric")
    assert got.value == 90
    for changed in ("90\n", '{"score": 1}\n', "METRIC other=1\n"):
        with pytest.raises(MetricError, match="changed format"):
            extract_pinned(changed, base.form, "metric")
    js = extract('{"primary": 5}\n', "auto", None)
    assert js.form == "json-last:primary"
    assert extract_pinned('noise\n{"primary": 4, "x": 1}\n', js.form).value == 4
    with pytest.raises(MetricError, match="changed format"):
        extract_pinned("METRIC primary=1\n", js.form)
    num = extract("took 3.5 s\n", "auto", None)
    assert num.form == "number"
    with pytest.raises(MetricError, match="changed format"):
        extract_pinned("METRIC score=0\n", num.form)
    assert extract_pinned("a line: 7\n", "regex:line: (\\d+)").value == 7


# --- the user's repository and the run's refs ---------------------------------------------------


def test_repo_state_names_what_changed(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("c", {"a.txt": "1\n", "b.txt": "1\n"})
    (tmp_repo.path / "b.txt").write_text("user edit\n")
    repo = tmp_repo.open()
    before = RepoState.take(repo)
    assert before.changes(RepoState.take(repo)) == []
    # the loop's own refs: a move gitimprove made is witnessed, any other is named
    head = tmp_repo.git("rev-parse", "HEAD")
    update_refs(repo, [("refs/improve/archive", head, None)], "test")
    assert before.changes(RepoState.take(repo)) == []
    tmp_repo.git("update-ref", "refs/heads/improve/x", "HEAD")
    assert before.changes(RepoState.take(repo)) == [
        f"refs/heads/improve/x moved to {head[:12]} outside gitimprove"
    ]
    tmp_repo.git("update-ref", "-d", "refs/heads/improve/x")
    (tmp_repo.path / "b.txt").write_text("user edit, rewritten\n")
    tmp_repo.git("config", "improve.metric.command", "echo 0")
    (tmp_repo.path / ".git" / "hooks" / "post-checkout").write_text("#!/bin/sh\n")
    tmp_repo.git("tag", "t1")
    changed = before.changes(RepoState.take(tmp_repo.open()))
    assert changed == [
        "refs/tags/t1",
        ".git/config",
        ".git/hooks/post-checkout",
        "git config improve.metric.command",  # which of gitimprove's settings changed
        "work tree: b.txt",
    ]


def test_forged_notes_and_refanned_notes(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("c", {"a.txt": "1\n"})
    tmp_repo.commit("d", {"a.txt": "2\n"})
    repo = tmp_repo.open()
    head, parent = tmp_repo.git("rev-parse", "HEAD"), tmp_repo.git("rev-parse", "HEAD~1")
    line = json.dumps({"v": 1, "op": "create", "run": "r", "status": "discard"})
    notes.append_lines(repo, {parent: [line]})
    old = repo.ref_target(refs.NOTES)
    # plain `git notes` rewrites the tree without fanout: moved, not forged
    tmp_repo.git("notes", "--ref=improve", "add", "-m", json.dumps({"run": "other"}), head)
    new = repo.ref_target(refs.NOTES)
    assert forged_notes(repo, old, new, "r") == []
    tmp_repo.git(
        "notes",
        "--ref=improve",
        "add",
        "-f",
        "-m",
        json.dumps({"run": "r", "status": "keep"}),
        head,
    )
    assert forged_notes(repo, new, repo.ref_target(refs.NOTES), "r") == [head]
    assert forged_notes(repo, old, repo.ref_target(refs.NOTES), "other") == []
    tmp_repo.git("notes", "--ref=improve", "remove", parent)
    assert parent in forged_notes(repo, old, repo.ref_target(refs.NOTES), "other")
    put_back = notes.revert_notes(repo, repo.ref_target(refs.NOTES) or "", old, [parent, head], "m")
    assert dict(notes.iter_notes(repo, put_back)) == dict(notes.iter_notes(repo, old))


def test_any_line_added_to_a_commit_of_the_run_is_forged(tmp_repo: TmpRepo) -> None:
    base = tmp_repo.commit("base", {"a.txt": "1\n"})
    mine = tmp_repo.commit("attempt", {"a.txt": "2\n"})
    repo = tmp_repo.open()
    base_line = json.dumps({"v": 1, "op": "create", "run": "r", "status": "baseline"})
    line = json.dumps({"v": 1, "op": "create", "run": "r", "status": "discard"})
    notes.append_lines(repo, {base: [base_line], mine: [line]})
    old = repo.ref_target(refs.NOTES)
    for forged in [{"status": "keep"}, {"run": "other", "status": "keep"}, {"run": ""}]:
        notes.append_lines(repo, {mine: [json.dumps({"v": 1, "op": "update", **forged})]})
        assert forged_notes(repo, old, repo.ref_target(refs.NOTES), "r", base) == [mine]
        assert notes.revert_notes(repo, repo.ref_target(refs.NOTES) or "", old, [mine], "m")
        tmp_repo.git("update-ref", refs.NOTES, old or "")
    # another run may start from the same base: its baseline there is no forgery of run r
    other = json.dumps({"v": 1, "op": "create", "run": "s", "status": "baseline"})
    notes.append_lines(repo, {base: [other]})
    assert forged_notes(repo, old, repo.ref_target(refs.NOTES), "r", base) == []


def test_config_pin_names_the_key() -> None:
    pin = {"git": {"improve.metric.command": "python bench.py"}}
    check_config_pin(pin, {"improve.metric.command": "python bench.py"}, "r")
    check_config_pin(None, {"improve.x": "1"}, "r")  # a run from before pinning
    with pytest.raises(ConfigError, match=r"improve\.metric\.command changed since run r started"):
        check_config_pin(pin, {"improve.metric.command": "echo 0"}, "r")
    with pytest.raises(ConfigError, match=r"improve\.agent\.name changed"):
        check_config_pin(pin, {**pin["git"], "improve.agent.name": "codex"}, "r")


# --- the sandbox -------------------------------------------------------------------------------


def test_sandbox_none_says_what_is_not_protected(tmp_path: Path) -> None:
    box = choose("none", [tmp_path])
    assert box.mode == "none" and "your repository" in box.message
    # an agent, a metric and a guard run under the supervisor
    argv, shell = box.wrap(["a", "b"], shell=False, workdir=tmp_path)
    assert argv[-3:] == ["--", "a", "b"] and str(SUPERVISOR) in argv and not shell
    measured, shell = box.wrap(["a"], shell=False, workdir=tmp_path, measure=True)
    assert measured[-2:] == ["--", "a"] and str(SUPERVISOR) in measured and not shell
    assert box.wrap("a b", shell=True, workdir=tmp_path)[0][-3:] == ["/bin/sh", "-c", "a b"]
    with pytest.raises(ConfigError, match="not allowed"):
        choose("docker", [tmp_path])


@needs_bwrap
def test_bwrap_hides_the_repository_and_keeps_the_workspace(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("c", {"a.txt": "1\n"})
    repo = tmp_repo.open()
    head = tmp_repo.git("rev-parse", "HEAD")
    box = choose("auto", [tmp_repo.path, repo.git_dir], repo.common_dir / "objects")
    assert isinstance(box, Sandbox) and box.mode == "bwrap"
    with agent_workspace(repo, head, "w") as ws:
        script = (  # the paths come from the environment: a command naming them keeps them
            "set -e; echo new > a.txt; git add a.txt; git -c user.name=x -c user.email=x@x "
            'commit -qm x; ls "$REPO" | wc -l; test ! -e "$GITDIR/config"; '
            '(echo x > "$REPO/a.txt") 2>/dev/null; cat "$REPO/a.txt" 2>/dev/null '
            "|| echo hidden; touch /tmp/private; (touch /usr/x) 2>/dev/null || echo read-only"
        )
        argv, shell = box.wrap(script, shell=True, workdir=ws)
        env = proc.clean_env({"REPO": str(tmp_repo.path), "GITDIR": str(repo.git_dir)})
        res = proc.run(argv, cwd=ws, shell=shell, timeout=60, env=env)
        assert res.ok, res.stderr
        lines = res.stdout.split()
        assert lines[0] == "0"  # the work tree is an empty folder inside
        assert "read-only" in lines
        assert (ws / "a.txt").read_text() == "new\n"  # the workspace is writable, git works
    assert (tmp_repo.path / "a.txt").read_text() == "1\n"
    assert not Path("/tmp/private").exists()


NOTE_WRITER = """
import json, sys
from gitimprove.git import notes
from gitimprove.git.repo import open_repo
repo = open_repo(sys.argv[1])
for commit in sys.argv[2:]:
    notes.append_lines(repo, {commit: [json.dumps({"run": "other", "description": commit})]})
"""


@pytest.mark.slow
def test_putting_forged_notes_back_loses_no_other_writer(tmp_repo: TmpRepo) -> None:
    """The harness removes a forged note of its run while 4 processes write notes of another
    run: every one of their 100 notes survives, the forgery does not, the harness's line lands."""
    from gitimprove.git.repo import cas_loop, update_refs
    from gitimprove.loop.integrity import check_run_refs, run_refs
    from tests.conftest import fast_commits

    tmp_repo.commit("root", {"a": "1\n"})
    commits = fast_commits(tmp_repo, 101, "many")
    mine, others = commits[0], commits[1:]
    repo = tmp_repo.open()
    tmp_repo.git("update-ref", "refs/heads/improve/r", "HEAD")
    expected = run_refs(repo, "r")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", NOTE_WRITER, str(tmp_repo.path), *others[i * 25 : (i + 1) * 25]]
        )
        for i in range(4)
    ]
    forged = json.dumps({"run": "r", "status": "keep", "host": "x"})
    tmp_repo.git("notes", "--ref=improve", "add", "-f", "-m", forged, mine)
    found = check_run_refs(repo, "r", expected)
    while not found.forged:  # other writers may have moved the ref first
        found = check_run_refs(repo, "r", expected)
    assert found.forged == [mine] and found.problems
    line = json.dumps({"run": "r", "status": "tampered"})

    def attempt() -> None:
        tip = repo.ref_target(refs.NOTES)
        assert tip is not None
        base = notes.revert_notes(repo, tip, expected[refs.NOTES], found.forged, "put back")
        new, _ = notes.build_commit(repo, base, {mine: [line]}, "record")
        assert new is not None
        update_refs(repo, [(refs.NOTES, new, tip)], "record")

    for _ in range(5):  # the harness writes while the others still do
        cas_loop(repo, attempt, what="notes", lock="notes")
        time.sleep(0.05)
    assert [p.wait(timeout=300) for p in procs] == [0] * 4
    got = dict(notes.iter_notes(tmp_repo.open()))
    assert set(others) <= set(got)
    assert got[mine].decode().splitlines() == [line]
    tmp_repo.git("fsck", "--no-progress")


@pytest.mark.slow
@needs_proc
def test_doctor_finds_and_kills_survivors_of_a_killed_run(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    tmp_repo.commit("c", {"a": "1\n"})
    key = reaper.repo_key((tmp_repo.path / ".git").resolve())
    token = reaper.Token(f"gi1:{key}:r:999999999:abc")  # its harness is gone
    pidfile = tmp_path / "pid"
    code = f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    proc.run(
        ["sh", "-c", f'setsid {sys.executable} -c "{code}" >/dev/null 2>&1 & sleep 0.5'],
        env=proc.clean_env(token.env()),
    )
    pid = wait_pidfile(pidfile)
    found = tmp_repo.cli("doctor")
    assert f"1 process(es) of an interrupted run are still alive (pids {pid})" in found.stdout
    repaired = tmp_repo.cli("doctor", "--repair")
    assert "processes" in repaired.stdout
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(pid)
    assert "no process of an interrupted run is alive" in tmp_repo.cli("doctor").stdout


def test_hashing_writes_only_the_blobs_the_repository_lacks(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("c", {"src/a.py": "A = 1\n", "src/b.py": "B = 1\n"})
    repo = tmp_repo.open()
    head = tmp_repo.git("rev-parse", "HEAD")
    objects = tmp_repo.path / ".git" / "objects"
    old = time.time() - 3600
    for p in objects.glob("[0-9a-f][0-9a-f]/*"):
        os.utime(p, (old, old))

    def touched() -> set[str]:
        return {
            p.parent.name + p.name
            for p in objects.glob("[0-9a-f][0-9a-f]/*")
            if p.stat().st_mtime > old + 60
        }

    with agent_workspace(repo, head, "w") as ws:
        assert hash_workspace(repo, ws).tree == tmp_repo.git("rev-parse", "HEAD^{tree}")
        (ws / "src" / "b.py").write_text("B = 2\n")
        (ws / "src" / "c.py").write_text("C = 3\n")
        got = hash_workspace(repo, ws)
    assert tmp_repo.git("show", f"{got.tree}:src/b.py") == "B = 2"
    assert tmp_repo.git("show", f"{got.tree}:src/c.py") == "C = 3"
    blobs = {tmp_repo.git("rev-parse", f"{got.tree}:src/{n}") for n in ("a.py", "b.py", "c.py")}
    # the new contents are written; the blob already there is not written again
    assert touched() & blobs == blobs - {tmp_repo.git("rev-parse", f"{got.tree}:src/a.py")}
