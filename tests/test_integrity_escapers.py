"""Agent processes are contained and always reaped (docs/integrity.md, 1), whatever way out
of the agent's process tree a daemon takes: a process group of its own with an empty
environment, a user and pid namespace (`unshare`), `nohup … & disown`, `start-stop-daemon
--background`, a tmux server of its own, or the measured code's own daemon that waits for the
metric run to end. Each ignores SIGTERM and renames itself; each would write `1` into every
checkout beside it for 20 s. None outlives its attempt: the next, honest attempt is measured
at exactly its own value, and no process of the agent is alive after the run."""

from __future__ import annotations

import json
import secrets
import sys
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import value_project
from tests.test_integrity import assert_sound, needs_bwrap

AGENT = Path(__file__).parent / "agents" / "process_escaper.py"
BENCH = """import sys
sys.path.insert(0, "src")
import work
work.main()
print(f"METRIC score={float(open('src/value.txt').read()):g}")
"""
WAYS = ["pgid", "unshare", "nohup", "ssd", "tmux", "hop", "measured"]


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_no_daemon_outlives_its_attempt(tmp_repo: TmpRepo, sandbox: str) -> None:
    mark = f"escaper-{secrets.token_hex(6)}"
    plan = []
    for i, way in enumerate(WAYS):
        plan += [way, f"honest:{99 - i}"]
    value_project(
        tmp_repo,
        f"{sys.executable} {AGENT} {','.join(plan)} {mark}",
        BENCH,
        {"src/work.py": "def main():\n    pass\n"},
        sandbox=sandbox,
        timeouts=True,
    )
    res = tmp_repo.cli("run", "--run", "e", "-n", str(len(plan)), "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout.splitlines()[-1])["event"] == "stop"
    rows = assert_sound(tmp_repo, "e", mark)
    got = [(r["status"], (r.get("metric") or {}).get("value")) for r in rows[1:]]
    want: list[tuple[str, float | None]] = []
    for i, _ in enumerate(WAYS):
        want += [("discard", 101 + 2 * i), ("keep", 99 - i)]
    assert got == want, "\n".join(
        f"{w} {r['status']} {r.get('reason')}" for w, r in zip(plan, rows[1:], strict=True)
    )
