#!/usr/bin/env python3
"""An agent whose report carries numbers no agent could mean: a cost of 400 digits, `1e999`,
NaN, a negative or a string; argv[1] is a JSON file mapping an iteration to the raw text it
prints after lowering src/value.txt (an honest gain, so only the report is hostile)."""

import json
import os
import pathlib
import sys

plan = json.loads(pathlib.Path(sys.argv[1]).read_text())
iteration = os.environ["GITIMPROVE_ITERATION"]
pathlib.Path("src/value.txt").write_text(f"{90 - int(iteration)}\n")
sys.stdout.write(plan[iteration])
