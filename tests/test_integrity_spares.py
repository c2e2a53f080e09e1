"""A measurement checkout made from a spare (git/renew.py): the spare is taken only when it
proves itself as written (every entry's full `lstat`, no extended attribute, flag or mount),
moved under a fresh random name, and patched with the paths that differ between the two
trees. Whatever was done to a spare, the checkout made from it holds exactly the commit's
tree; a spare that does not prove itself is removed and the commit written anew."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gitimprove.git.checkout import COUNTS, checkout, compiled, finish_removals
from gitimprove.git.renew import Spares
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project

A = {
    "bench.py": "print(1)\n",
    "pkg/a.py": "A = 1\n",
    "pkg/sub/b.txt": "bb\n",
    "pkg/gone/x.txt": "x\n",
    "pkg/gone/deep/y.txt": "y\n",
    "swap": "a file, then a folder\n",
    "tool.sh": "echo hi\n",
    "mod/__pycache__/m.cpython-311.pyc": "compiled\n",
}


def tree_of(root: Path, *, skip_compiled: bool = True) -> dict[str, tuple[str, str]]:
    """What a folder holds: every entry with its kind and content (a file's bytes and exec
    bit, a link's target), folders included; a folder's `.git` left out."""
    out: dict[str, tuple[str, str]] = {}
    for top, dirs, files in os.walk(root):
        rel_top = os.path.relpath(top, root)
        for name in dirs + files:
            rel = name if rel_top == "." else f"{rel_top}/{name}"
            if rel == ".git" or rel.startswith(".git/"):
                continue
            full = os.path.join(top, name)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(full))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", "")
            else:
                data = Path(full).read_bytes().decode("utf-8", "replace")
                out[rel] = ("exec" if st.st_mode & 0o111 else "file", data)
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(top, d)) and d != ".git"]
    return out


def committed(
    tmp_repo: TmpRepo, commit: str, *, skip_compiled: bool = True
) -> dict[str, tuple[str, str]]:
    """The same, from the commit's tree (git's own listing)."""
    out: dict[str, tuple[str, str]] = {}
    lines = tmp_repo.git("ls-tree", "-r", "-t", "-z", commit).split("\0")
    for line in filter(None, lines):
        meta, rel = line.split("\t", 1)
        mode, kind, oid = meta.split()
        if skip_compiled and compiled(rel):
            continue
        if kind == "tree":
            out[rel] = ("dir", "")
        elif mode == "120000":
            out[rel] = ("link", tmp_repo.git("cat-file", "blob", oid))
        else:
            data = subprocess.run(
                ["git", "cat-file", "blob", oid], cwd=tmp_repo.path, capture_output=True, check=True
            ).stdout.decode("utf-8", "replace")
            out[rel] = ("exec" if mode == "100755" else "file", data)
    return out


def _commit_a(tmp_repo: TmpRepo) -> str:
    tmp_repo.gen(A)
    os.chmod(tmp_repo.path / "tool.sh", 0o644)
    tmp_repo.git("add", "-A")
    tmp_repo.git("commit", "-qm", "a")
    return tmp_repo.git("rev-parse", "HEAD")


def _commit_b(tmp_repo: TmpRepo) -> str:
    """Every kind of change from A: a file changed, added in a new folder, a folder removed
    whole, a mode changed, a file turned into a link, a file into a folder, a folder into a
    file, a link added."""
    p = tmp_repo.path
    (p / "pkg" / "a.py").write_text("A = 2\n")
    (p / "new" / "deeper").mkdir(parents=True)
    (p / "new" / "deeper" / "c.py").write_text("C = 3\n")
    subprocess.run(["git", "rm", "-rq", "pkg/gone", "swap"], cwd=p, check=True)
    (p / "swap").mkdir()
    (p / "swap" / "inside.txt").write_text("now a folder\n")
    os.chmod(p / "tool.sh", 0o755)
    (p / "bench.py").unlink()
    os.symlink("pkg/a.py", p / "bench.py")
    os.symlink("sub/b.txt", p / "pkg" / "link")
    (p / "pkg" / "sub" / "b.txt").unlink()
    (p / "pkg" / "sub").rmdir()
    (p / "pkg" / "sub").write_text("a folder, then a file\n")
    os.unlink(p / "pkg" / "link")
    os.symlink("a.py", p / "pkg" / "link")
    tmp_repo.git("add", "-A")
    tmp_repo.git("commit", "-qm", "b")
    return tmp_repo.git("rev-parse", "HEAD")


def test_a_spare_is_patched_to_another_commit_exactly(tmp_repo: TmpRepo) -> None:
    a = _commit_a(tmp_repo)
    b = _commit_b(tmp_repo)
    repo = tmp_repo.open()
    spares = Spares()
    try:
        with checkout(repo, a, spares=spares) as first:
            assert tree_of(first.path) == committed(tmp_repo, a)
        before = COUNTS["patched"]
        for commit in (b, a, b, b):  # there and back, and the same commit again
            with checkout(repo, commit, spares=spares) as co:
                assert COUNTS["patched"] == before + 1
                before += 1
                assert tree_of(co.path) == committed(tmp_repo, commit)
                assert co.verify() == [] and co.unchanged()
                assert co.reset() == []  # provably as written: kept for the next run
                assert set(co.expected) == {
                    r for r, (k, _) in committed(tmp_repo, commit).items() if k != "dir"
                }
    finally:
        spares.close()
    finish_removals()
    assert not list((repo.improve_dir / "work").iterdir())


def _rewrite_same_size(root: Path) -> None:
    """The same length, another content, the times put back."""
    path = root / "pkg" / "a.py"
    st = os.lstat(path)
    path.write_text("A = 9\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _ignored_file(root: Path) -> None:
    (root / "pkg" / "__pycache__").mkdir()
    (root / "pkg" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"forged")


def _empty_dir(root: Path) -> None:
    (root / "pkg" / "empty").mkdir()


def _symlink(root: Path) -> None:
    path = root / "pkg" / "a.py"
    path.unlink()
    os.symlink("sub/b.txt", path)


def _chmod_x(root: Path) -> None:
    os.chmod(root / "pkg" / "a.py", 0o755)


def _chmod_back(root: Path) -> None:
    path = root / "pkg" / "a.py"
    mode = os.lstat(path).st_mode
    os.chmod(path, 0o777)
    os.chmod(path, stat.S_IMODE(mode))


def _hard_link(root: Path) -> None:
    os.link(root / "pkg" / "a.py", root.parent / "kept-a-link")


def _removed(root: Path) -> None:
    (root / "pkg" / "sub" / "b.txt").unlink()


def _folder_mode(root: Path) -> None:
    os.chmod(root / "pkg", 0o700)


def _xattr(root: Path) -> None:
    try:
        os.setxattr(root / "pkg" / "a.py", "user.gitimprove-test", b"1")
    except OSError:
        pytest.skip("no user extended attributes on this file system")


def _root_times(root: Path) -> None:
    st = os.lstat(root)
    os.utime(root, ns=(st.st_atime_ns, st.st_mtime_ns - 10**9))


TAMPER: dict[str, Callable[[Path], None]] = {
    "content, times put back": _rewrite_same_size,
    "a compiled file": _ignored_file,
    "an empty folder": _empty_dir,
    "a file turned into a link": _symlink,
    "chmod +x": _chmod_x,
    "a mode put back": _chmod_back,
    "a hard link": _hard_link,
    "a file removed": _removed,
    "a folder's mode": _folder_mode,
    "an extended attribute": _xattr,
    "the root's times": _root_times,
}


@pytest.mark.parametrize("how", sorted(TAMPER))
@pytest.mark.parametrize("same", [True, False], ids=["same-commit", "other-commit"])
def test_a_tampered_spare_is_never_used(tmp_repo: TmpRepo, how: str, same: bool) -> None:
    a = _commit_a(tmp_repo)
    b = _commit_b(tmp_repo)
    repo = tmp_repo.open()
    spares = Spares()
    try:
        with checkout(repo, a, spares=spares) as first:
            spare_path = first.path
        TAMPER[how](spare_path)
        before = COUNTS["patched"]
        want = a if same else b
        with checkout(repo, want, spares=spares) as co:
            assert COUNTS["patched"] == before  # refused: written anew
            assert not spare_path.exists() and co.path != spare_path
            assert tree_of(co.path) == committed(tmp_repo, want)
            assert co.verify() == []
    finally:
        spares.close()
        (repo.improve_dir / "work" / "kept-a-link").unlink(missing_ok=True)
    finish_removals()


def test_a_spare_tampered_after_a_patch_is_refused_next_time(tmp_repo: TmpRepo) -> None:
    """A checkout made from a spare is a spare again after use; what is done to it then is
    found the same way."""
    a = _commit_a(tmp_repo)
    b = _commit_b(tmp_repo)
    repo = tmp_repo.open()
    spares = Spares()
    try:
        with checkout(repo, a, spares=spares):
            pass
        with checkout(repo, b, spares=spares) as co:
            patched = co.path
        _rewrite_same_size(patched)  # pkg/a.py is "A = 2\n" in b: same size
        before = COUNTS["patched"]
        with checkout(repo, a, spares=spares) as co:
            assert COUNTS["patched"] == before
            assert tree_of(co.path) == committed(tmp_repo, a)
    finally:
        spares.close()
    finish_removals()


def test_a_checkout_that_ends_in_an_error_is_no_spare(tmp_repo: TmpRepo) -> None:
    a = _commit_a(tmp_repo)
    repo = tmp_repo.open()
    spares = Spares()
    with pytest.raises(RuntimeError), checkout(repo, a, spares=spares):
        raise RuntimeError("tampered")
    assert spares.held() == []
    finish_removals()


SPARE_AGENT = r"""
import os, pathlib
work = pathlib.Path.cwd().parent  # the agents' and checkouts' folder (no sandbox)
for co in work.glob("m-*"):
    target = co / "src" / "factor.txt"  # a file no attempt changes (in no tree diff)
    try:
        st = os.lstat(target)
        target.write_text("0\n")  # a better number for whoever measures this copy
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    except OSError:
        pass
