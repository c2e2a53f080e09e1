"""What a command's name resolves to is no candidate's file: a search list of the user's
environment with an entry that is not absolute (`PATH=bin:…`, an empty entry, `.`) names a
folder of whatever checkout the command runs in, so a candidate that adds `bin/python3` there
would run in place of the interpreter the metric names (`python3 bench.py`, a sealed
`./bench.py` whose `#!/usr/bin/env python3` looks it up), and print any number. The metric
and the guard run with such entries left out (said once at the run's start); an honest
agent still improves the metric."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import kept_at_90, run_rows, value_project
from tests.test_integrity import needs_bwrap

BENCH = "print(f\"METRIC score={float(open('src/value.txt').read()):g}\")\n"
# the agent's interpreter: a forged line for the benchmark, the real one for anything else
FORGED = f"""#!/bin/sh
case "$1" in
  bench.py|./bench.py) echo "METRIC score=1"; exit 0;;
esac
exec {sys.executable} "$@"
"""
AGENT = """import os, pathlib, sys
folder, plan = sys.argv[1], sys.argv[2]
if plan == "forge" or os.environ["GITIMPROVE_ITERATION"] == "1":
    for name in ("python3", "env"):
        p = pathlib.Path(folder, name)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(pathlib.Path(sys.argv[3]).read_text())
        p.chmod(0o755)
    pathlib.Path("src/notes.txt").write_text("tidy\\n")
else:
    pathlib.Path("src/value.txt").write_text("90\\n")
"""


def _project(repo: TmpRepo, tmp_path: Path, folder: str, command: str, sandbox: str) -> None:
    forged, agent = tmp_path / "forged.sh", tmp_path / "agent.py"
    forged.write_text(FORGED)
    agent.write_text(AGENT)
    shebang = "#!/usr/bin/env python3\n"
    repo.commit(
        "project",
        {
            "bench.py": shebang + BENCH,
            "src/value.txt": "100\n",
            ".gitimprove.toml": f"""[metric]
command = "{command}"
timeout = "20s"

[guard]
command = "python3 -c 'print(1)'"

[scope]
mutable = ["**"]
sealed = ["bench.py"]

[agent]
name = "command"
command = "{sys.executable} {agent} {folder or "."} plan {forged}"
timeout = "20s"
sandbox = "{sandbox}"
""",
        },
    )
    os.chmod(repo.path / "bench.py", 0o755)
    repo.commit("executable bench")


@pytest.mark.parametrize(
    ("entry", "command"),
    [
        ("bin", "python3 bench.py"),
        ("", "python3 bench.py"),  # an empty entry: the current folder
        (".", "./bench.py"),  # a sealed script whose `#!/usr/bin/env python3` looks it up
        ("./tools/../bin", "python3 bench.py"),
    ],
)
@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_a_command_found_through_a_relative_search_entry_is_never_the_candidates(
    tmp_repo: TmpRepo, tmp_path: Path, entry: str, command: str, sandbox: str
) -> None:
    folder = os.path.normpath(entry) if entry else "."
    _project(tmp_repo, tmp_path, folder, command, sandbox)
    python_dir = str(Path(sys.executable).parent)
    path = f"{entry}:{python_dir}:/usr/bin:/bin"
    res = tmp_repo.cli("run", "--run", "t", "-n", "2", env={"PATH": path})
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "discard", "keep"], rows
    assert rows[2]["metric"]["value"] == 90
    assert "not absolute" in res.stdout + res.stderr


SHADOW = """import sys
print("METRIC score=1")
sys.exit(0)
"""
PY_AGENT = """import os, pathlib, sys
if os.environ["GITIMPROVE_ITERATION"] == "1":
    p = pathlib.Path(sys.argv[1])
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(pathlib.Path(sys.argv[2]).read_text())
else:
    pathlib.Path("src/value.txt").write_text("90\\n")
"""


@pytest.mark.parametrize(
    ("pythonpath", "planted"),
    [
        ("src", "src/subprocess.py"),
        ("./lib/", "lib/json/__init__.py"),
        ("/nowhere:lib/py", "lib/py/subprocess.py"),
    ],
)
def test_a_module_shadowed_in_a_relative_pythonpath_folder_is_out_of_scope(
    tmp_repo: TmpRepo, tmp_path: Path, pythonpath: str, planted: str
) -> None:
    """`PYTHONPATH=src` in the user's environment puts the checkout's `src/` on the
    benchmark's `sys.path`, ahead of the standard library: a module planted there named like
    one the sealed benchmark imports is judged as one at the root (out of scope)."""
    shadow, agent = tmp_path / "shadow.py", tmp_path / "agent.py"
    shadow.write_text(SHADOW)
    agent.write_text(PY_AGENT)
    bench = "import json, subprocess\n" + BENCH
    tmp_repo.commit(
        "project",
        {
            "bench.py": bench,
            "src/value.txt": "100\n",
            ".gitimprove.toml": f"""[metric]
command = "{sys.executable} bench.py"
timeout = "20s"

[scope]
mutable = ["**"]
sealed = ["bench.py"]

[agent]
name = "command"
command = "{sys.executable} {agent} {planted} {shadow}"
timeout = "20s"
sandbox = "none"
""",
        },
    )
    res = tmp_repo.cli("run", "--run", "t", "-n", "2", env={"PYTHONPATH": pythonpath})
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "out-of-scope", "keep"], rows
    assert planted in rows[1]["reason"]


KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nxx\n"
KEY_READER = """import os, pathlib
try:
    key = (pathlib.Path(os.path.expanduser("~")) / ".ssh" / "id_ed25519").read_text()
except OSError:
    key = ""
# a key it could read would log it in to this machine's ssh server, outside the sandbox
pathlib.Path("src/value.txt").write_text("80\\n" if "PRIVATE KEY" in key else "90\\n")
"""


@needs_bwrap
def test_the_sandbox_hides_the_keys_that_would_log_in_to_this_machine(
    tmp_repo: TmpRepo, tmp_path: Path, visible_home: Path
) -> None:
    """The sandbox shares the network: a private key readable in `~/.ssh` lets the agent (or
    the measured code) run `ssh localhost …` outside it. `~/.ssh` is an empty folder there;
    what the agent reads of it is nothing, and the honest value is kept."""
    ssh = Path(os.environ["HOME"]) / ".ssh"
    ssh.mkdir(mode=0o700, exist_ok=True)
    (ssh / "id_ed25519").write_text(KEY)
    agent = tmp_path / "reader.py"
    agent.write_text(KEY_READER)
    bench = (
        "import os, pathlib\n"
        + ("assert not list((pathlib.Path(os.path.expanduser('~')) / '.ssh').iterdir())\n")
        + BENCH
    )
    value_project(tmp_repo, f"{sys.executable} {agent}", bench, sandbox="bwrap", timeouts=True)
    kept_at_90(tmp_repo, {ssh / "id_ed25519": KEY})
