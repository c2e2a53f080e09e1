"""The user's object store without the sandbox (git/objectstore.py): an agent's clone borrows
the repository's objects, so an agent can rewrite or delete a loose object or a pack of the
user's history. Each is named and stops the run (never a silent loss, never an exit 3); the
user's own `git gc` during an agent call (packing, pruning what no ref reaches) stops nothing.
In the sandbox the repository is hidden: the same agent finds nothing and the run goes on."""

from __future__ import annotations

import os
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
    if packed:  # with a commit-graph (gc writes one), a reverse index beside the pack and an
        repo.git("tag", "-a", "v1", "-m", "v1")  # annotated tag's peeled line in packed-refs
        repo.git("-c", "pack.writeReverseIndex=true", "gc", "-q")
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


# attack: what the stop names (the files git derives from the objects and trusts as they are)
DERIVED = {
    "graph-lie": ".git/objects/info/commit-graph (a commit-graph that does not match",
    "idx-swap": ".idx (rewritten: it no longer indexes its pack as git does)",
    "midx-swap": ".git/objects/pack/multi-pack-index (a multi-pack-index that does not match",
    "rev-swap": ".rev (a reverse index that does not match its pack)",
    "bitmap-plant": ".bitmap (written for a pack that did not change",
    "info-packs": ".git/objects/info/packs (names pack-0000",
    "peel-lie": ".git/packed-refs (peeled lines)",
}


@pytest.mark.parametrize("attack", sorted(DERIVED))
def test_a_forged_file_git_derives_from_the_objects_stops_the_run(
    tmp_repo: TmpRepo, attack: str
) -> None:
    """A commit-graph that makes a commit parentless (checksum made anew: the user's `git
    log` stops there), a pack index that sends two names to each other's bytes, a reverse
    index out of order, a bitmap beside a pack git did not write anew, an `info/packs` naming
    a pack that is not there, a packed-refs whose peeled line lies about what a tag points to:
    each is named and stops the run, no attempt kept on it."""
    _project(tmp_repo, attack, packed=True)
    res = _cli(tmp_repo, "run", "--run", "h", "-n", "3")
    assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr
    assert "run h stopped" in res.stderr and DERIVED[attack] in res.stderr, res.stderr
    assert all(r["status"] != "keep" for r in run_rows(tmp_repo, "h")[1:] if r["iteration"] == 1)


@pytest.mark.slow
def test_the_users_own_commit_graph_and_multi_pack_index_stop_nothing(tmp_repo: TmpRepo) -> None:
    """`git gc` with reverse indexes, `git commit-graph write --split`, `git multi-pack-index
    write`, `git update-server-info` during an agent call: every file they write is what git
    derives from the objects, so the run goes on."""
    _project(tmp_repo, "derived-honest", packed=True)
    res = _cli(tmp_repo, "run", "--run", "h", "-n", "3")
    assert res.returncode == 0, res.stderr
    assert [r["status"] for r in run_rows(tmp_repo, "h")[1:]] == ["keep"] * 3
    assert _fsck(tmp_repo).returncode == 0


def _shared_clone(tmp_path: Path) -> tuple[TmpRepo, str]:
    """A repository cloned `--shared` from another (`origin`) whose history's blob lives in
    origin's store alone; returns it and that blob's name."""
    origin = TmpRepo(tmp_path / "origin")
    origin.path.mkdir()
    origin.git("init", "-q")
    origin.commit("history", {"docs/history.txt": "only in the borrowed store\n"})
    target = origin.git("rev-parse", "HEAD:docs/history.txt").strip()
    subprocess.run(
        ["git", "clone", "-q", "--shared", os.fspath(origin.path), "user"],
        cwd=tmp_path,
        check=True,
    )
    return TmpRepo(tmp_path / "user"), target


# attack on the store the repository borrows from: what the stop says
BORROWED = {
    "alt-loose-fifo": "(a FIFO, not a regular file)",
    "alt-loose-zero-link": "(a link, not a regular file)",
    "alt-loose-rewrite": "(rewritten: no longer what their names say)",
    "alt-loose-delete": "objects your refs reach are gone",
}


