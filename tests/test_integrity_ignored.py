"""Files your ignore rules hide from `git status` are watched without the sandbox
(git/ignored.py): a `.pth` planted in `.venv/…/site-packages/`, a `.pyc` in `__pycache__/`, a
module in `node_modules/`, written, rewritten in place with its times put back, made
executable or removed, is named; a known tool's cache (`.pytest_cache/` with pytest's own rule
file) is not. A hostile agent that plants one stops the run (`none`); in the sandbox it cannot
write there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitimprove.git.status import TOOL_CACHES
from gitimprove.git.watch import IGNORED_LABEL, RepoState
from tests.conftest import TmpRepo

SITE = ".venv/lib/python3.11/site-packages"


def _project(repo: TmpRepo) -> None:
    repo.commit("one", {"a.py": "x = 1\n", ".gitignore": "__pycache__/\n.venv/\nnode_modules/\n"})
    site = repo.path / SITE
    for i in range(20):
        (site / f"pkg{i}").mkdir(parents=True)
        (site / f"pkg{i}" / "__init__.py").write_text("")
    (site / "ok.pth").write_text("/opt/lib\n")
    cache = repo.path / ".pytest_cache"
    (cache / "v" / "cache").mkdir(parents=True)
    (cache / ".gitignore").write_bytes(TOOL_CACHES[b".pytest_cache"])


def _changed(repo: TmpRepo, before: RepoState) -> list[str]:
    after = RepoState.take(repo.open(), ignored=True)
    return [c for c in before.changes(after) if c.startswith(IGNORED_LABEL)]


@pytest.mark.parametrize(
    ("what", "named"),
    [
        ("plant-pth", f"{SITE}/evil.pth"),
        ("plant-pyc", "__pycache__/a.cpython-311.pyc"),
        ("plant-deep", f"{SITE}/pkg3/sub/deeper/mod.py"),
        ("plant-node", "node_modules/lib/index.js"),
        ("rewrite-in-place", f"{SITE}/ok.pth"),
        ("chmod", f"{SITE}/pkg1/__init__.py"),
        ("remove", f"{SITE}/pkg2/__init__.py"),
        ("replace-folder", f"{SITE}/pkg4"),
    ],
)
def test_a_change_under_the_ignore_rules_is_named(tmp_repo: TmpRepo, what: str, named: str) -> None:
    _project(tmp_repo)
    repo = tmp_repo.open()
    before = RepoState.take(repo, ignored=True)
    assert before.ignored is not None and f"{SITE}/ok.pth" in before.ignored
    assert not [p for p in before.ignored if ".pytest_cache" in p]
    assert _changed(tmp_repo, before) == []  # nothing changed: nothing named
    root, site = tmp_repo.path, tmp_repo.path / SITE
    if what == "plant-pth":
        (site / "evil.pth").write_text("import os; os.system('x')\n")
    elif what == "plant-pyc":
        (root / "__pycache__").mkdir()
        (root / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\x00" * 16)
    elif what == "plant-deep":
        (site / "pkg3" / "sub" / "deeper").mkdir(parents=True)
        (site / "pkg3" / "sub" / "deeper" / "mod.py").write_text("print(1)\n")
    elif what == "plant-node":
        (root / "node_modules" / "lib").mkdir(parents=True)
        (root / "node_modules" / "lib" / "index.js").write_text("module.exports = 1;\n")
    elif what == "rewrite-in-place":
        st = os.stat(site / "ok.pth")
        with open(site / "ok.pth", "r+") as f:  # the same size, its times put back
            f.write("import os\n"[: st.st_size])
        os.utime(site / "ok.pth", ns=(st.st_atime_ns, st.st_mtime_ns))
    elif what == "chmod":
        (site / "pkg1" / "__init__.py").chmod(0o755)
    elif what == "remove":
        (site / "pkg2" / "__init__.py").unlink()
    elif what == "replace-folder":
        os.rename(site / "pkg4", root / "aside")
        (site / "pkg4").mkdir()
        (site / "pkg4" / "__init__.py").write_text("")
    found = _changed(tmp_repo, before)
    assert len(found) == 1 and named in found[0], found
    assert _changed(tmp_repo, RepoState.take(repo, ignored=True)) == []  # seen once


def test_a_tool_cache_and_a_snapshot_without_ignored_files_name_nothing(tmp_repo: TmpRepo) -> None:
    _project(tmp_repo)
    repo = tmp_repo.open()
    before = RepoState.take(repo, ignored=True)
    (tmp_repo.path / ".pytest_cache" / "v" / "cache" / "lastfailed").write_text("{}")
    assert _changed(tmp_repo, before) == []
    tmp_repo.git("branch", "side")  # the rest of the watch as before
    assert "refs/heads/side" in before.changes(RepoState.take(repo, ignored=True))
    plain = RepoState.take(repo)  # in the sandbox: not taken, never compared
    assert plain.ignored is None
    (tmp_repo.path / SITE / "evil.pth").write_text("import os\n")
    assert [c for c in plain.changes(RepoState.take(repo)) if "ignored" in c] == []


def test_many_ignored_files_are_walked_once(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    """After the first look, a look costs the events since the last one, not a walk
    (bench/loop_bench.py --ignored-files 20000 measures a virtualenv's size)."""
    import time

    _project(tmp_repo)
    for d in range(40):
        folder = tmp_repo.path / SITE / f"many{d}"
        folder.mkdir()
        for f in range(100):
            (folder / f"m{f}.py").write_bytes(b"")
    repo = tmp_repo.open()
    first = time.perf_counter()
    before = RepoState.take(repo, ignored=True)
    walk = time.perf_counter() - first
    assert before.ignored is not None and len(before.ignored) > 4_000
    looks = []
    for _ in range(3):
        t = time.perf_counter()
        RepoState.take(repo, ignored=True)
        looks.append(time.perf_counter() - t)
    plain = []
    for _ in range(3):
        t = time.perf_counter()
        RepoState.take(repo)
        plain.append(time.perf_counter() - t)
    # the ignored files add less than a tenth of the walk to a look (a busy machine's margin)
    assert min(looks) - min(plain) < walk / 10 + 0.01, (walk, looks, plain)
    (tmp_repo.path / SITE / "many7" / "m3.py").write_text("planted")
    assert f"{SITE}/many7/m3.py" in _changed(tmp_repo, before)[0]


def test_a_pyc_your_own_python_wrote_stops_nothing_a_forged_one_is_named(
    tmp_repo: TmpRepo,
) -> None:
    """The user's own `python` run while a run goes on writes `__pycache__/`: byte for byte
    what the source compiles to, it is not named; the same header over other code is."""
    import importlib._bootstrap_external as external
    import subprocess
    import sys

    _project(tmp_repo)
    repo = tmp_repo.open()
    before = RepoState.take(repo, ignored=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", "import a"], cwd=tmp_repo.path, env=env, check=True)
    pyc = tmp_repo.path / "__pycache__" / f"a.{sys.implementation.cache_tag}.pyc"
    assert pyc.is_file()
    assert _changed(tmp_repo, before) == []
    honest = RepoState.take(repo, ignored=True)
    src = tmp_repo.path / "a.py"
    st = src.stat()
    forged = compile("x = 'forged'\n", str(src), "exec")
    pyc.write_bytes(bytes(external._code_to_timestamp_pyc(forged, int(st.st_mtime), st.st_size)))  # type: ignore[attr-defined]
    found = _changed(tmp_repo, before)
    assert len(found) == 1 and f"__pycache__/a.{sys.implementation.cache_tag}.pyc" in found[0]
    pyc.unlink()  # removed: nothing runs from it
    assert _changed(tmp_repo, honest) == []


def test_folders_the_kernel_will_not_watch_are_listed_when_their_times_move(
    tmp_repo: TmpRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `max_user_watches` a folder is kept by one `lstat` a look: a file planted there
    moves its times and is named."""
    from gitimprove.git import ignored

    monkeypatch.setattr(ignored._Watch, "add", lambda self, full, rel: False)
    _project(tmp_repo)
    repo = tmp_repo.open()
    before = RepoState.take(repo, ignored=True)
    tree = ignored._TREES[str(tmp_repo.path)]
    assert len(tree.unwatched) > 20
    again = RepoState.take(repo, ignored=True)
    assert again.ignored is before.ignored  # nothing moved: not listed again
    (tmp_repo.path / SITE / "pkg5" / "evil.pth").write_text("import os\n")
    found = _changed(tmp_repo, before)
    assert len(found) == 1 and f"{SITE}/pkg5/evil.pth" in found[0], found


def test_what_the_watch_keeps_is_what_a_fresh_walk_finds(tmp_repo: TmpRepo) -> None:
    """Folders made, filled, renamed, removed and made again, files rewritten and removed
    between looks (an `npm install`, a `pip uninstall`): each look kept by the events is what
    a walk from nothing finds."""
    import random
    import shutil

    from gitimprove.git import ignored

    _project(tmp_repo)
    site = tmp_repo.path / SITE
    roots = frozenset({b".venv"})
    kept = ignored._Tree(os.fsencode(tmp_repo.path))
    kept.look(roots)
    rng = random.Random(7)
    for step in range(12):
        for _ in range(6):
            folders = [p for p in site.rglob("*") if p.is_dir()]
            files = [p for p in site.rglob("*") if p.is_file()]
            what = rng.choice(["mkdir", "file", "rmtree", "rename", "rewrite", "unlink"])
            if what == "mkdir":
                (rng.choice(folders) / f"d{step}{rng.randrange(99)}" / "x").mkdir(parents=True)
            elif what == "file" and folders:
                (rng.choice(folders) / f"f{rng.randrange(999)}.py").write_text(str(step))
            elif what == "rmtree" and len(folders) > 5:
                shutil.rmtree(rng.choice(folders[1:]))
            elif what == "rename" and len(folders) > 5:
                src = rng.choice(folders[1:])
                os.rename(src, site / f"moved{step}{rng.randrange(99)}")
            elif what == "rewrite" and files:
                rng.choice(files).write_text(f"rewritten {step}")
            elif what == "unlink" and files:
                rng.choice(files).unlink()
        fresh = ignored._Tree(os.fsencode(tmp_repo.path))
        assert kept.look(roots) == fresh.look(roots), step
        if fresh.watch is not None:
            fresh.watch.close()
