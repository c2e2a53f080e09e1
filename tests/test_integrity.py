"""Evaluation integrity, tried by hostile agent executables (docs/integrity.md).

Each run below is a real `git improve run` in a real repository whose agent is
tests/agents/hostile_agent.py: it makes a change and then attacks what is measured, what is
recorded, or the user's repository. Whatever it does: no attempt is kept on the strength of
tampering, every attempt is recorded, the run goes on (or stops naming what changed), the
user's repository is as before, no process of the agent is alive afterwards, no note is
forged, and the run branch holds only commits the harness kept.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gitimprove.agents.sandbox import bwrap_usable
from gitimprove.state import integrity
from gitimprove.util import reaper, supervise
from tests.conftest import TmpRepo, cli_popen
from tests.loop_helpers import run_rows

HOSTILE = Path(__file__).parent / "agents" / "hostile_agent.py"
BENCH = """import sys
sys.path.insert(0, "src")
import mod
print(f"METRIC score={mod.score():g}")
"""
MOD = """import pathlib


def score():
    return float(pathlib.Path("src/value.txt").read_text())
"""

needs_bwrap = pytest.mark.skipif(not bwrap_usable(), reason="bubblewrap is not usable here")
needs_landlock = pytest.mark.skipif(
    supervise.landlock_abi() < supervise.LANDLOCK_ABI_NEEDED,
    reason="this kernel has no Landlock to contain writes",
)


def hostile_project(repo: TmpRepo, plan: dict[str, Any], sandbox: str) -> dict[str, Any]:
    plan = {"mark": f"hostile-{secrets.token_hex(6)}", **plan}
    plan_file = repo.path.parent / "plan.json"
    plan_file.write_text(json.dumps(plan))
    config = f"""[metric]
command = "{sys.executable} bench.py"
timeout = "20s"

[scope]
mutable = ["src/**"]
sealed = ["bench.py"]

[loop]
iterations = 40
plateau_patience = 50
stuck_after = 40

[agent]
name = "command"
command = "{sys.executable} {HOSTILE} {plan_file}"
timeout = "8s"
sandbox = "{sandbox}"
"""
    repo.commit(
        "project",
        {
            "bench.py": BENCH,
            "src/mod.py": MOD,
            "src/value.txt": "100\n",
            "README.txt": "readme\n",
            ".gitignore": "__pycache__/\n.venv/\n",
            ".gitimprove.toml": config,
        },
    )
    return plan


def user_state(repo: TmpRepo) -> dict[str, str]:
    git_dir = repo.path / ".git"
    hooks = (
        sorted(p.name for p in (git_dir / "hooks").iterdir())
        if (git_dir / "hooks").is_dir()
        else []
    )
    return {
        "refs": "\n".join(
            line
            for line in repo.git("for-each-ref", "--format=%(refname) %(objectname)").splitlines()
            if not line.startswith(("refs/improve/", "refs/notes/improve ", "refs/heads/improve/"))
        ),
        "head": repo.git("rev-parse", "HEAD"),
        "status": repo.git("status", "--porcelain", "--untracked-files=all"),
        "config": (git_dir / "config").read_text(),
        "hooks": " ".join(hooks),
        "readme": (repo.path / "README.txt").read_text(),
    }


def survivors(mark: str, repo: TmpRepo) -> list[int]:
    """Processes left by the agent: its mark on their command line, or the run's token."""
    found = set(
        reaper.alive_with_prefix(reaper.run_prefix(reaper.repo_key((repo.path / ".git").resolve())))
    )
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if mark.encode() in cmd and state != "Z":
            found.add(int(pid))
    return sorted(found)


