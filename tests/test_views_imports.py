from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitimprove.state.imports import import_file
from gitimprove.state.records import make_line
from tests.conftest import TmpRepo

RESOURCES = Path(__file__).parent / "resources" / "imports"


def fixed_lines(repo: TmpRepo) -> list[str]:
    """Three experiments with fixed times, so views are golden."""
    base = repo.commit("initial", {"bench.py": "print(1)"})
    keep = repo.commit("experiment(perf): cache the parse", {"a": "1"})
    gf = repo.commit("experiment(perf): drop the lock", {"a": "2"})
    records = {
        base: {
            "status": "baseline",
            "iteration": 0,
            "run": "r1",
            "description": "baseline",
            "metric": {
                "name": "ms",
                "direction": "lower",
                "value": 120.0,
                "samples": [120.0, 121.0],
            },
        },
        keep: {
            "status": "keep",
            "iteration": 1,
            "run": "r1",
            "description": "cache the parse",
            "guard": {"status": "pass"},
            "metrics": {"memory_gb": 1.25},
            "metric": {
                "name": "ms",
                "direction": "lower",
                "value": 110.5,
                "samples": [110.5, 110.0],
                "incumbent_samples": [120.0],
                "incumbent": 120.0,
                "delta": -9.5,
            },
        },
        gf: {
            "status": "guard-fail",
            "iteration": 2,
            "run": "r1",
            "description": "drop\tthe lock",
            "guard": {"status": "fail", "exit_code": 1},
            "metric": {"name": "ms", "direction": "lower", "value": 100.0, "samples": [100.0]},
        },
    }
    for i, (commit, fields) in enumerate(records.items()):
        line = make_line("create", fields, ts=f"2026-01-02T00:00:0{i}.000000Z")
        repo.git("notes", "--ref=improve", "add", "-m", line, commit)
    return [base, keep, gf]


def test_tsv_is_exactly_autoresearch(tmp_repo: TmpRepo) -> None:
    base, keep, gf = fixed_lines(tmp_repo)
    res = tmp_repo.cli("log", "--format", "tsv")
    assert res.returncode == 0, res.stderr
    assert res.stdout == (
        "# metric_direction: lower_is_better\n"
        "iteration\ttimestamp\tcommit\tmetric\tdelta\tguard\tguard-metric\tstatus\tdescription\n"
        f"0\t2026-01-02T00:00:00Z\t{base[:7]}\t120.0\t0.0\t-\t-\tbaseline\tbaseline\n"
        f"1\t2026-01-02T00:00:01Z\t{keep[:7]}\t110.5\t-9.5\tpass\t-\tkeep\tcache the parse\n"
        f"2\t2026-01-02T00:00:02Z\t{gf[:7]}\t100.0\t-10.5\tfail\t-\tdiscard\t[guard-fail] drop the lock\n"
    )
    assert tmp_repo.cli("log", "--format", "tsv7").stdout == (
        "# metric_direction: lower_is_better\n"
        "iteration\tcommit\tmetric\tdelta\tguard\tstatus\tdescription\n"
        f"0\t{base[:7]}\t120.0\t0.0\t-\tbaseline\tbaseline\n"
        f"1\t{keep[:7]}\t110.5\t-9.5\tpass\tkeep\tcache the parse\n"
        f"2\t{gf[:7]}\t100.0\t-10.5\tfail\tdiscard\t[guard-fail] drop the lock\n"
    )
    karpathy = tmp_repo.cli("log", "--format", "karpathy").stdout
    assert karpathy == (
        "commit\tms\tmemory_gb\tstatus\tdescription\n"
        f"{base[:7]}\t120.000000\t0.0\tkeep\tbaseline\n"
        f"{keep[:7]}\t110.500000\t1.2\tkeep\tcache the parse\n"
        f"{gf[:7]}\t100.000000\t0.0\tdiscard\t[guard-fail] drop the lock\n"
    )
    rows = [
        json.loads(line) for line in tmp_repo.cli("log", "--format", "jsonl").stdout.splitlines()
    ]
    assert [r["commit"] for r in rows] == [base, keep, gf]
    assert rows[1]["metric"]["samples"] == [110.5, 110.0]
    assert rows[1]["metric"]["incumbent_samples"] == [120.0]
    table = tmp_repo.cli("log").stdout
    assert "cache the parse" in table and "guard-fail" in table and "-9.5" in table
    empty = tmp_repo.cli("log", "--run", "nope", "--format", "tsv").stdout
    assert (
        empty
        == "iteration\ttimestamp\tcommit\tmetric\tdelta\tguard\tguard-metric\tstatus\tdescription\n"
    )


