"""`git improve log` served from its rendered cache: the same bytes as the click command,
a cache per format and selection keyed by the notes and memory tips, and a cache that is
never trusted over the notes."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from gitimprove.commands.log import command
from gitimprove.git import memory
from gitimprove.state import experiments
from tests.conftest import TmpRepo

SELECTIONS = [
    [],
    ["--format", "tsv"],
    ["--format=jsonl"],
    ["--format", "karpathy", "--run", "r"],
    ["--round", "1"],
    ["--run=", "--format", "tsv"],
    ["--round=-1"],
]


def project(repo: TmpRepo) -> list[str]:
    commits = [repo.commit(f"experiment(x): {i}", {"f": str(i)}) for i in range(3)]
    for i, c in enumerate(commits):
        experiments.record(
            repo.open(),
            c,
            {
                "run": "r" if i else None,
                "iteration": i,
                "status": "keep" if i else "baseline",
                "metric": {"name": "ms", "direction": "lower", "value": 10.0 - i},
            },
        )
    return commits


def test_served_bytes_match_the_click_command_for_every_selection(
    tmp_repo: TmpRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    project(tmp_repo)
    runner = CliRunner()
    monkeypatch.chdir(tmp_repo.path)
    for args in SELECTIONS:
        served = tmp_repo.cli("log", *args)
        again = tmp_repo.cli("log", *args)  # from the cache
        clicked = runner.invoke(command, args)
        assert served.returncode == 0 and clicked.exit_code == 0, (args, served.stderr)
        assert served.stdout == again.stdout == clicked.stdout, args
    names = sorted(p.name for p in (tmp_repo.path / ".git" / "improve" / "cache").glob("view-*"))
    assert len(names) == len(SELECTIONS)


@pytest.mark.slow
def test_the_cache_follows_notes_and_memory_and_is_never_trusted_blindly(
    tmp_repo: TmpRepo,
) -> None:
    commits = project(tmp_repo)
    first = tmp_repo.cli("log", "--format", "tsv").stdout
    # a new imported row (memory branch) changes the view
    memory.add_entries(
        tmp_repo.open(),
        {
            "imports/0000000000000001.jsonl": '{"v":1,"commit":"abcdef1","status":"keep","iteration":7,"run":"imp"}\n'
        },
    )
    second = tmp_repo.cli("log", "--format", "tsv").stdout
    assert second != first and "abcdef1" in second
    # a cache file that is garbage, or claims another tip, is rebuilt
    cache = tmp_repo.path / ".git" / "improve" / "cache" / "view-tsv"
    for junk in (b"", b"garbage", b"gitimprove-view 1 0 x y 3\nabcdef", cache.read_bytes()[:30]):
        cache.write_bytes(junk)
        assert tmp_repo.cli("log", "--format", "tsv").stdout == second
    experiments.record(tmp_repo.open(), commits[0], {"reason": "later words"}, op="update")
    assert tmp_repo.cli("log", "--format", "jsonl").stdout.count("later words") == 1


@pytest.mark.slow
def test_a_closed_pipe_and_bad_arguments(tmp_repo: TmpRepo) -> None:
    project(tmp_repo)
    head = subprocess.run(
        f"{sys.executable} -m gitimprove log --format tsv | head -1",
        shell=True,
        cwd=tmp_repo.path,
        capture_output=True,
        text=True,
    )
    assert head.stdout.startswith("# metric_direction") and "Traceback" not in head.stderr
    bad = tmp_repo.cli("log", "--format", "bogus")
    assert bad.returncode == 2 and "bogus" in bad.stderr
    assert tmp_repo.cli("log", "--help").returncode == 0
    outside = subprocess.run(
        [sys.executable, "-m", "gitimprove", "log"],
        cwd=tmp_repo.path.parent,
        capture_output=True,
        text=True,
    )
    assert outside.returncode == 1 and "not inside a git repository" in outside.stderr
