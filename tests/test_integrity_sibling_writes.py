"""Tournaments without the sandbox: one candidate's agent writes into a sibling's files.

Agents of a round work at once as the same user, so a hostile one can find its siblings'
workspaces and measurement checkouts beside its own (`.git/improve/work/`) and write there.
The victim is measured on its own committed tree; the writer is found by the windows of the
agent calls (loop/siblings.py) and recorded `tampered`, naming the paths, never kept."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows

BENCH = (
    "import pathlib, time\n"
    "time.sleep(float(pathlib.Path('src/delay.txt').read_text()))\n"
    "print(f\"METRIC score={float(pathlib.Path('src/value.txt').read_text()):g}\")\n"
)
# candidate 1 is honest (and at once done); candidate 0 waits for what `argv[1]` names of
# candidate 1 — its workspace once hashed, or its measurement checkout while it is measured —
# and writes there for a while; it improves nothing itself
AGENT = r"""import os, pathlib, sys, time
target = sys.argv[1]
cand = os.environ["GITIMPROVE_CANDIDATE"]
it = os.environ["GITIMPROVE_ITERATION"]
here = pathlib.Path.cwd()


def holds(d, value):
    try:
        return d.name.startswith("m-") and (d / "src" / "value.txt").read_text() == value
    except OSError:
        return False


if cand != "0":  # candidate 2 (when there is one) is honest too, and at work a while
    time.sleep(4 if cand == "2" else 0)
    pathlib.Path("src/value.txt").write_text("50\n" if cand == "1" else "60\n")
    sys.exit(0)
pathlib.Path("src/value.txt").write_text("200\n")
if it != "1":
    sys.exit(0)
work = here.parent
mine = here.name
end = time.time() + 8
hit = False
while time.time() < end:
    for d in work.iterdir():
        n = d.name
        if not d.is_dir() or n == mine:
            continue
        if target == "checkout" and not holds(d, "50\n"):  # candidate 1's measurement checkout
            continue
        if target == "incumbent" and not holds(d, "100\n"):  # the incumbent's, kept across rounds
            continue
        if target == "workspace" and not n.startswith(f"t-{it}-1-"):  # candidate 1's
            continue
        if target == "incumbent":
            time.sleep(0.5)
        v = d / "src" / "value.txt"
        try:
            if target == "workspace":
                time.sleep(1.5)  # its agent is done and its tree hashed
            v.write_text("999\n")
            (d / "src" / "planted.txt").write_text("from a sibling\n")
            hit = True
        except OSError:
            pass
    if hit and target in ("workspace", "incumbent"):
        break
    time.sleep(0.01)
pathlib.Path(sys.argv[2]).write_text("hit" if hit else "missed")
"""


def _project(repo: TmpRepo, tmp_path: Path, target: str, delay: float) -> Path:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    said = tmp_path / "said"
    repo.commit(
        "project",
        {
            "bench.py": BENCH,
            "src/value.txt": "100\n",
            "src/delay.txt": f"{delay}\n",
            ".gitimprove.toml": f"""[metric]
command = "{sys.executable} bench.py"
direction = "lower"

[scope]
mutable = ["src/value.txt", "src/planted.txt"]
sealed = ["bench.py", "src/delay.txt"]