def assert_sound(repo: TmpRepo, run: str, mark: str) -> list[dict[str, Any]]:
    """What must hold after any run, whatever the agent did."""
    rows = run_rows(repo, run)
    iterations = [r["iteration"] for r in rows]
    assert iterations == list(range(len(rows))), "an attempt was not recorded"
    base = repo.git("rev-parse", f"refs/improve/runs/{run}/base")
    kept = {r["commit"] for r in rows if r["status"] in ("keep", "keep-reworked")}
    on_branch = repo.git("rev-list", "--first-parent", f"improve/{run}", f"^{base}").split()
    assert set(on_branch) == kept, "the run branch holds a commit the harness did not keep"
    for r in rows:
        assert r.get("host") != "x", f"a forged note on {r['commit'][:10]}"
    findings = integrity.checks(repo.open(), False)
    assert all(f.ok for f in findings if f.check in ("run branches", "processes")), findings
    assert survivors(mark, repo) == [], "a process of the agent is still alive"
    work = repo.path / ".git" / "improve" / "work"
    assert not [p for p in work.iterdir() if p.is_dir()], "a workspace or checkout was left"
    repo.git("fsck", "--no-progress")
    return rows


# Attacks after which the run goes on, each with the status it must end with. Without the
# sandbox the daemon reaches the incumbent's checkout, but the metric here is deterministic:
# the candidate is compared exactly with the incumbent's recorded value and the incumbent is
# never run again, so the rewrite changes nothing that is measured (a tie: discarded); in the
# sandbox it sees nothing.
GOES_ON = [
    ("rewrite-siblings:100.0", "discard"),  # a daemon writing 1000 into checkouts
    ("late-writer:99", "keep"),  # a daemon keeping its token, writing later
    ("push-origin:98", "keep"),  # push and forged note through origin: there is no origin
    ("symlink-out", "out-of-scope"),
    ("symlink-up:97", "out-of-scope"),
    ("dotgit-name:96", "out-of-scope"),
    ("short-name:96", "out-of-scope"),
    ("dotgit-case:96", "out-of-scope"),
    ("non-utf8:96", "out-of-scope"),
    ("nested-repo:96", "out-of-scope"),
    ("huge:96", "out-of-scope"),
    ("delete-git:95", "keep"),  # hashed from the files whatever became of the clone
    ("corrupt-git:94", "keep"),
    ("git-file:93", "keep"),
    ("metric-early:92", "keep"),  # the benchmark's own line wins: 92, not 1
    ("metric-format:50", "metric-error"),
    ("self-rewrite:50", "tampered"),
    ("plain:92.5", "discard"),  # (writes the incumbent's checkout the next attack goes for)
    # in the sandbox the daemon dies with the benchmark's pid namespace: measured honestly;
    # without it, it writes the incumbent's checkout, which a deterministic metric never runs
    ("measure-daemon:92.0", "discard"),
]
# Attacks on the user's repository: blocked by the sandbox, so its run goes on.
ON_THE_REPOSITORY = [
    ("push-path:91", "keep"),
    ("user-config:90", "keep"),
    ("user-hook:89", "keep"),
    ("user-worktree:88", "keep"),
    ("user-branch:87", "keep"),
    ("user-pth:86", "keep"),
]


def run_attacks(
    tmp_repo: TmpRepo, attacks: list[tuple[str, str]], sandbox: str
) -> list[dict[str, Any]]:
    outside = tmp_repo.path.parent / "outside.txt"
    outside.write_text("1\n")
    plan = hostile_project(
        tmp_repo,
        {str(i + 1): a for i, (a, _) in enumerate(attacks)} | {"outside": str(outside)},
        sandbox,
    )
    before = user_state(tmp_repo)
    res = tmp_repo.cli("run", "--run", "h", "-n", str(len(attacks)), "--json")
    assert res.returncode == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    assert events[0]["sandbox"] == sandbox
    assert events[-1]["event"] == "stop" and "iterations reached" in events[-1]["reason"]
    rows = assert_sound(tmp_repo, "h", plan["mark"])
    got = [(r["description"], r["status"]) for r in rows[1:]]
    want = [(a, s.split("|")[0 if sandbox == "none" else -1]) for a, s in attacks]
    assert got == want, "\n".join(
        f"{g} {r.get('reason')}" for g, r in zip(got, rows[1:], strict=True)
    )
    assert user_state(tmp_repo) == before
    by = {r["description"]: r for r in rows[1:]}
    assert "src/.Git/config" in by["dotgit-name:96"]["reason"]
    assert "src/GIT~1" in by["short-name:96"]["reason"]
    assert "src/.GIT" in by["dotgit-case:96"]["reason"]
    assert "not UTF-8" in by["non-utf8:96"]["reason"]
    assert "src/inner/" in by["nested-repo:96"]["reason"]
    assert "src/huge.bin (too large: over scope.max_file_size)" in by["huge:96"]["reason"]
    assert "src/value.txt -> " in by["symlink-out"]["reason"]
    assert "src/up -> ../../../../.." in by["symlink-up:97"]["reason"]
    assert by["metric-early:92"]["metric"]["value"] == 92
    assert "src/value.txt" in by["self-rewrite:50"]["reason"]
    # never kept: the daemon's write lands in a checkout the deterministic metric never runs
    assert by["measure-daemon:92.0"]["status"] == "discard"
    best = min(r["metric"]["value"] for r in rows if r["status"] in ("keep", "keep-reworked"))
    assert best < rows[0]["metric"]["value"]  # the honest part of the work still improves it
    return rows


