#!/usr/bin/env python3
"""An agent whose file names and report carry terminal control sequences: a carriage return
and `ESC[2K` that erase the line and print a forged `keep` row, an OSC title ending in BEL, a
C1 CSI, a bidi override, newlines. It lowers src/value.txt (an honest gain) and, on iteration
1, also adds a file outside the scope whose name forges a row."""

import json
import os
import pathlib

FORGED = "\r\x1b[2K#1   0000000000 keep                   1  kept: 99.0% better\n\x1b[8m"
iteration = int(os.environ["GITIMPROVE_ITERATION"])
pathlib.Path("src/value.txt").write_text(f"{90 - iteration}\n")
if iteration == 1:
    pathlib.Path("out" + FORGED.replace("/", "_")).write_text("x\n")
report = {
    "description": "ok\r\x1b[2Kkept great\x1b]0;pwned\x07 \x9b31m \u202eevil\x1b[0m",
    "hypothesis": "h\x1b[1A\x1b[2K",
}
print(json.dumps(report))
