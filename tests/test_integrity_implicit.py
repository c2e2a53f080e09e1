"""Files an interpreter or a test runner loads without being named (docs/integrity.md): a
module named like the standard library's next to a sealed file, `conftest.py`, test-runner
configuration, compiled files, `.pth` and `sitecustomize.py`. Each is planted by a hostile agent
in a real run; the attempt is `out-of-scope` naming the path, never kept."""

from __future__ import annotations

import json
import py_compile
import sys
from pathlib import Path

import pytest

from gitimprove.loop.implicit import implicit_changes
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import needs_bwrap

AGENT = Path(__file__).parent / "agents" / "implicit_agent.py"
BENCH = """import subprocess, sys
from tools import reader
subprocess.run([sys.executable, "src/prog.py"], check=True)
print(f"METRIC score={reader.value():g}")
"""
READER = """def value():
    return float(open("src/value.txt").read())
"""
TEST = """import pathlib


def test_value_is_sane():
    assert float(pathlib.Path("src/value.txt").read_text()) >= 50
"""


def project(repo: TmpRepo, plan: dict[str, str], sandbox: str, mutable: str = '"**"') -> None:
    plan_file = repo.path.parent / "plan.json"
    plan_file.write_text(json.dumps(plan))
    config = f"""[metric]
command = "{sys.executable} bench.py"
timeout = "20s"

[guard]
command = "{sys.executable} -m pytest -q -p no:cacheprovider tests"

[scope]
mutable = [{mutable}]
sealed = ["bench.py", "tools/*.py", "tests/test_*.py"]

[loop]
iterations = 40
plateau_patience = 50
stuck_after = 40

[agent]
name = "command"
command = "{sys.executable} {AGENT} {plan_file}"
timeout = "20s"
sandbox = "{sandbox}"
"""
    repo.commit(
        "project",
        {
            "bench.py": BENCH,
            "tools/__init__.py": "",
            "tools/reader.py": READER,
            "tests/test_value.py": TEST,
            "src/prog.py": "print('working')\n",
            "src/value.txt": "100\n",
            "pyproject.toml": '[project]\nname = "demo"\nversion = "1"\n',
            ".gitimprove.toml": config,
        },
    )


ATTACKS = {
    "shadow-root": "subprocess.py",
    "shadow-tests": "tests/pathlib.py",
    "shadow-package": "logging/__init__.py",
    "shadow-extension": "subprocess.cpython-311-x86_64-linux-gnu.so",
    "conftest-root": "conftest.py",
    "conftest-nested": "src/conftest.py",
    "setup-cfg": "setup.cfg",
    "pytest-ini": "pytest.ini",
    "tox-ini": "tox.ini",
    "pyproject-tool": "pyproject.toml",
    "pyc": "tools/__pycache__/reader.cpython-311.pyc",
    "pyc-loose": "src/mod.pyc",
    "pth": "src/evil.pth",
    "sitecustomize": "src/sitecustomize.py",
    "usercustomize": "usercustomize.py",
    "shadow-dependency": "iniconfig.py",
    "shadow-dependency-tests": "tests/pluggy/__init__.py",
    "new-top-level": "helper_mod.py",
    "dist-info": "src/evil-1.0.dist-info/",
    "tool-cache": ".mypy_cache/",
    "extension-beside": "src/prog.cpython-311-x86_64-linux-gnu.so",
}