@pytest.mark.slow
def test_hostile_agents_without_sandbox(tmp_repo: TmpRepo) -> None:
    run_attacks(tmp_repo, GOES_ON, "none")


@pytest.mark.slow
@needs_bwrap
def test_hostile_agents_in_the_sandbox(tmp_repo: TmpRepo) -> None:
    run_attacks(tmp_repo, GOES_ON + ON_THE_REPOSITORY, "bwrap")


@pytest.mark.slow
@needs_landlock
def test_hostile_agents_under_landlock(tmp_repo: TmpRepo) -> None:
    """Without bubblewrap, under Landlock: the attacks on your repository fail at the write
    (the run goes on, as in the sandbox), the daemons' writes into checkouts too."""
    run_attacks(tmp_repo, GOES_ON + ON_THE_REPOSITORY, "landlock")


@pytest.mark.parametrize(
    ("attack", "named"),
    [
        ("push-path:91", "refs/heads/improve/h"),
        ("forge-nameless:91", "refs/notes/improve"),
        ("forge-foreign:91", "refs/notes/improve"),
        ("global-config:91", "/hooks-hostile-"),  # a hooksPath and fsmonitor in ~/.gitconfig
        ("user-filter:86", ".git/config"),  # a clean filter the harness's status would run
        pytest.param("user-config:90", ".git/config", marks=pytest.mark.slow),
        pytest.param("user-hook:89", ".git/hooks/pre-commit", marks=pytest.mark.slow),
        pytest.param("user-worktree:88", "README.txt", marks=pytest.mark.slow),
        pytest.param("user-branch:87", "refs/heads/agent-was-here", marks=pytest.mark.slow),
        ("user-pth:87", ".venv/lib/site-packages/evil.pth"),  # ignored by your rules
        pytest.param("user-pyc:87", "__pycache__/bench.cpython-311.pyc", marks=pytest.mark.slow),
        pytest.param("user-tag:87", "refs/tags/agent-tag", marks=pytest.mark.slow),
        pytest.param("user-info:87", ".git/info/exclude", marks=pytest.mark.slow),
        pytest.param("user-attributes:87", ".git/info/attributes", marks=pytest.mark.slow),
        pytest.param("user-reflog:87", ".git/logs/HEAD", marks=pytest.mark.slow),
    ],
)
@pytest.mark.slow
def test_a_change_to_the_repository_stops_the_run(
    tmp_repo: TmpRepo, attack: str, named: str
) -> None:
    plan = hostile_project(tmp_repo, {"1": "set:99", "2": attack}, "none")
    res = tmp_repo.cli("run", "--run", "h", "-n", "3", "--json")
    assert res.returncode == 1, res.stderr
    ran = tmp_repo.path.parent / "global-config-ran"  # written by the hooks it configured
    assert not ran.exists(), "the harness ran code of ~/.gitconfig: " + (
        ran.read_text() if ran.exists() else ""
    )
    assert "stopped" in res.stderr and named in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    rows = run_rows(tmp_repo, "h")
    assert [r["status"] for r in rows] == ["baseline", "keep", "tampered"]
    assert named in rows[2]["reason"]
    # the branch is where the harness left it, and the forged note did not make a keep
    assert tmp_repo.git("rev-parse", "improve/h") == rows[1]["commit"]
    assert rows[1]["metric"]["value"] == 99 and rows[1].get("host") != "x"
    note = tmp_repo.git("notes", "--ref=improve", "show", rows[1]["commit"]).splitlines()
    assert [json.loads(line).get("host") for line in note].count("x") == 0, "the forged line stayed"
    assert survivors(plan["mark"], tmp_repo) == []
    doctor = tmp_repo.cli("doctor")
    assert (
        "outside the harness" in doctor.stdout + doctor.stderr
        or named in doctor.stdout + doctor.stderr
    )
    if attack.startswith("user-config"):
        again = tmp_repo.cli("run", "--resume")
        assert again.returncode == 1
        assert "improve.metric.command changed" in again.stderr, again.stderr


