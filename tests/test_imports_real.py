"""`git improve import` on real result files (tests/fixtures/imports, see its README)."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from gitimprove.state.import_formats import map_status
from gitimprove.state.imports import import_file, parse_file, run_name
from tests.conftest import TmpRepo, fast_commits, log_rows

FIXTURES = Path(__file__).parent / "fixtures" / "imports"


# (file, --metric-column, rows, statuses, rows per run, direction (how known), why)
CASES = [
    (
        "autoresearch-plugin/v1-example.tsv",
        None,
        6,
        {"baseline": 1, "keep": 3, "discard": 1, "crash": 1},
        [6],
        ("higher", "inferred"),
        "plugin v1 (6 columns), upstream example unchanged: no direction line, the kept rows'"
        " deltas (+1.9, +1.2, +0.7) say higher; reverted rows carry `-` as their commit",
    ),
    (
        "autoresearch-plugin/v2-guard-example.tsv",
        None,
        7,
        {"baseline": 1, "keep": 3, "discard": 2, "crash": 1},
        [7],
        ("higher", "inferred"),
        "plugin v2 (`guard` column): a guard-failed discard (+1.8, better) does not outvote the keeps",
    ),
    (
        "autoresearch-plugin/v3-log-iteration.tsv",
        None,
        6,
        {"keep": 1, "discard": 1, "crash": 1, "no-op": 1, "hook-blocked": 1, "metric-error": 1},
        [6],
        ("higher", "file"),
        "every status of the 7-column era, `hook-blocked` kept verbatim",
    ),
    (
        "autoresearch-plugin/v4-guard-metric-example.tsv",
        None,
        7,
        {"baseline": 1, "keep": 3, "discard": 2, "crash": 1},
        [7],
        ("higher", "inferred"),
        "plugin v4 (`guard-metric` column)",
    ),
    (
        "autoresearch-plugin/v4-metric-valued-guard-example.tsv",
        None,
        4,
        {"baseline": 1, "keep": 2, "discard": 1},
        [4],
        ("higher", "inferred"),
        "metric-valued guard: guard-metric numbers kept",
    ),
    (
        "autoresearch-plugin/v4-log-iteration.tsv",
        None,
        6,
        {"keep": 1, "discard": 1, "crash": 1, "no-op": 1, "hook-blocked": 1, "metric-error": 1},
        [6],
        ("higher", "file"),
        "every status of the 8-column era",
    ),
    (
        "karpathy/program-example.tsv",
        None,
        4,
        {"keep": 2, "discard": 1, "crash": 1},
        [4],
        ("lower", "inferred"),
        "Karpathy's example: crash logged as 0.000000, commit `d4e5f6g`; the keep lowered val_bpb",
    ),
    (
        "geche/autoresearch-results.tsv",
        None,
        8,
        {"baseline": 1, "keep": 5, "discard": 2},
        [8],
        ("lower", "inferred"),
        "columns in another order (status before guard), baseline commit `-`",
    ),
    (
        "opencli/autoresearch-results.tsv",
        None,
        5,
        {"baseline": 1, "keep": 2, "no-op": 2},
        [5],
        ("higher", "file"),
        "four extra `#` lines (goal, scope, verify, guard) are skipped; `+0` deltas",
    ),
    (
        "nudge/autoresearch-results.tsv",
        None,
        113,
        {"baseline": 5, "discard": 42, "keep": 66},
        [113],
        ("lower", "inferred"),
        "no commit column, `result` instead of status, labels like `7b` and `motion_baseline`",
    ),
    (
        "parameter-golf/autoresearch-results.tsv",
        "val_bpb",
        65,
        {"baseline": 1, "discard": 39, "keep": 24, "FINAL": 1},
        [65],
        ("lower", "inferred"),
        "two numeric columns (metric named by --metric-column), `FAILED` metric, `reverted_worse`, `KEPT`",
    ),
    (
        "parameter-golf/results-snapshot-2.tsv",
        None,
        59,
        {"keep": 31, "discard": 26, "crash": 2},
        [59],
        ("lower", "inferred"),
        "Karpathy fork: extra numeric and text columns, `nocommit`, one commit on two rows",
    ),
    (
        "parameter-golf/wavelet-results.tsv",
        None,
        11,
        {"keep": 4, "crash": 3, "discard": 4},
        [11],
        ("lower", "inferred"),
        "Karpathy fork, crashes at 0.000000; two keeps of three went down, and the kept line did",
    ),
    (
        "parameter-golf/5l-mlp4x-results.tsv",
        None,
        15,
        {"discard": 12, "keep": 3},
        [15],
        ("lower", "inferred"),
        "Karpathy fork with three extra numeric columns",
    ),
    (
        "agentmem/autoresearch-results.tsv",
        None,
        4,
        {"keep": 3, "discard": 1},
        [4],
        ("higher", "inferred"),
        "`metric_before`/`metric_after` (the metric is the after), `—` is no value, commits"
        " `baseline` and `reverted`",
    ),
    (
        "dezess/autoresearch-results.tsv",
        None,
        62,
        {"keep": 22, "discard": 39, "pending": 1},
        [62],
        ("higher", "inferred"),
        "no direction line, a text column named `direction`, a last row still `pending`",
    ),
    (
        "liquid/autoresearch.jsonl",
        None,
        29,
        {"keep": 10, "discard": 16, "crash": 3},
        [29],
        ("lower", "file"),
        "pi: 29 rows on 12 commits, crashes logged with metric 0",
    ),
    (
        "parameter-golf/autoresearch.jsonl",
        None,
        10,
        {"keep": 10},
        [1, 2, 1, 6],
        ("lower", "file"),
        "pi: six config lines; rows name segments 0, 3, 4, 5 (pi counts every config after"
        " the first result)",
    ),
    (
        "trekoon/autoresearch.jsonl",
        None,
        43,
        {"keep": 40, "crash": 1, "discard": 2},
        [9, 34],
        ("lower", "file"),
        "pi: two segments, asi on every row, commit `failed`",
    ),
]


@pytest.mark.parametrize(("name", "column", "count", "statuses", "runs", "direction", "why"), CASES)
def test_every_real_file_parses_whole(
    name: str,
    column: str | None,
    count: int,
    statuses: dict[str, int],
    runs: list[int],
    direction: tuple[str, str],
    why: str,
) -> None:
    parsed = parse_file(FIXTURES / name, metric_column=column)
    assert len(parsed.rows) == count, why
    assert dict(Counter(r.fields["status"] for r in parsed.rows)) == statuses, why
    assert list(Counter(run_name(parsed, r) for r in parsed.rows).values()) == runs, why
    assert (parsed.direction, parsed.direction_from) == direction, why
    assert {r.fields["metric"].get("direction") for r in parsed.rows} == {direction[0]}
    assert [r.fields["source"]["row"] for r in parsed.rows] == list(range(count))
    assert len({r.fields["import_id"] for r in parsed.rows}) == count


def _rows(repo: TmpRepo) -> list[dict]:  # type: ignore[type-arg]
    return log_rows(repo)


@pytest.mark.parametrize(
    ("name", "column"),
    [
        ("autoresearch-plugin/v2-guard-example.tsv", None),
        ("parameter-golf/autoresearch-results.tsv", "val_bpb"),
        ("dezess/autoresearch-results.tsv", None),
        ("trekoon/autoresearch.jsonl", None),
    ],
)
def test_real_files_import_whole_and_idempotently(
    tmp_repo: TmpRepo, name: str, column: str | None
) -> None:
    """One file per format and era: every row lands once, in file order; a second import
    adds nothing and writes nothing."""
    tmp_repo.commit("initial")
    repo = tmp_repo.open()
    count = len(parse_file(FIXTURES / name, metric_column=column).rows)
    report = import_file(repo, FIXTURES / name, metric_column=column)
    assert report.as_notes + report.kept_aside == report.rows == count
    rows = _rows(tmp_repo)
    assert len(rows) == count
    assert all(r["source"]["file"] == Path(name).name for r in rows)
    assert [r["source"]["row"] for r in rows if r["run"] == rows[0]["run"]][:3] == [0, 1, 2]
    memory = tmp_repo.git("rev-parse", "improve/memory")
    again = import_file(repo, FIXTURES / name, metric_column=column)
    assert (again.as_notes, again.kept_aside, again.already) == (0, 0, count)
    assert tmp_repo.git("rev-parse", "improve/memory") == memory
    assert len(_rows(tmp_repo)) == count


def test_plugin_statuses_are_mapped_and_kept_verbatim(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("initial")
    import_file(
        tmp_repo.open(),
        FIXTURES / "parameter-golf/autoresearch-results.tsv",
        metric_column="val_bpb",
    )
    rows = _rows(tmp_repo)
    by_label = {r["label"]: r for r in rows}
    assert by_label["exp1_12layers"]["status"] == "discard"
    assert by_label["exp1_12layers"]["source"]["status"] == "reverted_worse"
    assert by_label["exp3_warmdown200"]["source"]["status"] == "KEPT"
    assert by_label["final_600s"]["status"] == "FINAL"  # unknown: kept verbatim
    failed = by_label["exp14_dim576"]  # `FAILED` in the metric column: no value, not garbage
    assert failed["metric"]["value"] is None and failed["status"] == "discard"
    assert by_label["exp1_12layers"]["metrics"] == {"compressed_bytes": 11401231}
    assert by_label["exp1_12layers"]["timestamp"] == "2026-03-19T00:59:39-04:00"


def test_ambiguous_metric_lists_numeric_columns(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("initial")
    res = tmp_repo.cli("import", str(FIXTURES / "parameter-golf/autoresearch-results.tsv"))
    assert res.returncode == 1
    assert "val_bpb, compressed_bytes" in res.stderr and "--metric-column" in res.stderr
    ok = tmp_repo.cli(
        "import",
        "--metric-column",
        "compressed_bytes",
        str(FIXTURES / "parameter-golf/autoresearch-results.tsv"),
    )
    assert ok.returncode == 0, ok.stderr
    assert _rows(tmp_repo)[0]["metric"] == {
        "name": "compressed_bytes",
        "value": 9481027,
        "samples": [9481027],
    }
    missing = tmp_repo.cli(
        "import", "--metric-column", "nope", str(FIXTURES / "geche/autoresearch-results.tsv")
    )
    assert missing.returncode == 1 and "no column named 'nope'" in missing.stderr


def test_commit_less_rows_and_crash_values(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("initial")
    import_file(tmp_repo.open(), FIXTURES / "autoresearch-plugin/v2-guard-example.tsv")
    rows = _rows(tmp_repo)
    reverted = [r for r in rows if r["commit"] == "" and "commit" not in r["source"]]
    assert [r["iteration"] for r in reverted] == [2, 3, 4]  # `-`: commit-less, not an error
    assert rows[6]["commit"] == "" and rows[6]["source"]["commit"] == "d4e5f6g"
    crash = rows[3]
    assert crash["status"] == "crash" and crash["metric"]["value"] is None  # 0.0 is no result
    assert rows[4]["guard"] == {"status": "fail"} and rows[4]["status"] == "discard"
    assert rows[1]["commit"] == "b2c3d4e" and rows[1]["gone"] is True


def test_rows_sharing_a_commit_stay_separate_records(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    """pi logs every discard on the commit it started from: 29 rows on 12 commits."""
    tmp_repo.commit("initial")
    text = (FIXTURES / "liquid/autoresearch.jsonl").read_text()
    upstream = list(dict.fromkeys(re.findall(r'"commit":"([0-9a-f]{7})"', text)))
    ours = fast_commits(tmp_repo, len(upstream), "pi")
    for old, new in zip(upstream, ours, strict=True):
        text = text.replace(f'"commit":"{old}"', f'"commit":"{new[:7]}"')
    path = tmp_path / "autoresearch.jsonl"
    path.write_text(text)
    report = import_file(tmp_repo.open(), path)
    assert (report.rows, report.as_notes, report.kept_aside) == (29, 29, 0)
    rows = _rows(tmp_repo)
    assert len(rows) == 29
    first = rows[0]
    assert (first["status"], first["metric"]["value"], first["commit"]) == ("keep", 3818, ours[0])
    assert [r["metric"]["value"] for r in rows[:12] if r["commit"] == ours[0]][-1] == 4150
    assert rows[4]["status"] == "crash" and rows[4]["metric"]["value"] is None
    assert "metrics" not in rows[4]  # its secondary metrics were zeros too
    # the loop never sees imported rows as its own experiments
    from gitimprove.state import experiments

    assert experiments.all_experiments(tmp_repo.open()) == []
    again = import_file(tmp_repo.open(), path)
    assert again.already == 29 and len(_rows(tmp_repo)) == 29


@pytest.mark.parametrize(
    ("first", "second", "before", "after"),
    [
        ("parameter-golf/results-snapshot-1.tsv", "parameter-golf/results-snapshot-2.tsv", 44, 59),
        ("liquid/autoresearch-snapshot-13.jsonl", "liquid/autoresearch.jsonl", 12, 29),
    ],
)
def test_snapshots_of_a_growing_file_land_in_one_run(
    tmp_repo: TmpRepo, tmp_path: Path, first: str, second: str, before: int, after: int
) -> None:
    tmp_repo.commit("initial")
    target = tmp_path / ("results.tsv" if first.endswith(".tsv") else "autoresearch.jsonl")
    shutil.copy(FIXTURES / first, target)
    one = import_file(tmp_repo.open(), target)
    shutil.copy(FIXTURES / second, target)
    two = import_file(tmp_repo.open(), target)
    assert (one.rows, two.already, two.kept_aside + two.as_notes) == (
        before,
        before,
        after - before,
    )
    assert one.runs == two.runs
    rows = _rows(tmp_repo)
    assert len(rows) == after and {r["run"] for r in rows} == set(one.runs)


PI_HOOKS = """\
{"type":"config","name":"speed","metricName":"total_ms","metricUnit":"ms","bestDirection":"lower"}
{"run":1,"commit":"{A}","metric":1620,"metrics":{},"status":"keep","description":"baseline","timestamp":1777278226000,"segment":0,"confidence":null}
{"type":"hook","stage":"before","exit_code":0,"duration_ms":41,"stdout_bytes":0,"timed_out":false}
{"run":2,"commit":"pending","metric":1500,"metrics":{},"status":"discard","description":"parallel","timestamp":1777278284000,"segment":0,"confidence":1.4,"asi":{"hypothesis":"workers help","next_action_hint":"try 4"}}
{"type":"hook","stage":"after","exit_code":1,"duration_ms":12,"stdout_bytes":30,"timed_out":false}
{"run":3,"commit":"{A}","metric":0,"metrics":{"size_kib":0},"status":"crash","description":"oom","timestamp":1777278300000,"segment":0}
{"run":4,"commit":"{A}","metric":1700,"metrics":{},"status":"checks_failed","description":"skip setup","timestamp":1777278400000,"segment":0}
{"type":"config","name":"speed","metricName":"total_ms","metricUnit":"ms","bestDirection":"lower"}
{"run":1,"commit":"{A}","metric":1490,"metrics":{},"status":"keep","description":"new baseline","timestamp":1777279000000,"segment":1}
"""


def test_pi_hook_lines_pending_commits_segments_and_asi(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    """Lines shaped exactly as pi's hooks.ts (hookLogEntry) and index.ts write them."""
    a = tmp_repo.commit("a", {"f": "1"})
    path = tmp_path / "autoresearch.jsonl"
    path.write_text(PI_HOOKS.replace("{A}", a[:7]))
    report = import_file(tmp_repo.open(), path)
    assert (report.rows, report.skipped, report.as_notes, report.kept_aside) == (5, 2, 4, 1)
    rows = _rows(tmp_repo)
    assert [r["status"] for r in rows] == ["keep", "discard", "crash", "guard-fail", "keep"]
    assert rows[1]["commit"] == "" and rows[1]["source"]["commit"] == "pending"
    assert rows[1]["asi"] == {"hypothesis": "workers help", "next_action_hint": "try 4"}
    assert rows[1]["hypothesis"] == "workers help"
    assert rows[2]["metric"]["value"] is None and "metrics" not in rows[2]
    assert rows[0]["started"] == "2026-04-27T08:23:46Z"
    assert len({r["run"] for r in rows[:4]}) == 1 and rows[4]["run"] == rows[0]["run"] + "-2"
    assert rows[4]["iteration"] == 1 and rows[0]["iteration"] == 1