@pytest.mark.parametrize(
    "sandbox", ["none", pytest.param("bwrap", marks=[needs_bwrap, pytest.mark.slow])]
)
@pytest.mark.slow
def test_implicitly_loaded_files_are_sealed(tmp_repo: TmpRepo, sandbox: str) -> None:
    names = [*ATTACKS, "pyproject-meta", "near-name", "extension-alone"]
    if sandbox == "bwrap":  # the defence does not depend on the mode: a sample is enough
        names = ["shadow-root", "shadow-dependency", "dist-info", "pyc", "pyproject-meta"]
    project(tmp_repo, {str(i): n for i, n in enumerate(names, 1)}, sandbox)
    res = tmp_repo.cli("run", "--run", "h", "-n", str(len(names)), "--json")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "h")
    by = {r["description"].split(":")[0]: r for r in rows[1:]}
    for name in names:
        row = by[name]
        if name in ATTACKS:
            assert row["status"] == "out-of-scope", (name, row)
            assert ATTACKS[name] in row["reason"], (name, row["reason"])
        else:  # an ordinary change is measured and kept
            assert row["status"] == "keep", (name, row)
    tip = tmp_repo.git("ls-tree", "-r", "--name-only", "improve/h").split("\n")
    planted = {ATTACKS[n] for n in names if n in ATTACKS} - {"pyproject.toml"}
    assert not [p for p in tip if any(p.startswith(x) for x in planted)], tip
    assert "tool" not in tmp_repo.git("show", "improve/h:pyproject.toml")


@pytest.mark.slow
def test_a_file_named_in_mutable_may_change(tmp_repo: TmpRepo) -> None:
    """Listing the file by name in `[scope] mutable` (not `**` alone) lets the agent change it:
    the change is measured and guarded, not refused — and the guard still sees that this
    conftest.py empties the suite (it ran fewer tests than the run's base)."""
    project(tmp_repo, {"1": "conftest-root", "2": "pyc"}, "none", '"**", "conftest.py"')
    res = tmp_repo.cli("run", "--run", "h", "-n", "2", "--json")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "h")
    assert [r["status"] for r in rows] == ["baseline", "guard-fail", "out-of-scope"], rows
    assert "guard failed (exit 0)" in rows[1]["reason"], rows[1]  # passed by its exit code alone


@pytest.mark.slow
def test_a_compiled_file_in_the_tree_is_never_run(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    """A `__pycache__` pyc in the base tree that Python would trust without looking at the
    source (unchecked-hash) is not what the metric runs: the measured value is the source's."""
    project(tmp_repo, {"1": "pyproject-meta"}, "none")
    forged = tmp_path / "reader.py"
    forged.write_text("def value():\n    return 1.0\n")
    pyc = tmp_repo.path / "tools" / "__pycache__" / f"reader.{sys.implementation.cache_tag}.pyc"
    py_compile.compile(
        str(forged), str(pyc), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
    )
    tmp_repo.commit("a compiled file")
    res = tmp_repo.cli("run", "--run", "h", "-n", "1", "--json")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "h")
    assert rows[0]["metric"]["value"] == 100, rows[0]


@pytest.mark.parametrize(
    ("path", "flagged"),
    [
        ("subprocess.py", True),
        ("tests/subprocess.py", True),  # next to a sealed test
        ("src/subprocess.py", False),  # no sealed file there
        ("json/__init__.py", True),
        ("json/decoder.py", True),  # a module of a package named like the stdlib's
        ("test/data.txt", False),  # a folder named like a stdlib module, not a package
        ("string.pyw", True),
        ("os.cpython-312-darwin.so", True),
        ("src/a/b/conftest.py", True),
        ("docs/__pycache__/x.txt", True),
        (".mypy_cache/3.11/src/prog.meta.json", True),
        ("src/.pytest_cache/v/cache/lastfailed", True),
        (".tox/py311/bin/python", True),
        ("web/tsconfig.tsbuildinfo", True),
        ("src/mypy_cache.py", False),
        ("lib/site.pth", True),
        ("deep/usercustomize.py", True),
        (".pytest.ini", True),
        ("src/tox.ini", True),
        ("src/mod.py", False),
        ("src/typing_extensions.py", False),
        ("README.md", False),
    ],
)
@pytest.mark.slow
def test_what_counts_as_loaded_implicitly(path: str, flagged: bool) -> None:
    def read(p: str) -> tuple[bytes | None, bytes | None]:
        return None, b"x"

    found = implicit_changes([path], ["tests/test_a.py", "bench.py"], ["**"], read, lambda f: True)
    assert bool(found) == flagged, found
    assert all(f.startswith(path + " (") for f in found)
    if flagged:  # named explicitly in mutable: allowed
        sealed = ["tests/test_a.py", "bench.py"]
        assert not implicit_changes([path], sealed, ["**", path], read, lambda f: True)


