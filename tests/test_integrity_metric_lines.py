"""The metric's own output wins (docs/integrity.md, 6): mutable code the sealed benchmark
imports prints a better `METRIC` line before the benchmark's own, on its line, on stderr,
with escapes, line ends `str.splitlines` knows but a terminal does not, digits `float` reads
but a benchmark never prints, or 10 MB of them: no number of it is ever read, nothing of it
is kept, and the harness reads the output in linear time."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from gitimprove.errors import MetricError
from gitimprove.loop.metrics import extract_pinned, run_metric
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project

AGENT = Path(__file__).parent / "agents" / "metric_liar.py"
BENCH = """import sys
sys.path.insert(0, "src")
import work
work.main()
print(f"METRIC score={float(open('src/value.txt').read()):g}")
"""
HOWS = ["stderr", "sameline", "cr", "ansi", "json", "nul", "digits", "huge", "nan", "case"]
HOWS += ["flood", "vt", "osc"]


@pytest.mark.parametrize(
    "output",
    [
        "METRIC score=5\x0bMETRIC score=1\n",
        "METRIC score=5\u2028METRIC score=1\n",
        "METRIC score=5\x85METRIC score=1\n",
        "METRIC score=\u0663\n",
        "METRIC score=\uff11\n",
        "METRIC score=5 METRIC score=1\n",
    ],
)
def test_no_number_is_read_past_a_line_end_a_terminal_does_not_know(output: str) -> None:
    """Only \\n, \\r and \\r\\n end a line; only ASCII digits are digits."""
    got = run_metric(
        ([sys.executable, "-c", f"import sys; sys.stdout.write({output!r})"], False),
        Path.cwd(),
        timeout=30,
        pinned="metric:score",
    )
    assert got.status == "metric-error" and got.value is None, got


def test_escapes_are_read_as_a_terminal_shows_them() -> None:
    """A coloured number is its number, not the 0 of the `\\x1b[0m` after it; U+2212 is a
    minus sign."""
    assert extract_pinned("took \x1b[1m4.5\x1b[0m s\n", "number").value == 4.5
    assert extract_pinned("\x1b[32mMETRIC score=3\x1b[0m\n", "metric:score").value == 3
    assert extract_pinned("delta \u22122.5\n", "number").value == -2.5


def test_an_escape_left_open_never_takes_a_later_line() -> None:
    """A title escape measured code leaves open before the benchmark's line ends at its own
    line's end: the benchmark's line is read, not the earlier one."""
    output = "METRIC score=1\n\x1b]0;title\nbench done\r\nMETRIC score=5\n"
    assert extract_pinned(output, "metric:score").value == 5


@pytest.mark.parametrize(
    "prefix", ["x", "# ", "\x1b]0;", "\x1b[", "\x1b]0;\x07x", "\x1b]8;;u\x1b\\-"]
)
def test_a_benchmark_line_spoiled_by_what_precedes_it_is_no_earlier_line(prefix: str) -> None:
    """Measured code prints a better line, then leaves the cursor on a new line after
    something that spoils the benchmark's own line (or hides it as an escape): the earlier
    line never counts, the run is a `metric-error` naming the spoiled line."""
    output = f"METRIC score=1\n{prefix}METRIC score=101\n"
    with pytest.raises(MetricError, match="last line naming `METRIC score`"):
        extract_pinned(output, "metric:score")
    output = f'{{"score": 1}}\n{prefix}{{"score": 101}}\n'
    with pytest.raises(MetricError, match="last line naming the key 'score'"):
        extract_pinned(output, "json:score")
    assert extract_pinned('{"score": 1}\n{"score": 101}\n', "json:score").value == 101


@pytest.mark.parametrize("line", ["'METRIC score=' + '1' * 2_000_000 + '..'", "'1' * 2_000_000"])
def test_a_long_line_of_digits_is_read_in_linear_time(line: str) -> None:
    """A pattern that backtracks took 80 s on 40,000 digits (quadratic): this is 2,000,000."""
    start = time.monotonic()
    got = run_metric(
        ([sys.executable, "-c", f"print({line})"], False), Path.cwd(), timeout=30, pinned="number"
    )
    assert got.status == "metric-error", got
    assert time.monotonic() - start < 10


@pytest.mark.slow
def test_a_forged_metric_line_from_code_under_test_is_never_read(tmp_repo: TmpRepo) -> None:
    plan = tmp_repo.path.parent / "how.txt"
    value_project(
        tmp_repo,
        f"{sys.executable} {AGENT} {plan}",
        BENCH,
        {"src/work.py": "def main():\n    pass\n"},
    )
    rows: list[tuple[str, str]] = []
    for i, how in enumerate(HOWS):
        plan.write_text(how)
        res = tmp_repo.cli("run", "--run", f"m{i}", "-n", "1", "--json")
        assert res.returncode == 0, (how, res.stderr)
        got = run_rows(tmp_repo, f"m{i}")
        assert len(got) == 2 and got[1]["status"] != "keep", (how, got[1])
        rows.append((how, got[1]["status"]))
    expected = {"stderr": "discard", "cr": "discard", "ansi": "discard", "json": "discard"}
    expected |= {"digits": "discard", "huge": "discard", "nan": "discard", "case": "discard"}
    expected |= {"flood": "discard", "vt": "metric-error", "osc": "metric-error"}
    expected |= {"sameline": "metric-error", "nul": "metric-error"}
    assert dict(rows) == expected, rows
