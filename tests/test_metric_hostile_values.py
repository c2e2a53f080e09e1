"""No metric output makes `git improve run` stop with exit 3: a value that cannot reach the
arithmetic (an integer of 400 digits in any format, a bool, a value beyond the magnitudes, a
value not above zero under a relative min_delta) is that attempt's metric-error, with a
reason; a baseline's is an exit 1 saying what to fix. A resumed run goes on the same way."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gitimprove.loop.metrics import extract, needs_above_zero
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows

# the agent writes what the benchmark prints for its iteration (argv[1]: a JSON plan)
AGENT = """import json, os, pathlib, sys
plan = json.loads(pathlib.Path(sys.argv[1]).read_text())
pathlib.Path("src/out.txt").write_text(plan[os.environ["GITIMPROVE_ITERATION"]])
"""
BENCH = "import sys\nsys.stdout.write(open('src/out.txt').read())\n"
HUGE = "9" * 400

# (what the baseline prints, [what each candidate prints, ...]) per output format
FORMATS = {
    "metric-line": (
        "METRIC score=100\n",
        [
            f"METRIC score={HUGE}\n",
            "METRIC score=1e400\n",
            "METRIC score=-0\n",
            "METRIC score=0\n",
            "METRIC score=-5\n",
            "METRIC score=1e-101\n",
            "METRIC score=1e-100\n",
            "METRIC score=nan\n",
            f"METRIC score=90\nMETRIC other={HUGE}\nMETRIC small=-0\n",
            "METRIC score=1e100\n",
        ],
    ),
    "json": (
        json.dumps({"score": 100, "items": 5}) + "\n",
        [
            f'{{"score": 90, "items": {HUGE}}}\n',
            f'{{"score": {HUGE}}}\n',
            f'{{"score": -{HUGE}, "items": 1}}\n',
            '{"score": true}\n',
            '{"score": -0.0}\n',
            '{"score": 0}\n',
            '{"score": -1e-100}\n',
            '{"score": 80, "flag": true, "big": 1e308, "tiny": 5e-324}\n',
        ],
    ),
    "tsv": (
        "name\tvalue\nbench\t100\n",
        [
            f"name\tvalue\nbench\t{HUGE}\n",
            f"name\tvalue\nbench\t-{HUGE}.5\n",
            "name\tvalue\nbench\t-0\n",
            "name\tvalue\nbench\t0.0\n",
            "name\tvalue\nbench\t1e-100\n",
        ],
    ),
}


def project(repo: TmpRepo, tmp_path: Path, baseline: str, outputs: list[str], extra: str) -> None:
    agent, plan = tmp_path / "agent.py", tmp_path / "plan.json"
    agent.write_text(AGENT)
    plan.write_text(json.dumps({str(i + 1): out for i, out in enumerate(outputs)}))
    repo.commit(
        "project",
        {
            "bench.py": BENCH,
            "src/out.txt": baseline,
            ".gitimprove.toml": f"""[metric]
command = "{sys.executable} bench.py"
{extra}
[scope]
mutable = ["src/**"]
sealed = ["bench.py"]

[loop]
circuit_breaker = 100
stuck_after = 100
plateau_patience = 100

[agent]
name = "command"
command = "{sys.executable} {agent} {plan}"
sandbox = "none"
""",
        },
    )


def valid(text: str, relative: bool) -> bool:
    """Whether the harness may take this output's value (the oracle, from the rules)."""
    try:
        value = extract(text).value
    except Exception:
        return False
    return not (relative and needs_above_zero(value, "1%"))


@pytest.mark.slow
@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("extra", ['min_delta = "1%"', 'direction = "higher"\nmin_delta = 0.5'])
def test_no_metric_output_makes_the_run_exit_3(
    tmp_repo: TmpRepo, tmp_path: Path, fmt: str, extra: str
) -> None:
    baseline, outputs = FORMATS[fmt]
    project(tmp_repo, tmp_path, baseline, outputs, extra)
    half = len(outputs) // 2
    res = tmp_repo.cli("run", "--run", "m", "-n", str(half))
    assert res.returncode == 0, res.stderr
    again = tmp_repo.cli("run", "--run", "m", "--resume", "-n", str(len(outputs) - half))
    assert again.returncode == 0, again.stderr
    for out in (res, again):
        assert "Traceback" not in out.stderr and "internal error" not in out.stderr
    rows = run_rows(tmp_repo, "m")
    assert [r["iteration"] for r in rows] == list(range(len(outputs) + 1))
    relative = "%" in extra
    for row, text in zip(rows[1:], outputs, strict=True):
        if not valid(text, relative):
            assert row["status"] == "metric-error", (text[:60], row)
            assert row.get("reason"), row
        else:
            assert row["status"] != "metric-error", (text[:60], row)
    for row in rows:
        for v in (row.get("metrics") or {}).values():  # secondary values are numbers it can hold
            assert isinstance(v, float) and (v == 0 or 1e-100 <= abs(v) <= 1e100)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("baseline", "says"),
    [
        ("METRIC score=0\n", "relative min_delta"),
        ("METRIC score=-3\n", "relative min_delta"),
        (f"METRIC score={HUGE}\n", "not a finite number"),
        ('{"score": true}\n', "no number"),
    ],
)
def test_a_baseline_that_cannot_be_compared_stops_with_what_to_fix(
    tmp_repo: TmpRepo, tmp_path: Path, baseline: str, says: str
) -> None:
    project(tmp_repo, tmp_path, baseline, ["METRIC score=5\n"], 'min_delta = "1%"')
    res = tmp_repo.cli("run", "--run", "m", "-n", "1")
    assert res.returncode == 1, (res.returncode, res.stderr)
    assert says in res.stderr and "Traceback" not in res.stderr, res.stderr


def test_a_sign_that_changes_between_runs_under_a_relative_min_delta() -> None:
    assert needs_above_zero(0.5, "1%") is None
    for value in (0.0, -0.0, -1e-100, -5.0):
        assert "above zero" in str(needs_above_zero(value, "1%"))