def test_corrupt_note_line_is_shown_raw_and_skipped(tmp_repo: TmpRepo) -> None:
    _base, keep, _ = fixed_lines(tmp_repo)
    tmp_repo.git("notes", "--ref=improve", "append", "-m", "{not json at all", keep)
    res = tmp_repo.cli("log", "--format", "tsv")
    assert res.returncode == 0
    assert "{not json at all" in res.stderr and keep[:10] in res.stderr
    assert f"{keep[:7]}\t110.5" in res.stdout
    rows = [
        json.loads(line) for line in tmp_repo.cli("log", "--format", "jsonl").stdout.splitlines()
    ]
    [raw] = rows[1]["raw"]
    assert raw.startswith("not valid JSON") and raw.endswith(": {not json at all")
    shown = tmp_repo.cli("show", keep)
    assert shown.returncode == 0
    assert "unreadable line (kept as is, see `git improve doctor`): not valid JSON" in shown.stdout
    assert shown.stdout.rstrip().endswith(": {not json at all")


LOG_PROBE = """
import sys
from gitimprove.cli import main
code = main(["log", "--format", "tsv"])
heavy = sorted(m for m in ("pygit2", "click", "tomllib", "tomlkit", "gitimprove.loop.measure") if m in sys.modules)
sys.stderr.write("HEAVY=" + ",".join(heavy) + "\\n")
sys.exit(code)
"""


def test_log_is_served_without_click_and_without_pygit2(tmp_repo: TmpRepo) -> None:
    fixed_lines(tmp_repo)

    def probe() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", LOG_PROBE], cwd=tmp_repo.path, capture_output=True, text=True
        )

    reference = tmp_repo.cli("log", "--format", "tsv", "--no-cache").stdout
    cold = probe()  # rendered from the notes by two git processes
    assert cold.returncode == 0 and cold.stdout == reference, cold.stderr
    assert "HEAVY=\n" in cold.stderr
    assert list((tmp_repo.path / ".git" / "improve" / "cache").glob("view-tsv"))
    warm = probe()  # the rendered output, from the cache
    assert warm.returncode == 0 and warm.stdout == reference and "HEAVY=\n" in warm.stderr
    # a new note moves the notes ref, and the view is rendered again
    c = tmp_repo.commit("experiment(x): new", {"b": "1"})
    tmp_repo.git(
        "notes",
        "--ref=improve",
        "add",
        "-m",
        make_line("create", {"status": "discard", "metric": {"value": 3.0}}),
        c,
    )
    assert c[:7] in probe().stdout


def _materialize(name: str, repo: TmpRepo, a: str, b: str, dest: Path) -> Path:
    text = (RESOURCES / name).read_text().replace("{A}", a[:7]).replace("{B}", b[:7])
    path = dest / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("name", "statuses"),
    [
        ("karpathy.tsv", ["keep", "keep", "discard", "crash"]),
        ("autoresearch-v1.tsv", ["baseline", "keep", "discard"]),
        ("autoresearch-v2.tsv", ["baseline", "keep-reworked", "guard-fail"]),
        ("pi.jsonl", ["keep", "keep", "guard-fail"]),
    ],
)
def test_import_formats_idempotently(
    tmp_repo: TmpRepo, tmp_path: Path, name: str, statuses: list[str]
) -> None:
    a = tmp_repo.commit("a", {"f": "1"})
    b = tmp_repo.commit("b", {"f": "2"})
    path = _materialize(name, tmp_repo, a, b, tmp_path)
    repo = tmp_repo.open()
    report = import_file(repo, path)
    assert report.rows == len(statuses)
    assert report.as_notes == 2 and report.kept_aside == len(statuses) - 2
    notes_before = tmp_repo.git("rev-parse", "refs/notes/improve")
    memory_before = tmp_repo.git("rev-parse", "improve/memory")
    again = import_file(repo, path)
    assert (again.as_notes, again.kept_aside, again.already) == (0, 0, len(statuses))
    assert tmp_repo.git("rev-parse", "refs/notes/improve") == notes_before
    assert tmp_repo.git("rev-parse", "improve/memory") == memory_before
    rows = [
        json.loads(line) for line in tmp_repo.cli("log", "--format", "jsonl").stdout.splitlines()
    ]
    assert [r["status"] for r in rows] == statuses
    assert rows[0]["commit"] == a and rows[1]["commit"] == b
    assert all(r.get("gone") for r in rows[2:])
    tsv = tmp_repo.cli("log", "--format", "tsv").stdout
    assert len(tsv.splitlines()) == 2 + len(statuses)


