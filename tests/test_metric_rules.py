"""The metric's own output wins for every extraction rule (docs/integrity.md, 6): the baseline's
output fixes the line read — a `line:` or `regex:` rule's line is the last one naming it (its
`<name>:`, the text its pattern needs), past the trailer the baseline printed after it — so a
spoiled benchmark line is a `metric-error` naming it, never a value read from an earlier line
the code under test printed; an honest benchmark's progress lines, a varying number of lines,
and a trailer it always prints are read as they were. Outputs are shaped like the tools'."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from gitimprove.errors import MetricError
from gitimprove.loop.metrics import Extracted, _literal, extract, extract_pinned, run_metric
from gitimprove.util import lines
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project

AGENT = Path(__file__).parent / "agents" / "rule_liar.py"

# autoresearch's train.py: progress lines, then the summary block it ends with
AUTORESEARCH = """step 00950 (99.8%) | loss: 3.021445 | lrm: 0.03 | dt: 314ms | tok/sec: 1,669,245 | mfu: 39.8% | epoch: 1 | remaining: 1s
step 00953 (100.0%) | loss: 3.017722 | lrm: 0.00 | dt: 313ms | tok/sec: 1,674,128 | mfu: 39.9% | epoch: 1 | remaining: 0s
---
val_bpb:          {value}
training_seconds: 300.1
total_seconds:    325.9
peak_vram_mb:     45060.2
mfu_percent:      39.80
total_tokens_M:   499.6
num_steps:        953
num_params_M:     50.3
depth:            8
"""
HYPERFINE = """Benchmark 1: python3 bench.py
  Time (mean ± σ):      {value} ms ±   1.3 ms    [User: 38.0 ms, System: 8.1 ms]
  Range (min … max):    45.1 ms …  52.9 ms    58 runs
{warning}"""
OUTLIERS = """
  Warning: Statistical outliers were detected. Consider re-running this benchmark on a quiet system without any interferences from other programs. It might help to use the '--warmup' or '--prepare' options.
"""
PYTEST_BENCHMARK = """============================= test session starts ==============================
platform linux -- Python 3.11.9, pytest-8.3.3, pluggy-1.5.0
benchmark: 4.0.0 (defaults: timer=time.perf_counter disable_gc=False min_rounds=5 min_time=0.000005 max_time=1.0 calibrate_precision=10 warmup=False warmup_iterations=100000)
rootdir: /home/u/project
plugins: benchmark-4.0.0
collected 1 item

bench_test.py .                                                          [100%]


----------------------------------------------------- benchmark: 1 tests -----------------------------------------------------
Name (time in us)        Min       Max      Mean  StdDev    Median     IQR  Outliers  OPS (Kops/s)  Rounds  Iterations
------------------------------------------------------------------------------------------------------------------------------
test_parse           41.2080   98.1250   {value}  2.1011   42.1660  0.4170   412;907       23.5637   12037           1
------------------------------------------------------------------------------------------------------------------------------

Legend:
  Outliers: 1 Standard Deviation from Mean; 1.5 IQR (InterQuartile Range) from 1st Quartile and 3rd Quartile.
  OPS: Operations Per Second, computed as 1 / Mean
============================== 1 passed in 1.62s ===============================
"""
TIME = """        Command being timed: "python3 bench.py"
        User time (seconds): 1.21
        System time (seconds): 0.08
        Percent of CPU this job got: 99%
        Elapsed (wall clock) time (h:mm:ss or m:ss): 0:{value}
        Maximum resident set size (kbytes): 51236
        Exit status: 0
"""

CASES = [
    ("line:val_bpb", AUTORESEARCH, "0.997900", "val_bpb:          0.100000\n"),
    (r"regex:Time \(mean ± σ\):\s+([0-9.]+) ms", HYPERFINE, "48.2", "  Time (mean ± σ):  1.0 ms\n"),
    (
        r"regex:^test_parse\s+\S+\s+\S+\s+([0-9.]+)",
        PYTEST_BENCHMARK,
        "42.4380",
        "test_parse 1 1 1.0\n",
    ),
    (
        r"regex:Elapsed \(wall clock\).*: 0:([0-9.]+)$",
        TIME,
        "01.32",
        "Elapsed (wall clock): 0:00.01\n",
    ),
]


def _output(template: str, value: str, warning: str = "") -> str:
    return template.format(value=value, warning=warning)


def read_baseline(output: str, spec: str = "auto", name: str | None = None) -> Extracted:
    """Read as a run's baseline is: its form, trailer included, learnt."""
    return extract(output, spec, name, learn=True)


