"""A hostile agent whose code under test prints forged lines inside a benchmark read by a
`line:` rule or by `METRIC` lines with a trailer (tests/test_metric_rules.py).

The sealed benchmark prints progress lines naming the metric (as many as `src/steps.txt`
says), imports the mutable `src/work.py`, calls `work.main()`, prints its own line with
`src/value.txt`, then a trailer line naming the metric. argv[1] names a file holding
`<kind> <how>`: kind `line` (the forged line `score: 1`) or `metric` (`METRIC score=1`);
how:
- `honest`: the value 99 (better), twice as many progress lines, no forged line;
- `earlier`: the value 101 (worse), a forged better line printed before the benchmark's;
- `spoil`: the forged line, then `# ` left on the line the benchmark's own then follows on;
- `trailer`: the forged line, then `debug: `, so the benchmark's line looks like its trailer;
- `na`: the forged line, and the value `n/a`, so the benchmark's own line holds no number;
- `sameline`: the forged line and a space, no line end: the benchmark's own line follows on
  it (`score: 1 score: 101`, which a `line:` rule read as 1 before).
"""

import pathlib
import sys

kind, how = pathlib.Path(sys.argv[1]).read_text().split()
forged = "score: 1" if kind == "line" else "METRIC score=1"
value = {"honest": "99", "na": "n/a"}.get(how, "101")
pathlib.Path("src/value.txt").write_text(f"{value}\n")
after = {"earlier": "\n", "spoil": "\n# ", "trailer": "\ndebug: ", "na": "\n", "sameline": " "}
if how == "honest":
    pathlib.Path("src/steps.txt").write_text("6\n")
    body = "pass"
else:
    body = f"sys.stdout.write({forged + after[how]!r})"
pathlib.Path("src/work.py").write_text(
    f"import sys\n\n\ndef main():\n    {body}\n    sys.stdout.flush()\n"
)
print(f'{{"description": "{how} ({kind})"}}')
