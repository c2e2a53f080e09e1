"""What an agent leaves in the user's git directory where git keeps no ref and no reflog.

A line appended to `packed-refs` that git dies on (`# speed 1`) stopped the run with "git
update-ref failed" and the attempt unrecorded, every git command of the user's failing after
it, and `doctor` saw nothing (libgit2 reads the file leniently); a header trait git ignores
(`speed-1`) carried the number unseen. Now a packed-refs line git would not write is named,
the file put back as it was before the agent, the attempt `tampered`. A lock file left on
the notes ref or a run branch (`refs/notes/improve.lock`) made every record wait a minute and
fail: the attempt unrecorded, the run stopped; now it is named and moved aside, the attempt
recorded `tampered`.

Refs are compared by value and a new reflog is taken for the user's git at work, so a file
under `refs/` that git cannot read as a ref (`refs/speed` holding `1`), an empty folder there
whose name is the number, or a file of `logs/` that is the reflog of no ref were seen by
nobody: the committed code read the number from there at measurement and was kept at 1 against
100 (tests/agents/gitdir_leaver.py). Without the sandbox each is now a change of the user's
repository that stops the run naming it, the attempt `tampered`; in the sandbox the git
directory is hidden, the write fails and the candidate is measured as committed.
"""

from __future__ import annotations

import secrets
import sys
from pathlib import Path

import pytest

from gitimprove.git import watch
from gitimprove.git.watch import RepoState
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project
from tests.test_integrity import needs_bwrap

AGENT = Path(__file__).parent / "agents" / "gitdir_leaver.py"
BENCH = """import subprocess, sys
out = subprocess.run([sys.executable, "src/work.py"], capture_output=True, text=True, check=True)
print("METRIC score=" + out.stdout.strip(), flush=True)
"""
WORK = "print(open('src/value.txt').read().strip())\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("place", "named"),
    [
        ("refs/speed", ".git/refs/speed"),
        ("logs/speed", ".git/logs/speed (no ref of that name)"),
        ("refs/tags/speed-1/", ".git/refs/tags/speed-1/"),
        ("logs/refs/heads/speed", ".git/logs/refs/heads/speed (no ref of that name)"),
        ("refs/notes/improve.lock", ".git/refs/notes/improve.lock (a lock file left on"),
        ("refs/heads/improve/g.lock", ".git/refs/heads/improve/g.lock (a lock file left on"),
        ("packed-refs", ".git/packed-refs (git would not write it: line "),
        (
            "packed-refs-trait",
            ".git/packed-refs (git would not write it: line 1: a trait git does not know: speed-1)",
        ),
    ],
)
def test_a_number_left_where_git_keeps_no_ref_stops_the_run(
    tmp_repo: TmpRepo, place: str, named: str
) -> None:
    value_project(
        tmp_repo, f"{sys.executable} {AGENT} {place}", BENCH, {"src/work.py": WORK}, timeouts=True
    )
    res = tmp_repo.cli("run", "--run", "g", "-n", "2")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "your repository changed" in res.stderr and named in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    rows = run_rows(tmp_repo, "g")
    assert [r["status"] for r in rows] == ["baseline", "tampered"], rows
    assert (rows[1].get("metric") or {}).get("value") != 1
    base = tmp_repo.git("rev-parse", "refs/improve/runs/g/base")
    assert tmp_repo.git("rev-parse", "improve/g") == base  # nothing kept
    if place.endswith(".lock"):  # moved aside: the harness recorded the attempt
        assert not (tmp_repo.path / ".git" / place).exists()
    if place.startswith("packed-refs"):  # put back as it was: git reads it again
        assert b"speed" not in (tmp_repo.path / ".git" / "packed-refs").read_bytes()
        assert "refs/heads/main" in tmp_repo.git("for-each-ref")


@pytest.mark.slow
@needs_bwrap
def test_in_the_sandbox_the_git_directory_is_out_of_reach(tmp_repo: TmpRepo) -> None:
    value_project(
        tmp_repo,
        f"{sys.executable} {AGENT} refs/speed",
        BENCH,
        {"src/work.py": WORK},
        sandbox="bwrap",
        timeouts=True,
    )
    res = tmp_repo.cli("run", "--run", "g", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "g")
    assert [r["status"] for r in rows] == ["baseline", "discard"], rows
    assert rows[1]["metric"]["value"] == 100
    assert not (tmp_repo.path / ".git" / "refs" / "speed").exists()


