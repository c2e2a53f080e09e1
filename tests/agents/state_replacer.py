"""A hostile agent (no sandbox) that replaces a state file of gitimprove's own.

argv[1] names the file under `<git-common-dir>/improve/` (`key`, `refs.witness`,
`integrity.jsonl`, `hooks.log`); argv[2] what it becomes: `fifo` (whoever opens it to read
would block for ever), `dir`, `link` (to a file of the agent's), `bytes` (32 new random bytes:
a key of its own), `empty`; `-` as the file leaves the state alone. It also makes the change better (src/value.txt 100 -> 90), so a
run that went on would keep it.
"""

import json
import os
import pathlib
import shutil
import sys

name, what = sys.argv[1], sys.argv[2]
improve = pathlib.Path(os.environ["GITIMPROVE_WORKDIR"]).parent.parent
target = improve / name
pathlib.Path("src/value.txt").write_text("90\n")
if name == "-":
    pass
elif what in ("fifo", "dir", "link"):
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    elif os.path.lexists(target):
        target.unlink()
    if what == "fifo":
        os.mkfifo(target)
    elif what == "dir":
        target.mkdir()
        (target / "inside").write_bytes(os.urandom(32))
    else:
        mine = pathlib.Path.cwd() / "mine.bin"
        mine.write_bytes(os.urandom(32))
        target.symlink_to(mine)
elif what == "bytes":
    target.write_bytes(os.urandom(32))
elif what == "empty":
    target.write_bytes(b"")
print(json.dumps({"description": f"replace {name} with a {what}"}))
