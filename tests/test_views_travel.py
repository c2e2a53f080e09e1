"""Views work wherever git does: in a bare repository, and in a second clone after `sync`.

Run markers travel with `sync` and the pre-push sync (created where missing, never moved),
and signals captured by hooks leave the local spool before anything is pushed.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from gitimprove.state import experiments
from tests.conftest import PY, TmpRepo, build_once, copy_scenario, git
from tests.loop_helpers import make_project


def wait_until(check, seconds: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def _tournament(root: Path) -> None:
    bare = root / "remote.git"
    git(root, "init", "-q", "--bare", str(bare))
    a = TmpRepo(root / "a")
    git(root, "clone", "-q", str(bare), str(a.path))
    make_project(a, {"1.0": "set:90", "1.1": "set:95"}, guard=False)
    a.git("push", "-q", "origin", "HEAD:main")
    git(bare, "symbolic-ref", "HEAD", "refs/heads/main")
    res = a.cli("run", "--run", "t", "-n", "1", "-k", "2")
    assert res.returncode == 0, res.stderr
    res = a.cli("sync", "--json")
    assert res.returncode == 0, res.stderr
    assert "refs/improve/runs/t/base" in json.loads(res.stdout)["pushed"]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_once(tmp_path_factory, "tournament", _tournament)


@pytest.fixture
def shared(pristine: Path, tmp_path: Path) -> tuple[TmpRepo, Path]:
    """A clone that ran a real tournament round, and the bare remote it synced to."""
    root = copy_scenario(pristine, tmp_path / "s")
    a, bare = TmpRepo(root / "a"), root / "remote.git"
    a.git("remote", "set-url", "origin", str(bare))
    return a, bare


VIEWS = (("status",), ("log",), ("log", "--format", "tsv"), ("log", "--round", "1"))


@pytest.mark.slow
def test_second_clone_after_sync_has_every_view(
    shared: tuple[TmpRepo, Path], tmp_path: Path
) -> None:
    a, bare = shared
    a.git("push", "-q", str(bare), "refs/heads/improve/t:refs/heads/improve/t")
    b = TmpRepo(tmp_path / "b")
    git(tmp_path, "clone", "-q", str(bare), str(b.path))
    assert b.cli("status").returncode == 1  # nothing has come over yet
    res = b.cli("sync", "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["runs_in"] == 2 and report["conflicts"] == []  # base and stop
    for args in VIEWS:
        mine, theirs = a.cli(*args), b.cli(*args)
        assert theirs.returncode == 0, (args, theirs.stderr)
        assert theirs.stdout == mine.stdout, args
    assert "run t: finished" in b.cli("status").stdout
    assert "round 1: candidate" in b.cli("log", "--round", "1").stdout
    winner = b.cli("log", "--format", "jsonl", "--round", "1").stdout.splitlines()
    commit = json.loads(winner[0])["commit"]
    assert b.cli("show", commit).stdout == a.cli("show", commit).stdout
    plot = b.cli("plot", "-o", str(tmp_path / "b.png"))
    assert "no run" not in plot.stderr
    assert plot.returncode == 0 or "plotting needs matplotlib" in plot.stderr
    # syncing again changes nothing and moves no marker
    before = b.git("for-each-ref", "refs/improve/runs/")
    assert json.loads(b.cli("sync", "--json").stdout)["runs_in"] == 0
    assert b.git("for-each-ref", "refs/improve/runs/") == before
    # the run's branch is here only as origin/improve/t: nothing to tell about it
    assert "origin/improve/t" in b.git("branch", "-a")
    doctor = b.cli("doctor")
    assert "[ok ] run branches: 0 run branch(es) hold only kept commits; 1 run(s) from other" in (
        doctor.stdout
    )
    assert "Traceback" not in doctor.stderr


@pytest.mark.slow
def test_views_in_the_bare_remote(shared: tuple[TmpRepo, Path], tmp_path: Path) -> None:
    a, bare = shared
    for cwd in (bare, bare / "refs"):
        for args in VIEWS:
            res = subprocess.run(
                [PY, "-m", "gitimprove", *args], cwd=cwd, capture_output=True, text=True
            )
            assert res.returncode == 0, (args, res.stderr)
            assert res.stdout == a.cli(*args).stdout, args
    env = {**os.environ, "GIT_DIR": str(bare)}
    res = subprocess.run(
        [PY, "-m", "gitimprove", "log", "--format", "tsv"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert res.returncode == 0 and res.stdout == a.cli("log", "--format", "tsv").stdout
    res = subprocess.run(
        [PY, "-m", "gitimprove", "plot", "-o", str(tmp_path / "bare.png")],
        cwd=bare,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0 or "plotting needs matplotlib" in res.stderr


@pytest.mark.slow
def test_spooled_signals_travel_with_sync_and_the_pre_push_sync(
    shared: tuple[TmpRepo, Path], tmp_path: Path
) -> None:
    a, bare = shared
    assert a.cli("hooks", "install", "--git").returncode == 0

    def capture(repo: TmpRepo, error: str) -> None:
        payload = {
            "session_id": "s-1",
            "cwd": str(repo.path),
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_input": {"command": "make check"},
            "error": error,
        }
        res = repo.cli("hook", "PostToolUseFailure", input=json.dumps(payload))
        assert res.returncode == 0 and res.stderr == ""

    capture(a, "the pre-push sync carries this")
    assert list((a.path / ".git" / "improve" / "spool").iterdir())
    new_head = a.commit("another commit", {"x.txt": "x"})
    a.git("update-ref", "refs/improve/runs/later/base", new_head)  # a run started since
    experiments.record(a.open(), new_head, {"run": "later", "iteration": 0, "status": "baseline"})
    push = subprocess.run(
        ["git", "push", "-q", "origin", "HEAD:main"], cwd=a.path, capture_output=True, text=True
    )
    assert push.returncode == 0, push.stderr

    def remote_signals() -> str:
        res = subprocess.run(
            ["git", "grep", "-h", "carries", "refs/heads/improve/memory", "--", "signals/"],
            cwd=bare,
            capture_output=True,
            text=True,
        )
        return res.stdout

    wait_until(lambda: "pre-push sync carries this" in remote_signals())
    wait_until(lambda: "runs/later/base" in git(bare, "for-each-ref", "refs/improve/runs/"))
    b = TmpRepo(tmp_path / "b")
    git(tmp_path, "clone", "-q", str(bare), str(b.path))
    capture(b, "plain sync carries this")
    res = b.cli("sync", "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["flushed"] == 1
    assert not list((b.path / ".git" / "improve" / "spool").iterdir())
    assert "plain sync carries this" in remote_signals()
    listed = b.cli("signal", "list", "--json").stdout
    assert "pre-push sync carries this" in listed and "plain sync carries this" in listed


@pytest.mark.slow
def test_a_marker_that_differs_is_kept_on_both_sides_and_reported(
    shared: tuple[TmpRepo, Path], tmp_path: Path
) -> None:
    _, bare = shared
    b = TmpRepo(tmp_path / "b")
    git(tmp_path, "clone", "-q", str(bare), str(b.path))
    other = b.commit("b's own work", {"b.txt": "b"})
    # b started a run of the same name on its own
    b.git("update-ref", "refs/improve/runs/t/base", other)
    remote_base = git(bare, "rev-parse", "refs/improve/runs/t/base")
    assert remote_base != other
    res = b.cli("sync")
    assert res.returncode == 0, res.stderr
    assert "refs/improve/runs/t/base differs here and on origin" in res.stderr
    assert b.git("rev-parse", "refs/improve/runs/t/base") == other
    assert git(bare, "rev-parse", "refs/improve/runs/t/base") == remote_base
    assert b.git("rev-parse", "refs/improve/runs/t/stop")  # the missing one came in


def test_phantom_run_markers_neither_travel_nor_come_back(
    shared: tuple[TmpRepo, Path], tmp_path: Path
) -> None:
    """Markers of a run that never recorded anything (older versions left them when a run
    failed before it started) are not pushed, and not taken in, so `doctor --repair`
    removing them holds across syncs."""
    a, bare = shared
    head = a.git("rev-parse", "HEAD")
    a.git("update-ref", "refs/improve/runs/ghost/base", head)
    assert a.cli("sync").returncode == 0
    assert "ghost" not in git(bare, "for-each-ref", "refs/improve/runs/")
    git(bare, "update-ref", "refs/improve/runs/ghost2/base", head)  # pushed by an old version
    b = TmpRepo(tmp_path / "b")
    git(tmp_path, "clone", "-q", str(bare), str(b.path))
    assert b.cli("sync").returncode == 0
    markers = b.git("for-each-ref", "--format=%(refname)", "refs/improve/runs/")
    assert "ghost" not in markers and "refs/improve/runs/t/base" in markers
    assert "[ok ] runs: no phantom runs" in b.cli("doctor").stdout


SYNCER = """
import sys
from gitimprove.git.repo import open_repo
from gitimprove.git.sync import sync
from gitimprove.memory import capture
from gitimprove.state import experiments
from gitimprove.util import proc
path, w, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
repo = open_repo(path)
head = str(repo.head_commit().id)
for i in range(rounds):
    run = f"w{w}-{i}"
    proc.git(["update-ref", f"refs/improve/runs/{run}/base", head], cwd=path)
    proc.git(["update-ref", f"refs/improve/runs/{run}/stop", head], cwd=path)
    experiments.record(repo, head, {"run": run, "status": "baseline", "note": f"{w}-{i}"})
    sig = capture.make_signal(type_="gotcha", content=f"spooled {w}-{i}", session=w, hook="t")
    capture.spool_signals(str(repo.common_dir / "improve"), [sig])
    sync(repo)
