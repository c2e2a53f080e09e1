"""A benchmark the metric command names by path outside the repository (`python3
/srv/bench/bench.py`, `~/bench.py`, `--data=/srv/data.bin`) is as much the measurement as a
sealed file. An agent without the sandbox that rewrites it (to print a better number) stops
the run, naming the file, and its attempt is `tampered`; in the sandbox the file is read-only
to the agent and the run goes on, measured by the real benchmark."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from gitimprove.loop.sites import command_paths
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import needs_bwrap

BENCH = "import sys\nprint('METRIC score=' + open(sys.argv[1]).read().strip())\n"
AGENT = """import pathlib, sys
try:
    pathlib.Path(sys.argv[1]).write_text("print('METRIC score=1')\\n")
except OSError as exc:
    print(f"refused: {exc}", file=sys.stderr)
pathlib.Path("src/value.txt").write_text("99\\n")
"""


def project(repo: TmpRepo, tmp_path: Path, bench: Path, named: str, sandbox: str) -> None:
    bench.parent.mkdir(parents=True, exist_ok=True)
    bench.write_text(BENCH)
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    repo.commit(
        "project",
        {
            "src/value.txt": "100\n",
            ".gitimprove.toml": f"""[metric]
command = "{sys.executable} {named} src/value.txt"
direction = "lower"

[scope]
mutable = ["src/**"]

[agent]
name = "command"
command = "{sys.executable} {agent} {bench}"
sandbox = "{sandbox}"
""",
        },
    )


@pytest.mark.slow
@pytest.mark.parametrize("where", ["tmp", "home"])
def test_an_agent_that_rewrites_a_benchmark_named_outside_the_repository_stops_the_run(
    tmp_repo: TmpRepo, tmp_path: Path, where: str
) -> None:
    bench = (tmp_path / "bench" if where == "tmp" else Path.home() / "bench") / "bench.py"
    named = str(bench) if where == "tmp" else "~/bench/bench.py"
    project(tmp_repo, tmp_path, bench, named, "none")
    res = tmp_repo.cli("run", "--run", "t", "-n", "2")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "stopped" in res.stderr and f"{bench} (changed)" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "tampered"], rows
    assert tmp_repo.git("rev-parse", "improve/t") == tmp_repo.git(
        "rev-parse", "refs/improve/runs/t/base"
    )


@pytest.mark.slow
@needs_bwrap
def test_in_the_sandbox_a_benchmark_named_outside_the_repository_is_read_only(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    bench = tmp_path / "bench" / "bench.py"
    project(tmp_repo, tmp_path, bench, str(bench), "bwrap")
    res = tmp_repo.cli("run", "--run", "t", "-n", "1")
    assert res.returncode == 0, res.stderr
    assert bench.read_text() == BENCH
    rows = run_rows(tmp_repo, "t")
    assert [(r["status"], r["metric"]["value"]) for r in rows] == [
        ("baseline", 100),
        ("keep", 99),
    ], rows


def test_which_paths_a_command_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    for p in (repo / "bench.py", tmp_path / "b.py", tmp_path / "data.bin", tmp_path / "d" / "x"):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("")
    program = tmp_path / "bin" / "mybench"  # found on PATH: a virtualenv's script
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{program.parent}:/usr/bin:/bin")
    monkeypatch.setenv("DATA", str(tmp_path / "data.bin"))

    def named(*commands: str) -> list[Path]:
        return [p for p in command_paths(commands, [repo]) if p.is_relative_to(tmp_path)]

    assert named(
        f"python3 {tmp_path}/b.py --data=$DATA bench.py {repo}/bench.py {tmp_path}/absent.py /tmp",
        f"pytest {tmp_path}/d 'unclosed",
        "",
    ) == [tmp_path / "b.py", tmp_path / "data.bin"]
    assert named(f"pytest -q {tmp_path}/d") == [tmp_path / "d"]
    assert named("X=1 mybench --fast") == [program]
    outputs = f"b --out {tmp_path}/b.py -o {tmp_path}/d --log-file={tmp_path}/data.bin"
    assert named(outputs + f" --junitxml={tmp_path}/x {tmp_path}/b.py") == [tmp_path / "b.py"]


VENV_AGENT = """import glob, os, pathlib
repo = pathlib.Path(os.environ["GITIMPROVE_WORKDIR"]).parents[3]  # <repo>/.git/improve/work/<ws>
for site in glob.glob(str(repo / ".venv/lib/python*/site-packages")):
    pathlib.Path(site, "zz_forge.pth").write_text(
        "import atexit, os; atexit.register(lambda: print('METRIC score=1', flush=True)) "
        "if os.path.exists('src/fast') else None\\n"
    )
pathlib.Path("src/fast").write_text("")
"""


@pytest.mark.slow
def test_a_pth_planted_in_a_virtualenv_of_the_work_tree_stops_the_run(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """The project's virtualenv lives in the work tree, ignored (`.venv/`), and the metric runs
    its interpreter: the work tree's status never shows a file added there, so its
    `site-packages` is watched as any other site folder."""
    venv = tmp_repo.path / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    agent = tmp_path / "agent.py"
    agent.write_text(VENV_AGENT)
    tmp_repo.commit(
        "project",
        {
            ".gitignore": ".venv/\n",
            "bench.py": "print('METRIC score=' + open('src/value.txt').read().strip())\n",
            "src/value.txt": "100\n",
            ".gitimprove.toml": f"""[metric]
command = "{venv}/bin/python bench.py"
direction = "lower"

[scope]
mutable = ["src/**"]
sealed = ["bench.py"]

[agent]
name = "command"
command = "{sys.executable} {agent}"
sandbox = "none"
""",
        },
    )
    res = tmp_repo.cli("run", "--run", "t", "-n", "1")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "stopped" in res.stderr and "zz_forge.pth (added)" in res.stderr, res.stderr
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "tampered"], rows


@pytest.mark.slow
@needs_bwrap
def test_in_the_sandbox_an_agent_script_right_in_tmp_still_runs(tmp_repo: TmpRepo) -> None:
    """`command = "/tmp/agent.sh {prompt_file}"`: the private /tmp must not hide the script
    itself (an honest agent's change is kept, not a `crash` with exit 127), and the script
    stays read-only to the agent."""
    script = Path("/tmp") / f"gitimprove-agent-{uuid.uuid4().hex}.sh"
    script.write_text(
        '#!/bin/sh\necho 1 > src/value.txt\necho gone > "$0" 2>/dev/null || echo ro >&2\n'
    )
    script.chmod(0o755)
    try:
        tmp_repo.commit(
            "project",
            {
                "src/value.txt": "100\n",
                "bench.py": "print('METRIC score=' + open('src/value.txt').read().strip())\n",
                ".gitimprove.toml": f"""[metric]
command = "{sys.executable} bench.py"
direction = "lower"

[scope]
mutable = ["src/**"]

[agent]
name = "command"
command = "{script} {{prompt_file}}"
sandbox = "bwrap"
""",
            },
        )
        res = tmp_repo.cli("run", "--run", "t", "-n", "1")
        assert res.returncode == 0, res.stdout + res.stderr
        rows = run_rows(tmp_repo, "t")
        assert [r["status"] for r in rows] == ["baseline", "keep"], rows
        assert script.read_text().startswith("#!/bin/sh")
    finally:
        script.unlink()
