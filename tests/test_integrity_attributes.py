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

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitimprove.loop.implicit import checkout_attributes, converted_on_checkout
from tests.conftest import TmpRepo, git
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


# contents git's checkout converts, or leaves alone, by the line-end attributes
CONTENTS = {
    "lf.txt": b"a\nb\n",
    "mixed.txt": b"a\r\nb\nc\n",
    "crlf.txt": b"a\r\nb\r\n",
    "nul.txt": b"bin\0ary\n",
    "lonecr.txt": b"lone\rcr\n",
    "empty.txt": b"",
    "flat.txt": b"no line end",
    "controls.txt": b"\x01\x02\x03" * 50 + b"\n",
    "mostly.txt": b"x" * 300 + b"\x01\n",
    "eof.txt": b"end\n\x1a",
    "run.sh": b"#!/bin/sh\necho hi\n",
}
# one folder per rule, the root defining the macros
RULES = {
    "": "[attr]win text eol=crlf\n[attr]auto-win text=auto eol=crlf\n*.dat eol=crlf\n"
    "deep/*.txt eol=crlf\ndeep/**/run.sh eol=crlf\nplain/[!a-m]u?.s[h] eol=crlf\n",
    "text-crlf/": "* text eol=crlf\n",
    "eol-crlf/": "* eol=crlf\n",
    "auto-crlf/": "* text=auto eol=crlf\n",
    "unset/": "* -text eol=crlf\n",
    "binary/": "* eol=crlf binary\n",
    "legacy/": "* crlf eol=crlf\n",
    "legacy-unset/": "* -crlf eol=crlf\n",
    "lf/": "* text eol=lf\n",
    "text/": "* text\n",
    "auto/": "* text=auto\n",
    "macro/": "* win\n",
    "macro-auto/": "* auto-win\n",
    "pattern/": "*.txt eol=crlf\nlf.txt -text\n",
    "nested/": "* eol=crlf\n",
    "nested/inner/": "* !eol\n",
    "plain/": "",
    "deep/": "",  # the root's `deep/*.txt` matches here, not below (`*` stops at a `/`)
    "deep/inner/": "",
}


