"""Files that choose the toolchain or environment a command runs with (`.python-version`,
`.tool-versions`, `rust-toolchain.toml`, `.nvmrc`, `.envrc`, `.env`, go.mod's toolchain
line…) are sealed: an agent that changes only one is out of scope, never kept as a gain,
unless the user names it mutable; a metric run that writes one is tampering.

The sealed benchmark here reads the selector as a version manager would (a faster
"toolchain" when it says so), so each change would otherwise be measured as a gain."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gitimprove.loop.implicit import implicit_changes
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows

# (file, what it holds at the base, what the agent writes)
SELECTORS = {
    ".python-version": ("3.13.0\n", "3.11.7\n"),
    "src/.python-version": ("3.13.0\n", "3.11.7\n"),
    ".tool-versions": ("python 3.13.0\n", "python 3.11.7\n"),
    "mise.toml": ('[tools]\npython = "3.13"\n', '[tools]\npython = "3.11"\n'),
    ".config/mise.toml": ('[tools]\nnode = "22"\n', '[tools]\nnode = "20"\n'),
    "rust-toolchain.toml": (
        '[toolchain]\nchannel = "stable"\n',
        '[toolchain]\nchannel = "nightly"\n',
    ),
    "rust-toolchain": ("stable\n", "nightly\n"),
    ".nvmrc": ("22\n", "20\n"),
    ".node-version": ("22.1.0\n", "20.0.0\n"),
    ".ruby-version": ("3.3.0\n", "3.2.0\n"),
    ".java-version": ("21\n", "17\n"),
    ".go-version": ("1.22\n", "1.21\n"),
    "go.mod": ("module x\n\ngo 1.22\n", "module x\n\ngo 1.22\ntoolchain go1.21.0\n"),
    "go.work": ("go 1.22\n", "go 1.21\n"),
    ".sdkmanrc": ("java=21\n", "java=17\n"),
    ".envrc": ("export MODE=slow\n", "export MODE=fast\n"),
    ".env": ("MODE=slow\n", "MODE=fast\n"),
    ".env.bench": ("MODE=slow\n", "MODE=fast\n"),
    ".pdm-python": ("/usr/bin/python3.13\n", "/usr/bin/python3.11\n"),
}
# the benchmark: 100, less by one for each selector that no longer holds its base content
BENCH = """import json, pathlib
base = json.loads(pathlib.Path("selectors.json").read_text())
changed = sum(pathlib.Path(p).read_text() != text for p, text in base.items())
print(f"METRIC score={100 - changed:g}")
"""
AGENT = """import json, os, pathlib, sys
plan = json.loads(pathlib.Path(sys.argv[1]).read_text())
path, text = plan[os.environ["GITIMPROVE_ITERATION"]]
pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
pathlib.Path(path).write_text(text)
"""


def project(repo: TmpRepo, tmp_path: Path, plan: list[tuple[str, str]], mutable: str) -> None:
    agent, plan_file = tmp_path / "agent.py", tmp_path / "plan.json"
    agent.write_text(AGENT)
    plan_file.write_text(json.dumps({str(i): step for i, step in enumerate(plan, 1)}))
    base = {path: text for path, (text, _) in SELECTORS.items()}
    repo.commit(
        "project",
        {
            **base,
            "selectors.json": json.dumps(base),
            "bench.py": BENCH,
            ".gitimprove.toml": f"""[metric]
command = "{sys.executable} bench.py"

[scope]
mutable = [{mutable}]
sealed = ["bench.py", "selectors.json"]

[loop]
stuck_after = 100
plateau_patience = 100

[agent]
name = "command"
command = "{sys.executable} {agent} {plan_file}"
sandbox = "none"
""",
        },
    )


@pytest.mark.slow
def test_a_toolchain_selector_changed_alone_is_never_kept(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    plan = [(path, new) for path, (_, new) in SELECTORS.items()]
    project(tmp_repo, tmp_path, plan, '"**"')
    res = tmp_repo.cli("run", "--run", "t", "-n", str(len(plan)))
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "t")[1:]
    assert len(rows) == len(plan)
    for (path, _), row in zip(plan, rows, strict=True):
        assert row["status"] == "out-of-scope", (path, row)
        assert path in row["reason"], (path, row["reason"])
    base = tmp_repo.git("rev-parse", "refs/improve/runs/t/base")
    assert tmp_repo.git("rev-parse", "improve/t") == base  # nothing kept


@pytest.mark.slow
def test_a_selector_the_user_names_mutable_may_change(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    project(tmp_repo, tmp_path, [(".python-version", "3.11.7\n")], '"**", ".python-version"')
    res = tmp_repo.cli("run", "--run", "t", "-n", "1")
    assert res.returncode == 0, res.stderr
    assert [r["status"] for r in run_rows(tmp_repo, "t")] == ["baseline", "keep"]


@pytest.mark.slow
def test_a_metric_run_that_writes_a_selector_is_tampering(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """The candidate's code, run by the benchmark, writes a `.env` for the next run to load."""
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import pathlib\npathlib.Path('src/prog.py').write_text("
        "\"import pathlib\\npathlib.Path('.env').write_text('MODE=fast\\\\n')\\nprint(90)\\n\")\n"
    )
    bench = (
        "import subprocess, sys\n"
        "out = subprocess.run([sys.executable, 'src/prog.py'], capture_output=True, text=True)\n"
        "print(f'METRIC score={float(out.stdout.split()[-1]):g}')\n"
    )
    tmp_repo.commit(
        "project",
        {
            "bench.py": bench,
            "src/prog.py": "print(100)\n",
            ".gitimprove.toml": f"""[metric]
command = "{sys.executable} bench.py"
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
    assert res.returncode == 0, res.stderr
    row = run_rows(tmp_repo, "t")[1]
    assert row["status"] == "tampered" and ".env" in row["reason"], row


@pytest.mark.parametrize(
    ("path", "flagged"),
    [
        (".python-version", True),
        ("deep/er/.ruby-version", True),
        (".bun-version", True),
        (".terraform-version", True),
        (".bazelversion", True),
        (".mise/config.toml", True),
        ("mise.local.toml", True),
        (".env.production", True),
        ("web/.env", True),
        ("venv/pyvenv.cfg", True),
        ("uv.toml", True),
        ("src/version.py", False),
        (".version", False),
        ("docs/python-version.md", False),
        ("environment.yml", False),
        ("src/env.py", False),
    ],
)
def test_what_counts_as_a_selector(path: str, flagged: bool) -> None:
    found = implicit_changes([path], ["bench.py"], ["**"], lambda p: (b"a", b"b"), lambda f: False)
    assert bool(found) == flagged, found
