"""A `.gitignore` the agent writes never takes a file of the tree out of the commit.

The harness lists the workspace with an index of its own, empty: every file a `.gitignore`
matched was left out of the tree, so an agent that wrote `src/.gitignore` holding `*` (or
`*.txt`) had its commit delete `src/value.txt` and all of `src/` — a crash, or worse, a
commit that drops files nobody asked to delete, kept. git keeps a tracked file whatever the
ignore rules say; the harness keeps every file of the incumbent's tree that is on disk (a new
file the rules match stays out, as git leaves it out)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project

AGENT = Path(__file__).parent / "agents" / "ignoring_agent.py"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("where", "pattern"), [("src/.gitignore", "*"), ("src/.gitignore", "*.txt")]
)
def test_a_tracked_file_the_agents_gitignore_matches_stays_in_the_commit(
    tmp_repo: TmpRepo, where: str, pattern: str
) -> None:
    value_project(
        tmp_repo,
        f"{sys.executable} {AGENT} {where} {shlex.quote(pattern)}",
        files={"src/keep.py": "VALUE = 1\n"},
        timeouts=True,
    )
    res = tmp_repo.cli("run", "--run", "t", "-n", "2")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "keep", "keep"], rows
    assert [r["metric"]["value"] for r in rows] == [100, 99, 98]
    files = tmp_repo.git("ls-tree", "-r", "--name-only", "improve/t").split()
    assert {"src/value.txt", "src/keep.py", "bench.py"} <= set(files), files
    assert "src/new.txt" not in files  # a new file the rules match stays out, as in git
    assert tmp_repo.git("show", "improve/t:src/value.txt") == "98"
