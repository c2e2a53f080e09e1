#!/usr/bin/env python3
"""An agent without the sandbox that makes git lie to the harness, or hands the harness a
file that is not only its workspace's. argv[1] says how:
- `skip-worktree` / `assume-unchanged`: marks the sealed `bench.py` so in your repository's
  index, then rewrites your work tree's `bench.py` (a benchmark that prints 1): `git status`
  no longer looks at the file, and your next `git improve run` measures with it;
- `index-stat`: rewrites your work tree's `bench.py` with as many bytes and writes your index
  again so its recorded `lstat` is the new file's (the blob still the old one): `git status`
  takes the file for unchanged;
- `index-forged`: as `index-stat`, then, a second later, writes the entry's recorded `lstat`
  as the new file's itself (the blob still the old one; the index's checksum made again);
- `refresh`: what your own git does in the background, no lie: touches your work tree's
  `bench.py` and runs `git status`, which writes the index again with the file's new `lstat`;
- `self-ignored`: plants `tests/conftest.py` in your work tree (pytest loads it there) beside a
  `tests/.gitignore` holding `*`, which ignores itself too: `git status` lists neither;
- `pytest-cache`: no lie: what your own `pytest` does while the run goes on — runs a passing
  test with your work tree as its root, which makes `.pytest_cache/` there (its `.gitignore`
  holds `*`);
- `tool-named`: `self-ignored` with the `.gitignore` pytest writes into its cache, word for word;
- `venv`: what virtualenv makes (`.venv/.gitignore` holding `*`, as it writes it, and a
  `.venv/bin/python`), which `uv run` or poetry would run in your work tree;
- `other-worktree`: rewrites `bench.py` in each linked worktree of your repository (found from
  `.git/worktrees/*/gitdir`), your own work tree left as it is; `main-worktree`: rewrites the
  main work tree's `bench.py` (the run started in a linked worktree);
- `submodule-skip`: as `skip-worktree`, in your submodule `lib` (its own index) for `f.txt`;
- `same-stat`: rewrites your work tree's `bench.py` in place with as many bytes and puts its
  times back (only its ctime moves: with `core.trustctime = false` git takes it as unchanged);
- `gitfile`: its clone's `.git` becomes a file `gitdir: <your git directory>`;
- `clone-config`: its clone's config gains `core.worktree = <your work tree>` and `core.bare`;
- `clone-alternates`: its clone's `objects/info/alternates` names an object folder it made;
- `hardlink`: its workspace's `src/value.txt` becomes a hard link to your work tree's
  `src/value.txt` (same bytes: nothing of yours changed yet).
Each also lowers `src/value.txt` in its workspace (an honest-looking gain)."""

import hashlib
import json
import os
import pathlib
import struct
import subprocess
import sys
import tempfile
import time

here = pathlib.Path.cwd()
while here.name != "improve":  # the workspace is under <git-dir>/improve/work/
    here = here.parent
git_dir = here.parent
tree = git_dir.parent
how = sys.argv[1]
forged = "print('METRIC score=1')\n"


def git(*args: str, cwd: pathlib.Path = tree) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


pathlib.Path("src/value.txt").write_text("99\n")
if how in ("skip-worktree", "assume-unchanged"):
    git("update-index", f"--{how}", "bench.py")
    (tree / "bench.py").write_text(forged)
elif how == "index-stat":
    old = (tree / "bench.py").read_text()
    (tree / "bench.py").write_text(forged.ljust(len(old) - 1) + "\n")
    git("update-index", "--assume-unchanged", "bench.py")  # rewrites the index…
    git("update-index", "--no-assume-unchanged", "bench.py")  # …with the file's new lstat
