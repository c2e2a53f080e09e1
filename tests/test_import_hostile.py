"""Hostile import files: every bad row is an error naming its line, and nothing is imported
(the good rows before it included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import TmpRepo, main_in_process

TSV = "iteration\tcommit\tmetric\tdelta\tguard\tstatus\tdescription\n"
GOOD_TSV = "0\tabc1234\t1.5\t0\tpass\tkeep\tbaseline\n"
PI = '{"type":"config","name":"x","metricName":"ms","bestDirection":"lower"}\n'
GOOD_PI = '{"run":1,"commit":"abc1234","metric":1.5,"status":"keep","description":"ok"}\n'
DEEP = "[" * 3000 + "]" * 3000


def pi_row(**fields: str) -> str:
    base = {
        "run": "2",
        "commit": '"abc1235"',
        "metric": "1.4",
        "status": '"keep"',
        "description": '"d"',
    }
    base.update(fields)
    return "{" + ",".join(f'"{k}":{v}' for k, v in base.items()) + "}\n"


CASES = [
    (TSV + GOOD_TSV + "1\tabc1235\t1e999\t0\tpass\tkeep\tx\n", ":3: column 'metric'"),
    (TSV + GOOD_TSV + "1\tabc1235\t" + "9" * 400 + "\t0\tpass\tkeep\tx\n", ":3: column 'metric'"),
    (TSV + GOOD_TSV + "1\tabc1235\t١٫٥\t0\tpass\tkeep\tx\n", ":3: column 'metric'"),
    (TSV + GOOD_TSV + "²\tabc1235\t1.4\t0\tpass\tkeep\tx\n", ":3: iteration"),
    (TSV + GOOD_TSV + "١\tabc1235\t1.4\t0\tpass\tkeep\tx\n", ":3: iteration"),
    (TSV + GOOD_TSV + "٣٤\tabc1235\t1.4\t0\tpass\tkeep\tx\n", ":3: iteration"),
    (
        "commit\tval_bpb\tmemory_gb\tstatus\tdescription\nabc1234\t0.9\t1e999\tkeep\tok\n",
        ":2: column 'memory_gb'",
    ),
    (PI + GOOD_PI + pi_row(metric="1e999"), ":3:"),
    (PI + GOOD_PI + pi_row(metric="NaN"), ":3:"),
    (PI + GOOD_PI + pi_row(metric="Infinity"), ":3:"),
    (PI + GOOD_PI + pi_row(timestamp="NaN"), ":3:"),
    (PI + GOOD_PI + pi_row(timestamp="1e300"), ":3: timestamp"),
    (PI + GOOD_PI + pi_row(timestamp="99999999999999999"), ":3: timestamp"),
    (PI + GOOD_PI + pi_row(extra=DEEP), ":3: not a JSON object that can be read (nested"),
    (PI + GOOD_PI + pi_row(run="-4"), ":3: run -4"),
    (PI + GOOD_PI + pi_row(run="9" * 30), ":3: run"),
    (PI + GOOD_PI + pi_row(description='"\\ud800"'), ":3:"),
    (PI + GOOD_PI + pi_row(metrics='{"mem": 1e999}'), ":3:"),
    (PI + GOOD_PI + pi_row(description='"' + "a" * 1_100_000 + '"'), ":3:"),
]


def test_hostile_rows_name_their_line_and_import_nothing(
    tmp_repo: TmpRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tmp_repo.commit("a")
    refs = tmp_repo.git("for-each-ref")
    for i, (content, needle) in enumerate(CASES):
        path = tmp_path / f"results{i}.txt"
        path.write_text(content, encoding="utf-8")
        code, _, err = main_in_process(tmp_repo.path, ["import", str(path)], capsys, monkeypatch)
        assert code == 1, (i, err)
        assert f"{path}{needle}" in err, (i, err[-500:])
        assert "nothing was imported" in err
        assert tmp_repo.git("for-each-ref") == refs, i
        if i % 7 == 0:  # and a sample through the real command
            res = tmp_repo.cli("import", str(path))
            assert res.returncode == 1 and res.stderr == err


@pytest.mark.slow
def test_an_error_about_a_bad_cell_never_shows_a_secret_in_it(tmp_repo: TmpRepo) -> None:
    """A row that fails to parse is named by its line and column; a secret in the cell (or
    in the columns around it) is shown masked, and nothing is stored."""
    from tests.secret_corpus import corpus
    from tests.test_secrets_writers import all_objects, left_in

    tmp_repo.commit("initial", {"a.txt": "a\n"})
    before = all_objects(tmp_repo.path)
    fakes = [f for f in corpus(seed=314) if "\n" not in f.text and "\t" not in f.text][::9]
    header = "commit\tval_bpb\tmemory_gb\tstatus\tdescription\n"
    for n, f in enumerate(fakes):
        row = [
            f"-\t{f.text}\t44.0\tkeep\tok",  # the metric cell
            f"-\t0.98\t{f.text}",  # a short row quoting nothing but its count
        ][n % 2]
        (tmp_repo.path / "results.tsv").write_text(header + "-\t0.99\t44.0\tkeep\tbase\n" + row)
        res = tmp_repo.cli("import", "results.tsv")
        assert res.returncode == 1 and "results.tsv:3:" in res.stderr, res.stderr
        assert "Traceback" not in res.stderr
        assert left_in(res.stdout + res.stderr, [f]) == [], res.stderr
    assert all_objects(tmp_repo.path) == before
