"""A metric value whose arithmetic overflows (1e308) or underflows (1e-320) is the attempt's
metric-error, recorded; the run goes on, and a resumed run too (never an exit 3)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project

AGENT = """import json, os, pathlib, sys
value = repr(float(sys.argv[1]) / int(os.environ["GITIMPROVE_ITERATION"]))
pathlib.Path("src/value.txt").write_text(value + "\\n")
print(json.dumps({"description": "print " + value, "hypothesis": "h"}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("value", ["1e308", "-1e200", "1e-320"])
def test_a_value_beyond_exact_arithmetic_is_a_metric_error(
    tmp_repo: TmpRepo, tmp_path: Path, value: str
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    value_project(tmp_repo, f"{sys.executable} {agent} {value}")
    res = tmp_repo.cli("run", "--run", "m", "-n", "2")
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr
    rows = run_rows(tmp_repo, "m")
    assert [r["status"] for r in rows] == ["baseline", "metric-error", "metric-error"], rows
    assert all("outside the magnitudes" in str(r.get("reason", "")) for r in rows[1:]), rows
    again = tmp_repo.cli("run", "--run", "m", "--resume", "-n", "3")
    assert again.returncode == 0, again.stderr
    assert [r["status"] for r in run_rows(tmp_repo, "m")][-1] == "metric-error"
