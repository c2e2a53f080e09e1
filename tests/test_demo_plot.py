from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import pytest

from tests.conftest import TmpRepo, cli
from tests.loop_helpers import make_project


@pytest.mark.slow
def test_demo_ends_clearly_better(tmp_path: Path) -> None:
    start = time.monotonic()
    res = cli(tmp_path, "demo", "demo-repo")
    elapsed = time.monotonic() - start
    assert res.returncode == 0, res.stderr
    assert elapsed < 180
    line = next(ln for ln in res.stdout.splitlines() if ln.startswith("score "))
    before, after = (float(x) for x in line.split()[1:4:2])
    assert 2.3 < before < 2.7  # random search
    assert after < before - 1.0, line
    assert "refs/notes/improve" in res.stdout and "improve/demo" in res.stdout
    status = cli(tmp_path / "demo-repo", "status")
    assert status.returncode == 0 and "run demo: finished" in status.stdout
    assert "[ok ] notes.rewriteRef" in cli(tmp_path / "demo-repo", "doctor").stdout
    again = cli(tmp_path, "demo", "demo-repo")
    assert again.returncode == 1 and "not empty" in again.stderr


def test_plot_writes_a_png_or_says_how_to_get_matplotlib(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    make_project(tmp_repo, {"1": "set:90", "2": "set:95"}, guard=False)
    assert tmp_repo.cli("run", "--run", "p", "-n", "2").returncode == 0
    out = tmp_path / "run.png"
    res = tmp_repo.cli("plot", "-o", str(out))
    if importlib.util.find_spec("matplotlib") is None:
        assert res.returncode == 1
        assert "plotting needs matplotlib" in res.stderr and "pip install" in res.stderr
        assert not out.exists()
    else:
        assert res.returncode == 0, res.stderr
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_idea_add_reaches_the_agent_program(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    make_project(tmp_repo, {"default": "noop"}, guard=False)
    assert tmp_repo.cli("idea", "add", "try", "memoizing", "the", "parser").returncode == 0
    assert "try memoizing the parser" in tmp_repo.cli("idea", "list").stdout
    from gitimprove.loop import program

    text = program.build(
        goal="",
        metric_name="score",
        direction="lower",
        metric_command="x",
        mutable=["src/**"],
        sealed=[],
        rows=[],
        ideas=["try memoizing the parser"],
        escalation=2,
    )
    assert "try memoizing the parser" in text and "Escalation level 2" in text and "ONE" in text


@pytest.mark.slow
def test_demo_tournament(tmp_path: Path) -> None:
    res = cli(tmp_path, "demo", "t", "--candidates", "3", "-n", "12")
    assert res.returncode == 0, res.stderr
    assert "round 6: candidate" in res.stdout or "wins" in res.stdout
    line = next(ln for ln in res.stdout.splitlines() if ln.startswith("score "))
    before, after = (float(x) for x in line.split()[1:4:2])
    assert after < before - 1.0
    report = cli(tmp_path / "t", "log", "--round", "1")
    assert report.returncode == 0 and "round 1:" in report.stdout