def test_import_round_trips_our_own_tsv(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    fixed_lines(tmp_repo)
    tsv = tmp_repo.cli("log", "--format", "tsv").stdout
    other = tmp_path / "other"
    shutil.copytree(tmp_repo.path, other)
    subprocess.run(["git", "update-ref", "-d", "refs/notes/improve"], cwd=other, check=True)
    (tmp_path / "results.tsv").write_text(tsv)
    report = import_file(TmpRepo(other).open(), tmp_path / "results.tsv")
    assert report.as_notes == 3
    again = TmpRepo(other).cli("log", "--format", "tsv").stdout
    assert again.splitlines()[2:] == tsv.splitlines()[2:]


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("commit\tstatus\n", "a metric column"),
        ("iteration\tcommit\tmetric\n0\tabc1234\t1\n", "no header row with a status column"),
        (
            "commit\tval_bpb\tmemory_gb\tstatus\tdescription\nabc1234\t0.9\t1\tkeep\tok\nabc1235\tlots\t1\tkeep\tbad\n",
            ":3: column 'val_bpb' holds 'lots'",
        ),
        (
            "commit\tval_bpb\tmemory_gb\tstatus\tdescription\nabc1234\t0.9\t1\tkeep\tok\nabc1235\t0.9\n",
            ":3: 2 columns where the header has 5",
        ),
        (
            "commit\tval_bpb\tmemory_gb\tstatus\tdescription\nabc1234\t0.9\t1\tkeep\tok\nnot a commit\t0.9\t1\tkeep\tok\n",
            ":3: 'not a commit' is not a commit id",
        ),
        (
            '{"type":"config","bestDirection":"lower"}\n{"commit":"abc1234","metric":1,"status":"keep"}\nnot json\n',
            ":3: not a JSON object",
        ),
        ('{"commit":"abc1234","metric":"fast","status":"keep"}\n', "metric 'fast' is not a number"),
    ],
)
def test_bad_import_reports_line_and_imports_nothing(
    tmp_repo: TmpRepo, tmp_path: Path, content: str, needle: str
) -> None:
    tmp_repo.commit("a")
    path = tmp_path / "bad.tsv"
    path.write_text(content)
    res = tmp_repo.cli("import", str(path))
    assert res.returncode == 1
    assert needle in res.stderr
    assert tmp_repo.git("for-each-ref") == tmp_repo.git("for-each-ref", "refs/heads/")


def test_unknown_status_is_kept_verbatim(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    tmp_repo.commit("a")
    path = tmp_path / "results.tsv"
    path.write_text("commit\tval_bpb\tmemory_gb\tstatus\tdescription\nabc1234\t0.9\t1\tmaybe\tok\n")
    res = tmp_repo.cli("import", str(path))
    assert res.returncode == 0, res.stderr
    rows = [json.loads(x) for x in tmp_repo.cli("log", "--format", "jsonl").stdout.splitlines()]
    assert rows[0]["status"] == "maybe" and rows[0]["source"]["status"] == "maybe"
    assert "\tmaybe\tok\n" in tmp_repo.cli("log", "--format", "tsv").stdout


def test_status_table_deltas_come_from_notes_and_the_whole_run(tmp_repo: TmpRepo) -> None:
    """`status` shows its last 10 rows, but each delta is the note's (value − the incumbent it
    was compared with), and a row the rule never compared is measured from the best kept
    value of the whole run, not of the rows shown."""
    metric = {"name": "ms", "direction": "lower"}
    rows: list[tuple[str, dict[str, object]]] = [
        ("baseline", {"value": 120.0, "samples": [120.0]}),
        ("keep", {"value": 110.0, "incumbent": 120.0, "delta": -10.0, "delta_pct": -8.33}),
    ]
    rows += [
        ("discard", {"value": 110.0 + i, "incumbent": 110.0, "delta": float(i)})
        for i in range(1, 11)
    ]
    rows.append(("guard-fail", {"value": 104.0}))
    commits = []
    for i, (status, m) in enumerate(rows):
        c = tmp_repo.commit(f"experiment(x): row {i}", {"v": str(i)})
        fields = {
            "status": status,
            "iteration": i,
            "run": "r1",
            "description": f"row {i}",
            "metric": {**metric, **m},
        }
        line = make_line("create", fields, ts=f"2026-01-02T00:00:{i:02d}.000000Z")
        tmp_repo.git("notes", "--ref=improve", "add", "-m", line, c)
        commits.append(c)
    out = tmp_repo.cli("status").stdout
    assert "best 110 at" in out and "baseline 120" in out
    table = out.splitlines()
    table = table[table.index(next(ln for ln in table if ln.startswith("----"))) + 1 :]
    shown = {ln.split()[1]: ln.split()[3] for ln in table}
    assert len(shown) == 10 and commits[1][:10] not in shown
    for i in range(3, 12):
        assert float(shown[commits[i][:10]]) == pytest.approx(i - 1.0)
    assert float(shown[commits[12][:10]]) == pytest.approx(-6.0)  # 104 against the kept 110