@pytest.mark.parametrize(
    ("before", "after", "flagged"),
    [
        (b'[project]\nname = "a"\n', b'[project]\nname = "b"\n', False),
        (None, b'[project]\nname = "b"\n', False),
        (
            b'[tool.pytest.ini_options]\naddopts = "-q"\n',
            b'[tool.pytest.ini_options]\naddopts = "--co"\n',
            True,
        ),
        (b"[build-system]\nrequires = []\n", b"", True),
        (b"", b"[tool.coverage]\nx = 1\n", True),
        (b"", b"not = [toml", True),
    ],
)
def test_pyproject_is_judged_by_its_tool_tables(
    before: bytes | None, after: bytes | None, flagged: bool
) -> None:
    found = implicit_changes(["pyproject.toml"], [], ["**"], lambda p: (before, after), bool)
    assert bool(found) == flagged, found


SEALED = {
    "bench.py": b"import numpy as np\nfrom mod import f\nfrom . import x\nimport a.b.c\n",
    "tools/deep/reader.py": b"import json\n",
}


@pytest.mark.parametrize(
    ("path", "flagged"),
    [
        ("tools/__init__.py", True),  # runs when the sealed tools.deep.reader is imported
        ("tools/deep/__init__.py", True),
        ("numpy.py", True),  # new, named like what the sealed bench.py imports
        ("numpy/__init__.py", True),
        ("a.py", True),
        ("tools/deep/numpy.py", True),
        ("mod.py", False),  # the project's own module: it was there before
        ("src/numpy.py", False),  # not where the sealed files are
        ("src/__init__.py", True),  # a new top-level package: the root is on sys.path
        ("x.py", True),  # a new top-level module, whatever imports it
        ("src/x.py", False),  # not where the sealed files are, named like nothing installed
    ],
)
def test_what_sealed_files_import_is_sealed_too(path: str, flagged: bool) -> None:
    def read(p: str) -> tuple[bytes | None, bytes | None]:
        if p in SEALED:
            return SEALED[p], SEALED[p]
        return (b"old" if p == "mod.py" else None), b"new"

    found = implicit_changes([path], list(SEALED), ["**"], read, lambda f: False)
    assert bool(found) == flagged, found


def test_a_checkout_holds_no_compiled_python_and_no_run_reads_anothers(
    tmp_repo: TmpRepo,
) -> None:
    """Measurement checkouts are written without `__pycache__/` and `*.pyc` and without a
    tool's cache (`.pytest_cache/`, `.mypy_cache/`, `*.tsbuildinfo`: the guard's tool would
    read a committed one as its own), and what compiled Python or cache a run wrote is gone
    before the next."""
    from gitimprove.git.checkout import checkout, compiled, unwritten

    tag = sys.implementation.cache_tag
    head = tmp_repo.commit(
        "with compiled files",
        {
            "tools/reader.py": "def value():\n    return 100.0\n",
            f"tools/__pycache__/reader.{tag}.pyc": "forged",
            "loose.pyc": "forged",
            "keep/notes.txt": "kept\n",
            ".pytest_cache/v/cache/lastfailed": '{"tests/test_a.py::test_a": true}',
            "src/.mypy_cache/3.11/mod.meta.json": "{}",
            "web/tsconfig.tsbuildinfo": "{}",
        },
    )
    with checkout(tmp_repo.open(), head) as co:
        on_disk = [p.relative_to(co.path).as_posix() for p in co.path.rglob("*")]
        assert "tools/reader.py" in on_disk and "keep/notes.txt" in on_disk
        assert not [p for p in on_disk if unwritten(p)], on_disk
        assert not [p for p in co.expected if unwritten(p)]
        assert not [p for p in on_disk if "cache" in p or p.endswith("tsbuildinfo")], on_disk
        # a run's code writes compiled files (it reset its environment, or meant to)
        (co.path / "tools" / "__pycache__").mkdir()
        (co.path / "tools" / "__pycache__" / f"reader.{tag}.pyc").write_bytes(b"forged")
        (co.path / "other.pyc").write_bytes(b"forged")
        (co.path / ".mypy_cache").mkdir()  # so does the guard's tool
        (co.path / ".mypy_cache" / "x.json").write_text("{}")
        assert co.verify(after_run=True) == []
        assert co.reset() == []
        left = [p.relative_to(co.path).as_posix() for p in co.path.rglob("*")]
        assert not [p for p in left if compiled(p) or ".mypy_cache" in p], left
        assert "tools/reader.py" in left and co.verify() == []


