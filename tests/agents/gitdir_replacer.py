#!/usr/bin/env python3
"""An agent without the sandbox that makes a file git or libgit2 reads in the user's repository
one that hangs or chokes them. argv[1] names the file, relative to the git directory (`config`,
`HEAD`, `packed-refs`, `refs/heads/main`, `info/exclude`…) or, with a mode starting with
`tree-`, to the work tree (`sub/.git/HEAD`, `sub/.gitignore`); argv[2] says how:
- `fifo` / `tree-fifo`: a FIFO in its place; `sparse`: a 200 GB sparse file; `big`: the file
  as it was, grown to 300 MB (sparse) — the start still reads as before;
- `include` / `includeif`: the config gains an `[include]` (`[includeIf "gitdir:/"]`) whose
  path is a FIFO outside the repository (argv[1] is ignored);
- `altchain`: `objects/info/alternates` lists an object folder outside the repository whose
  own `info/alternates` is a FIFO (argv[1] is ignored).
Any blocking read of them would hang the harness for ever. It also lowers src/value.txt (an
honest-looking gain)."""

import json
import os
import pathlib
import sys

here = pathlib.Path.cwd()
while here.name != "improve":  # the workspace is under <git-dir>/improve/work/
    here = here.parent
git_dir = here.parent
outside = git_dir.parent.parent / "outside"  # beside the repository, in the test's tmp
outside.mkdir(exist_ok=True)
name, how = sys.argv[1], sys.argv[2]


def fifo(path: pathlib.Path) -> None:
    if path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)


if how in ("include", "includeif"):
    fifo(outside / "included")
    head = "[include]" if how == "include" else '[includeIf "gitdir:/"]'
    with open(git_dir / "config", "a") as f:
        f.write(f"{head}\n\tpath = {outside / 'included'}\n")
elif how == "altchain":
    objects = outside / "objects"
    (objects / "pack").mkdir(parents=True, exist_ok=True)
    fifo(objects / "info" / "alternates")
    (git_dir / "objects" / "info").mkdir(exist_ok=True)
    (git_dir / "objects" / "info" / "alternates").write_text(f"{objects}\n")
elif how == "tree-fifo":
    target = git_dir.parent / name
    if target.name == "HEAD":  # a nested repository git looks into
        for sub in ("objects", "refs"):
            (target.parent / sub).mkdir(parents=True, exist_ok=True)
    fifo(target)
elif how == "fifo":
    fifo(git_dir / name)
elif how == "big":
    with open(git_dir / name, "ab") as f:
        f.truncate(300 << 20)
else:
    target = git_dir / name
    if target.exists() or target.is_symlink():
        target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "wb") as f:
        f.truncate(200 << 30)
pathlib.Path("src/value.txt").write_text("99\n")
print(json.dumps({"description": f"{how} for {name}"}))