@pytest.mark.parametrize(
    ("text", "mapped"),
    [
        ("keep", "keep"),
        ("KEPT", "keep"),
        ("keep (reworked)", "keep-reworked"),
        ("reverted_worse", "discard"),
        ("discard", "discard"),
        ("checks_failed", "guard-fail"),
        ("crash", "crash"),
        ("no-op", "no-op"),
        ("metric-error", "metric-error"),
        ("hook-blocked", "hook-blocked"),
        ("FINAL", "FINAL"),
        ("llm_error", "llm_error"),
        ("pending", "pending"),  # a row written while its run still measures
        ("running", "pending"),
    ],
)
def test_status_words_of_every_era(text: str, mapped: str) -> None:
    assert map_status(text) == mapped


IMPORTER = """
import sys
from pathlib import Path
from gitimprove.git.repo import open_repo
from gitimprove.state.imports import import_file
import_file(open_repo(sys.argv[1]), Path(sys.argv[2]))
"""


def test_concurrent_imports_of_one_file_keep_each_row_once(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """Four processes import the same pi log (rows on real commits and commit-less rows) at
    once: every write is compare-and-swap, and a row two importers both kept shows once."""
    import subprocess
    import sys

    a = tmp_repo.commit("a", {"f": "1"})
    path = tmp_path / "autoresearch.jsonl"
    path.write_text(PI_HOOKS.replace("{A}", a[:7]))
    procs = [
        subprocess.Popen([sys.executable, "-c", IMPORTER, str(tmp_repo.path), str(path)])
        for _ in range(4)
    ]
    assert [p.wait(timeout=300) for p in procs] == [0] * 4
    rows = _rows(tmp_repo)
    assert len(rows) == 5 and len({r["import_id"] for r in rows}) == 5
    assert import_file(tmp_repo.open(), path).already == 5


def test_show_lists_the_rows_imported_onto_a_commit(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    a = tmp_repo.commit("a", {"f": "1"})
    path = tmp_path / "autoresearch.jsonl"
    path.write_text(PI_HOOKS.replace("{A}", a[:7]))
    import_file(tmp_repo.open(), path)
    shown = tmp_repo.cli("show", a)
    assert shown.returncode == 0, shown.stderr
    assert "imported from autoresearch.jsonl:2: keep 1620 baseline" in shown.stdout
    assert "imported from autoresearch.jsonl:6: crash - oom" in shown.stdout
    assert "no experiment record" not in shown.stdout


def test_pi_rows_of_two_sessions_at_once_keep_their_own_segment() -> None:
    """aver's log: two pi sessions wrote one file at once, so after the config of segment 24
    (beam_score_pct) rows of segment 23 (tests_green) still arrive. Each row is in the
    segment it names, with that segment's metric; 29 config lines, 28 segments with rows."""
    parsed = parse_file(FIXTURES / "aver/autoresearch.jsonl")
    by_line = {r.line: r for r in parsed.rows}
    beam, tests_green = by_line[195], by_line[196]
    assert (beam.segment, tests_green.segment) == (24, 23)
    assert run_name(parsed, beam) != run_name(parsed, tests_green)
    assert run_name(parsed, tests_green) == run_name(parsed, by_line[193])
    assert beam.fields["metric"]["name"] == "beam_score_pct"
    assert tests_green.fields["metric"] == {
        "name": "tests_green",
        "value": 183,
        "samples": [183],
        "direction": "higher",
    }
    assert len({run_name(parsed, r) for r in parsed.rows}) == 28
    # segment 1 measures a rate, lower is better: a kept 0 is a value, a crash's 0 is none
    crash, kept_zero = by_line[118], by_line[122]
    assert crash.fields["metric"]["value"] is None and crash.fields["status"] == "crash"
    assert kept_zero.fields["metric"]["value"] == 0 and kept_zero.fields["status"] == "keep"
    assert kept_zero.fields["metric"]["name"] == "unsupported_claim_rate"
    assert kept_zero.fields["metric"]["direction"] == "lower"
    assert crash.fields["metrics"]["tests_green"] == 140  # its non-zero numbers are kept


@pytest.mark.slow
def test_a_row_too_long_to_read_back_is_clipped_not_lost(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    sha = tmp_repo.commit("initial")
    huge = "tuned the kernel " * 320_000  # about 5 MB of description
    tsv = tmp_path / "results.tsv"
    tsv.write_text(
        "commit\tval_bpb\tmemory_gb\tstatus\tdescription\n"
        f"{sha[:7]}\t0.997900\t44.0\tkeep\t{huge}\n"
        f"-\t0.995000\t44.0\tdiscard\t{huge}\n"
        f"{sha[:7]}\t0.993000\t44.0\tkeep\tshort and whole\n"
    )
    res = tmp_repo.cli("import", str(tsv))
    assert res.returncode == 0, res.stderr
    log = tmp_repo.cli("log", "--format", "jsonl")
    rows = [json.loads(line) for line in log.stdout.splitlines()]
    described = sorted(str(r.get("description")) for r in rows)
    assert len(described) == 3, log.stdout[:2000]
    assert (
        sum(d.endswith(f"…[clipped from {len(huge.strip())} characters]") for d in described) == 2
    )
    assert "short and whole" in described
    doctor = tmp_repo.cli("doctor")
    assert "over the 1048576-byte limit" not in doctor.stdout + doctor.stderr
