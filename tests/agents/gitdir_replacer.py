#!/usr/bin/env python3
"""An agent without the sandbox that replaces a file of the user's git directory that git and
libgit2 read (argv[1], relative to it: `config`, `HEAD`, `packed-refs`, `refs/heads/main`…)
with a FIFO (argv[2] "fifo") or a 200 GB sparse file ("sparse"): any blocking read of it
would hang the harness for ever. It also lowers src/value.txt (an honest-looking gain)."""

import json
import os
import pathlib
import sys

here = pathlib.Path.cwd()
while here.name != "improve":  # the workspace is under <git-dir>/improve/work/
    here = here.parent
target = here.parent / sys.argv[1]
if target.exists() or target.is_symlink():
    target.unlink()
target.parent.mkdir(parents=True, exist_ok=True)
if sys.argv[2] == "fifo":
    os.mkfifo(target)
else:
    with open(target, "wb") as f:
        f.truncate(200 << 30)
pathlib.Path("src/value.txt").write_text("99\n")
print(json.dumps({"description": f"{sys.argv[2]} for {sys.argv[1]}"}))
