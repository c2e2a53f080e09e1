#!/usr/bin/env python3
"""An agent that leaves files a git-based hash could take differently from the bytes on
disk, or that would make git run a program: a name with a newline, a name of 255 bytes, a
folder with mode 000 or without x, a hard link to a file outside its workspace, a
`.gitattributes` asking for `eol=crlf`, `ident` or a filter its clone's config defines, a
`.gitmodules` whose `update` is a command, and an fsmonitor, hooks folder and ssh command in
its clone's config. argv[1]: a JSON file mapping an iteration to an attack; argv[2]: where a
program the harness must never run leaves its mark. Each also lowers src/value.txt."""

import json
import os
import pathlib
import subprocess
import sys

plan = json.loads(pathlib.Path(sys.argv[1]).read_text())
mark = sys.argv[2]
iteration = os.environ["GITIMPROVE_ITERATION"]
attack = plan[iteration]
pathlib.Path("src/value.txt").write_text(f"{90 - int(iteration)}\n")
ran = f"sh -c 'echo {attack} >> {mark}; cat'"


def config(key: str, value: str) -> None:
    subprocess.run(["git", "config", "--file", ".git/config", key, value], check=False)


if attack == "newline-name":
    pathlib.Path("src/a\nb.txt").write_text("x\n")
elif attack == "long-name":
    pathlib.Path("src/" + "n" * 255).write_text("x\n")
elif attack == "mode-000-folder":
    locked = pathlib.Path("src/locked")
    locked.mkdir()
    (locked / "f.txt").write_text("x\n")
    locked.chmod(0)
elif attack == "folder-without-x":
    folder = pathlib.Path("src/nox")
    folder.mkdir()
    (folder / "f.txt").write_text("x\n")
    folder.chmod(0o666)
elif attack == "hard-link-out":  # the user's file, when the agent can reach it (no sandbox)
    outside = pathlib.Path(plan["outside"])
    if os.access(outside, os.R_OK):
        try:
            os.link(outside, "src/linked.txt")
        except OSError:
            pass
elif attack == "eol-ident":
    pathlib.Path(".gitattributes").write_text("* text eol=crlf ident\n")
    pathlib.Path("src/id.txt").write_text("$Id$\nline\n")
elif attack == "filter":
    pathlib.Path(".gitattributes").write_text("* filter=evil\n")
    config("filter.evil.clean", ran)
    config("filter.evil.smudge", ran)
    config("filter.evil.required", "true")
elif attack == "gitmodules":
    pathlib.Path(".gitmodules").write_text(
        f'[submodule "x"]\n\tpath = src\n\turl = /nowhere\n\tupdate = !{ran}\n'
    )
elif attack == "clone-config":
    hooks = pathlib.Path(plan["hooks"])
    config("core.fsmonitor", ran)
    config("core.hooksPath", str(hooks))
    config("core.sshCommand", ran)
    config("core.pager", ran)
print(json.dumps({"description": attack}))
