"""Import and export of results files in shapes real projects write, where the real file
cannot be redistributed (its shape is reproduced here, its content is ours): Karpathy forks
that put text columns before the metric and log aborted runs as zeros, files that never state
their direction, a row still in progress, runs of different metrics exported together."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitimprove.errors import ImportFormatError
from gitimprove.state.imports import import_file, parse_text
from tests.conftest import TmpRepo, log_rows

# The shape of Chang-Han-Chen/autoresearch-moe's results.tsv (not redistributable): text
# columns between `commit` and the metric, a delta column, runs aborted before validation
# logged as `0.000000 0.000000 0.0 discard`.
MOE_SHAPE = (
    "commit\tkind\tthread\tval_bpb\tdelta_vs_best\tmemory_gb\tstatus\thypothesis\t"
    "expected_result\tinterpretation\tagrees_with_hypothesis\tnext_hypothesis\tdescription"
)
MOE_ROWS = [
    "a1a1a1a baseline plain 0.9641 0.0000 29.9 keep h e first-run partial n stripped backbone",
    "b2b2b2b lr plain 0.9549 -0.0092 29.9 keep h e lower-lr-helped yes n lr 0.003",
    "c3c3c3c lr plain 1.0307 0.0758 29.9 discard h e too-slow no n lr 0.001",
    "d4d4d4d arch gate 0.000000 0.000000 0.0 discard h e Aborted_before_validation no n gate",
    "e5e5e5e arch depth 0.000000 0.000000 0.0 discard h e stopped_by_hand no n depth scaling",
    "f6f6f6f arch experts 0.9512 -0.0037 30.1 keep h e small-win yes n finer experts",
]


def moe_file(rows: list[str] = MOE_ROWS) -> str:
    lines = [MOE_SHAPE] + [
        "\t".join(c.replace("_", " ") if i == 9 else c for i, c in enumerate(r.split()))
        for r in rows
    ]
    return "\n".join(lines) + "\n"


def test_the_metric_column_is_one_that_holds_numbers() -> None:
    """`kind` sits right after `commit` but holds words: the metric is `val_bpb`, the one
    column of numbers that is no delta (`delta_vs_best`) and no known extra (`memory_gb`)."""
    parsed = parse_text(moe_file(), "results.tsv", name="results.tsv")
    assert parsed.metric_name == "val_bpb"
    assert [r.fields["metric"]["value"] for r in parsed.rows][:3] == [0.9641, 0.9549, 1.0307]
    assert parsed.rows[0].fields["extra"]["kind"] == "baseline"
    assert parsed.rows[1].fields["source"]["delta"] == "-0.0092"  # the file's own, verbatim


def test_a_text_column_named_as_the_metric_is_refused_with_the_line() -> None:
    with pytest.raises(ImportFormatError, match=r"results.tsv:2: column 'kind' holds 'baseline'"):
        parse_text(moe_file(), "results.tsv", name="results.tsv", metric_column="kind")


def test_several_columns_of_numbers_are_listed_with_the_option(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """Two plain numeric columns and no `metric`: the user chooses; the listing names only
    columns of numbers (not `notes`, not the delta)."""
    tmp_repo.commit("initial")
    path = tmp_path / "results.tsv"
    path.write_text(
        "run\tnotes\tscore\tlatency_ms\tdelta\tstatus\n"
        "r1\tbase\t0.61\t120\t0\tkeep\n"
        "r2\ttry\t0.64\t131\t+0.03\tkeep\n"
    )
    res = tmp_repo.cli("import", str(path))
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert "could be the metric: score, latency_ms" in res.stderr
    assert "--metric-column score" in res.stderr
    ok = tmp_repo.cli("import", "--metric-column", "latency_ms", str(path))
    assert ok.returncode == 0, ok.stderr
    assert "2 rows" in ok.stdout and "its kept rows show higher is better" in ok.stdout


def test_zeros_that_mean_not_measured_are_no_value() -> None:
    """Aborted runs (`0.000000 … 0.0 discard`) have no value, whether the row's words say so
    or every number of the row is 0 in a file whose kept rows never are; their memory 0.0
    is dropped too. Kept rows and real numbers stay."""
    parsed = parse_text(moe_file(), "results.tsv", name="results.tsv")
    values = [r.fields["metric"]["value"] for r in parsed.rows]
    assert values == [0.9641, 0.9549, 1.0307, None, None, 0.9512]
    assert "metrics" not in parsed.rows[3].fields
    assert parsed.rows[2].fields["metrics"] == {"memory_gb": 29.9}
    assert (parsed.direction, parsed.direction_from) == ("lower", "inferred")


@pytest.mark.parametrize(
    ("row", "value"),
    [
        ("9\t0.0\t12.5\tdiscard\tOOM at step 300", None),  # words, memory not zero
        ("9\t0.0\t12.5\tdiscard\ttried a smaller batch", 0.0),  # a measured 0: kept
        ("9\t0.0\t0.0\tdiscard\ttried a smaller batch", None),  # all zero, kept rows never 0
        ("9\t0.0\t12.5\tkeep\ttimed out but kept", 0.0),  # a keep was measured
    ],
)
def test_a_zero_is_no_value_only_when_the_file_says_so(row: str, value: float | None) -> None:
    text = (
        "commit\tval_bpb\tmemory_gb\tstatus\tdescription\n"
        "1\t1.10\t44.0\tkeep\tbaseline\n"
        "2\t1.05\t44.2\tkeep\tlower lr\n" + row + "\n"
    )
    parsed = parse_text(text, "r.tsv", name="r.tsv")
    assert parsed.rows[-1].fields["metric"]["value"] == value


@pytest.mark.parametrize(
    ("rows", "direction"),
    [
        # keeps disagree one against one: unknown, whatever the discards say
        (["0 a 10 0 baseline", "1 b 12 +2 keep", "2 c 9 -1 keep", "3 - 20 +8 discard"], None),
        # no keep at all: the discards' changes (worse each time) say which way is better
        (["0 a 10 0 baseline", "1 - 12 +2 discard", "2 - 13 +3 discard"], "lower"),
        # a keep that lost a little (simpler code) does not outvote four that gained
        (
            [
                "0 a 10 0 baseline",
                "1 b 9 -1 keep",
                "2 c 8 -1 keep",
                "3 d 8.2 +0.2 keep",
                "4 e 7 -1 keep",
                "5 f 6 -1 keep",
            ],
            "lower",
        ),
        (["0 a 10 0 baseline"], None),  # one row: nothing to tell from
    ],
)
def test_direction_is_inferred_only_when_the_rows_agree(
    rows: list[str], direction: str | None
) -> None:
    text = "iteration\tcommit\tmetric\tdelta\tstatus\n"
    text += "".join("\t".join(r.split()) + "\n" for r in rows)
    parsed = parse_text(text, "r.tsv", name="r.tsv")
    assert parsed.direction == direction
    for row in parsed.rows:
        assert row.fields["metric"].get("direction") == direction


def test_an_unknown_direction_is_never_written(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    """The export has no direction line and keeps the file's own deltas."""
    tmp_repo.commit("initial")
    path = tmp_path / "autoresearch-results.tsv"
    text = (
        "iteration\tcommit\tmetric\tdelta\tstatus\tdescription\n"
        "0\t-\t10.0\t0.0\tbaseline\tstart\n"
        "1\t-\t12.0\t+2.0\tkeep\tone way\n"
        "2\t-\t9.5\t-2.5\tkeep\tthe other\n"
    )
    path.write_text(text)
    said = tmp_repo.cli("import", str(path))
    assert said.returncode == 0 and "no direction is recorded" in said.stdout
    res = tmp_repo.cli("log", "--format", "tsv6")
    assert res.returncode == 0, res.stderr
    assert res.stdout == text
    table = tmp_repo.cli("log")
    assert table.returncode == 0 and "-2.5" in table.stdout