[agent]
name = "command"
command = "{sys.executable} {agent} {target} {said}"
sandbox = "none"
""",
        },
    )
    return said


@pytest.mark.slow
@pytest.mark.parametrize(
    ("target", "delay", "jobs"),
    [
        ("workspace", 0.0, "2"),
        ("workspace", 0.0, "1"),
        ("checkout", 1.0, "2"),
        ("incumbent", 0.0, "1"),
    ],
)
def test_a_write_into_a_siblings_files_is_laid_on_the_writer(
    tmp_repo: TmpRepo, tmp_path: Path, target: str, delay: float, jobs: str
) -> None:
    """Candidate 0 writes into candidate 1's workspace once its tree is hashed (or, one agent
    at a time, while it waits for its agent's turn), into its measurement checkout while it
    is measured, or into the incumbent's checkout (kept across rounds): candidate 0 is
    `tampered` naming the paths, candidate 1 kept on what it committed."""
    said = _project(tmp_repo, tmp_path, target, delay)
    res = tmp_repo.cli("run", "--run", "t", "-n", "1", "--candidates", "2", "--jobs", jobs)
    out = res.stdout + res.stderr
    assert "Traceback" not in out
    assert res.returncode == 0, out
    assert said.read_text() == "hit", out  # the sibling's files were there to write
    final = {r["candidate"]: r for r in run_rows(tmp_repo, "t")[1:]}  # each one's last line
    writer, victim = final[0], final[1]
    assert writer["status"] == "tampered", (json.dumps(writer), json.dumps(victim), out)
    assert "another candidate's files" in writer["reason"], writer["reason"]
    assert "src/value.txt" in writer["reason"], writer["reason"]
    # the victim is measured on its own committed tree: 50, kept (lower is better)
    assert victim["status"].startswith("keep"), json.dumps(victim)
    assert victim["metric"]["value"] == 50, json.dumps(victim)


@pytest.mark.slow
def test_with_two_agents_at_work_each_is_recorded_as_the_possible_writer(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """Candidate 0 writes into candidate 1's resting workspace while candidate 2's agent is at
    work too: nothing tells which of the two wrote, so both are `tampered`, each record
    naming the other as the possible writer; candidate 1 is kept on its own tree."""
    said = _project(tmp_repo, tmp_path, "workspace", 0.0)
    res = tmp_repo.cli("run", "--run", "t", "-n", "1", "--candidates", "3", "--jobs", "3")
    out = res.stdout + res.stderr
    assert res.returncode == 0 and "Traceback" not in out, out
    assert said.read_text() == "hit", out
    final = {r["candidate"]: r for r in run_rows(tmp_repo, "t")[1:]}
    for cand in (0, 2):
        assert final[cand]["status"] == "tampered", json.dumps(final[cand])
        assert "the writer is one of candidate 0, candidate 2" in final[cand]["reason"]
    assert final[1]["status"].startswith("keep"), json.dumps(final[1])
    assert final[1]["metric"]["value"] == 50


def test_the_writer_is_told_by_when_the_change_was_made(tmp_path: Path) -> None:
    """Agents one after another since a checkout was last proved: the change is laid on the
    one at work when it was made (its files' change time), not on every one since — and on
    all of them when the stamp falls in no window (the wall clock moved)."""
    from gitimprove.loop import siblings

    since = siblings.tick()
    victim = tmp_path / "checkout"
    (victim / "src").mkdir(parents=True)
    with siblings.agent("t-1-0"):  # the writer
        (victim / "src" / "value.txt").write_text("999\n")
        (victim / "src" / "planted.txt").write_text("from a sibling\n")
    time.sleep(0.2)  # more than the slack between windows
    with siblings.agent("t-1-1"):  # honest, later
        time.sleep(0.01)
    changed = ["src/value.txt", "src/planted.txt", "src/gone.txt"]
    when = siblings.changed_at(victim, changed)
    assert when is not None
    assert siblings.at_work_since(since, but=None, when=when) == ["t-1-0"]
    time.sleep(0.2)
    with siblings.agent("t-1-2"):  # a file removed is stamped by its folder's change
        (victim / "src" / "planted.txt").unlink()
    gone = siblings.changed_at(victim, ["src/planted.txt"])
    assert gone is not None and siblings.at_work_since(since, but=None, when=gone) == ["t-1-2"]
    assert siblings.at_work_since(since, but=None, when=when - 3600) == [
        "t-1-0",
        "t-1-1",
        "t-1-2",
    ]
    assert siblings.at_work_since(since, but="t-1-0", when=when) == ["t-1-1", "t-1-2"]