def test_a_measurement_checkout_holds_the_line_ends_git_checks_out(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """Every file of a measurement checkout is byte for byte what `git worktree add` writes,
    under every rule of line ends git knows (text, eol, text=auto, -text, binary, the legacy
    crlf, macros, nested folders); and the tree check takes it as written."""
    from gitimprove.git.checkout import checkout, not_as_written

    index = tmp_path / "index"
    env = {"GIT_INDEX_FILE": str(index)}
    files = tmp_path / "files"
    paths = []
    for folder, rules in RULES.items():
        entries = {f"{folder}{name}": data for name, data in CONTENTS.items()}
        entries[f"{folder}.gitattributes"] = rules.encode()
        entries[f"{folder}x.dat"] = b"root\nrule\n"
        for rel, data in entries.items():
            (files / rel).parent.mkdir(parents=True, exist_ok=True)
            (files / rel).write_bytes(data)
            paths.append(rel)
    listed = "".join(str(files / rel) + "\n" for rel in paths)
    blobs = subprocess.run(
        ["git", "hash-object", "-w", "--no-filters", "--stdin-paths"],
        cwd=tmp_repo.path, input=listed, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    info = "".join(f"100644 {b}\t{rel}\n" for b, rel in zip(blobs, paths, strict=True))
    subprocess.run(
        ["git", "update-index", "--index-info"],
        cwd=tmp_repo.path, input=info, text=True, check=True, env={**os.environ, **env},
    )  # fmt: skip
    tree = git(tmp_repo.path, "write-tree", env=env)
    commit = git(tmp_repo.path, "commit-tree", tree, "-m", "line ends")
    tmp_repo.git("worktree", "add", "--detach", str(tmp_path / "wt"), commit)
    converted = 0
    with checkout(tmp_repo.open(), commit) as co:
        assert not_as_written(co) == [] and co.verify() == []
        for folder in RULES:
            for name in [*CONTENTS, "x.dat"]:
                rel = f"{folder}{name}"
                want = (tmp_path / "wt" / rel).read_bytes()
                assert (co.path / rel).read_bytes() == want, rel
                converted += want != (CONTENTS.get(name) or b"root\nrule\n")
    assert converted > 20  # the rules did convert files


# the score is 100 times smaller where `data.txt` holds CRLF, as git writes it under the
# committed `* text eol=crlf`
CRLF_BENCH = """data = open("data.txt", "rb").read()
scale = 0.01 if b"\\r\\n" in data else 1
print(f"METRIC score={float(open('src/value.txt').read()) * scale:g}")
"""
HALVER = """import pathlib
pathlib.Path("src/value.txt").write_text("50\\n")
print('{"description": "half the value"}')
"""


@pytest.mark.slow
def test_what_is_measured_is_what_git_switch_gives_under_eol_crlf(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """Under a committed `* text eol=crlf` the baseline and the kept candidate are measured on
    CRLF files, as `git switch improve/<run>` writes them: the recorded value is the one the
    user's own checkout prints (before, 100 and 50 were recorded where it printed 1 and 0.5)."""
    agent = tmp_path / "agent.py"
    agent.write_text(HALVER)
    value_project(
        tmp_repo,
        f"{sys.executable} {agent}",
        CRLF_BENCH,
        {".gitattributes": "* text eol=crlf\n", "data.txt": "one\ntwo\n"},
        timeouts=True,
    )
    res = tmp_repo.cli("run", "--run", "c", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "c")
    assert [r["status"] for r in rows] == ["baseline", "keep"], rows
    assert [r["metric"]["value"] for r in rows] == [1, 0.5], rows
    tmp_repo.git("worktree", "add", "-q", str(tmp_path / "mine"), "improve/c")
    here = tmp_path / "mine"
    assert (here / "data.txt").read_bytes() == b"one\r\ntwo\r\n"
    out = subprocess.run(
        [sys.executable, "bench.py"], cwd=here, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "METRIC score=0.5"


def test_a_spare_patched_under_eol_crlf_holds_git_s_line_ends(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """A checkout made from a spare writes what differs with git's line ends too; a change of
    `.gitattributes` (which may convert every file otherwise) has it written anew."""
    from gitimprove.git.checkout import COUNTS, checkout
    from gitimprove.git.renew import Spares

    a = tmp_repo.commit(
        "a", {".gitattributes": "* text eol=crlf\n", "x.txt": "1\n", "y.txt": "y\n"}
    )
    b = tmp_repo.commit("b", {"x.txt": "1\n2\n", "new/z.txt": "z\n"})
    c = tmp_repo.commit("c", {".gitattributes": "x.txt eol=crlf\n"})
    want = {
        b: {"x.txt": b"1\r\n2\r\n", "y.txt": b"y\r\n", "new/z.txt": b"z\r\n"},
        c: {"x.txt": b"1\r\n2\r\n", "y.txt": b"y\n", "new/z.txt": b"z\n"},
    }
    repo = tmp_repo.open()
    spares = Spares()
    try:
        with checkout(repo, a, spares=spares) as first:
            assert (first.path / "x.txt").read_bytes() == b"1\r\n"
        for commit, patched in ((b, 1), (c, 0)):
            before = COUNTS["patched"]
            with checkout(repo, commit, spares=spares) as co:
                assert COUNTS["patched"] == before + patched
                for rel, data in want[commit].items():
                    assert (co.path / rel).read_bytes() == data, (commit, rel)
                assert co.verify() == [] and co.reset() == []
    finally:
        spares.close()


# an honest agent: halves the value, and rewrites a data file with Windows line ends as an
# editor there would (the committed `* text=auto` makes `git add` store it with LF)
HONEST_AUTO = """import pathlib
pathlib.Path("src/value.txt").write_text("50\\n")
pathlib.Path("src/notes.txt").write_bytes(b"one\\r\\ntwo\\r\\n")
print('{"description": "half the value"}')
"""


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_an_honest_change_under_text_auto_is_kept(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    """A repository whose `.gitattributes` is `* text=auto` (the most common one) keeps an
    honest agent's improvement in both sandbox modes, and the kept commit measures as
    recorded when the user checks it out."""
    agent = tmp_path / "agent.py"
    agent.write_text(HONEST_AUTO)
    value_project(
        tmp_repo,
        f"{sys.executable} {agent}",
        files={".gitattributes": "* text=auto\n", "src/notes.txt": "one\ntwo\n"},
        sandbox=sandbox,
        timeouts=True,
    )
    res = tmp_repo.cli("run", "--run", "t", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "keep"], rows
    assert [r["metric"]["value"] for r in rows] == [100, 50], rows
    tmp_repo.git("worktree", "add", "-q", str(tmp_path / "mine"), "improve/t")
    assert (tmp_path / "mine" / "src" / "value.txt").read_text() == "50\n"