value = float(pathlib.Path("src/value.txt").read_text())
pathlib.Path("src/value.txt").write_text(f"{value - 1:g}\n")
"""


@pytest.mark.slow
def test_an_agent_that_rewrites_the_spares_never_reaches_a_measurement(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """Without the sandbox an agent can write every checkout beside its workspace, the spares
    too (times put back): a checkout made from one that it wrote is never used, so every
    number recorded is what the commit's own file says."""
    agent = tmp_path / "agent.py"
    agent.write_text(SPARE_AGENT)
    bench = (
        "import pathlib\n"
        "v = float(pathlib.Path('src/value.txt').read_text())\n"
        "v *= float(pathlib.Path('src/factor.txt').read_text())\n"
        "print(f'METRIC score={v:g}')\n"
    )
    value_project(tmp_repo, f"{sys.executable} {agent}", bench, {"src/factor.txt": "1\n"})
    res = tmp_repo.cli("run", "--run", "s", "-n", "5", "--json")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "s")[1:]
    assert len(rows) == 5, rows
    for row in rows:
        held = float(tmp_repo.git("show", f"{row['commit']}:src/value.txt"))
        if row.get("metric"):
            assert row["metric"]["samples"] == [held] * len(row["metric"]["samples"]), row
    kept = [r for r in rows if r["status"] == "keep"]
    assert kept and all(r["metric"]["value"] > 0 for r in kept), rows
    stop = [json.loads(line) for line in res.stdout.splitlines() if '"stop"' in line][-1]
    assert stop["checkouts"]["patched"] == 0, stop  # every spare was found written