@pytest.mark.slow
def test_resume_refuses_a_changed_override(tmp_repo: TmpRepo) -> None:
    hostile_project(tmp_repo, {"1": "set:99"}, "none")
    tmp_repo.git("config", "improve.agent.timeout", "9s")
    res = tmp_repo.cli("run", "--run", "h", "-n", "1")
    assert res.returncode == 0, res.stderr
    tmp_repo.git("config", "improve.agent.timeout", "20s")
    again = tmp_repo.cli("run", "--resume", "--run", "h", "-n", "2")
    assert again.returncode == 1
    assert "improve.agent.timeout changed" in again.stderr and "'9s'" in again.stderr
    tmp_repo.git("config", "improve.agent.timeout", "9s")
    assert tmp_repo.cli("run", "--resume", "--run", "h", "-n", "2").returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="git is needed")
def test_sandbox_bwrap_missing_is_a_clear_error(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    hostile_project(tmp_repo, {"1": "set:99"}, "bwrap")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "sh"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    res = tmp_repo.cli("run", "--run", "h", "-n", "1", env={"PATH": str(bin_dir)})
    assert res.returncode == 1
    assert "bubblewrap" in res.stderr and "sandbox" in res.stderr
    tmp_repo.git("config", "improve.agent.sandbox", "auto")
    res = tmp_repo.cli("run", "--run", "h2", "-n", "1", env={"PATH": str(bin_dir)})
    assert res.returncode == 0, res.stderr
    if supervise.landlock_abi() >= supervise.LANDLOCK_ABI_NEEDED:  # what auto falls back to
        assert "sandbox: landlock (bubblewrap is not available; Landlock ABI" in res.stdout
    else:
        assert "sandbox: none (bubblewrap is not available, nor Landlock" in res.stdout


def start(repo: TmpRepo, *args: str) -> subprocess.Popen[str]:
    return cli_popen(repo.path, "run", *args)


def wait_for(path: Path, seconds: float = 60) -> int:
    deadline = time.monotonic() + seconds
    while not path.exists() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)
    return int(path.read_text())


