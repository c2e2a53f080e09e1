"""The commit the user checks out is the one measured: no `.gitattributes` that changes how
git writes files into a work tree.

The harness measures a checkout written from the commit's blobs; git applies the attributes
when the user checks the commit out (`ident` expands `$Id$`, `eol`/`text` convert line ends, a
`filter` smudges, `working-tree-encoding` re-encodes). An agent that gave its own file `ident`
and printed 1 while `$Id$` was unexpanded was kept at 1 against 100 — and `git switch
improve/<run>` then measured 100, in both sandbox modes (tests/agents/attributes_agent.py).
Such a `.gitattributes` is now `out-of-scope`, naming it, unless `[scope] mutable` spells it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gitimprove.loop.implicit import checkout_attributes, converted_on_checkout
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project
from tests.test_integrity import needs_bwrap

AGENT = Path(__file__).parent / "agents" / "attributes_agent.py"
BENCH = """import subprocess, sys
out = subprocess.run([sys.executable, "src/work.py"], capture_output=True, text=True, check=True)
print("METRIC score=" + out.stdout.strip(), flush=True)
"""
MACROS = "[attr]kw ident\n[attr]keep-lf text eol=lf -diff\n*.png binary\n"
WORK = "print(open('src/value.txt').read().strip())\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("attribute", "sandbox"),
    [
        ("ident", "none"),
        pytest.param("ident", "bwrap", marks=needs_bwrap),
        ("eol=crlf", "none"),
        # macros the committed root .gitattributes defines (only it can): `kw` is `ident`
        ("kw", "none"),
        ("keep-lf", "none"),
    ],
)
def test_a_gitattributes_that_changes_the_checkout_is_out_of_scope(
    tmp_repo: TmpRepo, attribute: str, sandbox: str
) -> None:
    value_project(
        tmp_repo,
        f"{sys.executable} {AGENT} {attribute}",
        BENCH,
        {"src/work.py": WORK, ".gitattributes": MACROS},
        sandbox=sandbox,
        timeouts=True,
    )
    res = tmp_repo.cli("run", "--run", "a", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "a")
    assert [r["status"] for r in rows] == ["baseline", "out-of-scope"], rows
    assert "src/.gitattributes" in rows[1]["reason"], rows[1]["reason"]
    base = tmp_repo.git("rev-parse", "refs/improve/runs/a/base")
    assert tmp_repo.git("rev-parse", "improve/a") == base


def test_which_attributes_change_the_checkout() -> None:
    assert checkout_attributes(b"*.py ident\n*.sh eol=lf text\n") == (
        ("*.py", "ident"),
        ("*.sh", "eol=lf"),
        ("*.sh", "text"),
    )
    assert checkout_attributes(b"x filter=lfs diff=lfs merge=lfs -text\n") == (("x", "filter=lfs"),)
    harmless = b"# a comment ident\n*.png binary -text\n*.c diff=cpp linguist-vendored\n!x !eol\n"
    assert checkout_attributes(harmless) == ()
    assert checkout_attributes(None) == ()
    # a name git does not know may be a macro (of the root .gitattributes, .git/info/attributes
    # or your global attributes file) that sets one of them: judged as if it did
    assert checkout_attributes(b"*.txt kw\n") == (("*.txt", "kw"),)
    assert checkout_attributes(b"[attr]kw ident\n") == (("[attr]kw", "ident"),)
    known = b"*.py export-ignore delta=false whitespace=tab conflict-marker-size=9 lockable\n"
    assert checkout_attributes(known + b"*.md linguist-generated=true -kw !kw\n") == ()


# the sealed root .gitattributes gives `*.dat` ident through a macro; the agent adds a .dat file
ROOT_IDENT = "[attr]kw ident\n*.dat kw\n"
DAT_AGENT = """import pathlib
pathlib.Path("src/marker.dat").write_text("$" + "Id" + "$\\n")
pathlib.Path("src/work.py").write_text(
    "import pathlib\\n"
    "m = pathlib.Path('src/marker.dat').read_text().strip()\\n"
    "print(1 if m == '$' + 'Id' + '$' else pathlib.Path('src/value.txt').read_text().strip())\\n"
)
print('{"description": "a faster path"}')
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("root", "new"),
    [(ROOT_IDENT, "src/marker.dat"), ("src/*.dat   ident\n", "src/marker.dat")],
)
def test_a_new_file_the_sealed_gitattributes_gives_ident_is_out_of_scope(
    tmp_repo: TmpRepo, tmp_path: Path, root: str, new: str
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(DAT_AGENT)
    value_project(
        tmp_repo,
        f"{sys.executable} {agent}",
        BENCH,
        {"src/work.py": WORK, ".gitattributes": root},
        sandbox="none",
        timeouts=True,
    )
    res = tmp_repo.cli("run", "--run", "d", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "d")
    assert [r["status"] for r in rows] == ["baseline", "out-of-scope"], rows
    assert new in rows[1]["reason"] and "ident" in rows[1]["reason"], rows[1]["reason"]


def test_which_files_git_converts_on_checkout() -> None:
    files = {
        ".gitattributes": b"[attr]kw ident\n*.dat kw\n/top.txt filter=x\n",
        "src/.gitattributes": b"*.enc working-tree-encoding=UTF-16\nlate.dat -ident\n",
    }
    read = files.get
    assert converted_on_checkout("src/a.dat", b"$Id$\n", read) is not None
    assert converted_on_checkout("src/a.dat", b"$Id: 1234 $\n", read) is not None
    assert converted_on_checkout("src/a.dat", b"no marker\n", read) is None
    assert converted_on_checkout("src/late.dat", b"$Id$\n", read) is None  # unset below
    assert converted_on_checkout("top.txt", b"x", read) is not None
    assert converted_on_checkout("src/top.txt", b"x", read) is None  # anchored at the root
    assert converted_on_checkout("src/b.enc", b"x", read) is not None
    assert converted_on_checkout("src/b.txt", b"$Id$", read) is None
