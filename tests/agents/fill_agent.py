#!/usr/bin/env python3
"""An agent that fills the disk (the `command` contract of DESIGN §9), then exits 0.

argv[1] is where, on its first iteration: `workspace` (src/blob.bin, 1 MB at a time until the
file system refuses), `outside` (a file beside the repository, out of the harness's reach to
clean; only once: a resumed first iteration is honest), `bytes:<n>` (exactly n random bytes in
src/blob.bin: a workspace over a limit), `files:<n>` (n empty files in src/flood/: no space on
disk, and each one to hash), `dirs:<n>` (n empty folders nested in src/deep/ and beside each
other: nothing git stores) or `gitfiles:<n>` (n empty files in the clone's `.git`).
Every later iteration lowers src/value.txt to 90 (an honest gain)."""

import os
import pathlib
import sys

if os.environ.get("GITIMPROVE_ITERATION", "1") != "1":
    pathlib.Path("src/value.txt").write_text("90\n")
    print('{"description": "honest 90"}')
    sys.exit(0)
where = sys.argv[1]
if where.startswith("bytes:"):
    pathlib.Path("src/blob.bin").write_bytes(os.urandom(int(where[6:])))
elif where.startswith(("files:", "gitfiles:")):
    folder = pathlib.Path("src/flood" if where.startswith("files:") else ".git/flood")
    folder.mkdir()
    for i in range(int(where.split(":")[1])):
        (folder / str(i)).touch()
elif where.startswith("dirs:"):
    for i in range(int(where[5:])):
        pathlib.Path("src/deep", *(["d"] * (i % 50)), str(i)).mkdir(parents=True)
else:
    here = pathlib.Path.cwd()
    while here.name != "improve":  # the workspace is under <git-dir>/improve/work/
        here = here.parent
    target = pathlib.Path("src/blob.bin") if where == "workspace" else here.parents[2] / "junk"
    marker = here.parents[2] / "filled-once"  # a resumed iteration 1 is honest
    if where == "outside" and marker.exists():
        pathlib.Path("src/value.txt").write_text("90\n")
        print('{"description": "honest 90"}')
        sys.exit(0)
    marker.touch()
    try:
        with open(target, "ab") as f:
            while True:
                f.write(os.urandom(1 << 20))
                f.flush()
    except OSError:
        pass
pathlib.Path("src/value.txt").write_text("95\n")
print('{"description": "fill"}')