@pytest.mark.parametrize("attack", sorted(BORROWED))
def test_the_store_a_shared_clone_borrows_from_is_watched_as_its_own(
    tmp_path: Path, attack: str
) -> None:
    """The user's repository is a `git clone --shared` of another: its history's objects
    live in that repository's store, which an agent without the sandbox can write as well. A
    FIFO or a link in place of one of its loose objects, one rewritten or deleted: the run
    stops naming it by its path (never a hang, never a silent loss)."""
    repo, target = _shared_clone(tmp_path)
    borrowed = tmp_path / "origin" / ".git" / "objects"
    assert not (repo.path / ".git" / "objects" / target[:2] / target[2:]).exists()
    value_project(repo, f"{sys.executable} {AGENT} {attack} {target}")
    res = _cli(repo, "run", "--run", "h", "-n", "3")
    assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr
    assert "run h stopped" in res.stderr and BORROWED[attack] in res.stderr, res.stderr
    loose = borrowed / target[:2] / target[2:]
    if "delete" not in attack:
        assert f"{loose}" in res.stderr, res.stderr
    for args in (["log"], ["doctor"]):  # they answer, naming what git would hang on
        later = _cli(repo, *args)
        assert "Traceback" not in later.stderr and "internal error" not in later.stderr
    if (os.path.lexists(loose) and not loose.is_file()) or loose.is_symlink():
        assert f"{loose}" in _cli(repo, "doctor").stdout
        loose.unlink()  # left as it is (it is not in this repository): the user removes it
    assert all(r["status"] != "keep" for r in run_rows(repo, "h")[1:] if r["iteration"] == 1)


@needs_bwrap
@pytest.mark.slow
def test_in_the_sandbox_the_borrowed_store_is_out_of_reach(tmp_path: Path) -> None:
    repo, target = _shared_clone(tmp_path)
    value_project(repo, f"{sys.executable} {AGENT} alt-loose-rewrite {target}", sandbox="bwrap")
    res = _cli(repo, "run", "--run", "h", "-n", "3")
    assert res.returncode == 0, res.stderr
    assert [r["status"] for r in run_rows(repo, "h")[1:]] == ["keep"] * 3
    assert "only in the borrowed store" in repo.git("cat-file", "-p", target)


@pytest.mark.slow
def test_a_shared_clone_with_its_borrowed_store_untouched_runs(tmp_path: Path) -> None:
    """The honest control: a `git clone --shared` user whose agent packs the borrowed store
    as `git gc` does there: the run goes on."""
    repo, _ = _shared_clone(tmp_path)
    value_project(repo, f"{sys.executable} {AGENT} alt-gc")
    res = _cli(repo, "run", "--run", "h", "-n", "3")
    assert res.returncode == 0, res.stderr
    assert [r["status"] for r in run_rows(repo, "h")[1:]] == ["keep"] * 3


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


