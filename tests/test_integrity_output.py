"""Output is bounded (docs/integrity.md): of every stream of the agent, the metric and the
guard only `[loop] max_output` bytes are kept (past it only its start and end), nothing is
written to a temporary file, and an output over the limit is an error of that run with a
reason: `crash` (agent), `metric-error`, a failed guard."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gitimprove.loop.metrics import run_metric
from gitimprove.util import proc
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import needs_bwrap

AGENT = Path(__file__).parent / "agents" / "spam_agent.py"
BENCH = """import subprocess, sys
subprocess.run([sys.executable, "src/prog.py"], check=True)
print(f"METRIC score={float(open('src/value.txt').read()):g}")
"""


def test_the_harness_holds_only_the_limit_of_a_huge_output(tmp_path: Path) -> None:
    """A child printing 200 MB on each stream: the harness's memory stays far below it, the
    result keeps the start and the end (the last line), and says the stream was over."""
    script = tmp_path / "measure.py"
    script.write_text(
        f"""import resource, sys
sys.path.insert(0, {str(Path(__file__).parents[1])!r})
from gitimprove.util import proc
spam = "import os\\nb = b'x' * (1 << 20)\\nfor _ in range(200):\\n    os.write(1, b); os.write(2, b)\\nprint('LAST')"
res = proc.run([sys.executable, "-c", spam], limit=4_000_000, timeout=600)
# this process's own peak (VmHWM: ru_maxrss would count the parent it was forked from)
status = open("/proc/self/status").read().split("VmHWM:")
rss = int(status[1].split()[0]) // 1024 if len(status) > 1 else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
print(rss, res.returncode, res.stdout.rstrip().endswith("LAST"), len(res.raw), res.over)
"""
    )
    res = proc.run([sys.executable, str(script)], timeout=700, cwd=tmp_path)
    assert res.ok, res.stderr
    rss, code, last, kept, over = res.stdout.split(" ", 4)
    assert code == "0" and last == "True", res.stdout
    assert int(rss) < 150, res.stdout  # megabytes: 400 MB went through
    assert int(kept) < 4_000_000 + 3 * (1 << 20)
    assert "stdout held 209,715,205 bytes" in over and "stderr" in over, over


@pytest.mark.parametrize("size", [1000, 3_999_000, 4_100_000])
def test_the_metric_line_is_read_unless_the_output_is_over(tmp_path: Path, size: int) -> None:
    """Under the limit the output is kept whole (the last METRIC line wins); over it the run
    is a metric-error with the reason, whatever line it ends with."""
    code = f"import sys\nsys.stdout.write('x' * {size} + '\\nMETRIC score=1\\n')\nprint('METRIC score=7')"
    got = run_metric(f'{sys.executable} -c "{code}"', tmp_path, timeout=60, limit=4_000_000)
    if size < 4_000_000:
        assert got.status == "ok" and got.value == 7, got
    else:
        assert got.status == "metric-error" and "printed too much" in (got.error or ""), got
        assert "max_output" in (got.error or "")


def project(repo: TmpRepo, names: list[str], sandbox: str) -> None:
    plan = repo.path.parent / "plan.json"
    plan.write_text(json.dumps({str(i): n for i, n in enumerate(names, 1)}))
    repo.commit(
        "project",
        {
            "bench.py": BENCH,
            "src/prog.py": "print('working')\n",
            "src/check.py": "print('checked')\n",
            "src/value.txt": "100\n",
            ".gitimprove.toml": f"""[metric]
command = "{sys.executable} bench.py"
timeout = "60s"

[guard]
command = "{sys.executable} src/check.py"
rework = 0

[scope]
mutable = ["src/**"]
sealed = ["bench.py"]

[loop]
max_output = "8MB"
iterations = 40
plateau_patience = 50
stuck_after = 40

[agent]
name = "command"
command = "{sys.executable} {AGENT} {plan}"
timeout = "60s"
sandbox = "{sandbox}"
""",
        },
    )


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_output_over_the_limit_is_an_error_with_a_reason(tmp_repo: TmpRepo, sandbox: str) -> None:
    names = ["agent", "metric", "metric-stderr", "guard", "honest"]
    project(tmp_repo, names, sandbox)
    res = tmp_repo.cli("run", "--run", "h", "-n", str(len(names)), "--json")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "h")[1:]
    got = [(r["status"], r["reason"]) for r in rows]
    assert [s for s, _ in got] == ["crash", "metric-error", "metric-error", "guard-fail", "keep"], (
        got
    )
    assert "the agent printed too much" in got[0][1] and "max_output" in got[0][1]
    assert "stdout held" in got[1][1] and "stderr held" in got[2][1]
    assert "printed too much" in json.dumps(rows[3]["guard"])
