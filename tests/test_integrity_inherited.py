"""What every process of the harness inherits from it is the run's own (docs/integrity.md).

Without the sandbox any process of the user can change another's resource limits (`prlimit`),
CPU affinity (`taskset -p`) and priority (`renice`), and the harness's pid is in the token
every attempt's process carries. A lowered open-file limit stopped the run with the attempt
unrecorded (and every `--resume` ran the same agent again); an affinity of one CPU would hold
for every later measurement, the incumbent's too, while the candidate's own code widens its
own. The harness pins them at the run's start and sets them back after each agent call and
measurement, the attempt `tampered` naming what changed; in the sandbox the agent and the
measured code cannot see the harness at all (a pid namespace of their own). So it is with
`$TMPDIR`: a file put in place of the folder Python chose for the harness's temporary files
(which it keeps for the process) stopped the run with exit 3, and a full one with the attempt
unrecorded, blamed on the repository's disk.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import PY, TmpRepo
from tests.loop_helpers import run_rows, value_project
from tests.test_integrity import needs_bwrap

AGENT = Path(__file__).parent / "agents" / "inherit_agent.py"
BENCH = """import pathlib, subprocess, sys
subprocess.run([sys.executable, "src/work.py"], check=True)
print("METRIC score=" + pathlib.Path("src/value.txt").read_text().strip(), flush=True)
"""
NAMED = {  # attack: what the reason names
    "nofile": "RLIMIT_NOFILE of the harness: 12/",
    "fsize": "RLIMIT_FSIZE of the harness: 0/",
    "affinity": "CPU affinity of the harness's thread",
    "idle": "scheduling policy of the harness's thread",
    "measured-nofile": "RLIMIT_NOFILE of the harness: 12/",
    "measured-affinity": "CPU affinity of the harness's thread",
}
if shutil.which("ionice") and os.uname().machine in ("x86_64", "aarch64"):
    NAMED["ionice"] = "I/O priority of the harness's thread"
if len(os.sched_getaffinity(0)) < 2:  # one CPU: pinning to it changes nothing
    del NAMED["affinity"], NAMED["measured-affinity"]


def project(repo: TmpRepo, names: list[str], sandbox: str) -> None:
    plan = repo.path.parent / "plan.json"
    plan.write_text(json.dumps({str(i): n for i, n in enumerate(names, 1)}))
    agent = f"{sys.executable} {AGENT} {plan}"
    value_project(repo, agent, BENCH, {"src/work.py": "pass\n"}, sandbox=sandbox, timeouts=True)


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_what_the_harness_passes_on_is_set_back_and_never_kept(
    tmp_repo: TmpRepo, sandbox: str
) -> None:
    names = [*NAMED, "honest"]
    project(tmp_repo, names, sandbox)
    res = tmp_repo.cli("run", "--run", "h", "-n", str(len(names)))
    assert res.returncode == 0, res.stderr
    rows = {r["description"]: r for r in run_rows(tmp_repo, "h")[1:]}
    assert set(rows) == set(names), rows
    for name, named in NAMED.items():
        row = rows[name]
        if sandbox == "none":
            assert row["status"] == "tampered", (name, row)
            assert named in row["reason"], (name, row["reason"])
        else:  # nothing of the harness to reach: an ordinary attempt
            assert row["status"] in ("keep", "discard"), (name, row)
    assert rows["honest"]["status"] == "keep", rows["honest"]
    kept = tmp_repo.git("rev-parse", "improve/h")
    assert kept == rows["honest"]["commit"], rows


@pytest.mark.slow
@pytest.mark.parametrize("attack", ["tmpdir-file", "measured-tmpdir-file"])
def test_a_file_in_place_of_the_harness_tmpdir_stops_nothing(
    tmp_repo: TmpRepo, attack: str
) -> None:
    """Not tampering (`$TMPDIR` is the agent's to use too): the next usable folder is taken."""
    names = [attack, "honest"]
    project(tmp_repo, names, "none")
    tmp = tmp_repo.path.parent / "tmp"
    tmp.mkdir()
    res = tmp_repo.cli("run", "--run", "h", "-n", "2", env={"TMPDIR": str(tmp)})
    assert res.returncode == 0, res.stderr
    assert tmp.is_file(), "the attack did not happen"
    rows = {r["description"]: r for r in run_rows(tmp_repo, "h")[1:]}
    assert [rows[n]["status"] for n in names] == ["keep", "keep"], rows
    assert tmp_repo.git("rev-parse", "improve/h") == rows["honest"]["commit"]


def _can_raise_a_hard_limit() -> bool:
    code = (
        "import resource as r; s, h = r.getrlimit(r.RLIMIT_NOFILE); "
        "r.setrlimit(r.RLIMIT_NOFILE, (12, 12)); r.setrlimit(r.RLIMIT_NOFILE, (s, h))"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


@pytest.mark.slow
def test_a_hard_limit_it_cannot_raise_again_stops_the_run_naming_it(tmp_repo: TmpRepo) -> None:
    """Without privileges (`CAP_SYS_RESOURCE`) nothing sets a lowered hard limit back: no
    record could be written under it, so the run stops (exit 1) naming it — not "the file
    system refused", not a traceback. With them it is set back like a soft one."""
    project(tmp_repo, ["nofile-hard", "honest"], "none")
    res = tmp_repo.cli("run", "--run", "h", "-n", "2")
    statuses = [r["status"] for r in run_rows(tmp_repo, "h")]
    if _can_raise_a_hard_limit():
        assert res.returncode == 0, res.stderr
        assert statuses == ["baseline", "tampered", "keep"], statuses
        return
    assert res.returncode == 1, res.stderr
    assert "RLIMIT_NOFILE of the harness: 12/12 (was " in res.stderr, res.stderr
    assert "run --resume" in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert statuses == ["baseline"], statuses


def test_a_lowered_limit_and_a_narrowed_affinity_are_named_and_set_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In-process, as another process of the user would do it from outside."""
    import resource

    from gitimprove.util import inherited

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    cpus = os.sched_getaffinity(0)
    monkeypatch.setattr(inherited, "_pinned", None)  # put back after the test
    inherited.pin()
    try:
        assert inherited.changes() == ([], True)
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
        if len(cpus) > 1:
            os.sched_setaffinity(0, {min(cpus)})
        changed, restored = inherited.changes()
        assert restored, changed
        assert "RLIMIT_NOFILE of the harness: 64/" in changed[0], changed
        assert len(changed) == (2 if len(cpus) > 1 else 1), changed
        assert resource.getrlimit(resource.RLIMIT_NOFILE) == (soft, hard)
        assert os.sched_getaffinity(0) == cpus
        assert inherited.changes() == ([], True)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        os.sched_setaffinity(0, cpus)


def test_the_harness_runs_git_with_no_usable_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its commands' input and output are in memory: a full or replaced `$TMPDIR` is not met
    while an attempt is recorded (the run stopped, blamed on the repository's disk)."""
    import tempfile

    from gitimprove.git import space
    from gitimprove.util import proc

    gone = tmp_path / "gone"
    gone.write_text("a file where the folder was\n")
    monkeypatch.setattr(tempfile, "tempdir", str(gone))
    res = proc.run(["git", "hash-object", "--stdin"], input="x\n")
    assert res.ok and res.stdout.strip() == "587be6b4c3f93f93c489c0111bba5596147a26cb", res
    refused = OSError(28, "No space left on device", str(gone / "tmpab12" / "index"))
    assert space.full_place(refused, tmp_path / "repo") == tmp_path
    assert space.full_place(OSError(28, "No space"), tmp_path / "repo") == tmp_path / "repo"


def _cgroup_folder() -> tuple[Path, str]:
    """A folder where this process may create a cgroup with a CPU quota, beside its own, and
    the file that sets the quota: cgroup v2 with the `cpu` controller (`cpu.max`), else the v1
    `cpu` hierarchy (`cpu.cfs_quota_us`); skips, with the reason, where none may be made."""
    from gitimprove.util import inherited

    tried = []
    for hierarchy, path in inherited._cgroups():
        procs = inherited._cgroup_procs(hierarchy, path)
        if procs is None:
            continue
        folder = Path(procs).parent
        if hierarchy.startswith("0:"):
            listed = folder / "cgroup.subtree_control"  # what its children get
            if "cpu" not in (listed.read_text() if listed.is_file() else "").split():
                tried.append(f"{folder} (cgroup v2: no cpu controller for its children)")
                continue
            quota = "cpu.max"
        elif "cpu" in hierarchy.split(":", 1)[1].split(","):
            quota = "cpu.cfs_quota_us"
        else:
            continue
        probe = folder / f"gi-probe-{os.getpid()}"
        try:
            probe.mkdir()
        except OSError as exc:
            tried.append(f"{folder} ({exc.strerror})")
            continue
        probe.rmdir()
        return folder, quota
    pytest.skip("no cgroup with a CPU quota may be made here: " + ("; ".join(tried) or "none"))


@contextlib.contextmanager
def tight_cgroups(count: int) -> Iterator[list[Path]]:
    """`count` new cgroups beside this process's, each with a CPU quota of 10%; removed after
    (this process and its children moved back first)."""
    folder, quota = _cgroup_folder()
    made = [folder / f"gi-test-{os.getpid()}-{i}" for i in range(count)]
    try:
        for path in made:
            path.mkdir()
            try:
                (path / quota).write_text("10000 100000" if quota == "cpu.max" else "10000")
            except OSError as exc:
                pytest.skip(f"no CPU quota may be set on a cgroup here: {quota} {exc.strerror}")
        yield made
    finally:
        for path in made:
            for pid in (path / "cgroup.procs").read_text().split() if path.exists() else ():
                with contextlib.suppress(OSError):
                    (folder / "cgroup.procs").write_text(pid)
            with contextlib.suppress(OSError):
                path.rmdir()


def _cgroup_of_self(folder: Path) -> bool:
    return str(os.getpid()) in (folder / "cgroup.procs").read_text().split()


def test_a_move_into_another_cgroup_is_named_and_set_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process, as another process of the user would do it (a write of the harness's pid
    into a cgroup with a tight quota): named, moved back; with the cgroup it was pinned in
    removed, named and not set back (the run stops)."""
    from gitimprove.util import inherited

    monkeypatch.setattr(inherited, "_pinned", None)  # put back after the test
    with tight_cgroups(2) as (first, second):
        home = first.parent
        inherited.pin()
        assert inherited.changes() == ([], True)
        (second / "cgroup.procs").write_text(str(os.getpid()))
        changed, restored = inherited.changes()
        assert restored, changed
        assert len(changed) == 1 and "of the harness: /" in changed[0], changed
        assert f"{second.name} (was " in changed[0], changed
        assert _cgroup_of_self(home)
        assert inherited.changes() == ([], True)

        (first / "cgroup.procs").write_text(str(os.getpid()))
        inherited.pin()  # pinned in `first`, which is then removed
        (second / "cgroup.procs").write_text(str(os.getpid()))
        first.rmdir()
        changed, restored = inherited.changes()
        assert not restored and first.name in changed[0] and second.name in changed[0], changed
        assert _cgroup_of_self(second)


@pytest.mark.slow
def test_an_agent_that_moves_the_harness_into_a_tight_cgroup_is_tampered(
    tmp_repo: TmpRepo,
) -> None:
    """The agent, or the code it leaves for the benchmark to run, writes the harness's pid
    into a cgroup with a CPU quota of 10% (every later measurement, the incumbent's too, would
    crawl): the harness is moved back, the attempt `tampered` naming the cgroup, and the honest
    attempt after them kept."""
    with tight_cgroups(1) as (tight,):
        procs = tight / "cgroup.procs"
        names = [f"cgroup:{procs}", f"measured-cgroup:{procs}", "honest"]
        project(tmp_repo, names, "none")
        res = tmp_repo.cli("run", "--run", "h", "-n", "3")
        assert res.returncode == 0, res.stderr
        rows = {r["description"]: r for r in run_rows(tmp_repo, "h")[1:]}
        for name in names[:2]:
            assert rows[name]["status"] == "tampered", rows[name]
            assert f"of the harness: /{tight.name}" in rows[name]["reason"], rows[name]
        assert rows["honest"]["status"] == "keep", rows["honest"]


@pytest.mark.slow
def test_a_move_out_of_a_cgroup_then_removed_stops_the_run_naming_it(tmp_repo: TmpRepo) -> None:
    """The harness runs in a cgroup of its own; the agent moves it (and itself) elsewhere and
    removes that cgroup: nothing can move it back, so the run stops (exit 1) naming it, the
    attempt not recorded."""
    with tight_cgroups(2) as (own, other):
        project(tmp_repo, [f"cgroup-gone:{own}|{other}", "honest"], "none")
        enter = ["sh", "-c", 'echo $$ > "$1" && shift && exec "$@"', "sh", own / "cgroup.procs"]
        res = subprocess.run(  # the harness started in `own`
            [*enter, PY, "-m", "gitimprove", "run", "--run", "h", "-n", "2"],
            cwd=tmp_repo.path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert res.returncode == 1, res.stdout + res.stderr
        assert f"of the harness: /{other.name} (was /{own.name})" in res.stderr, res.stderr
        assert "Traceback" not in res.stderr, res.stderr
        assert [r["status"] for r in run_rows(tmp_repo, "h")] == ["baseline"]
