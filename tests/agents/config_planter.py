"""A hostile agent that plants a gitimprove setting for the next run of the same run.

On its first call it writes `improve.metric.command = echo METRIC score=1` where argv[1]
says and makes the change worse (`src/value.txt` 100 -> 101):
- `global-env`: the file `$GIT_CONFIG_GLOBAL` names (git reads it in place of
  `~/.gitconfig`; libgit2 in the harness does not);
- `subsection-case`: `[improve "Metric"]` in `~/.gitconfig` (a subsection's case counts in
  git; the harness reads `improve.Metric.command` as `metric.command`);
- `dashes`: `[improve "loop"] plateauPatience = 1` (git lowercases the key; the file
  spells it `plateau_patience`, the run pinned none);
- `none`: plants nothing.
"""

import os
import pathlib
import sys

how = sys.argv[1]
text = {
    "global-env": '[improve "metric"]\n\tcommand = echo METRIC score=1\n',
    "subsection-case": '[improve "Metric"]\n\tcommand = echo METRIC score=1\n',
    "dashes": '[improve "loop"]\n\tplateauPatience = 1\n',
    "none": "",
}[how]
target = os.environ.get("GIT_CONFIG_GLOBAL") if how == "global-env" else None
path = pathlib.Path(target or os.path.expanduser("~/.gitconfig"))
if text:
    with open(path, "a") as f:
        f.write(text)
pathlib.Path("src/value.txt").write_text("101\n")