PENDING = "iteration\tcommit\tmetric\tdelta\tdecision\tnote\n0\t-\t0.00047\tbaseline\tkeep\tstart\n"


def test_a_row_in_progress_is_a_pending_row_and_its_result_replaces_it(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """`pending pending pending` (the last row while a run measures) imports as a pending
    row; the next snapshot of the file, where that row is measured, shows the measured row
    in its place, once."""
    tmp_repo.commit("initial")
    path = tmp_path / "autoresearch-results.tsv"
    path.write_text(PENDING + "1\t-\tpending\tpending\tpending\tthreshold=100\n")
    first = import_file(tmp_repo.open(), path)
    assert first.rows == 2
    rows = log_rows(tmp_repo)
    assert [(r["status"], r["metric"]["value"]) for r in rows] == [
        ("keep", 0.00047),
        ("pending", None),
    ]
    assert tmp_repo.cli("log", "--format", "tsv").stdout.count("threshold=100") == 0
    path.write_text(PENDING + "1\t-\t0.00071\t+0.00024\tkeep\tthreshold=100\n")
    second = import_file(tmp_repo.open(), path)
    assert (second.already, second.kept_aside) == (1, 1)
    rows = log_rows(tmp_repo)
    assert [(r["status"], r["metric"]["value"]) for r in rows] == [
        ("keep", 0.00047),
        ("keep", 0.00071),
    ]
    assert len({r["run"] for r in rows}) == 1


def _plugin_file(path: Path, direction: str, values: list[float]) -> Path:
    lines = [f"# metric_direction: {direction}_is_better"]
    lines.append("iteration\tcommit\tmetric\tdelta\tstatus\tdescription")
    for i, v in enumerate(values):
        lines.append(f"{i}\t-\t{v}\t0.0\t{'baseline' if i == 0 else 'keep'}\tstep {i}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_export_of_runs_with_different_directions_is_refused(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """A results TSV has one direction line: runs that agree export together; once a run
    that differs is among the rows, the export is refused, naming the runs and suggesting
    --run; one run at a time works."""
    tmp_repo.commit("initial")
    repo = tmp_repo.open()
    for sub in ("a", "b", "c"):
        (tmp_path / sub).mkdir()
    low = import_file(repo, _plugin_file(tmp_path / "a" / "results.tsv", "lower", [5, 4]))
    import_file(repo, _plugin_file(tmp_path / "c" / "results.tsv", "lower", [9, 8]))
    both = tmp_repo.cli("log", "--format", "tsv")
    assert both.returncode == 0, both.stderr
    assert both.stdout.count("# metric_direction: lower_is_better") == 1
    high = import_file(repo, _plugin_file(tmp_path / "b" / "coverage.tsv", "higher", [80, 85]))
    res = tmp_repo.cli("log", "--format", "tsv")
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert low.runs[0] in res.stderr and high.runs[0] in res.stderr
    assert "lower is better" in res.stderr and "higher is better" in res.stderr
    assert "--run" in res.stderr and res.stdout == ""
    one = tmp_repo.cli("log", "--format", "tsv", "--run", high.runs[0])
    assert one.returncode == 0, one.stderr
    assert one.stdout.startswith("# metric_direction: higher_is_better\n")
    assert "step 1" in one.stdout and one.stdout.count("\n") == 4
    assert tmp_repo.cli("log", "--format", "karpathy").returncode == 0  # one metric name


def test_status_and_plot_see_imported_runs(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    """An imported run has no run markers: `status` and `plot` know it by its records, as
    `log --run` does; with no loop run it is the default; a file that does not say which
    way is better gets no best."""
    import importlib.util

    from gitimprove.errors import GitImproveError
    from gitimprove.loop.report import plot_points, run_report

    tmp_repo.commit("initial")
    repo = tmp_repo.open()
    moe = tmp_path / "results.tsv"
    moe.write_text(moe_file())
    run = import_file(repo, moe).runs[0]
    res = tmp_repo.cli("status", "--run", run)
    assert res.returncode == 0, res.stderr
    assert f"run {run}: imported" in res.stdout
    assert "best 0.9512 at f6f6f6f, baseline 0.9641" in res.stdout
    assert "lower is better" in res.stdout and "5 attempts, 2 kept" in res.stdout
    report = run_report(repo)
    assert report.run == run  # the only run: the default
    points = plot_points(report)
    assert points.xs == [0, 1, 2, 5]  # the two aborted runs have no value to plot
    assert points.best_y == [0.9641, 0.9549, 0.9549, 0.9512]
    out = tmp_path / "run.png"
    shown = tmp_repo.cli("plot", "-o", str(out), "--run", run)
    if importlib.util.find_spec("matplotlib") is None:
        assert shown.returncode == 1 and "plotting needs matplotlib" in shown.stderr
    else:
        assert shown.returncode == 0 and out.read_bytes()[:4] == b"\x89PNG"
    unknown = tmp_path / "u" / "autoresearch-results.tsv"
    unknown.parent.mkdir()
    unknown.write_text(
        "iteration\tcommit\tmetric\tdelta\tstatus\tdescription\n"
        "0\t-\t10.0\t0.0\tbaseline\tstart\n1\t-\t12.0\t+2.0\tkeep\tup\n2\t-\t9.5\t-2.5\tkeep\tdown\n"
    )
    other = run_report(repo, import_file(repo, unknown).runs[0])
    assert (other.direction, other.best, other.baseline) == (None, None, 10.0)
    assert other.kept_line == [10.0, 12.0, 9.5] and len(other.attempts) == 2
    assert plot_points(other).best_x == []
    with pytest.raises(GitImproveError) as missing:
        run_report(repo, "nope")
    assert run in str(missing.value) and other.run in str(missing.value)
