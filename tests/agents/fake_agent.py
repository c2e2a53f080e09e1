#!/usr/bin/env python3
"""A coding agent for tests, following the `command` contract of DESIGN §9.

cwd is the workspace; GITIMPROVE_ITERATION says which attempt this is. The plan (a JSON file
given as argv[1]) maps iterations to actions. The last line printed is the JSON report.
"""

import json
import os
import pathlib
import subprocess
import sys
import time

plan = json.loads(pathlib.Path(sys.argv[1]).read_text())
iteration = os.environ["GITIMPROVE_ITERATION"]
candidate = os.environ.get("GITIMPROVE_CANDIDATE", "0")
action = plan.get(f"{iteration}.{candidate}") or plan.get(iteration) or plan.get("default", "noop")
prompt = pathlib.Path(os.environ["GITIMPROVE_PROMPT_FILE"]).read_text()
reworking = "## Rework" in prompt
markers = pathlib.Path(plan["markers"]) if plan.get("markers") else None
value = pathlib.Path("src/value.txt")
kind, _, arg = action.partition(":")


def git(*args):
    subprocess.run(["git", *args], check=False, capture_output=True)


if markers is not None and markers.is_dir():
    (markers / f"agent-{iteration}.{candidate}").write_text(str(os.getpid()))
    (markers / f"prompt-{iteration}.{candidate}.md").write_text(prompt)
    with open(markers / "calls.log", "a") as log:
        log.write(f"{iteration}.{candidate}\n")
if kind == "set":  # set:<number>
    value.write_text(arg + "\n")
elif kind == "slow-set":  # wait so a test can kill us, then set
    time.sleep(float(plan.get("slow", 3)))
    value.write_text(arg + "\n")
elif kind == "crash":
    print("agent: something went wrong", file=sys.stderr)
    sys.exit(1)
elif kind == "sleep":
    time.sleep(600)
elif kind == "noop":
    pass
elif kind == "comment":  # a change with no effect on the metric: a new comment line
    with open("src/notes.txt", "a") as notes:
        notes.write(f"# note {iteration}.{candidate}\n")
elif kind == "scale":  # scale:<factor>: the metric's true value times factor (and a comment)
    v = float(value.read_text().split()[0])
    value.write_text(f"{v * float(arg)!r}\n")
    with open("src/notes.txt", "a") as notes:
        notes.write(f"# scaled {iteration}.{candidate}\n")
elif kind == "text":
    value.write_text("not a number\n")
elif kind == "edit-sealed":
    pathlib.Path("bench.py").write_text('print("METRIC score=0")\n')
    value.write_text(arg + "\n")
elif kind == "symlink-sealed":
    pathlib.Path("bench.py").unlink()
    pathlib.Path("src/evil.py").write_text('print("METRIC score=0")\n')
    os.symlink("src/evil.py", "bench.py")
elif kind == "delete-sealed":
    pathlib.Path("bench.py").unlink()
    value.write_text(arg + "\n")
elif kind == "add-sealed":
    pathlib.Path("tests").mkdir(exist_ok=True)
    pathlib.Path("tests/test_new.py").write_text("def test_x(): pass\n")
    value.write_text(arg + "\n")
elif kind == "edit-config":
    cfg = pathlib.Path(".gitimprove.toml")
    cfg.write_text(cfg.read_text().replace("[metric]", '[metric]\ndirection = "higher"'))
    value.write_text(arg + "\n")
elif kind == "outside":
    pathlib.Path("README.txt").write_text("changed\n")
    value.write_text(arg + "\n")
elif kind == "guard-then-fix":  # breaks the guard, fixes it when asked to rework
    value.write_text(arg + "\n")
    broken = pathlib.Path("src/broken")
    if reworking:
        broken.unlink(missing_ok=True)
    else:
        broken.write_text("yes\n")
elif kind == "guard-fail":
    value.write_text(arg + "\n")
    pathlib.Path("src/broken").write_text("yes\n")
elif kind == "git-games":  # the agent's own git commands must not reach the repository
    value.write_text(arg + "\n")
    run = os.environ["GITIMPROVE_RUN"]
    git("add", "-A")
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "experiment(src): forged")
    git("update-ref", f"refs/heads/improve/{run}", "HEAD")
    git(
        "notes", "--ref=improve", "add", "-f", "-m", '{"v":1,"op":"create","status":"keep"}', "HEAD"
    )
    git("stash")
    value.write_text(arg + "\n")
elif kind == "leak":  # leak:<crash|guard|metric>: fail that way, printing secrets to the end
    leak = pathlib.Path(plan["leak_dir"]) / f"{iteration}.txt"
    if arg == "crash":
        print("agent: working on it\n" + leak.read_text(), file=sys.stderr)
        sys.exit(1)
    value.write_text(f"{100 + int(iteration)}\n")
    pathlib.Path(f"src/{arg}-fail").write_text(f"{iteration}\n")  # guard.py / bench.py read it
    # the agent's own commit in its workspace clone: it must never reach the repository
    git("add", "-A")
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", leak.read_text())
elif kind == "background":  # a detached process that rewrites the file during measurement
    value.write_text(arg + "\n")
    code = "import time, pathlib\ntime.sleep(0.5)\nfor _ in range(100):\n    time.sleep(0.05)\n    pathlib.Path('src/value.txt').write_text('1\\n')\n"
    subprocess.Popen([sys.executable, "-c", code], start_new_session=True, cwd=os.getcwd())
report = plan.get("reports", {}).get(iteration, {})
print(
    json.dumps(
        {
            "description": report.get("description", f"{action}"),
            "hypothesis": report.get("hypothesis", "test"),
            "approach": plan.get("approach", "optimization"),
            "cost_usd": plan.get("cost", 0.01),
        }
    )
)