@pytest.mark.parametrize(("spec", "template", "value", "forged"), CASES)
def test_real_outputs_are_read_and_an_earlier_forged_line_never_wins(
    spec: str, template: str, value: str, forged: str
) -> None:
    base = read_baseline(_output(template, value), spec)
    assert base.value == float(value)
    # the code under test prints a better line before the benchmark's own: not read
    printed = _output(template, "99.5").splitlines(keepends=True)
    at = next(i for i, line in enumerate(printed) if "99.5" in line)
    before, after = "".join(printed[:at]), "".join(printed[at:])
    assert extract_pinned(before + forged + after, base.form).value == 99.5
    # ...then spoils the benchmark's own line with what it leaves on the line: the line is
    # read as it is, or a metric-error naming it; never the forged value
    for spoil in ("x", "# ", "\x1b]0;", "\x1b[2K"):
        try:
            got = extract_pinned(before + forged + spoil + after, base.form)
        except MetricError as exc:
            assert "never counts in its place" in exc.message and "99.5" in exc.message
        else:
            assert got.value == 99.5, (spec, spoil)


def test_hyperfine_warns_or_not_and_the_rule_reads_the_same_line() -> None:
    """hyperfine adds a warning after its numbers in some runs only: a varying number of
    lines after the one read is no change of format (only lines naming it count)."""
    spec = r"regex:Time \(mean ± σ\):\s+([0-9.]+) ms"
    base = read_baseline(_output(HYPERFINE, "48.2"), spec)
    assert extract_pinned(_output(HYPERFINE, "47.0", OUTLIERS), base.form).value == 47.0
    base = read_baseline(_output(HYPERFINE, "48.2", OUTLIERS), spec)
    assert extract_pinned(_output(HYPERFINE, "47.0"), base.form).value == 47.0


@pytest.mark.parametrize(
    ("spec", "spoiled"),
    [
        ("regex:^score: ([0-9.]+)$", "score: n/a"),
        ("regex:^score: ([0-9.]+)$", "score: 12 (cached)"),
        ("regex:^score: ([0-9.]+)$", "score: 1e999"),
        ("regex:score=([0-9.]+)", "#score=12"),  # the pattern matches it: 12 is read
        ("line:score", "score: n/a"),
        ("line:score", "score: 1e999"),
        ("line:score", "# score: 12"),
        ("line:score", "\x1b[2Kxscore: 12"),
        ("regex:([0-9.]+) ms", "12 ms (cached"),  # read: 12
        ("regex:([0-9.]+) ms", "took 12 msec"),
    ],
)
def test_a_spoiled_benchmark_line_is_never_replaced_by_an_earlier_one(
    spec: str, spoiled: str
) -> None:
    """The benchmark's own line no longer matches (its data, or what the code under test
    left on the line before it): the earlier line the code under test printed that does
    match never counts; the run is a metric-error naming the line."""
    honest = spoiled.replace("n/a", "12").replace("1e999", "12").split(" (")[0]
    honest = honest.lstrip("#x\x1b[2K ").replace("msec", "ms")
    base = read_baseline(f"warming up\n{honest}\n", spec)
    assert base.value == 12
    output = f"score: 1\nscore=1\n1 ms\nwarming up\n{spoiled}\n"
    try:
        got = extract_pinned(output, base.form)
    except MetricError as exc:
        assert spoiled.split()[-1] in exc.message, exc.message
    else:
        assert got.value == 12, (spec, spoiled)