@pytest.mark.parametrize(
    ("path", "flagged"),
    [
        ("iniconfig.py", True),  # pytest's dependency, from the interpreter's site-packages
        ("tests/pluggy/__init__.py", True),  # next to the sealed tests, named like one
        ("tests/helper.py", False),  # next to the sealed tests, named like nothing
        ("helper.py", True),  # new at the root: top-level, out of scope unless named
        ("helper/__init__.py", True),
        ("src/iniconfig.py", False),  # not on sys.path
        ("evil-1.0.dist-info/entry_points.txt", True),
        ("src/deep/x.egg-info/entry_points.txt", True),
        ("mod.py", False),  # the project's own, changed: not new
        ("src/tool/__init__.py", False),
    ],
)
def test_new_modules_on_sys_path_are_out_of_scope(path: str, flagged: bool) -> None:
    """A new top-level module or package, a new module named like one the interpreter
    imports where the workspace is on sys.path, and any package metadata folder are out of
    scope unless `mutable` spells them."""
    from gitimprove.loop.importable import importable_names

    names = importable_names([f"{sys.executable} -m pytest"], Path("/"))
    assert {"iniconfig", "pluggy", "json"} <= names

    def read(p: str) -> tuple[bytes | None, bytes | None]:
        return (b"old" if p == "mod.py" else None), b"new"

    sealed = ["tests/test_a.py", "bench.py"]
    found = implicit_changes([path], sealed, ["**"], read, lambda f: False, names)
    assert bool(found) == flagged, found
    if flagged:
        spelled = path.split("/")[-2] if path.endswith(("__init__.py", ".txt")) else path
        marker = spelled.rsplit(".", 1)[0] if not spelled.endswith("-info") else spelled
        assert not implicit_changes([path], sealed, ["**", f"**/{marker}*", marker + "*"],
                                    read, lambda f: False, names), marker  # fmt: skip


@pytest.mark.parametrize(
    ("path", "flagged"),
    [
        ("src/work.cpython-311-x86_64-linux-gnu.so", True),
        ("src/work.abi3.so", True),
        ("src/work.so", True),
        ("src/work.pyd", True),
        ("src/fast.so", False),  # no source of its name: the diff shows a new binary
        ("src/work.so.1", False),  # no name Python's finder loads
        ("src/work.py.so", False),  # `work.py`'s extension would be a module `work.py`: none
    ],
)
def test_an_extension_module_beside_its_source_is_out_of_scope(path: str, flagged: bool) -> None:
    """Python's finder takes `m.<tag>.so` before `m.py`: a reviewer would read a source that
    never runs. Unless `mutable` spells `.so` (or `.pyd`)."""
    from tests.loop_helpers import new_file_judged

    base = {"src/work.py", "bench.py"}
    content = lambda p: b"x" if p in base or p == path else None  # noqa: E731
    found = new_file_judged(path, ["bench.py"], ["src/**"], base, content)
    assert bool(found) == flagged, found
    if flagged:
        assert "in place of src/work.py" in found[0], found
        spelled = ["src/**", "src/*." + path.rpartition(".")[2]]
        assert not new_file_judged(path, ["bench.py"], spelled, base, content), spelled
