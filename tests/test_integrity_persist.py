"""Every metric run and guard run starts from exactly the committed tree: what one run writes
(a cache, a module planted for the next run to import) is gone before the next run of any arm,
and a run that writes a file Python or the test runner loads without being named is
`tampered`, naming the path. Hostile code in real runs, both sandbox modes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from gitimprove.git.checkout import checkout
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import needs_bwrap

AGENT = Path(__file__).parent / "agents" / "persist_agent.py"
BENCH = """import subprocess, sys
out = subprocess.run([sys.executable, "src/prog.py"], capture_output=True, text=True)
lines = out.stdout.split()
print(f"METRIC score={float(lines[-1]) if lines else 1e9:g}")
"""


def persist_project(repo: TmpRepo, plan: str, sandbox: str, guard: str = "") -> None:
    config = f"""[metric]
command = "{sys.executable} bench.py"
timeout = "20s"
runs = 3

[guard]
command = "{guard}"

[scope]
mutable = ["src/**"]
sealed = ["bench.py", "data/**"]

[agent]
name = "command"
command = "{sys.executable} {AGENT} {plan}"
timeout = "20s"
sandbox = "{sandbox}"
"""
    files = {"bench.py": BENCH, "src/prog.py": "print(100)\n", "data/random.txt": "7\n"}
    repo.commit("project", {**files, ".gitimprove.toml": config})


def statuses(repo: TmpRepo) -> list[str]:
    return [str(r["status"]) for r in run_rows(repo, "p")]


PLANTS = [
    "subprocess.py",  # the sealed bench imports it from the next run on
    "json/__init__.py",  # a package named like the standard library's
    "conftest.py",
    "src/sitecustomize.py",
    "data/zz.pth",
    "data/random.py",  # beside a sealed file: its folder is on sys.path for that script
]


@pytest.mark.slow
@pytest.mark.parametrize("path", PLANTS)
def test_a_file_planted_during_a_run_is_tampered_and_gone(tmp_repo: TmpRepo, path: str) -> None:
    persist_project(tmp_repo, f"plant:{path}", "none")
    res = tmp_repo.cli("run", "--run", "p", "-n", "2")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "p")
    assert [r["status"] for r in rows] == ["baseline", "tampered", "keep"]
    assert path in str(rows[1]["reason"]) and "the metric run wrote" in str(rows[1]["reason"])
    assert rows[2]["metric"]["value"] == 90  # the next attempt measured honestly, never 1
    assert 1 not in rows[2]["metric"]["incumbent_samples"]


@pytest.mark.slow
@needs_bwrap
def test_a_planted_module_in_the_sandbox_is_tampered(tmp_repo: TmpRepo) -> None:
    persist_project(tmp_repo, "plant:subprocess.py", "bwrap")
    res = tmp_repo.cli("run", "--run", "p", "-n", "2")
    assert res.returncode == 0, res.stdout + res.stderr
    assert statuses(tmp_repo) == ["baseline", "tampered", "keep"]


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_a_cache_one_run_wrote_is_never_seen_by_the_next(tmp_repo: TmpRepo, sandbox: str) -> None:
    persist_project(tmp_repo, "cache", sandbox)
    res = tmp_repo.cli("run", "--run", "p", "-n", "2")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "p")
    assert [r["status"] for r in rows] == ["baseline", "discard", "keep"]
    assert set(rows[1]["metric"]["samples"]) == {103}  # every run started without cache.bin


@pytest.mark.slow
def test_honest_output_and_caches_are_wiped_not_tampered(tmp_repo: TmpRepo) -> None:
    guard = f"{sys.executable} src/prog.py"  # the guard writes the same output again
    persist_project(tmp_repo, "honest", "none", guard=guard)
    res = tmp_repo.cli("run", "--run", "p", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "p")
    assert [r["status"] for r in rows] == ["baseline", "keep"]
    assert rows[1]["guard"]["status"] == "pass"


@pytest.mark.slow
def test_a_file_planted_by_the_guard_is_tampered(tmp_repo: TmpRepo) -> None:
    guard = f"{sys.executable} src/prog.py guard"
    persist_project(tmp_repo, "guardplant:tests/conftest.py", "none", guard=guard)
    res = tmp_repo.cli("run", "--run", "p", "-n", "2")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "p")
    assert [r["status"] for r in rows] == ["baseline", "tampered", "keep"]
    assert "tests/conftest.py" in str(rows[1]["reason"]) and "guard run" in str(rows[1]["reason"])


def test_reset_puts_back_exactly_the_commit(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    commit = tmp_repo.commit("c", {"a.py": "x = 1\n", "pkg/b.py": "y\n", ".gitignore": "out/\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine\n")
    repo = tmp_repo.open()
    with checkout(repo, commit) as co:
        root = co.path
        (root / "out").mkdir()
        (root / "out" / "ignored.bin").write_bytes(b"1")
        (root / "pkg" / "new.py").write_text("z\n")
        (root / "pkg" / "__pycache__").mkdir()
        (root / "pkg" / "__pycache__" / "b.cpython-311.pyc").write_bytes(b"\0")
        os.symlink(outside, root / "link")
        locked = root / "locked"
        (locked / "deep").mkdir(parents=True)
        (locked / "deep" / "f").write_text("f")
        os.chmod(locked / "deep", 0)
        os.chmod(locked, 0)
        assert co.verify(after_run=True) == []  # the commit's own files are untouched
        assert set(co.added()) == {"out", "pkg/new.py", "pkg/__pycache__", "link", "locked"}
        assert co.reset() == []
        assert co.added() == [] and not root.exists()  # a fresh copy under a new name
        assert sorted(str(p.relative_to(co.path)) for p in co.path.rglob("*")) == [
            ".gitignore",
            "a.py",
            "pkg",
            "pkg/b.py",
        ]
        assert co.verify() == []
    assert (outside / "keep.txt").read_text() == "mine\n"  # a link is removed, not followed