@pytest.mark.parametrize(
    ("spec", "line"),
    [
        ("line:score", "score: 5"),
        ("regex:^score: ([0-9]+)", "score: 5"),
        ("regex:([0-9]+) ms", "5 ms"),
        ("line:score", "score: 5 (best score: 7)"),
    ],
)
def test_two_lines_glued_into_one_read_neither(spec: str, line: str) -> None:
    """The code under test prints its line and no line end: the benchmark's own follows on
    it (`score: 1 score: 101`). A line naming the metric more times than the baseline's line
    read is two glued: a metric-error naming it, not the first number of it."""
    base = read_baseline(f"{line}\n", spec)
    assert base.value == 5
    honest = line.replace("5", "4", 1)
    assert extract_pinned(f"{honest}\n", base.form).value == 4
    forged = line.replace("5", "1", 1)
    with pytest.raises(MetricError, match="never counts in its place"):
        extract_pinned(f"{forged} {line.replace('5', '101', 1)}\n", base.form)


@pytest.mark.parametrize("rule", ["line:score", "regex:^score: ([0-9.]+)$", "regex:score: (\\S+)"])
def test_honest_progress_lines_and_a_varying_number_of_lines(rule: str) -> None:
    """Progress lines with the same prefix before the final one, a number of them that
    changes from run to run, a `\\r` progress bar, colour, and lines after it that do not name
    it: read as the benchmark meant."""
    base = read_baseline("score: 9\nscore: 8\nscore: 7.5\ndone in 3 s\n", rule)
    assert base.form == rule  # nothing naming it follows the line read
    runs = [
        "score: 7.25\ndone in 2 s\n",
        "".join(f"score: {i}\n" for i in range(40, 1, -1)) + "score: 1.5\nbye\n\n\nok\n",
        "loading 10%\rloading 50%\rloading 100%\rscore: 6\n",
        "\x1b[32mscore: \x1b[1m6.5\x1b[0m\ndone\n",
    ]
    assert [extract_pinned(out, base.form).value for out in runs] == [7.25, 1.5, 6, 6.5]


def test_a_trailer_the_baseline_printed_is_its_format() -> None:
    """An honest benchmark printing `debug: METRIC score=4` after its own `METRIC score=…`
    line: the baseline's output pins that trailer, an honest candidate is measured, and a
    forged line not in the trailer's shape (or one that makes the benchmark's line part of
    the trailer) is refused."""
    baseline = "METRIC score=5\ndebug: METRIC score=4 (12 ms)\n"
    base = read_baseline(baseline, "auto", "score")
    assert base.value == 5 and base.form.startswith("{")
    pinned = base.form
    # honest: measured normally, progress and earlier lines of the name before it
    honest = "METRIC score=9\nMETRIC score=3\ndebug: METRIC score=2 (15 ms)\n"
    assert extract_pinned(honest, pinned, "score").value == 3
    # forged: the code under test spoils the benchmark's line into a trailer-shaped one
    forged = "METRIC score=1\ndebug: METRIC score=3\ndebug: METRIC score=2 (15 ms)\n"
    with pytest.raises(MetricError, match="'debug: METRIC score=3'"):
        extract_pinned(forged, pinned, "score")
    for other in ("x: METRIC score=1 (15 ms)", "debug: METRIC score=1", "METRIC score=1"):
        with pytest.raises(MetricError, match="not in that shape"):
            extract_pinned(f"METRIC score=3\n{other}\n", pinned, "score")
    # without the trailer in the baseline, such a line after the benchmark's is refused
    with pytest.raises(MetricError, match="is not one that can be read"):
        extract_pinned("METRIC score=3\ndebug: METRIC score=1\n", "metric:score", "score")
    # a trailer for a rule too: `best score: 7` after `score: 5`
    rule = read_baseline("score: 5\nbest score: 7\n", "line:score")
    assert rule.value == 5
    assert extract_pinned("score: 1\nscore: 4\nbest score: 4\n", rule.form).value == 4
    with pytest.raises(MetricError, match="'best score: 4'"):
        extract_pinned("score: 1\nbest score: 4\nbest score: 4\n", rule.form)


def test_a_spoiled_last_line_at_the_baseline_is_no_trailer() -> None:
    """The base's last line naming the metric holds no number: no trailer is learnt from it,
    the baseline is a metric error (with or without `metric.name`)."""
    for name in (None, "score"):
        with pytest.raises(MetricError, match="METRIC score=n/a"):
            read_baseline("METRIC score=1\nMETRIC score=n/a\n", "auto", name)
    with pytest.raises(MetricError, match="score: n/a"):
        read_baseline("score: 1\nscore: n/a\n", "regex:score: ([0-9]+)")


