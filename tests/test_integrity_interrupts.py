"""The harness interrupted at any moment (docs/integrity.md, 1): SIGINT or SIGTERM while the
agent works, while the metric runs or while the guard runs — each of which has left a daemon
that ignores SIGTERM, renamed itself and dropped its token — ends with no process of the
attempt alive; a `kill -9` there leaves none either once `doctor --repair` ran; and `run
--resume` keeps every record, kills what is left, and gives the resumed attempt a workspace
of its own."""

from __future__ import annotations

import json
import os
import secrets
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.test_integrity import assert_sound, start, survivors, wait_for

AGENT = Path(__file__).parent / "agents" / "process_escaper.py"


def project(repo: TmpRepo, plan: Path, mark: str) -> None:
    repo.commit(
        "project",
        {
            "bench.py": "import sys\nsys.path.insert(0, 'src')\nimport work\nwork.main()\n"
            "print(f\"METRIC score={float(open('src/value.txt').read()):g}\")\n",
            "check.py": "import sys\nsys.path.insert(0, 'src')\nimport work\nwork.guard()\n",
            "src/work.py": "def main():\n    pass\n\n\ndef guard():\n    pass\n",
            "src/value.txt": "100\n",
            ".gitimprove.toml": f"""[metric]
command = "{sys.executable} bench.py"
timeout = "120s"

[guard]
command = "{sys.executable} check.py"
timeout = "120s"

[scope]
mutable = ["src/**"]
sealed = ["bench.py", "check.py"]

[agent]
name = "command"
command = "{sys.executable} {AGENT} {plan} {mark}"
timeout = "120s"
sandbox = "none"
""",
        },
    )


def no_survivor(mark: str, repo: TmpRepo) -> None:
    deadline = time.monotonic() + 10
    while survivors(mark, repo) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = survivors(mark, repo)
    assert left == [], [cmdline(pid) for pid in left]


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()[:200]
    except OSError:
        return b"(gone)"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("stage", "sig"),
    [
        ("agent", signal.SIGTERM),
        ("metric", signal.SIGINT),
        ("metric", signal.SIGTERM),
        ("guard", signal.SIGTERM),
        ("guard", signal.SIGINT),
        ("agent", signal.SIGKILL),
        ("metric", signal.SIGKILL),
        ("guard", signal.SIGKILL),
    ],
)
def test_an_interrupted_run_resumes_with_every_record_and_no_survivor(
    tmp_repo: TmpRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stage: str, sig: int
) -> None:
    monkeypatch.setenv("ESCAPER_DIR", str(tmp_path))
    mark = f"escaper-{secrets.token_hex(6)}"
    plan = tmp_path / "plan"
    plan.write_text(f"stall:{stage}")
    project(tmp_repo, plan, mark)
    p = start(tmp_repo, "--run", "i", "-n", "1", "--json")
    wait_for(tmp_path / f"{stage}.pid", 120)
    time.sleep(0.3)  # its daemon has started
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == (-9 if sig == signal.SIGKILL else 128 + sig), err
    assert "Traceback" not in err
    if sig == signal.SIGKILL:
        res = tmp_repo.cli("doctor", "--repair")
        assert "Traceback" not in res.stderr, res.stderr
    no_survivor(mark, tmp_repo)
    plan.write_text("honest:95")
    res = tmp_repo.cli("run", "--resume", "--run", "i", "-n", "1", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout.splitlines()[-1])["event"] == "stop"
    rows = assert_sound(tmp_repo, "i", mark)
    assert rows[-1]["status"] == "keep" and rows[-1]["metric"]["value"] == 95, rows[-1]
    seen = (tmp_path / "workspaces").read_text().split()
    assert seen[-1] not in seen[:-1], seen
    assert not any(os.path.exists(w) for w in seen)


@pytest.mark.slow
@pytest.mark.parametrize("repair", ["doctor", "resume"])
def test_a_pid_hopping_daemon_whose_supervisor_and_harness_were_killed_is_found(
    tmp_repo: TmpRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repair: str
) -> None:
    """A daemon that forks and exits at every step (its pid changes every millisecond, a
    single look through /proc misses it), left after the agent killed its supervisor and the
    harness: `doctor --repair` or `run --resume` stops it for good."""
    monkeypatch.setenv("ESCAPER_DIR", str(tmp_path))
    mark = f"escaper-{secrets.token_hex(6)}"
    plan = tmp_path / "plan"
    plan.write_text("hop-orphan")
    project(tmp_repo, plan, mark)
    p = start(tmp_repo, "--run", "i", "-n", "1", "--json")
    p.communicate(timeout=120)
    assert p.returncode == -9
    beat = tmp_path / "heartbeat"
    deadline = time.monotonic() + 30
    while not beat.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    plan.write_text("honest:95")
    try:
        shown = tmp_repo.cli("doctor")
        assert "process(es) of an interrupted run are still alive" in shown.stdout, shown.stdout
        if repair == "doctor":
            res = tmp_repo.cli("doctor", "--repair")
        else:
            res = tmp_repo.cli("run", "--resume", "--run", "i", "-n", "1", "--json")
        assert "Traceback" not in res.stderr, res.stderr
        time.sleep(0.5)
        last = beat.read_text()
        time.sleep(1)
        assert beat.read_text() == last, "the daemon still runs"
        assert survivors(mark, tmp_repo) == []
    finally:
        for pid in survivors(mark, tmp_repo):
            os.kill(pid, signal.SIGKILL)
