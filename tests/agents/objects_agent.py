#!/usr/bin/env python3
"""An agent that reaches the user's object store (its workspace's clone borrows it): in round 1
it rewrites or deletes what `argv[1]` names — a loose object (`argv[2]`), every pack — or, the
honest control, packs and prunes the store as `git gc` does; every round lowers
src/value.txt. In the sandbox the repository is hidden: nothing is found to write."""

import os
import pathlib
import subprocess
import sys

attack = sys.argv[1]
name = sys.argv[2] if len(sys.argv) > 2 else ""
iteration = int(os.environ["GITIMPROVE_ITERATION"])
pathlib.Path("src/value.txt").write_text(f"{90 - iteration}\n")
git_dir = next((p for p in pathlib.Path.cwd().parents if (p / "objects" / "pack").is_dir()), None)
if iteration != 1 or git_dir is None or not (git_dir / "HEAD").is_file():
    sys.exit(0)
objects = git_dir / "objects"
loose = objects / name[:2] / name[2:]
packs = sorted((objects / "pack").glob("pack-*.pack"))
if attack == "loose-rewrite":  # other bytes under the same name
    loose.chmod(0o644)
    loose.write_bytes(b"x\x01" + os.urandom(40))
elif attack == "loose-replace":  # a valid object of other content, renamed into its place
    other = objects / "planted"
    import zlib

    other.write_bytes(zlib.compress(b"blob 6\0forged"))
    os.replace(other, loose)
elif attack == "loose-delete":
    loose.unlink()
elif attack == "loose-delete-all":  # the records' own objects (the notes' tip) go too
    for folder in objects.glob("[0-9a-f][0-9a-f]"):
        for f in folder.iterdir():
            f.unlink()
elif attack == "pack-zero":  # the same size, some bytes zeroed in place
    for pack in packs:
        pack.chmod(0o644)
        with open(pack, "r+b") as f:
            f.seek(pack.stat().st_size // 2)
            f.write(b"\0" * 32)
elif attack == "pack-delete":
    for pack in packs:
        pack.unlink()
        pack.with_suffix(".idx").unlink()
elif attack == "gc":  # what the user's own git does: nothing reachable is lost
    cmd = ["git", f"--git-dir={git_dir}", "gc", "-q", "--prune=now"]
    subprocess.run(cmd, check=True)