@pytest.mark.parametrize(
    ("output", "why"),
    [
        ('{"score": 1, "score": 999}\n', "twice"),
        ('{"a": {"score": 1, "score": 999}}\n', "twice"),
        ("took 3,14 s\n", "comma"),
        ("took 1,234 ms\n", "comma"),
        ("METRIC score=0x10\n", "not one that can be read"),
        ("METRIC score=\u0661\u0662\n", "not one that can be read"),
        ("METRIC score=+inf\n", "not a finite number"),
        ("score: +inf\n", "not a finite number"),
        ("METRIC score=1_000\n", "not one that can be read"),
    ],
)
def test_odd_numbers_are_no_guess(output: str, why: str) -> None:
    """Duplicate JSON keys, a comma inside a number, hex, other scripts' digits, infinity:
    a metric error saying why, never one of the readings."""
    spec = "line:score" if output.startswith("score:") else "auto"
    name = None if "{" in output or "took" in output else "score"
    if '"a"' in output:
        spec = "json:a.score"
    with pytest.raises(MetricError, match=why):
        extract(output, spec, name)


def test_underscores_read_as_python_writes_them() -> None:
    """`f"{x:_}"` prints `1_000`: a `line:` rule reads it as Python does."""
    assert extract("score: 1_000\n", "line:score").value == 1000


def test_output_on_standard_error_alone_is_named(tmp_path: Path) -> None:
    """Only standard output is read (a forged line on stderr never counts); a benchmark that
    prints its number on stderr alone is told where it went."""
    code = "import sys; sys.stderr.write('METRIC score=3\\n')"
    got = run_metric(([sys.executable, "-c", code], False), tmp_path, timeout=30)
    assert got.status == "metric-error" and got.error is not None
    assert "2>&1" in got.error
    both = "import sys; sys.stderr.write('METRIC score=1\\n'); print('METRIC score=3')"
    got = run_metric(([sys.executable, "-c", both], False), tmp_path, timeout=30)
    assert (got.status, got.value) == ("ok", 3)


BENCH = """import sys
sys.path.insert(0, "src")
import work
value = open("src/value.txt").read().strip()
for step in range(int(open("src/steps.txt").read())):
    print(LINE.format(100 + step) + " (step {})".format(step))
work.main()
print(LINE.format(value))
print("debug: " + LINE.format(value))
print("done")
"""
LINES = {"line": "score: {}", "metric": "METRIC score={}"}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["line", "metric"])
def test_forged_lines_never_outrank_the_benchmarks_own(tmp_repo: TmpRepo, kind: str) -> None:
    """A benchmark printing progress lines naming the metric (more of them in the honest
    candidate) and a trailer line naming it after its own, read by a `line:` rule or as
    `METRIC` lines: the honest candidate is measured and kept; a forged line before the
    benchmark's never counts, and one that spoils the benchmark's line (or makes it look like
    its trailer) makes the attempt a metric-error, never kept."""
    plan = tmp_repo.path.parent / "how.txt"
    bench = f"LINE = {LINES[kind]!r}\n" + BENCH
    value_project(
        tmp_repo,
        f"{sys.executable} {AGENT} {plan}",
        bench,
        {"src/work.py": "def main():\n    pass\n", "src/steps.txt": "3\n"},
    )
    if kind == "line":
        toml = (tmp_repo.path / ".gitimprove.toml").read_text()
        toml = toml.replace("[metric]\n", '[metric]\nextract = "line:score"\n')
        tmp_repo.commit("read by a line: rule", {".gitimprove.toml": toml})
    expected = {"honest": "keep", "earlier": "discard", "spoil": "metric-error"}
    expected |= {"trailer": "metric-error", "na": "metric-error", "sameline": "metric-error"}
    got = {}
    for i, how in enumerate(expected):
        plan.write_text(f"{kind} {how}")
        res = tmp_repo.cli("run", "--run", f"r{i}", "-n", "1", "--json")
        assert res.returncode == 0, (how, res.stderr)
        rows = run_rows(tmp_repo, f"r{i}")
        assert len(rows) == 2, (how, rows)
        assert "debug" in rows[0]["extraction"], rows[0]  # the trailer is pinned
        got[how] = rows[1]["status"]
        if how == "earlier":
            assert rows[1]["metric"]["value"] == 101, rows[1]
    assert got == expected