"""


@pytest.mark.slow
def test_clones_syncing_at_once_end_with_every_marker_and_signal(tmp_path: Path) -> None:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    seed = TmpRepo(tmp_path / "seed")
    git(tmp_path, "clone", "-q", str(bare), str(seed.path))
    seed.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n'})
    seed.git("push", "-q", "origin", "HEAD:main")
    clones = []
    for w in range(4):
        c = TmpRepo(tmp_path / f"c{w}")
        git(tmp_path, "clone", "-q", str(bare), str(c.path))
        clones.append(c)
    procs = [
        subprocess.Popen([PY, "-c", SYNCER, str(c.path), str(w), "5"]) for w, c in enumerate(clones)
    ]
    assert [p.wait(timeout=600) for p in procs] == [0] * 4
    for c in clones:
        assert c.cli("sync").returncode == 0
    runs = {f"w{w}-{i}" for w in range(4) for i in range(5)}
    expected = {f"refs/improve/runs/{r}/{m}" for r in runs for m in ("base", "stop")}
    assert set(git(bare, "for-each-ref", "--format=%(refname)", "refs/improve/runs/").split()) == (
        expected
    )
    for c in clones:
        got = set(c.git("for-each-ref", "--format=%(refname)", "refs/improve/runs/").split())
        assert got == expected
        listed = c.cli("signal", "list", "--json").stdout
        assert all(f"spooled {w}-{i}" in listed for w in range(4) for i in range(5))
        assert not list((c.path / ".git" / "improve" / "spool").iterdir())
        for run in ("w0-0", "w3-4"):
            res = c.cli("status", "--run", run, "--json")
            assert res.returncode == 0 and json.loads(res.stdout)["finished"] is True
    git(bare, "fsck", "--no-progress")