def _cli(repo: TmpRepo, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m gitimprove ARGS` with a timeout: a hang on the planted file fails the test
    (TimeoutExpired) instead of holding CI for ever."""
    return subprocess.run(
        [sys.executable, "-m", "gitimprove", *args],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=120,
    )


# attack: what the stop says of the planted loose object
NOT_REGULAR = {
    "loose-fifo": "a FIFO",
    "loose-socket": "a socket",
    "loose-zero-link": "a link",
    "loose-fifo-link": "a link",
}


@pytest.mark.parametrize("attack", sorted(NOT_REGULAR))
def test_a_fifo_or_link_in_place_of_a_loose_object_stops_the_run_without_a_hang(
    tmp_repo: TmpRepo, attack: str
) -> None:
    """The agent puts a FIFO, a socket or a link (to /dev/zero, to a FIFO) in place of a loose
    object of the user's history: the run stops at once naming it (exit 1, never a hang),
    the thing is moved aside, and every later command answers."""
    target = _project(tmp_repo, attack, packed=False)
    res = _cli(tmp_repo, "run", "--run", "h", "-n", "3")
    assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr
    named = f".git/objects/{target[:2]}/{target[2:]}"
    assert named in res.stderr and NOT_REGULAR[attack] in res.stderr, res.stderr
    loose = tmp_repo.path / ".git" / "objects" / target[:2] / target[2:]
    assert not os.path.lexists(loose)  # moved aside: nothing that opens the store blocks
    assert ".git/improve/quarantine/" in res.stderr and "git fsck" in res.stderr, res.stderr
    assert all(r["status"] != "keep" for r in run_rows(tmp_repo, "h")[1:] if r["iteration"] == 1)
    for args in (["log"], ["doctor"]):
        later = _cli(tmp_repo, *args)
        assert "Traceback" not in later.stderr and "internal error" not in later.stderr


@pytest.mark.parametrize("kind", ["fifo", "zero-link", "folder"])
def test_doctor_names_a_loose_object_that_is_no_file_and_repair_moves_it_aside(
    tmp_repo: TmpRepo, kind: str
) -> None:
    """A FIFO, a link to /dev/zero or a folder in place of a loose object: `status` and
    `doctor` name it (exit 1, never a hang, never read), `log` answers; `doctor --repair`
    moves it to quarantine."""
    tmp_repo.commit("history", {"docs/history.txt": "only in the user's history\n"})
    target = tmp_repo.git("rev-parse", "HEAD:docs/history.txt").strip()
    loose = _replace_loose(tmp_repo, target, kind)
    named = f".git/objects/{target[:2]}/{target[2:]}"
    assert "Traceback" not in _cli(tmp_repo, "log").stderr
    for args in (["status"], ["doctor"], ["show", "HEAD"], ["run", "--run", "h", "-n", "1"]):
        res = _cli(tmp_repo, *args)
        assert res.returncode == 1, (args, res.returncode, res.stdout, res.stderr)
        assert named in res.stdout + res.stderr, (args, res.stdout, res.stderr)
        assert "Traceback" not in res.stderr
    assert os.path.lexists(loose)  # named, left as it is
    res = _cli(tmp_repo, "doctor", "--repair")
    assert named in res.stdout, res.stdout
    assert not os.path.lexists(loose)
    assert list((tmp_repo.path / ".git" / "improve" / "quarantine").iterdir())
    again = _cli(tmp_repo, "doctor")
    assert named not in again.stdout, again.stdout


def _replace_loose(repo: TmpRepo, name: str, kind: str) -> Path:
    """The loose object `name` replaced by what is no file: a FIFO, a link to /dev/zero, a
    link to a FIFO, or a folder."""
    loose = repo.path / ".git" / "objects" / name[:2] / name[2:]
    loose.unlink()
    if kind == "fifo":
        os.mkfifo(loose)
    elif kind == "zero-link":
        loose.symlink_to("/dev/zero")
    elif kind == "fifo-link":
        os.mkfifo(repo.path / ".git" / "a-fifo")
        loose.symlink_to(repo.path / ".git" / "a-fifo")
    else:
        loose.mkdir()
    return loose


def test_the_check_of_every_loose_object_never_opens_one_that_is_no_file(
    tmp_repo: TmpRepo,
) -> None:
    """`bad_loose_objects` (doctor's check) names a FIFO, a link to /dev/zero or a link to a
    FIFO in place of a loose object as bad, and returns (it reads each regular one)."""
    names = []
    for i, kind in enumerate(["fifo", "zero-link", "fifo-link"]):
        tmp_repo.commit(f"c{i}", {f"docs/{kind}.txt": f"{kind}\n"})
        name = tmp_repo.git("rev-parse", f"HEAD:docs/{kind}.txt").strip()
        _replace_loose(tmp_repo, name, kind)
        names.append(name)
    code = (
        "import sys; from gitimprove.git.objects import bad_loose_objects; "
        "from gitimprove.git.repo import Repo; import pygit2; "
        "print(' '.join(bad_loose_objects(Repo(pygit2.Repository(sys.argv[1])))))"
    )
    got = subprocess.run(
        [sys.executable, "-c", code, os.fspath(tmp_repo.path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert got.returncode == 0, got.stderr
    assert sorted(got.stdout.split()) == sorted(names), got.stdout


PLANTING_BENCH = (
    "import pathlib, runpy\n"
    "if pathlib.Path('src/plant.py').exists():\n"
    "    runpy.run_path('src/plant.py')\n"
    "print(f\"METRIC score={float(open('src/value.txt').read()):g}\")\n"
)


def test_a_fifo_the_measured_code_puts_in_place_of_a_loose_object_stops_the_run(
    tmp_repo: TmpRepo,
) -> None:
    """The measured code (not the agent) replaces a loose object of the user's history by a
    FIFO while it is measured: the run stops naming it, never a hang."""
    tmp_repo.commit("history", {"docs/history.txt": "only in the user's history\n"})
    target = tmp_repo.git("rev-parse", "HEAD:docs/history.txt").strip()
    value_project(tmp_repo, f"{sys.executable} {AGENT} measure-fifo {target}", bench=PLANTING_BENCH)
    res = _cli(tmp_repo, "run", "--run", "h", "-n", "3")
    assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr, res.stderr
    assert f".git/objects/{target[:2]}/{target[2:]}" in res.stderr, res.stderr
    assert "a FIFO" in res.stderr and ".git/improve/quarantine/" in res.stderr, res.stderr
    for args in (["status"], ["doctor"]):
        later = _cli(tmp_repo, *args)
        assert "Traceback" not in later.stderr, (args, later.stderr)


def test_a_pack_file_as_a_link_is_named_by_every_command(tmp_repo: TmpRepo) -> None:
    """A pack replaced by a link to a copy of it (whose bytes could change under the name git
    trusts) is named by `status`, `doctor` and a run's start, exit 1."""
    tmp_repo.commit("history", {"docs/history.txt": "packed\n"})
    tmp_repo.git("gc", "-q")
    pack = next((tmp_repo.path / ".git" / "objects" / "pack").glob("pack-*.pack"))
    copy = tmp_repo.path.parent / "copy.pack"
    copy.write_bytes(pack.read_bytes())
    pack.unlink()
    pack.symlink_to(copy)
    for args in (["status"], ["doctor"], ["run", "--run", "h", "-n", "1"]):
        res = _cli(tmp_repo, *args)
        assert res.returncode == 1, (args, res.returncode, res.stdout, res.stderr)
        assert f".git/objects/pack/{pack.name} (a link" in res.stdout + res.stderr, res.stderr
        assert "Traceback" not in res.stderr