def test_a_pattern_with_no_plain_text_reads_its_last_matching_line() -> None:
    """`regex:([0-9.]+)` names no text: lines it does not match are no lines of it (an honest
    `done` after the number is no spoiled line), the last line it matches is read."""
    base = read_baseline("12.5\ndone\n", "regex:([0-9.]+)")
    assert (base.value, base.form) == (12.5, "regex:([0-9.]+)")
    assert extract_pinned("1\n9.5\nall done\n", base.form).value == 9.5


def test_a_trailer_too_long_to_pin_is_said_at_the_baseline() -> None:
    output = "METRIC score=5\n" + "".join(f"note: METRIC score={i}\n" for i in range(25))
    with pytest.raises(MetricError, match="25 lines naming `METRIC score` follow"):
        read_baseline(output, "auto", "score")


def test_another_name_or_kind_than_the_pinned_one_is_a_changed_format() -> None:
    """The trailer pinned for one form never applies to another: the message says what
    changed."""
    base = read_baseline("METRIC score=5\ndebug: METRIC score=4\n", "auto", "score")
    for other in ("METRIC other=1\n", "took 3 s\n", '{"score": 1}\n'):
        with pytest.raises(MetricError, match="changed format"):
            extract_pinned(other, base.form, "score")
    base = read_baseline("took 3.5 s\ndone v2\n")
    for name in (None, "score"):
        with pytest.raises(MetricError, match="changed format"):
            extract_pinned("METRIC score=1\n", base.form, name)


def test_a_json_rule_learns_its_trailer_too() -> None:
    """`json:score` with a later JSON line naming `"score"` deeper (its debug record): the
    baseline pins it; an honest run is read, a spoiled benchmark line is refused."""
    base = read_baseline('{"score": 5}\n{"debug": {"score": 4}}\n', "json:score")
    assert base.value == 5
    honest = '{"score": 1}\n{"score": 3}\n{"debug": {"score": 9}}\n'
    assert extract_pinned(honest, base.form).value == 3
    with pytest.raises(MetricError, match="never counts in its place"):
        extract_pinned('{"score": 1}\n# {"score": 3}\n{"debug": {"score": 9}}\n', base.form)
    with pytest.raises(MetricError, match="never counts in its place"):
        extract_pinned('{"score": 1}\n{"score": 3}\n{"debug": {"score": 9}} x\n', base.form)


@pytest.mark.parametrize(
    "text",
    ["", "a", "a\n", "\n", "a\r\nb", "a\n\rb", "a\r\rb\r\n", "\r\n\r\n", "x\ny\rz\r\n\n", "\r"],
)
def test_lines_from_the_end_are_the_lines_last_first(text: str) -> None:
    """The reader of the last lines splits as `raw_lines` does (\\r\\n one line end)."""
    assert list(lines.lines_from_end(text)) == lines.raw_lines(text)[::-1]


def test_a_long_output_is_read_from_its_end() -> None:
    """A line rule on 700,000 lines of forged progress reads the benchmark's last line in far
    less time than a split of the whole output would take (it was 115 ms, 1 ms now)."""
    output = "score: 1\n" * 700_000 + "score: 5\n"
    start = time.monotonic()
    assert extract_pinned(output, "line:score").value == 5
    assert time.monotonic() - start < 2


def test_a_line_naming_it_fewer_times_is_read() -> None:
    """A time printed in `µs` when short: ` ms` is on the line fewer times than in the
    baseline's, which no glued line does (gluing adds one)."""
    spec = "regex:took ([0-9.]+) ms"
    base = read_baseline("took 48.2 ms (user 38.0 ms, sys 8.1 ms)\n", spec)
    assert base.value == 48.2
    fewer = "took 47.0 ms (user 38.0 ms, sys 812.1 µs)\n"
    assert extract_pinned(fewer, base.form).value == 47.0
    spec = "regex:([0-9.]+) ms"
    base = read_baseline("took 48.2 ms (user 38.0 ms, sys 8.1 ms)\n", spec)
    assert extract_pinned(fewer, base.form).value == 38.0  # the pattern's last match
    with pytest.raises(MetricError, match="never counts in its place"):
        extract_pinned("1 ms took 47.0 ms (user 38.0 ms, sys 8.1 ms)\n", base.form)