def test_the_users_own_refs_and_reflogs_are_no_stray(tmp_repo: TmpRepo) -> None:
    """A branch made, a tag made and deleted, `pack-refs`: each file under `refs/` and `logs/`
    belongs to a ref, and the change the user's git makes is judged as before (a ref moved);
    a stray is named by its path whatever the sandbox says of the user's own things."""
    tmp_repo.commit("c", {"a.txt": "1\n"})
    before = RepoState.take(tmp_repo.open())
    tmp_repo.git("pack-refs", "--all")
    tmp_repo.git("tag", "t1")
    tmp_repo.git("tag", "-d", "t1")
    after = RepoState.take(tmp_repo.open())
    assert before.changes(after) == []
    strays = [label for label in after.files if label.startswith(".git/refs/")]
    assert all(label.endswith("/") for label in strays), strays  # git's empty folders alone
    tmp_repo.git("branch", "feature")
    branched = RepoState.take(tmp_repo.open())
    assert after.changes(branched) == ["refs/heads/feature"]  # the ref, not its reflog
    (tmp_repo.path / ".git" / "refs" / "speed").write_text("1\n")
    (tmp_repo.path / ".git" / "logs" / "speed").write_text("1\n")
    (tmp_repo.path / ".git" / "refs" / "notes").mkdir(exist_ok=True)
    (tmp_repo.path / ".git" / "refs" / "notes" / "speed").write_text("1\n")
    stray = RepoState.take(tmp_repo.open())
    assert branched.changes(stray) == [
        ".git/logs/speed (no ref of that name)",
        ".git/refs/notes/",
        ".git/refs/notes/speed",
        ".git/refs/speed",
    ]
    assert branched.changes(stray, reachable=False) == []  # in the sandbox: the user's own


OUTSIDE = Path(__file__).parent / "agents" / "outside_leaver.py"


@pytest.mark.slow
@needs_bwrap
@pytest.mark.parametrize("place", ["tmp", "shm", "vartmp", "cache", "clone"])
def test_in_the_sandbox_nothing_the_agent_leaves_outside_its_commit_is_measured(
    tmp_repo: TmpRepo, place: str
) -> None:
    """`/tmp` and `/dev/shm` are private to the agent's call and to each measurement,
    `/var/tmp` and the home read-only, the agent's workspace hidden from the measured code:
    the candidate is measured as committed (100), never at the 1 it left outside. Without the
    sandbox the same agent is kept at 1 ("What `sandbox = "none"` cannot protect")."""
    mark = f"speed-{secrets.token_hex(4)}"
    value_project(
        tmp_repo,
        f"{sys.executable} {OUTSIDE} {place} {mark}",
        BENCH,
        {"src/work.py": WORK},
        sandbox="bwrap",
        timeouts=True,
    )
    res = tmp_repo.cli("run", "--run", "o", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "o")
    assert [r["status"] for r in rows] == ["baseline", "discard"], rows
    assert rows[1]["metric"]["value"] == 100
    assert not Path(f"/tmp/{mark}").exists() and not Path(f"/dev/shm/{mark}").exists()


def test_a_packed_refs_line_git_would_not_write_is_named_and_dropped(tmp_repo: TmpRepo) -> None:
    """What git writes (annotated and light tags, branches, peeled lines) is no stray; a line
    git dies on, a header trait it does not know, a peeled line it did not make (after a
    branch, or naming another object) and lines out of order are named, and put back as git
    writes the file, every ref kept."""
    tmp_repo.commit("c", {"a.txt": "1\n"})
    tmp_repo.git("tag", "-a", "v1", "-m", "v1")
    tmp_repo.git("tag", "light")
    tmp_repo.git("pack-refs", "--all")
    path = tmp_repo.path / ".git" / "packed-refs"
    good = path.read_bytes()
    assert b"\n^" in good  # the annotated tag's peeled line
    repo = tmp_repo.open()
    before = RepoState.take(repo)
    assert before.changes(RepoState.take(tmp_repo.open())) == []
    head = tmp_repo.git("rev-parse", "HEAD")
    lines = good.splitlines(keepends=True)
    forged = {
        "line": good + b"# speed 1\n",
        "unterminated": good.rstrip(b"\n"),
        "trait": good.replace(b"sorted", b"sorted speed-1", 1),
        "peeled": good.replace(b"refs/heads/main\n", b"refs/heads/main\n^" + head.encode() + b"\n"),
        "order": lines[0] + b"".join(reversed(lines[1:3])) + b"".join(lines[3:]),
    }
    for what, data in forged.items():
        path.write_bytes(data)
        after = RepoState.take(tmp_repo.open())
        named = before.changes(after, reachable=False)  # the harness reads it: in the sandbox too
        assert len(named) == 1 and named[0].startswith(watch.PACKED_ODD), (what, named)
        watch.put_back(tmp_repo.open(), before, after)
        assert path.read_bytes() == good, what
        assert before.changes(RepoState.take(tmp_repo.open())) == [], what


def test_doctor_names_a_packed_refs_git_dies_on_and_repair_writes_it_again(
    tmp_repo: TmpRepo,
) -> None:
    """libgit2 reads such a file leniently, so `doctor` saw nothing while every git command
    of the user's failed (`unexpected line in .git/packed-refs`)."""
    tmp_repo.commit("c", {"a.txt": "1\n"})
    tmp_repo.git("pack-refs", "--all")
    path = tmp_repo.path / ".git" / "packed-refs"
    good = path.read_bytes()
    path.write_bytes(good + b"# speed 1\n")
    assert tmp_repo.git("for-each-ref", check=False) == ""  # git dies on it
    res = tmp_repo.cli("doctor")
    assert "packed-refs" in res.stdout and "git dies on" in res.stdout, res.stdout
    assert res.returncode == 1
    tmp_repo.cli("doctor", "--repair")
    assert path.read_bytes() == good
    assert "refs/heads/main" in tmp_repo.git("for-each-ref")
    assert "packed-refs" not in tmp_repo.cli("doctor").stdout
