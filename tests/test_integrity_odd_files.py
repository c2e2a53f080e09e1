"""The tree is hashed from the files, whatever git would make of them (docs/integrity.md, 5):
a hostile agent leaves names git quotes, folders the harness's own user may not list, a hard
link to a file outside its workspace, attributes and a clone configuration that would have
git convert bytes or run a program. Every attempt is recorded with a reason, nothing of the
agent's runs in the harness, and what is committed is the bytes on disk."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import needs_bwrap

AGENT = Path(__file__).parent / "agents" / "odd_files_agent.py"
ATTACKS = [
    "newline-name",
    "long-name",
    "mode-000-folder",
    "folder-without-x",
    "hard-link-out",
    "eol-ident",
    "filter",
    "gitmodules",
    "clone-config",
]


def _project(repo: TmpRepo, tmp_path: Path, sandbox: str) -> Path:
    outside = tmp_path / "outside.txt"
    outside.write_text("the user's file\n")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    mark = tmp_path / "ran"
    for name in ("post-checkout", "pre-commit", "post-commit", "reference-transaction"):
        (hooks / name).write_text(f"#!/bin/sh\necho hook >> {mark}\n")
        (hooks / name).chmod(0o755)
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {
                **{str(i): a for i, a in enumerate(ATTACKS, 1)},
                "outside": str(outside),
                "hooks": str(hooks),
            }
        )
    )
    repo.commit(
        "project",
        {
            "bench.py": "print(f\"METRIC score={float(open('src/value.txt').read()):g}\")\n",
            "src/value.txt": "100\n",
            ".gitimprove.toml": f"""[metric]
command = "{sys.executable} bench.py"

[scope]
sealed = ["bench.py"]

[loop]
plateau_patience = 50
stuck_after = 50

[agent]
name = "command"
command = "{sys.executable} {AGENT} {plan} {mark}"
sandbox = "{sandbox}"
""",
        },
    )
    return mark


@pytest.mark.parametrize(
    "sandbox", ["none", pytest.param("bwrap", marks=[needs_bwrap, pytest.mark.slow])]
)
@pytest.mark.slow
def test_odd_files_are_hashed_as_they_are_and_run_nothing(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    mark = _project(tmp_repo, tmp_path, sandbox)
    res = tmp_repo.cli("run", "--run", "h", "-n", str(len(ATTACKS)))
    assert res.returncode == 0, res.stderr
    assert not mark.exists(), "the harness ran the agent's program: " + mark.read_text()
    rows = {r["description"]: r for r in run_rows(tmp_repo, "h")[1:]}
    assert sorted(rows) == sorted(ATTACKS), rows
    for attack, row in rows.items():
        assert row["status"] in ("keep", "out-of-scope"), (attack, row)
        assert row["status"] == "keep" or row.get("reason"), (attack, row)
    tip = "improve/h"
    names = tmp_repo.git("ls-tree", "-r", "-z", "--name-only", tip).split("\0")
    assert "src/a\nb.txt" in names and "src/" + "n" * 255 in names
    # an attribute that would have git rewrite bytes (ident, eol) is out of scope, so nothing
    # of it reaches the tip; were it kept, the bytes on disk would be what is committed
    eol = rows["eol-ident"]
    if eol["status"] == "keep":
        blob = tmp_repo.git("cat-file", "-p", f"{tip}:src/id.txt")
        assert blob == "$Id$\nline\n" or blob == "$Id$\nline", repr(blob)
    else:
        assert ".gitattributes" in eol["reason"], eol
        assert "src/id.txt" not in names and ".gitattributes" not in names, names
    config = tmp_repo.git("config", "--list")
    assert "fsmonitor" not in config and "hookspath" not in config.lower()
    outside = tmp_path / "outside.txt"
    assert outside.read_text() == "the user's file\n" and os.stat(outside).st_nlink == 1
    for attack, folder in (("mode-000-folder", "src/locked"), ("folder-without-x", "src/nox")):
        if rows[attack]["status"] == "keep":  # kept: then with the file it hid
            assert f"{folder}/f.txt" in names, names
    assert not stat.S_ISLNK(os.lstat(tmp_repo.path / "bench.py").st_mode)
