"""A results file named with a token in it (a CI artifact path, a download link's name):
everything `git improve import` prints of the file's name, and everything it stores of it
(note lines, the imports/ entry, the memory commit's message), is masked."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import TmpRepo, main_in_process
from tests.secret_corpus import windows
from tests.test_secrets_names import NAMED

TSV = "iteration\tcommit\tmetric\tdelta\tguard\tstatus\tdescription\n"


def every_object(path: Path) -> str:
    """Every object of the repository (blobs, trees' names, commit messages), as text."""
    names = subprocess.run(
        ["git", "rev-list", "--objects", "--all"], cwd=path, capture_output=True, text=True
    ).stdout
    blobs = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=path, capture_output=True
    ).stdout.decode("utf-8", "replace")
    return names + blobs


PI = '{"type":"config","name":"x","metricName":"ms","bestDirection":"lower"}\n'


@pytest.mark.parametrize("n", range(4))
def test_import_masks_the_file_name_it_prints_and_stores(
    tmp_repo: TmpRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    n: int,
) -> None:
    fake = NAMED[n * 2]
    head = tmp_repo.commit("initial", {"a.txt": "a\n"})
    results = tmp_path / "artifacts" / f"results-{fake.secret}.tsv"
    results.parent.mkdir()
    results.write_text(
        TSV + f"0\t{head[:7]}\t1.5\t0\tpass\tkeep\tbaseline\n1\t-\t1.4\t0\tpass\tdiscard\tx\n"
    )
    for args in (["import", str(results)], ["import", str(results), "--json"]):
        code, out, err = main_in_process(tmp_repo.path, args, capsys, monkeypatch)
        assert code == 0, err
        shown = out + err
        assert not [w for w in windows(fake.secret) if w in shown], (fake.family, shown)
        assert "--json" in args or "REDACTED" in shown  # the name is shown, masked
    code, out, err = main_in_process(tmp_repo.path, ["log"], capsys, monkeypatch)
    assert code == 0, err
    stored = every_object(tmp_repo.path) + out + err
    assert "REDACTED" in stored  # the name is kept, masked
    assert not [w for w in windows(fake.secret) if w in stored], fake.family


def test_a_bad_file_named_with_a_token_is_refused_masked(
    tmp_repo: TmpRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = NAMED[1]
    tmp_repo.commit("initial", {"a.txt": "a\n"})
    results = tmp_path / f"{fake.secret}.tsv"
    results.write_text(TSV + "0\tabc1234\tnot-a-number\t0\tpass\tkeep\tbaseline\n")
    code, out, err = main_in_process(tmp_repo.path, ["import", str(results)], capsys, monkeypatch)
    assert code == 1 and "Traceback" not in err
    assert not [w for w in windows(fake.secret) if w in out + err], err
    missing = tmp_path / f"gone-{fake.secret}.tsv"
    code, out, err = main_in_process(tmp_repo.path, ["import", str(missing)], capsys, monkeypatch)
    assert code == 1 and "Traceback" not in err
    assert not [w for w in windows(fake.secret) if w in out + err], err


def test_a_pi_log_named_with_a_token_is_masked_too(
    tmp_repo: TmpRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = NAMED[-1]
    head = tmp_repo.commit("initial", {"a.txt": "a\n"})
    log = tmp_path / f"{fake.secret}-autoresearch.jsonl"
    log.write_text(
        PI
        + f'{{"run":1,"commit":"{head[:7]}","metric":1.5,"status":"keep","description":"a"}}\n'
        + '{"run":2,"commit":"-","metric":1.4,"status":"discard","description":"b"}\n'
    )
    code, out, err = main_in_process(tmp_repo.path, ["import", str(log)], capsys, monkeypatch)
    assert code == 0, err
    assert "REDACTED" in out and ".jsonl (pi-jsonl)" in out
    stored = every_object(tmp_repo.path) + out + err
    assert not [w for w in windows(fake.secret) if w in stored], fake.family
