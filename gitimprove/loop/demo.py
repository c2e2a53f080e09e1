"""`git improve demo`: a new repository with a real optimization target, improved by the loop.

The target is a black-box minimizer scored on Rastrigin, Rosenbrock and Ackley (10-D, 2,000
calls, seeds 0-9; mean log10 of the best value, lower is better; random search scores about
2.5). The built-in scripted agent edits the minimizer's tunables. Offline and deterministic.
"""

from __future__ import annotations

import shutil
import sys
from importlib import resources
from pathlib import Path

from gitimprove.errors import GitImproveError
from gitimprove.util import proc

FILES = ("evaluate.py", "minimizer.py")
IDENTITY = ["-c", "user.name=gitimprove demo", "-c", "user.email=demo@gitimprove.invalid"]


def config_text(iterations: int, candidates: int = 1) -> str:
    python = sys.executable.replace("\\", "/")
    return f"""# gitimprove demo: improve minimizer.py; evaluate.py is sealed.
[metric]
command = "{python} evaluate.py"
name = "score"
direction = "lower"
timeout = "2m"

[scope]
mutable = ["minimizer.py"]
sealed = ["evaluate.py"]

[loop]
iterations = {iterations}
candidates = {candidates}
plateau_patience = 25
stuck_after = 6

[agent]
name = "scripted"
"""


def create(path: Path, iterations: int, candidates: int = 1) -> Path:
    if path.exists() and any(path.iterdir()):
        raise GitImproveError(
            f"{path} exists and is not empty",
            hint="give the demo a new folder: git improve demo DIR",
        )
    path.mkdir(parents=True, exist_ok=True)
    source = resources.files("gitimprove.resources").joinpath("demo")
    for name in FILES:
        (path / name).write_text(
            source.joinpath(name).read_text(encoding="utf-8"), encoding="utf-8"
        )
    (path / ".gitimprove.toml").write_text(config_text(iterations, candidates), encoding="utf-8")
    (path / ".gitignore").write_text("__pycache__/\n", encoding="utf-8")
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        [*IDENTITY, "commit", "-q", "-m", "demo: a random-search minimizer and its benchmark"],
    ):
        res = proc.git(args, cwd=path)
        if not res.ok:
            shutil.rmtree(path, ignore_errors=True)
            raise GitImproveError(f"git {' '.join(args)} failed in {path}: {res.stderr.strip()}")
    res = proc.git(["config", "user.name"], cwd=path)
    if not res.stdout.strip():
        for key, value in (
            ("user.name", "gitimprove demo"),
            ("user.email", "demo@gitimprove.invalid"),
        ):
            proc.git(["config", key, value], cwd=path)
    return path
