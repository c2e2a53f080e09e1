"""A small project for loop tests: src/value.txt is the metric, bench.py is sealed."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gitimprove.state import experiments
from tests.conftest import TmpRepo

AGENT = Path(__file__).parent / "agents" / "fake_agent.py"
BENCH = """import os, pathlib, sys, time
flag = os.environ.get("SLOW_METRIC_FLAG")
if flag and pathlib.Path(flag).exists():
    pathlib.Path(flag + ".running").write_text(str(os.getpid()))
    time.sleep(30)
text = pathlib.Path("src/value.txt").read_text().strip()
try:
    v = float(text)
except ValueError:
    print("value.txt holds no number")
    sys.exit(0)
print(f"METRIC score={v:g}")
"""
GUARD = "import pathlib, sys\nsys.exit(1 if pathlib.Path('src/broken').exists() else 0)\n"


def make_project(
    repo: TmpRepo, plan: dict[str, Any], *, guard: bool = True, extra: str = ""
) -> Path:
    plan_file = repo.path.parent / "plan.json"
    plan_file.write_text(json.dumps(plan))
    if plan.get("markers") and "sandbox" not in extra:
        # the fake agent reports through a folder outside its workspace, which a sandboxed
        # agent may not write (a folder its command names is read-only)
        extra += 'sandbox = "none"\n'
    config = f"""[metric]
command = "{sys.executable} bench.py"
timeout = "20s"

[guard]
command = "{sys.executable} guard.py"
rework = 1

[scope]
mutable = ["src/**"]
sealed = ["bench.py", "guard.py", "tests/**"]

[loop]
iterations = 20
plateau_patience = 50
stuck_after = 20

[agent]
name = "command"
command = "{sys.executable} {AGENT} {plan_file}"
timeout = "3s"
{extra}"""
    if not guard:
        config = config.replace(f'command = "{sys.executable} guard.py"', 'command = ""')
    repo.commit(
        "project",
        {
            "bench.py": BENCH,
            "guard.py": GUARD,
            "src/value.txt": "100\n",
            "README.txt": "readme\n",
            ".gitimprove.toml": config,
        },
    )
    return plan_file


def run_rows(repo: TmpRepo, run: str) -> list[dict[str, Any]]:
    rows = [
        {"commit": e.commit, **e.state}
        for e in experiments.all_experiments(repo.open())
        if e.state.get("run") == run
    ]
    return sorted(rows, key=lambda r: (r.get("iteration", -1), r.get("candidate") or 0))


SRC_VALUE_BENCH = "print(f\"METRIC score={float(open('src/value.txt').read()):g}\")\n"


def value_project(
    repo: TmpRepo,
    agent_command: str,
    bench: str = SRC_VALUE_BENCH,
    files: dict[str, str] | None = None,
    *,
    sandbox: str = "none",
    timeouts: bool = False,
) -> None:
    """A committed project whose sealed metric (`bench`) prints `src/value.txt` and whose
    agent is `agent_command` (without the sandbox unless `sandbox` names one): for tests of
    what the harness does with what an agent reports or leaves. With `timeouts`, the metric
    has 20 s and the agent 8 s (a hostile agent that hangs ends the attempt, not the test)."""
    metric_timeout = 'timeout = "20s"\n' if timeouts else ""
    agent_timeout = 'timeout = "8s"\n' if timeouts else ""
    repo.commit(
        "project",
        {
            **(files or {}),
            "bench.py": bench,
            "src/value.txt": "100\n",
            ".gitimprove.toml": f"""[metric]
command = "{sys.executable} bench.py"
{metric_timeout}
[scope]
mutable = ["src/**"]
sealed = ["bench.py"]

[agent]
name = "command"
command = "{agent_command}"
{agent_timeout}sandbox = "{sandbox}"
""",
        },
    )


def planned_project(
    repo: TmpRepo,
    agent: Path,
    names: list[str],
    sandbox: str,
    files: dict[str, str],
    agent_extra: str = "",
) -> None:
    """A committed project whose sealed metric prints `src/value.txt`, for a hostile agent
    executable (`agent`) that reads its plan (`names`, one an attempt) from a file beside the
    repository, with 40 rounds and no early stop, `files` added to the commit."""
    plan = repo.path.parent / "plan.json"
    plan.write_text(json.dumps({str(i): n for i, n in enumerate(names, 1)}))
    repo.commit(
        "project",
        {
            "bench.py": "print(f\"METRIC score={float(open('src/value.txt').read()):g}\")\n",
            "src/value.txt": "100\n",
            **files,
            ".gitimprove.toml": f"""[metric]
command = "{sys.executable} bench.py"

[scope]
sealed = ["bench.py"]

[loop]
iterations = 40
plateau_patience = 50
stuck_after = 40

[agent]
name = "command"
command = "{sys.executable} {agent} {plan}"
sandbox = "{sandbox}"
{agent_extra}""",
        },
    )


def kept_at_90(repo: TmpRepo, unchanged: dict[Path, str]) -> None:
    """One round of run `t` (an agent that writes 90 into the value project): the baseline,
    then the change kept at 90; each of the user's own files in `unchanged` still holds its
    text (the agent, sandboxed, reached none of them)."""
    res = repo.cli("run", "--run", "t", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "keep"], rows
    assert rows[1]["metric"]["value"] == 90
    for path, text in unchanged.items():
        assert path.read_text() == text, path


def new_file_judged(
    path: str,
    sealed: list[str],
    mutable: list[str],
    base: set[str],
    content: Callable[[str], bytes],
) -> list[str]:
    """`implicit_changes` for one changed file `path`: a file of `base` has `content(path)` on
    both sides, any other is new."""
    from gitimprove.loop.implicit import implicit_changes

    def read(p: str) -> tuple[bytes | None, bytes | None]:
        data = content(p)
        return (data if p in base else None), data

    return implicit_changes(
        [path], sealed, mutable, read, lambda folder: False, existed=lambda p: p in base
    )


def assert_named(found: list[str], named: str | None) -> None:
    """Nothing found, or exactly one finding that says `named`."""
    if named is None:
        assert found == [], found
    else:
        assert len(found) == 1 and named in found[0], found
