"""The user's object store without the sandbox (git/objectstore.py): an agent's clone borrows
the repository's objects, so an agent can rewrite or delete a loose object or a pack of the
user's history. Each is named and stops the run (never a silent loss, never an exit 3); the
user's own `git gc` during an agent call (packing, pruning what no ref reaches) stops nothing.
In the sandbox the repository is hidden: the same agent finds nothing and the run goes on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project
from tests.test_integrity import needs_bwrap

AGENT = Path(__file__).parent / "agents" / "objects_agent.py"

# attack: what the stop names, and whether the user's objects are packed first
STOPS = {
    "loose-rewrite": ("no longer what their names say", False),
    "loose-replace": ("no longer what their names say", False),
    "loose-delete": ("objects your refs reach are gone", False),
    "pack-zero": ("its bytes no longer match its checksum", True),
    "pack-delete": ("objects your refs reach are gone", True),
    "pack-forge": ("a new pack whose objects are not what their names say", True),
    "pack-to-loose": ("written anew: no longer what their names say", True),
}


def _project(repo: TmpRepo, attack: str, *, packed: bool, sandbox: str = "none") -> str:
    """The project, its history loose or packed; returns the loose object the agent hits
    (the blob of a file of the user's history that no run writes again)."""
    repo.commit("history", {"docs/history.txt": "only in the user's history\n"})
    target = repo.git("rev-parse", "HEAD:docs/history.txt").strip()
    if packed:
        repo.git("gc", "-q")
    value_project(repo, f"{sys.executable} {AGENT} {attack} {target}", sandbox=sandbox)
    repo.git("update-ref", "refs/heads/keep", "HEAD")  # gc keeps the history reachable
    return target


def _fsck(repo: TmpRepo) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "fsck", "--no-dangling"], cwd=repo.path, capture_output=True, text=True
    )


@pytest.mark.parametrize("attack", sorted(STOPS))
def test_a_damaged_or_removed_object_of_the_user_stops_the_run(
    tmp_repo: TmpRepo, attack: str
) -> None:
    said, packed = STOPS[attack]
    target = _project(tmp_repo, attack, packed=packed)
    assert _fsck(tmp_repo).returncode == 0
    res = tmp_repo.cli("run", "--run", "h", "-n", "3")
    assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr
    assert "run h stopped" in res.stderr and said in res.stderr, res.stderr
    if not packed:
        assert f"{target[:2]}/{target[2:]}" in res.stderr or target in res.stderr, res.stderr
    assert _fsck(tmp_repo).returncode != 0  # the loss is real: the harness named it
    if attack in (
        "pack-forge",
        "pack-to-loose",
    ):  # what the user's git now shows for their own file
        shown = tmp_repo.git("cat-file", "-p", target)
        assert "forged history" in shown, shown
    assert all(r["status"] != "keep" for r in run_rows(tmp_repo, "h")[1:] if r["iteration"] == 1)


def test_with_the_records_own_objects_gone_every_command_says_so(tmp_repo: TmpRepo) -> None:
    """Every loose object deleted, the notes' tip among them: the attempt cannot be recorded,
    the run stops naming the loss, and `log` names the missing object (exit 1, not 3)."""
    _project(tmp_repo, "loose-delete-all", packed=False)
    res = tmp_repo.cli("run", "--run", "h", "-n", "3")
    assert res.returncode == 1, (res.returncode, res.stderr)
    assert "objects your refs reach are gone" in res.stderr, res.stderr
    assert "this attempt could not be recorded" in res.stderr, res.stderr
    for args in (["log"], ["run", "--resume", "--run", "h"]):
        later = tmp_repo.cli(*args)
        assert later.returncode == 1, (args, later.returncode, later.stderr)
        assert "of your repository is missing or damaged" in later.stderr, later.stderr
        assert "internal error" not in later.stderr


def test_the_users_own_gc_during_an_agent_call_stops_nothing(tmp_repo: TmpRepo) -> None:
    """`git gc --prune=now` packs every loose object and prunes one no ref reaches: nothing
    the user can lose, so the run goes on."""
    _project(tmp_repo, "gc", packed=False)
    garbage = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=tmp_repo.path,
        input="unreachable\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    res = tmp_repo.cli("run", "--run", "h", "-n", "3")
    assert res.returncode == 0, res.stderr
    assert [r["status"] for r in run_rows(tmp_repo, "h")[1:]] == ["keep"] * 3
    assert not (tmp_repo.path / ".git" / "objects" / garbage[:2] / garbage[2:]).exists()
    assert _fsck(tmp_repo).returncode == 0


@needs_bwrap
@pytest.mark.slow
@pytest.mark.parametrize("attack", ["loose-rewrite", "pack-delete"])
def test_in_the_sandbox_the_object_store_is_out_of_reach(tmp_repo: TmpRepo, attack: str) -> None:
    _project(tmp_repo, attack, packed=STOPS[attack][1], sandbox="bwrap")
    res = tmp_repo.cli("run", "--run", "h", "-n", "3")
    assert res.returncode == 0, res.stderr
    assert [r["status"] for r in run_rows(tmp_repo, "h")[1:]] == ["keep"] * 3
    assert _fsck(tmp_repo).returncode == 0
