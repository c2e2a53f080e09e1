"""Git files outside the repository that change what your own git checks out or runs.

Without the sandbox an agent can write `~/.gitconfig`, the XDG `git/config`, the XDG
`git/attributes` (the global attributes file git reads by default) and the file a
`core.attributesFile` names. `*.txt ident` there makes `git switch improve/<run>` write
`$Id$` expanded into your work tree (the commit you check out is not the one measured);
`core.autocrlf`, a `filter.<name>.smudge`, a `url.<base>.insteadOf` or an `include.path`
change what your next checkout or fetch holds. The harness's own git reads none of them; a
change to any of them during an agent call stops the run, naming the file (exit 1, the
attempt `tampered`, the run branch where it was)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project
from tests.test_integrity import hostile_project

AGENT = """import os, pathlib, sys
target = pathlib.Path(os.path.expanduser(sys.argv[1]))
target.parent.mkdir(parents=True, exist_ok=True)
with open(target, "a") as f:
    f.write(bytes.fromhex(sys.argv[2]).decode().replace("|", "\\n"))
pathlib.Path("src/value.txt").write_text("99\\n")
"""

PLANTS = [
    ("~/.config/git/attributes", "*.txt ident|", "~/.config/git/attributes"),
    ("~/.gitconfig", "[core]|\tautocrlf = true|", "~/.gitconfig"),
    ("~/.config/git/config", '[filter "x"]|\tsmudge = cat|', "~/.config/git/config"),
    (
        "~/.gitconfig",
        '[url "https://example.invalid/"]|\tinsteadOf = https://github.com/|',
        "~/.gitconfig",
    ),
    ("~/.config/git/config", "[include]|\tpath = ~/more.gitconfig|", "~/.config/git/config"),
    ("~/my.attributes", "* eol=crlf|", "~/my.attributes"),
    # files the user's config includes: ~/.gitconfig's own, and .git/config's (outside the
    # repository)
    ("~/.gitconfig.local", "[core]|\tautocrlf = true|", "~/.gitconfig.local"),
    ("{shared}", '[filter "x"]|\tsmudge = cat|', "shared.gitconfig"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("target", "text", "named"), PLANTS)
def test_a_global_git_file_written_by_an_agent_stops_the_run(
    tmp_repo: TmpRepo, tmp_path: Path, target: str, text: str, named: str
) -> None:
    home = Path.home()
    # the user's own global attributes file, named in ~/.gitconfig
    (home / ".gitconfig").write_text(
        f"[core]\n\tattributesFile = {home}/my.attributes\n[include]\n\tpath = ~/.gitconfig.local\n"
    )
    (home / "my.attributes").write_text("")
    if target == "{shared}":  # a file outside the repository that .git/config includes
        target = str(tmp_path / "shared.gitconfig")
        Path(target).write_text("")
        tmp_repo.git("config", "include.path", target)
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    value_project(
        tmp_repo, f"{sys.executable} {agent} {target} {text.encode().hex()}", sandbox="none"
    )
    res = tmp_repo.cli("run", "--run", "g", "-n", "1")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "stopped" in res.stderr and named in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    rows = run_rows(tmp_repo, "g")
    assert [r["status"] for r in rows] == ["baseline", "tampered"], rows
    base = tmp_repo.git("rev-parse", "refs/improve/runs/g/base")
    assert tmp_repo.git("rev-parse", "improve/g") == base


@pytest.mark.slow
def test_the_clone_attributes_an_agent_writes_change_nothing_measured(tmp_repo: TmpRepo) -> None:
    """`.git/info/attributes` and `.git/config` of its own clone: the harness hashes the tree
    from the files and writes checkouts from the blobs, so no filter runs, no line end or
    `$Id$` is converted, and the value measured is the one the agent wrote."""
    hostile_project(tmp_repo, {"1": "clone-attributes:99"}, "none")
    res = tmp_repo.cli("run", "--run", "c", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "c")
    assert [r["status"] for r in rows] == ["baseline", "keep"], rows
    assert rows[1]["metric"]["value"] == 99
    assert tmp_repo.git("show", f"{rows[1]['commit']}:src/value.txt") == "99"
    assert not (tmp_repo.path.parent / "clone-filter-ran").exists()


BENCH = """import subprocess, sys
out = subprocess.run([sys.executable, "src/work.py"], capture_output=True, text=True, check=True)
print("METRIC score=" + out.stdout.strip(), flush=True)
"""
# the measured code, not the agent, writes the global attributes file
CODE_AGENT = """import pathlib
pathlib.Path("src/work.py").write_text(
    "import os, pathlib\\n"
    "home = pathlib.Path(os.environ.get('XDG_CONFIG_HOME') or pathlib.Path.home() / '.config')\\n"
    "(home / 'git').mkdir(parents=True, exist_ok=True)\\n"
    "with open(home / 'git' / 'attributes', 'a') as f:\\n"
    "    f.write('*.txt ident\\\\n')\\n"
    "print(99)\\n"
)
print('{"description": "a faster path"}')
"""


@pytest.mark.slow
def test_a_global_git_file_written_by_the_measured_code_stops_the_run(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(CODE_AGENT)
    value_project(
        tmp_repo,
        f"{sys.executable} {agent}",
        BENCH,
        {"src/work.py": "print(open('src/value.txt').read().strip())\n"},
        sandbox="none",
        timeouts=True,
    )
    res = tmp_repo.cli("run", "--run", "m", "-n", "1")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "stopped" in res.stderr and "~/.config/git/attributes" in res.stderr, res.stderr
    rows = run_rows(tmp_repo, "m")
    assert [r["status"] for r in rows] == ["baseline", "tampered"], rows
    base = tmp_repo.git("rev-parse", "refs/improve/runs/m/base")
    assert tmp_repo.git("rev-parse", "improve/m") == base
