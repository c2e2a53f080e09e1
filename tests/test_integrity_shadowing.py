"""A new package or extension module named like a sealed Python module, in its folder, is
imported in its place: Python's finder takes a folder `reader/` holding `__init__.py` (or an
extension module `reader.cpython-311-x86_64-linux-gnu.so`, `reader.abi3.so`, `reader.so`)
before `reader.py` in the same folder. A sealed benchmark that does `from tools import reader`
with `tools/reader.py` sealed then ran the candidate's `tools/reader/__init__.py`, and a
candidate that returned 1 was kept against 100, in both sandbox modes: the module was sealed,
but what is imported for its name was not. Such a file is `out-of-scope` unless a `mutable`
pattern spells the module's name."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gitimprove.loop.implicit import implicit_changes
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import needs_bwrap

SANDBOXES = ["none", pytest.param("bwrap", marks=needs_bwrap)]
BENCH = "from tools import reader\nprint(f'METRIC score={reader.value():g}')\n"
READER = "def value():\n    return float(open('src/value.txt').read())\n"
FAKE = "def value():\n    return 1.0\n"


def project(repo: TmpRepo, tmp_path: Path, agent: str, sandbox: str) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\nset -e\n" + agent)
    script.chmod(0o755)
    repo.commit(
        "project",
        {
            "bench.py": BENCH,
            "tools/__init__.py": "",
            "tools/reader.py": READER,
            "src/value.txt": "100\n",
            ".gitimprove.toml": f"""[metric]
command = "{sys.executable} bench.py"
direction = "lower"

[scope]
mutable = ["**"]
sealed = ["bench.py", "tools/reader.py"]

[agent]
name = "command"
command = "{script}"
sandbox = "{sandbox}"
""",
        },
    )


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize(
    ("agent", "named"),
    [
        (
            f"mkdir tools/reader && printf '{FAKE}' > tools/reader/__init__.py\n",
            "tools/reader/__init__.py (a new package or extension module named like the "
            "sealed tools/reader.py",
        ),
        # an extension module: the finder tries it before the source in the same folder
        ("printf 'x' > tools/reader.abi3.so\n", "tools/reader.abi3.so (a new package"),
    ],
)
def test_a_new_package_named_like_a_sealed_module_is_out_of_scope(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str, agent: str, named: str
) -> None:
    project(tmp_repo, tmp_path, agent, sandbox)
    res = tmp_repo.cli("run", "--run", "t", "-n", "1")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "out-of-scope"], rows
    assert named in str(rows[1]["reason"]), rows
    base = tmp_repo.git("rev-parse", "refs/improve/runs/t/base")
    assert tmp_repo.git("rev-parse", "improve/t") == base


def _judge(new: str, mutable: list[str], sealed: list[str]) -> list[str]:
    return implicit_changes(
        [new],
        sealed,
        mutable,
        lambda p: (None, b"x"),
        lambda folder: False,
        existed=lambda p: False,
        top_level=False,
    )


@pytest.mark.parametrize(
    ("new", "sealed", "mutable", "flagged"),
    [
        ("a/b/m/__init__.py", ["a/b/m.py"], ["**"], True),
        ("a/b/m/__init__.pyc", ["a/b/m.py"], ["**"], True),
        ("a/b/m.cpython-311-x86_64-linux-gnu.so", ["a/b/m.py"], ["**"], True),
        ("a/b/m.so", ["a/b/m.py"], ["**"], True),
        ("a/b/m.pyd", ["a/b/m.py"], ["**"], True),
        ("m/__init__.py", ["m.py"], ["**"], True),
        ("a/b/m/__init__.py", ["a/b/m.py"], ["**", "a/b/m/**"], False),  # spelled: allowed
        ("a/b/n/__init__.py", ["a/b/m.py"], ["**"], False),  # another name
        ("a/c/m/__init__.py", ["a/b/m.py"], ["**"], False),  # another folder
        ("a/b/m/other.py", ["a/b/m.py"], ["**"], False),  # not what the finder takes first
        ("a/b/m/__init__.py", ["a/b/m.txt"], ["**"], False),  # not a module
        # an extension `__init__` comes before the package's sealed `__init__.py`
        ("a/b/__init__.abi3.so", ["a/b/__init__.py"], ["**"], True),
        ("a/b/__init__.cpython-311-x86_64-linux-gnu.so", ["a/b/__init__.py"], ["**"], True),
    ],
)
def test_what_shadows_a_sealed_module(
    new: str, sealed: list[str], mutable: list[str], flagged: bool
) -> None:
    assert bool(_judge(new, mutable, sealed)) == flagged