@pytest.mark.parametrize(
    ("pattern", "literal"),
    [
        (r"^score: ([0-9]+)$", "score: "),
        (r"([0-9.]+) ms", " ms"),
        (r"(?i)Time \(mean ± σ\):\s+([0-9.]+)", "Time (mean ± σ):"),
        (r"scores?: ([0-9]+)", "score"),
        (r"x{2}yz ([0-9])", "yz "),
        (r"[a-z]+ = ([0-9]+)", " = "),
        (r"(?:abc)?de:([0-9])", "de:"),
        (r"(\(x\))ab ([0-9])", "ab "),
        (r"([(])ab ([0-9])", "ab "),
        (r"[]x] ([0-9])", ""),
        (r"a|b([0-9])", ""),
        (r"(?x) score : ([0-9])", ""),
        (r"([0-9.]+)", ""),
    ],
)
def test_the_text_a_pattern_needs(pattern: str, literal: str) -> None:
    """What names a `regex:` rule's line: plain characters outside any group, unquantified;
    none from a pattern with `|`, in verbose mode, or of blanks alone."""
    assert _literal(pattern) == literal


@pytest.mark.parametrize("baseline", ["3.5\n", "took 3.5 s\n", "3.5 ms\n"])
def test_a_last_number_glued_into_no_number_is_never_the_earlier_one(baseline: str) -> None:
    """With no METRIC line and no JSON (the last number printed), the code under test prints
    a better number and leaves `x` (or `_`) on the line the benchmark's own number then
    follows: `x3.5` holds no number, and the earlier `0.1` was read. The last line holding a
    digit is the benchmark's: it must hold a number. (`0.` left there makes `0.4` of `4`: a
    number starting its line cannot be told from one lengthened in front, docs/integrity.md.)"""
    base = read_baseline(baseline, "auto")
    assert base.value == 3.5
    assert extract_pinned("0.1\n" + baseline.replace("3.5", "4"), base.form).value == 4
    for glue in ("x", "_", "v"):
        spoiled = "0.1\n" + glue + baseline.replace("3.5", "4")
        try:
            got = extract_pinned(spoiled, base.form)
        except MetricError as exc:
            assert "never counts in its place" in exc.message
        else:
            assert got.value == 4, (baseline, glue)


def test_lines_holding_digits_after_the_last_number_are_its_trailer() -> None:
    """`done v2` after the number holds a digit and no number: the baseline pins it; an honest
    run with it is read, one without a digit there (or another shape) is not the format."""
    base = read_baseline("took 3.5 s\ndone v2\n")
    assert base.value == 3.5
    assert extract_pinned("took 0.1 s\ntook 4 s\ndone v3\n", base.form).value == 4
    with pytest.raises(MetricError, match="never counts in its place"):
        extract_pinned("took 0.1 s\nx4 s\ndone v2\n", base.form)


@pytest.mark.parametrize(
    "output",
    [
        "METRIC score=1\n# METRIC score=101\n",
        "METRIC score=5\ndebug: METRIC score=4\n",
        "score: 1\n# score: 101\n",
        "took 0.1 s\nx101 s\n",
    ],
)
def test_outside_a_run_nothing_may_follow_the_line_read(output: str) -> None:
    """`git improve measure` pins nothing between its runs: a later line naming the metric
    is a spoiled benchmark line as much as a trailer, and a line never counts in its place;
    only a baseline (the unchanged code) learns a trailer."""
    spec = "line:score" if "score:" in output else "auto"
    with pytest.raises(MetricError, match="never counts in its place"):
        extract(output, spec, "score" if "METRIC" in output else None)
    if "debug" in output:
        assert read_baseline(output, spec, "score").value == 5
