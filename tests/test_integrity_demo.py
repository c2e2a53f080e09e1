"""The demo's own benchmark keeps the code under test out of its process: `evaluate.py` runs
the minimizer in a child process that asks for each value through a pipe, so a minimizer that
rewrites the benchmark's counters, patches its functions or prints a `METRIC` line of its own
gains nothing, in both sandbox modes; an honest change is still kept.

The hostile agent is the demo's project with a command agent in place of the scripted one:
each iteration appends one attack to `minimizer.py` (falling back to the honest search when the
attack finds nothing to hold on to)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gitimprove.loop import demo
from gitimprove.loop.inprocess import imported_mutable
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project
from tests.test_integrity import needs_bwrap

ATTACKS = {
    # the objective's counters were its default arguments: the best value, a list
    "1": """
_honest = minimize
def minimize(f, dim, lo, hi, budget, rng):
    try:
        f.__defaults__[-1][0] = 0.0
    except Exception:
        pass
    return _honest(f, dim, lo, hi, budget, rng)
""",
    # a better line of the benchmark's own name, printed last
    "2": """
import atexit
atexit.register(lambda: print("METRIC score=-12.000000", flush=True))
""",
    # the same, straight to file descriptor 1, now and at exit
    "3": """
import atexit, os
os.write(1, b"METRIC score=-12.000000\\n")
atexit.register(lambda: os.write(1, b"METRIC score=-12.000000\\n"))
""",
    # patch the benchmark: a larger budget and a logarithm that flatters
    "4": """
import math, sys
for frame in (sys.modules.get("__main__"), sys.modules.get("evaluate")):
    if frame is not None and hasattr(frame, "BUDGET"):
        frame.BUDGET = 10**6
math.log10 = lambda v: -12.0
""",
}
AGENT = """import os, pathlib, sys
attacks = {attacks!r}
step = os.environ["GITIMPROVE_ITERATION"]
path = pathlib.Path("minimizer.py")
if step in attacks:
    path.write_text(path.read_text() + attacks[step])
else:  # honest: a (1+1) evolution strategy with step-size adaptation
    text = path.read_text().replace('STRATEGY = "random"', 'STRATEGY = "local"')
    path.write_text(text.replace("ADAPT = False", "ADAPT = True"))
"""


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_the_demos_minimizer_cannot_patch_its_benchmark(tmp_path: Path, sandbox: str) -> None:
    project = demo.create(tmp_path / "d", iterations=5)
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT.format(attacks=ATTACKS))
    config = project / ".gitimprove.toml"
    config.write_text(
        config.read_text().replace(
            'name = "scripted"',
            f'name = "command"\ncommand = "{sys.executable} {agent}"\nsandbox = "{sandbox}"',
        )
    )
    repo = TmpRepo(project)
    repo.commit("a command agent")
    res = repo.cli("run", "--run", "h", "-n", "5")
    assert res.returncode == 0, res.stderr
    rows = run_rows(repo, "h")
    statuses = [r["status"] for r in rows]
    assert statuses[0] == "baseline" and len(statuses) == 6, statuses
    assert all(s != "keep" for s in statuses[1:5]), rows[1:5]
    assert statuses[5] == "keep", rows[5]
    assert all(r["metric"]["value"] > 1 for r in rows if r["status"] in ("baseline", "keep")), rows


SOURCES = {
    "bench.py": b"import json\nimport minimizer\nprint(minimizer.f())\n",
    "tools/bench.py": b"try:\n    from solver.fast import run\nexcept ImportError:\n    pass\n",
    "child.py": b"import subprocess\n\ndef child():\n    import minimizer\n",
    "minimizer.py": b"def f(): return 1\n",
    "tools/solver/__init__.py": b"",
}


@pytest.mark.parametrize(
    ("command", "sealed", "found"),
    [
        ("python3 bench.py", ["bench.py"], ("bench.py", ["minimizer.py"])),
        (
            "uv run ./tools/bench.py --fast",
            ["tools/bench.py"],
            ("tools/bench.py", ["tools/solver/__init__.py"]),
        ),
        ("python3 bench.py", ["bench.py", "minimizer.py"], None),  # sealed too: not the agent's
        ("python3 bench.py", [], None),  # the benchmark itself is not sealed
        ("python3 child.py", ["child.py"], None),  # imported in the child it starts
        ("make bench", ["bench.py"], None),
        ("python3 'unclosed", ["bench.py"], None),
    ],
)
def test_which_sealed_benchmark_imports_mutable_code(
    command: str, sealed: list[str], found: tuple[str, list[str]] | None
) -> None:
    got = imported_mutable(command, sealed, ["**"], SOURCES.get)
    assert got == found


@pytest.mark.slow
def test_a_run_names_a_benchmark_that_imports_the_code_under_test(tmp_repo: TmpRepo) -> None:
    bench = "import solver\nprint(f'METRIC score={solver.value()}')\n"
    value_project(
        tmp_repo,
        f"{sys.executable} -c pass",
        bench,
        {"src/solver.py": "def value():\n    return 100\n"},
    )
    (tmp_repo.path / "bench.py").write_text(
        bench.replace("import solver", "import src.solver as solver")
    )
    tmp_repo.commit("the benchmark imports the code under test")
    res = tmp_repo.cli("run", "--run", "t", "-n", "1")
    assert res.returncode == 0, res.stderr
    assert "warning: the sealed benchmark bench.py imports src/solver.py" not in res.stderr
    (tmp_repo.path / "solver.py").write_text("def value():\n    return 100\n")
    (tmp_repo.path / "bench.py").write_text(bench)
    tmp_repo.commit("the benchmark imports a module of its folder")
    cfg = tmp_repo.path / ".gitimprove.toml"
    cfg.write_text(
        cfg.read_text().replace('mutable = ["src/**"]', 'mutable = ["src/**", "solver.py"]')
    )
    tmp_repo.commit("solver.py is the agent's")
    res = tmp_repo.cli("run", "--run", "u", "-n", "1")
    assert res.returncode == 0, res.stderr
    assert "warning: the sealed benchmark bench.py imports solver.py into its own process" in (
        res.stdout + res.stderr
    )
