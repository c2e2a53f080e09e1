"""Reading the metric's output holds one match at a time: measured code that printed a line
of millions of numbers (`1 1 1 …`, glued to the front of the benchmark's own line) made the
harness build a list of every match, 73 times the output's size (10 MB: 855 MB)."""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc

import pytest

from gitimprove.loop.metrics import extract, extract_pinned
from tests.conftest import PY, TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import BENCH, MOD
from tests.test_integrity_swaps import AGENT


@pytest.mark.parametrize(
    ("printed", "glued"),
    [
        ("took 5 s\n", "1 " * 500_000 + "took 5 s\n"),  # the last number of a line
        ("score: 5\n", "x score: " * 100_000 + "\nscore: 5\n"),  # a line's label, counted
    ],
)
def test_a_line_of_many_numbers_is_read_in_little_memory(printed: str, glued: str) -> None:
    form = extract(printed, "auto", None, learn=True).form
    tracemalloc.start()
    try:
        value = extract_pinned(glued, form).value
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert value == 5
    assert peak < 4 * len(glued), f"{peak:,} bytes to read {len(glued):,}"  # was 73 times


@pytest.mark.slow
def test_measured_code_that_prints_10_mb_of_numbers(tmp_repo: TmpRepo) -> None:
    plan = tmp_repo.path.parent / "plan.json"
    plan.write_text(json.dumps({"1": "glue:95", "2": "set:90"}))
    tmp_repo.commit(
        "project",
        {
            "bench.py": BENCH.replace("METRIC score={mod.score():g}", "took {mod.score():g} s"),
            "src/mod.py": MOD,
            "src/value.txt": "100\n",
            ".gitimprove.toml": f"""[metric]
command = "{sys.executable} bench.py"

[scope]
mutable = ["src/**"]
sealed = ["bench.py"]

[agent]
name = "command"
command = "{sys.executable} {AGENT} {plan}"
timeout = "20s"
""",
        },
    )
    measure = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], check=True, capture_output=True)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    argv = [PY, "-c", measure, PY, "-m", "gitimprove", "run", "--run", "h", "-n", "2"]
    res = subprocess.run(argv, cwd=tmp_repo.path, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    largest = int(res.stdout.split()[-1]) * 1024  # kilobytes on Linux
    assert largest < 500_000_000, f"the harness grew to {largest:,} bytes"  # was 855 MB
    rows = run_rows(tmp_repo, "h")
    assert [r["status"] for r in rows] == ["baseline", "keep", "keep"]  # its own number: 95
    assert [r["metric"]["value"] for r in rows] == [100, 95, 90]
