"""Text an agent reports (description, hypothesis, approach) and its output go into commit
messages and notes: a lone surrogate (valid JSON, not encodable as UTF-8) or a NUL byte (which
ends a commit message) is made storable at the one point messages and notes are written,
never a crash (exit 3), in the run and in `run --resume`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gitimprove.util.text import storable
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project

AGENT = Path(__file__).parent / "agents" / "report_agent.py"
REPORTS = [
    r'{"description": "fast \ud800 x", "hypothesis": "h \udfff", "approach": "a"}',
    r'{"description": "nul \u0000 cut here", "hypothesis": "h\u0000h"}',
    r'{"description": "pair \ud83d\ude00 ok", "hypothesis": "\udc80\ud800 lone pair"}',
    r'{"description": "ctl \u0007 \u001b[2K x \ud800", "approach": "\u0000"}',
]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("fast \ud800 x", "fast \ufffd x"),
        ("a\0b", "ab"),
        ("\udc80\ud800", "\ufffd\ufffd"),
        ("\U0001f600 fine", "\U0001f600 fine"),
        ("plain", "plain"),
    ],
)
def test_storable(text: str, want: str) -> None:
    assert storable(text) == want
    storable(text).encode("utf-8")


def _project(repo: TmpRepo, reports: list[str]) -> None:
    plan = repo.path.parent / "plan.json"
    plan.write_text(json.dumps({str(i): r for i, r in enumerate(reports, 1)}))
    value_project(repo, f"{sys.executable} {AGENT} {plan}")


@pytest.mark.slow
def test_a_lone_surrogate_or_a_nul_in_a_report_is_stored_not_a_crash(tmp_repo: TmpRepo) -> None:
    _project(tmp_repo, [*REPORTS, *REPORTS])
    n = len(REPORTS)
    res = tmp_repo.cli("run", "--run", "h", "-n", str(n), "--json")
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    resumed = tmp_repo.cli("run", "--resume", "--run", "h", "-n", str(n))
    assert resumed.returncode == 0 and "Traceback" not in resumed.stderr, resumed.stderr
    rows = run_rows(tmp_repo, "h")[1:]
    assert [r["status"] for r in rows] == ["keep"] * (2 * n), rows
    assert "fast \ufffd x" in rows[0]["description"]
    assert rows[1]["description"].startswith("nul") and "cut here" in rows[1]["description"]
    log = tmp_repo.git("log", "--format=%B%x01", "improve/h")
    assert "\0" not in log and "cut here" in log and "fast \ufffd x" in log
    for cmd in (["log", "--run", "h"], ["show", rows[0]["commit"]], ["status"]):
        shown = tmp_repo.cli(*cmd)
        assert shown.returncode == 0 and "Traceback" not in shown.stderr, (cmd, shown.stderr)
