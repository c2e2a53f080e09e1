"""The folders the metric's and guard's Python reads code from at every start, outside the
repository (a virtualenv's `site-packages`, the standard library of a user-installed
interpreter): without the sandbox the agent, or the code a guard runs, can write a `.pth` there
whose code line prints a better `METRIC` line at every later measurement's exit, or a
`sitecustomize.py`. The harness lists those folders around each agent call and each metric
and guard run: a change stops the run naming the path; nothing planted is ever kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows

BENCH = "import pathlib\nprint(f\"METRIC score={float(pathlib.Path('src/value.txt').read_text()):g}\")\n"
# a code line of a `.pth` runs at every start of the interpreter: the metric's last line wins
PTH = "import atexit; atexit.register(lambda: print('METRIC score=1'))\n"
PLANTS = {
    "pth": ("forged.pth", PTH),
    "sitecustomize": ("sitecustomize.py", PTH),
    # a new top-level module: what a later benchmark or test that imports the name runs
    "module": ("benchhelper.py", "print('METRIC score=1')\n"),
}
AGENT = """import json, os, pathlib, sys
plan = json.loads(pathlib.Path(sys.argv[1]).read_text())
step = plan["steps"][os.environ["GITIMPROVE_ITERATION"]]
value = pathlib.Path("src/value.txt")
value.write_text(str(float(value.read_text()) - (2 if step == "honest" else 1)))
if step == "measured":  # the code the guard imports plants it
    pathlib.Path("src/lib.py").write_text(plan["measured"])
elif step != "honest":
    name, text = plan["plants"][step]
    (pathlib.Path(plan["site"]) / name).write_text(text)
"""
MEASURED = """import pathlib, sysconfig
pathlib.Path(sysconfig.get_paths()["purelib"], "forged.pth").write_text({pth!r})
"""


def venv(tmp_path: Path) -> tuple[Path, Path]:
    """A throwaway virtualenv (its python, its site-packages) for the metric and the guard."""
    where = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return python, Path(site)


def project(repo: TmpRepo, tmp_path: Path, steps: list[str], sandbox: str = "none") -> Path:
    python, site = venv(tmp_path)
    agent, plan_file = tmp_path / "agent.py", tmp_path / "plan.json"
    agent.write_text(AGENT)
    plan = {
        "steps": {str(i): s for i, s in enumerate(steps, 1)},
        "site": str(site),
        "plants": PLANTS,
        "measured": MEASURED.format(pth=PTH),
    }
    plan_file.write_text(json.dumps(plan))
    repo.commit(
        "project",
        {
            "bench.py": BENCH,
            "guard.py": "import sys\nsys.path.insert(0, 'src')\nimport lib\n",
            "src/value.txt": "100\n",
            "src/lib.py": "X = 1\n",
            ".gitimprove.toml": f"""[metric]
command = "{python} bench.py"

[guard]
command = "{python} guard.py"
rework = 0

[scope]
mutable = ["src/**"]
sealed = ["bench.py", "guard.py"]

[loop]
stuck_after = 100
plateau_patience = 100

[agent]
name = "command"
command = "{sys.executable} {agent} {plan_file}"
sandbox = "{sandbox}"
""",
        },
    )
    return site


@pytest.mark.parametrize("step", [*PLANTS, "measured"])
@pytest.mark.slow
def test_code_planted_where_python_starts_from_stops_the_run(
    tmp_repo: TmpRepo, tmp_path: Path, step: str
) -> None:
    """The agent writes a `.pth`, a `sitecustomize.py` or a new module into the
    site-packages of the metric's virtualenv (outside the repository: nothing else watches
    there), or the candidate's code writes a `.pth` there when the guard imports it. The run
    stops naming the file, nothing is kept, and a later honest attempt after the user removed
    it is kept on the real number."""
    site = project(tmp_repo, tmp_path, [step, "honest"])
    res = tmp_repo.cli("run", "--run", "p", "-n", "2")
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert "Traceback" not in out
    name = "forged.pth" if step == "measured" else PLANTS[step][0]
    assert str(site / name) in out and "Python reads code from" in out, out
    rows = run_rows(tmp_repo, "p")
    assert [r["status"] for r in rows] == ["baseline", "tampered"], rows
    assert str(site / name) in " ".join(rows[1]["tampered"])
    (site / name).unlink()
    again = tmp_repo.cli("run", "--run", "p", "--resume", "-n", "1")
    assert again.returncode == 0, again.stdout + again.stderr
    rows = run_rows(tmp_repo, "p")
    assert rows[-1]["status"] == "keep" and rows[-1]["metric"]["value"] == 98, rows[-1]
