#!/usr/bin/env python3
"""A hostile agent that puts line breaks and bulk into what the harness records.

argv[1] names the attack; the agent works in its workspace (the current directory):
- crash-breaks: prints text holding every character `str.splitlines` splits at, exits 1
  (the harness stores its output's tail);
- sealed-name: commits a sealed file whose name holds U+2028 (the reason names the path);
- link-name: adds a symlink named with U+2029 that leaves the workspace (out-of-scope);
- deep-tamper: has src/prog.py, which the benchmark runs, make 60 conftest.py files 15
  folders deep, folder names of 240 × \\x01 (tampered, with a long list of paths);
- description: reports a description of every line break and lone surrogate, and sets the
  value to 90 (kept, with that description).
"""

import json
import os
import pathlib
import sys

attack = sys.argv[1]
BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
if attack == "crash-breaks":
    print("boom" + "".join(f"{c}{{}}{c}" for c in BREAKS) + "end")
    sys.exit(1)
if attack == "sealed-name":
    pathlib.Path("data/x\u2028y\x85z.txt").write_text("8\n")
elif attack == "link-name":
    os.symlink("/etc/hostname", "src/l\u2029k\u2028")
elif attack == "deep-tamper":
    pathlib.Path("src/prog.py").write_text(
        """import os
root = os.getcwd()
for i in range(60):
    os.chdir(root)
    for lvl in range(15):
        d = ("\\x01" * 240) + "%02d" % i
        os.makedirs(d, exist_ok=True)
        os.chdir(d)
    open("conftest.py", "w").write("x = 1\\n")
os.chdir(root)
print(90)
"""
    )
elif attack == "description":
    pathlib.Path("src/prog.py").write_text("print(90)\n")
    text = "fast" + BREAKS + "\ud800 done"
    print(json.dumps({"description": text, "hypothesis": text, "approach": "other"}))
