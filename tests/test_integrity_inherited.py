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

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
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
