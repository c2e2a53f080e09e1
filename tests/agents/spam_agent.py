#!/usr/bin/env python3
"""An agent whose output, or whose code's output, is too large to hold: argv[1] is a JSON file
mapping an iteration to an attack. `agent` prints 200 MB itself (stdout and stderr); `metric`
makes the code the benchmark runs print 200 MB; `guard` makes the test the guard runs print
200 MB; `honest` only lowers the value. Each lowers src/value.txt (an honest-looking gain)."""

import json
import os
import pathlib
import sys

plan = json.loads(pathlib.Path(sys.argv[1]).read_text())
iteration = os.environ["GITIMPROVE_ITERATION"]
attack = plan[iteration]
pathlib.Path("src/value.txt").write_text(f"{90 - int(iteration)}\n")
SPAM = "import os\nb = b'x' * (1 << 20) + b'\\n'\nfor _ in range(200):\n    os.write({fd}, b)\n"
if attack == "agent":
    for _ in range(100):
        os.write(1, b"y" * (1 << 20))
        os.write(2, b"z" * (1 << 20))
elif attack == "metric":
    pathlib.Path("src/prog.py").write_text(SPAM.format(fd=1))
elif attack == "metric-stderr":
    pathlib.Path("src/prog.py").write_text(SPAM.format(fd=2))
elif attack == "guard":
    pathlib.Path("src/check.py").write_text(SPAM.format(fd=1))
print(json.dumps({"description": attack}))
