"""`log --format tsv…` is byte for byte what the autoresearch plugin writes, and the readers
other tools use (the plugin's hooks' `readTsvTail`, its awk columns, Karpathy's
analysis.ipynb) read it. Upstream files: tests/fixtures/{imports,readers} (see their README)."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitimprove.state.imports import import_file
from gitimprove.state.records import make_line
from tests.conftest import TmpRepo, log_tsv

IMPORTS = Path(__file__).parent / "fixtures" / "imports" / "autoresearch-plugin"
READERS = Path(__file__).parent / "fixtures" / "readers"


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("v1-example.tsv", "tsv6"),
        ("v2-guard-example.tsv", "tsv7"),
        ("v4-guard-metric-example.tsv", "tsv8"),
        ("v4-metric-valued-guard-example.tsv", "tsv8"),
    ],
)
def test_plugin_examples_come_back_byte_for_byte(tmp_repo: TmpRepo, name: str, fmt: str) -> None:
    """The plugin's examples state no direction; their kept rows' deltas show higher is
    better, and the plugin's protocol records that in a first line, so it comes back with
    that line and every other byte as the example has it."""
    tmp_repo.commit("initial")
    import_file(tmp_repo.open(), IMPORTS / name)
    res = tmp_repo.cli("log", "--format", fmt)
    assert res.returncode == 0, res.stderr
    example = (IMPORTS / name).read_text()
    assert not example.startswith("#")  # the upstream example, unchanged
    assert res.stdout == "# metric_direction: higher_is_better\n" + example


def current_era(name: str) -> str:
    """The plugin's example rows in its current 9-column layout (`iteration timestamp commit
    metric delta guard guard-metric status description`, as its commands/autoresearch.md
    writes them), with a timestamp per row."""
    lines = (IMPORTS / name).read_text().splitlines()
    out = ["# metric_direction: higher_is_better"]
    out.append("iteration\ttimestamp\t" + lines[0].split("\t", 1)[1])
    for i, line in enumerate(lines[1:]):
        it, rest = line.split("\t", 1)
        out.append(f"{it}\t2026-06-19T11:45:0{i}Z\t{rest}")
    return "\n".join(out) + "\n"


@pytest.mark.parametrize(
    "name", ["v4-guard-metric-example.tsv", "v4-metric-valued-guard-example.tsv"]
)
def test_current_era_comes_back_byte_for_byte(tmp_repo: TmpRepo, tmp_path: Path, name: str) -> None:
    tmp_repo.commit("initial")
    path = tmp_path / "autoresearch-results.tsv"
    path.write_text(current_era(name))
    import_file(tmp_repo.open(), path)
    assert log_tsv(tmp_repo) == path.read_text()
    # the same rows, imported from the 8-column era, written in the current layout
    other = tmp_repo.path.parent / "other"
    shutil.copytree(tmp_repo.path, other)
    TmpRepo(other).git("update-ref", "-d", "refs/heads/improve/memory")
    import_file(TmpRepo(other).open(), IMPORTS / name)
    expected = [
        line if i < 2 else "\t".join([line.split("\t")[0], "-", *line.split("\t")[2:]])
        for i, line in enumerate(current_era(name).splitlines())
    ]
    assert log_tsv(TmpRepo(other)).splitlines() == expected


def _loop_rows(repo: TmpRepo, values: list[tuple[str, float | int | None, str]]) -> list[str]:
    commits = []
    for i, (status, value, description) in enumerate(values):
        c = repo.commit(f"experiment(x): {description}", {"v": str(i)})
        fields = {
            "status": status,
            "iteration": i,
            "run": "r1",
            "description": description,
            "started": f"2026-01-02T00:00:{i:02d}.123456Z",
            "guard": {"status": "pass"},
            "metric": {"name": "val_bpb", "direction": "lower", "value": value},
        }
        line = make_line("create", fields, ts=f"2026-01-02T00:01:{i:02d}.000000Z")
        repo.git("notes", "--ref=improve", "add", "-m", line, c)
        commits.append(c)
    return commits


def test_numbers_are_written_as_the_plugin_writes_them(tmp_repo: TmpRepo) -> None:
    c = _loop_rows(
        tmp_repo,
        [
            ("baseline", 0.00012, "baseline"),
            ("keep", 0.00011, "tiny gain"),
            ("discard", 0.00013, "tiny loss"),
            ("timeout", None, "too slow"),
            ("pending", None, "not measured yet"),
            ("keep", 1e-05, "big gain"),
            ("no-op", None, "nothing changed"),
        ],
    )
    out = tmp_repo.cli("log", "--format", "tsv").stdout.splitlines()
    assert out[2:] == [
        f"0\t2026-01-02T00:00:00Z\t{c[0][:7]}\t0.00012\t0.0\tpass\t-\tbaseline\tbaseline",
        f"1\t2026-01-02T00:00:01Z\t{c[1][:7]}\t0.00011\t-0.00001\tpass\t-\tkeep\ttiny gain",
        f"2\t2026-01-02T00:00:02Z\t{c[2][:7]}\t0.00013\t+0.00002\tpass\t-\tdiscard\ttiny loss",
        f"3\t2026-01-02T00:00:03Z\t{c[3][:7]}\t0.0\t0.0\tpass\t-\tcrash\t[timeout] too slow",
        f"5\t2026-01-02T00:00:05Z\t{c[5][:7]}\t0.00001\t-0.0001\tpass\t-\tkeep\tbig gain",
        f"6\t2026-01-02T00:00:06Z\t{c[6][:7]}\t-\t-\tpass\t-\tno-op\tnothing changed",
    ]
    assert "e-" not in "\n".join(out) and "pending" not in "\n".join(out)


def _plugin_output(repo: TmpRepo, fmt: str) -> str:
    _loop_rows(
        repo,
        [
            ("baseline", 1.5, "baseline"),
            ("keep", 1.4, "cache the parse"),
            ("guard-fail", 1.3, "drop the lock"),
            ("crash", None, "oom"),
            ("keep-reworked", 1.2, "inline the loop"),
            ("discard", 1.25, "unroll"),
        ],
    )
    res = repo.cli("log", "--format", fmt)
    assert res.returncode == 0, res.stderr
    return res.stdout


NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("fmt", ["tsv", "tsv7"])
def test_plugin_hook_reader_reads_our_tsv(tmp_repo: TmpRepo, tmp_path: Path, fmt: str) -> None:
    """The plugin's hooks read the TSV with `readTsvTail` and pick the last row's metric with
    stop-notify's pattern; run both, unchanged, under node."""
    text = _plugin_output(tmp_repo, fmt)
    tsv = tmp_path / "results.tsv"
    tsv.write_text(text)
    stop_notify = (READERS / "autoresearch-plugin" / "stop-notify.cjs").read_text()
    pattern = next(
        line.split("lastRow.match(", 1)[1].rsplit(");", 1)[0]
        for line in stop_notify.splitlines()
        if "const metricMatch = lastRow.match(" in line
    )
    script = (
        f"const u = require({json.dumps(str(READERS / 'autoresearch-plugin' / 'ar-hook-utils.cjs'))});"
        f"const t = u.readTsvTail({json.dumps(str(tsv))}, 3);"
        f"const m = (t.rows[t.rows.length - 1] || '').match({pattern});"
        "console.log(JSON.stringify({tail: t, metric: m ? m[1] : 'n/a'}));"
    )
    res = subprocess.run([NODE, "-e", script], capture_output=True, text=True, timeout=60)  # type: ignore[list-item]
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    lines = text.splitlines()
    assert got["tail"]["header"] == lines[1]
    assert got["tail"]["rows"] == lines[-3:]
    assert got["tail"]["total"] == 6
    assert got["metric"] == "1.25"


def test_plugin_awk_columns_read_our_tsv7(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    """results-logging.md (7-column era): `tail -5 | awk -F'\\t' '{print $6}'` gives the
    statuses, `grep 'keep' | awk -F'\\t' '{print $7}'` the descriptions of kept rows."""
    if shutil.which("awk") is None:
        pytest.skip("awk is not installed")
    tsv = tmp_path / "autoresearch-results.tsv"
    tsv.write_text(_plugin_output(tmp_repo, "tsv7"))
    last5 = subprocess.run(
        f"tail -5 {tsv} | awk -F'\\t' '{{print $6}}'", shell=True, capture_output=True, text=True
    ).stdout.split("\n")[:-1]
    assert last5 == ["keep", "discard", "crash", "keep (reworked)", "discard"]
    kept = subprocess.run(
        f"grep 'keep' {tsv} | awk -F'\\t' '{{print $7}}'",
        shell=True,
        capture_output=True,
        text=True,
    ).stdout.split("\n")[:-1]
    assert kept == ["cache the parse", "inline the loop"]
    keeps = subprocess.run(f"grep -c 'keep' {tsv}", shell=True, capture_output=True, text=True)
    assert keeps.stdout.strip() == "2"


def _notebook_code() -> list[str]:
    nb = json.loads((READERS / "karpathy" / "analysis.ipynb").read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def test_karpathy_analysis_reads_our_results_tsv(tmp_repo: TmpRepo) -> None:
    """analysis.ipynb reads results.tsv with `pd.read_csv(sep="\\t")`, `to_numeric(errors=
    "coerce")` on val_bpb and memory_gb, and `status.str.strip().str.upper()`. pandas is too
    heavy a test dependency, so its reading is reproduced with csv (same quoting rules), and
    the notebook's own code runs as well where pandas is installed."""
    code = _notebook_code()
    assert 'pd.read_csv("results.tsv", sep="\\t")' in code[0]
    assert 'df["status"].str.strip().str.upper()' in code[0]
    text = _plugin_output(tmp_repo, "karpathy")
    reader = csv.DictReader(io.StringIO(text), delimiter="\t")
    assert reader.fieldnames == ["commit", "val_bpb", "memory_gb", "status", "description"]
    rows = list(reader)

    def num(v: str) -> float | None:
        try:
            return float(v)
        except ValueError:
            return None

    status = [r["status"].strip().upper() for r in rows]
    assert status == ["KEEP", "KEEP", "DISCARD", "CRASH", "KEEP", "DISCARD"]
    assert all(num(r["val_bpb"]) is not None and num(r["memory_gb"]) is not None for r in rows)
    valid = [r for r, s in zip(rows, status, strict=True) if s != "CRASH"]
    baseline = num(valid[0]["val_bpb"])
    kept = [num(r["val_bpb"]) for r, s in zip(rows, status, strict=True) if s == "KEEP"]
    assert (baseline, min(k for k in kept if k is not None)) == (1.5, 1.2)
    assert rows[2]["description"] == "[guard-fail] drop the lock"
    try:
        import pandas  # noqa: F401
    except ImportError:
        return
    # where pandas is installed: the notebook's own cells (all but the plot), unchanged
    (tmp_repo.path / "results.tsv").write_text(text)
    script = "\n".join(code[i] for i in (0, 1, 2, 4, 5)).replace(
        "import matplotlib.pyplot as plt", ""
    )
    res = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_repo.path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert "Total experiments: 6" in res.stdout and "Best val_bpb:      1.200000" in res.stdout
