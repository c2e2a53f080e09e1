#!/usr/bin/env python3
"""An agent that leaves files git cannot hold: a FIFO, a socket, a device, or symbolic links
that do not resolve to a regular file or folder inside the workspace (to a FIFO, to
themselves, dangling, out through `..`). argv[1] is a JSON file mapping an iteration to an
attack; each also lowers src/value.txt (an honest-looking gain)."""

import json
import os
import pathlib
import socket
import sys

plan = json.loads(pathlib.Path(sys.argv[1]).read_text())
attack = plan[os.environ["GITIMPROVE_ITERATION"]]
pathlib.Path("src/value.txt").write_text(f"{90 - int(os.environ['GITIMPROVE_ITERATION'])}\n")
if attack == "fifo":
    os.mkfifo("src/fifo")
elif attack == "fifo-root":
    os.mkfifo("bench.py.fifo")
elif attack == "socket":
    server = socket.socket(socket.AF_UNIX)
    server.bind(os.path.join("src", "sock"))
    server.close()
elif attack == "device":
    os.mknod("src/null", 0o20666, os.makedev(1, 3))
elif attack == "link-to-fifo":
    os.mkfifo("build-fifo")  # ignored itself (see .gitignore): only the link is committed
    os.symlink("../build-fifo", "src/tofifo")
elif attack == "link-chain-to-fifo":
    os.mkfifo("build-fifo")
    os.symlink("../build-fifo", "src/hop")
    os.symlink("hop", "src/tofifo")
elif attack == "link-loop":
    os.symlink("self", "src/self")
elif attack == "link-pair-loop":
    os.symlink("b", "src/a")
    os.symlink("a", "src/b")
elif attack == "link-dangling":
    os.symlink("nothing-here", "src/gone")
elif attack == "link-out":
    os.symlink("../../../../../../../../dev/null", "src/out")
elif attack == "fifo-gitignore":  # git reads it while the harness lists the workspace
    os.mkfifo(".gitignore.new")
    os.replace(".gitignore.new", ".gitignore")
elif attack == "fifo-nested-gitignore":
    os.mkfifo("src/.gitignore")
elif attack == "fifo-gitattributes":
    os.mkfifo(".gitattributes")
elif attack == "fifo-gitmodules":
    os.mkfifo(".gitmodules")
elif attack == "link-gitignore-to-fifo":
    os.mkfifo("build-fifo")
    os.symlink("../build-fifo", "src/.gitignore")
elif attack == "sparse-gitignore":  # 200 GB of nothing: git would allocate it whole
    with open("src/.gitignore", "wb") as f:
        f.truncate(200 << 30)
elif attack == "nested-repo-fifo-head":  # git reads a nested repository's HEAD
    for sub in ("objects", "refs"):
        os.makedirs(f"src/sub/.git/{sub}")
    os.mkfifo("src/sub/.git/HEAD")
elif attack == "fifo-gitfile":  # a `.git` file is read as a pointer to a repository
    os.makedirs("src/sub")
    os.mkfifo("src/sub/.git")
elif attack == "ignored-fifo":  # not committed, not measured: an ordinary attempt
    os.mkfifo("build-fifo")
elif attack == "link-fine":
    os.symlink("value.txt", "src/alias")
print(json.dumps({"description": attack}))