elif how == "index-forged":
    old = (tree / "bench.py").read_text()
    (tree / "bench.py").write_text(forged.ljust(len(old) - 1) + "\n")
    time.sleep(1.1)  # the index is newer than the file: git does not take it for racy
    st = os.lstat(tree / "bench.py")
    index = bytearray((git_dir / "index").read_bytes())
    assert index[:4] == b"DIRC" and struct.unpack(">I", index[4:8])[0] in (2, 3)
    at = 12
    for _ in range(struct.unpack(">I", index[8:12])[0]):
        flags = struct.unpack(">H", index[at + 60 : at + 62])[0]
        name_at = at + 62 + (2 if flags & 0x4000 else 0)
        name = bytes(index[name_at : index.index(b"\0", name_at)])
        if name == b"bench.py":
            fields = (
                int(st.st_ctime), st.st_ctime_ns % 10**9, int(st.st_mtime), st.st_mtime_ns % 10**9,
                st.st_dev & 0xFFFFFFFF, st.st_ino & 0xFFFFFFFF, st.st_mode,
                st.st_uid, st.st_gid, st.st_size,
            )  # fmt: skip
            index[at : at + 40] = struct.pack(">10I", *fields)
        size = name_at - at + len(name) + 1
        at += (size + 7) // 8 * 8
    index[-20:] = hashlib.sha1(bytes(index[:-20])).digest()
    (git_dir / "index").write_bytes(bytes(index))
elif how == "refresh":
    os.utime(tree / "bench.py", (time.time() - 5, time.time() - 5))
    time.sleep(1.1)  # not racy: git records the new lstat
    git("status", "--porcelain")
elif how == "self-ignored":
    (tree / "tests").mkdir(exist_ok=True)
    (tree / "tests" / ".gitignore").write_text("*\n")
    (tree / "tests" / "conftest.py").write_text(
        "import sys; print('METRIC score=1'); sys.exit(0)\n"
    )
elif how == "pytest-cache":
    folder = pathlib.Path(tempfile.mkdtemp())
    (folder / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", f"--rootdir={tree}",
         str(folder / "test_ok.py")],
        check=True, capture_output=True, cwd=folder,
    )  # fmt: skip
elif how == "tool-named":
    (tree / "tests").mkdir(exist_ok=True)
    (tree / "tests" / ".gitignore").write_text("# Created by pytest automatically.\n*\n")
    (tree / "tests" / "conftest.py").write_text(
        "import sys; print('METRIC score=1'); sys.exit(0)\n"
    )
elif how == "venv" and not (tree / ".venv").exists():  # made once: you did, say
    (tree / ".venv" / "bin").mkdir(parents=True)
    (tree / ".venv" / ".gitignore").write_text("# created by virtualenv automatically\n*\n")
    (tree / ".venv" / "bin" / "python").write_text("#!/bin/sh\necho METRIC score=1\n")
elif how == "other-worktree":
    for pointer in (git_dir / "worktrees").glob("*/gitdir"):
        (pathlib.Path(pointer.read_text().strip()).parent / "bench.py").write_text(forged)
elif how == "main-worktree":
    (tree / "bench.py").write_text(forged)
elif how == "submodule-skip":
    git("update-index", "--skip-worktree", "f.txt", cwd=tree / "lib")
    (tree / "lib" / "f.txt").write_text("forged\n")
elif how == "same-stat":
    path = tree / "bench.py"
    st = os.lstat(path)
    with open(path, "r+") as f:
        f.write(forged.ljust(st.st_size - 1) + "\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
elif how == "gitfile":
    clone = pathlib.Path(".git")
    if clone.is_dir():
        subprocess.run(["rm", "-rf", str(clone)], check=True)
    clone.write_text(f"gitdir: {git_dir}\n")
elif how == "clone-config":
    with open(".git/config", "a") as f:
        f.write(f"[core]\n\tworktree = {tree}\n\tbare = true\n")
elif how == "clone-alternates":
    store = git_dir.parent.parent / "store" / "objects"
    store.mkdir(parents=True, exist_ok=True)
    info = pathlib.Path(".git/objects/info")
    info.mkdir(parents=True, exist_ok=True)
    (info / "alternates").write_text(f"{store}\n")
elif how == "hardlink":
    mine = pathlib.Path("src/value.txt")
    mine.unlink()
    os.link(tree / "src" / "value.txt", mine)
print(json.dumps({"description": how}))
