"""What the benchmarks share: timing a command, the budget table, and a small loop project."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {
    **os.environ,
    "PYTHONPATH": str(ROOT),
    "GIT_CONFIG_NOSYSTEM": "1",
    # the shell-form hooks find git-improve on PATH, as they do for an installed gitimprove
    "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
}


def run_compiled(tmp: Path) -> None:
    """Run gitimprove from compiled bytecode (kept under `tmp`), as an installed package runs
    (pip compiles it): with PYTHONDONTWRITEBYTECODE in the environment, every command would
    compile each of its modules again (~45 ms for a hook)."""
    ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    ENV["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")


METRIC = "import pathlib\nprint('METRIC n=' + pathlib.Path('src/n.txt').read_text().strip())\n"


def timed(
    argv: list[str],
    cwd: Path,
    repeat: int,
    *,
    stdin: str | None = None,
    before: Callable[[], None] | None = None,
) -> float:
    """Median wall time of `argv` over `repeat` runs."""
    times = []
    for _ in range(repeat):
        if before:
            before()
        start = time.perf_counter()
        subprocess.run(
            argv,
            cwd=cwd,
            env=ENV,
            input=stdin,
            text=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def report(rows: Sequence[tuple[str, float, float, float, str]], width: int = 40) -> bool:
    """Print (name, ours, reference, budget ratio, reference name) rows; True if any is over."""
    print(f"{'path':{width}} {'ms':>8} {'vs':>8} {'ratio':>6} {'budget':>6}  reference")
    over = False
    for name, ours, ref, budget, ref_name in rows:
        ratio = ours / ref
        over |= ratio > budget
        verdict = "ok" if ratio <= budget else "OVER"
        limit = f"{budget:6.1f}" if budget != float("inf") else "     -"
        if budget == float("inf"):
            verdict = "(for information: no budget)"
        print(
            f"{name:{width}} {ours * 1000:8.1f} {ref * 1000:8.1f} {ratio:6.2f} {limit}  {ref_name} {verdict}"
        )
    return over


def loop_project(
    repo: Path, agent_code: str, loop_config: str = "", agent_config: str = "", files: int = 0
) -> None:
    """A committed repository whose metric prints src/n.txt and whose agent is `agent_code`;
    `files` more small files under `lib/` (100 to a folder) make the tree a realistic size."""
    py = sys.executable
    (repo / "src").mkdir(parents=True)
    for i in range(files):
        folder = repo / "lib" / f"d{i // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i:05d}.py").write_text(f"# file {i}\nVALUE = {i}\n")
    (repo / "src" / "n.txt").write_text("0\n")
    (repo / "agent.py").write_text(agent_code)
    (repo / "metric.py").write_text(METRIC)
    (repo / ".gitimprove.toml").write_text(
        f'[metric]\ncommand = "{py} metric.py"\ndirection = "higher"\n'
        f'[scope]\nmutable = ["src/**"]\nsealed = ["metric.py", "agent.py"]\n'
        f"{loop_config}"
        f'[agent]\nname = "command"\ncommand = "{py} {repo / "agent.py"}"\n{agent_config}'
    )
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "bench"],
    ):
        subprocess.run(["git", *args], cwd=repo, env=ENV, check=True)


def run_rows(repo: Path, run: str) -> list[dict]:  # type: ignore[type-arg]
    """Every experiment of `run`, as `git improve log --format jsonl` gives them."""
    out = subprocess.run(
        [sys.executable, "-m", "gitimprove", "log", "--run", run, "--format", "jsonl"],
        cwd=repo,
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [json.loads(line) for line in out.splitlines()]