@pytest.mark.slow
@pytest.mark.survivors
def test_kill_9_survivors_die_before_the_resumed_attempt(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    """After a kill -9 of the run and of the agent's supervisor at once (the supervisor would
    otherwise kill them: tests/test_integrity_escape.py), the agent and its daemon live on;
    `run --resume` kills them by their token before it reuses anything, and the resumed
    attempt works in a new workspace."""
    pidfile = tmp_path / "agent.pid"
    plan = hostile_project(tmp_repo, {"1": "sleeper:95", "pidfile": str(pidfile)}, "none")
    p = start(tmp_repo, "--run", "h", "-n", "1", "--json")
    agent = wait_for(pidfile)
    work = tmp_repo.path / ".git" / "improve" / "work"
    old = {d.name for d in work.iterdir() if d.is_dir() and d.name.startswith("h-1-0")}
    supervisor = agent
    while b"supervise.py" not in Path(f"/proc/{supervisor}/cmdline").read_bytes():
        supervisor = int(Path(f"/proc/{supervisor}/stat").read_text().rsplit(")", 1)[1].split()[1])
        assert supervisor > 1, "the agent does not run under its supervisor"
    os.kill(supervisor, signal.SIGKILL)
    p.send_signal(signal.SIGKILL)
    p.communicate()
    time.sleep(0.2)
    assert survivors(plan["mark"], tmp_repo) or os.path.exists(f"/proc/{agent}")
    # the resumed attempt must not be the sleeper again: give it an honest change
    plan_file = tmp_repo.path.parent / "plan.json"
    plan_file.write_text(json.dumps({**plan, "1": "set:95"}))
    res = tmp_repo.cli("run", "--resume", "--json")
    assert res.returncode == 0, res.stderr
    start_event = json.loads(res.stdout.splitlines()[0])
    assert agent in start_event["killed"]
    rows = assert_sound(tmp_repo, "h", plan["mark"])
    assert [r["status"] for r in rows] == ["baseline", "keep"]
    assert not old & {d.name for d in work.iterdir()}


@pytest.mark.parametrize(
    "sig", [pytest.param(signal.SIGINT, marks=pytest.mark.slow), signal.SIGTERM]
)
def test_an_interrupted_run_leaves_no_agent_process(
    tmp_repo: TmpRepo, tmp_path: Path, sig: int
) -> None:
    pidfile = tmp_path / "agent.pid"
    plan = hostile_project(tmp_repo, {"1": "sleeper:95", "pidfile": str(pidfile)}, "none")
    p = start(tmp_repo, "--run", "h", "-n", "1")
    wait_for(pidfile)
    time.sleep(0.2)  # the sleeper has started its daemon
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 128 + sig, err  # 130 for SIGINT, 143 for SIGTERM
    assert "Traceback" not in err
    deadline = time.monotonic() + 5
    while survivors(plan["mark"], tmp_repo) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert survivors(plan["mark"], tmp_repo) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    "sandbox",
    [
        "none",
        pytest.param("bwrap", marks=needs_bwrap),
        pytest.param("landlock", marks=needs_landlock),
    ],
)
def test_a_hostile_tournament(tmp_repo: TmpRepo, sandbox: str) -> None:
    plan = hostile_project(
        tmp_repo,
        {
            "1.0": "rewrite-siblings:100.0",
            "1.1": "measure-daemon:99",
            "1.2": "push-origin:98",
            "2.0": "self-rewrite:10",
            "2.1": "dotgit-name:10",
            "2.2": "set:97",
        },
        sandbox,
    )
    res = tmp_repo.cli("run", "--run", "h", "-n", "2", "--candidates", "3", "--json")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "h")
    assert [r["iteration"] for r in rows] == [0, 1, 1, 1, 2, 2, 2]
    base = tmp_repo.git("rev-parse", "refs/improve/runs/h/base")
    kept = [r for r in rows if r["status"] in ("keep", "keep-reworked")]
    on_branch = tmp_repo.git("rev-list", "--first-parent", "improve/h", f"^{base}").split()
    assert set(on_branch) == {r["commit"] for r in kept}
    by = {r.get("description"): r["status"] for r in rows[1:]}
    assert by["self-rewrite:10"] == "tampered" and by["dotgit-name:10"] == "out-of-scope"
    assert by["rewrite-siblings:100.0"] not in ("keep", "keep-reworked")
    for r in kept:
        assert r["description"] in ("push-origin:98", "set:97", "measure-daemon:99")
    assert survivors(plan["mark"], tmp_repo) == []


@pytest.mark.slow
def test_doctor_shows_and_repairs_what_a_hostile_run_left(tmp_repo: TmpRepo) -> None:
    plan = hostile_project(tmp_repo, {"1": "set:99", "2": "user-hook:80"}, "none")
    assert tmp_repo.cli("run", "--run", "h", "-n", "2").returncode == 1
    # a commit the loop never kept, put on the run branch by hand
    tmp_repo.commit("by hand", {"src/value.txt": "1\n"})
    tmp_repo.git("update-ref", "refs/heads/improve/h", "HEAD")
    doctor = tmp_repo.cli("doctor")
    text = doctor.stdout + doctor.stderr
    assert ".git/hooks/pre-commit" in text
    assert "improve/h holds 1 commit(s) the loop did not keep" in text
    assert "1 keep record(s) of run h are not on its branch" in text
    assert tmp_repo.cli("doctor", "--repair").returncode in (0, 1)
    again = tmp_repo.cli("doctor")
    assert ".git/hooks/pre-commit" not in again.stdout + again.stderr
    assert survivors(plan["mark"], tmp_repo) == []
