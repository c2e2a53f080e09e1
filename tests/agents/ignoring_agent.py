#!/usr/bin/env python3
"""An agent that lowers src/value.txt and writes a `.gitignore` matching files of the tree:
argv[1] is where (`src/.gitignore`), argv[2] the pattern (`*`, `*.txt`, `value.txt`). git
keeps a tracked file its `.gitignore` matches; so must the harness's commit."""

import pathlib
import sys

where, pattern = sys.argv[1], sys.argv[2]
value = pathlib.Path("src/value.txt")
value.write_text(f"{int(value.read_text()) - 1}\n")
pathlib.Path(where).write_text(f"{pattern}\n")
pathlib.Path("src/new.txt").write_text("an ignored new file\n")
print('{"description": "lower, and ignore what the build writes"}')
