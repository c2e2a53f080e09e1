"""Files of the user's git directory that git and libgit2 read (HEAD, config, packed-refs, the
index, loose refs, alternates…) replaced by a FIFO or a huge sparse file: never a hang.

Without the sandbox an agent can reach them (tests/agents/gitdir_replacer.py). The harness
checks them with `lstat`/`stat` before libgit2 or git touches the repository: the run stops
naming the path, the thing is moved aside to `.git/improve/quarantine/`, and `doctor` (and
any command) names such a file instead of hanging on it.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project

AGENT = Path(__file__).parent / "agents" / "gitdir_replacer.py"
BENCH = "print('METRIC score=' + open('src/value.txt').read().strip())\n"


def project(repo: TmpRepo, name: str, what: str) -> None:
    value_project(repo, f"{sys.executable} {AGENT} {name} {what}", BENCH, timeouts=True)


SLOW = pytest.mark.slow  # the same mechanism, other files
CASES = [
    ("config", "fifo"), ("HEAD", "fifo"), ("packed-refs", "fifo"),
    pytest.param("refs/heads/main", "fifo", marks=SLOW),
    pytest.param("index", "fifo", marks=SLOW),
    pytest.param("objects/info/alternates", "fifo", marks=SLOW),
    pytest.param("refs/tags/deep/x", "fifo", marks=SLOW),
    pytest.param("config", "sparse", marks=SLOW),
    pytest.param("packed-refs", "sparse", marks=SLOW),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("name", "what"), CASES)
def test_a_git_file_replaced_stops_the_run_naming_it(
    tmp_repo: TmpRepo, name: str, what: str
) -> None:
    project(tmp_repo, name, what)
    res = tmp_repo.cli("run", "--run", "g", "-n", "2")  # a hang fails at the cli's timeout
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert "Traceback" not in out
    assert f".git/{name}" in out, out
    path = tmp_repo.path / ".git" / name
    if os.path.lexists(path):  # moved aside: nothing left hangs the next git command
        assert stat.S_ISREG(os.lstat(path).st_mode) and os.lstat(path).st_size < 1 << 20
    aside = list((tmp_repo.path / ".git" / "improve" / "quarantine").iterdir())
    assert any(p.name.startswith(name.replace("/", "_") + ".") for p in aside), aside
    if name in ("HEAD", "config"):  # put back as it was before the agent: git works on
        assert tmp_repo.git("symbolic-ref", "HEAD") == "refs/heads/main"
        assert tmp_repo.git("config", "user.email")
        assert [r["status"] for r in run_rows(tmp_repo, "g")] == ["baseline", "tampered"]
    doctor = tmp_repo.cli("doctor")
    assert "Traceback" not in doctor.stdout + doctor.stderr
    assert "git directory" not in doctor.stdout, doctor.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["config", "HEAD", "packed-refs", "refs/heads/topic", "objects/info/alternates"]
)
def test_doctor_and_run_name_a_fifo_in_the_git_directory_instead_of_hanging(
    tmp_repo: TmpRepo, name: str
) -> None:
    project(tmp_repo, name, "fifo")
    path = tmp_repo.path / ".git" / name
    if path.exists():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    for args in (["doctor"], ["doctor", "--json"], ["run", "--run", "d", "-n", "1"]):
        res = tmp_repo.cli(*args)  # a hang fails at the cli's timeout
        out = res.stdout + res.stderr
        assert res.returncode == 1, (args, out)
        assert "Traceback" not in out and f".git/{name}" in out, (args, out)
    assert stat.S_ISFIFO(os.lstat(path).st_mode)  # reported, not touched


def test_a_regular_git_directory_is_no_problem(tmp_repo: TmpRepo) -> None:
    project(tmp_repo, "config", "fifo")
    tmp_repo.git("pack-refs", "--all")
    tmp_repo.git("worktree", "add", "-q", str(tmp_repo.path.parent / "wt"))
    res = tmp_repo.cli("doctor")
    assert "git directory" not in res.stdout, res.stdout


# Files git reads that the repository's own files lead to, other files of the git directory,
# and files git reads in the work tree: (argv[1], mode, what the run and doctor name).
LED_TO = [
    ("-", "include", ".git/config: include "),
    pytest.param("-", "includeif", ".git/config: include ", marks=SLOW),
    ("-", "altchain", ".git/objects/info/alternates → "),
    ("info/exclude", "fifo", ".git/info/exclude (a FIFO"),
    pytest.param("info/attributes", "fifo", ".git/info/attributes (a FIFO", marks=SLOW),
    pytest.param("MERGE_HEAD", "fifo", ".git/MERGE_HEAD (a FIFO", marks=SLOW),
    ("config", "big", ".git/config (314,572,800 bytes, over 8,388,608)"),
    ("sub/.git/HEAD", "tree-fifo", "work tree: sub/.git/HEAD (a FIFO"),
    pytest.param("sub/.gitignore", "tree-fifo", "work tree: sub/.gitignore (a FIFO", marks=SLOW),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "how", "named"), LED_TO)
def test_a_file_git_would_hang_on_stops_the_run_and_doctor_names_it(
    tmp_repo: TmpRepo, name: str, how: str, named: str
) -> None:
    project(tmp_repo, name, how)
    res = tmp_repo.cli("run", "--run", "g", "-n", "2")  # a hang fails at the cli's timeout
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert "Traceback" not in out and named in res.stderr, out
    assert [r["status"] for r in run_rows(tmp_repo, "g")] == ["baseline", "tampered"]
    doctor = tmp_repo.cli("doctor")
    both = doctor.stdout + doctor.stderr
    assert "Traceback" not in both
    if how.startswith("tree-"):  # the user's work tree is named, never touched
        assert doctor.returncode == 1 and named in doctor.stdout, both
        assert stat.S_ISFIFO(os.lstat(tmp_repo.path / name).st_mode)
    else:  # what led to it was moved aside (the config put back): git works again
        assert "git directory" not in doctor.stdout, doctor.stdout
        assert tmp_repo.git("config", "user.email")
        assert tmp_repo.git("status", "--porcelain") is not None


def test_problems_follow_includes_alternates_and_nested_git_directories(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    from gitimprove.git import gitfiles

    tmp_repo.commit("c", {"a.txt": "a\n"})
    git_dir = tmp_repo.path / ".git"
    assert gitfiles.problems(git_dir, git_dir) == []
    config = (git_dir / "config").read_text()
    far = tmp_path / "far"
    far.mkdir()
    os.mkfifo(far / "deep.cfg")
    (far / "one.cfg").write_text('[include]\n\tpath = "deep.cfg"\n')  # relative to itself
    with open(git_dir / "config", "a") as f:
        f.write(f"[include] path = {far / 'one.cfg'}  ; same line as the section\n")
    found = gitfiles.problems(git_dir, git_dir)
    assert found == [
        f".git/config → {far / 'one.cfg'}: include deep.cfg (a FIFO, not a regular file)"
    ]
    (git_dir / "config").write_text(config)  # (git itself would hang on it)
    # the alternates chain: ours lists a (relative) folder whose alternates lists a FIFO's
    a, b = tmp_path / "a" / "objects", tmp_path / "b" / "objects"
    for objects in (a, b):
        (objects / "info").mkdir(parents=True)
        (objects / "pack").mkdir()
    (git_dir / "objects" / "info" / "alternates").write_text(
        f"{os.path.relpath(a, git_dir / 'objects')}\n"
    )
    (a / "info" / "alternates").write_text(f"{b}\n")
    os.mkfifo(b / "pack" / "pack-1.idx")
    found = gitfiles.problems(git_dir, git_dir)
    assert len(found) == 1 and found[0].endswith("/pack/pack-1.idx (a FIFO, not a regular file)")
    assert found[0].startswith(".git/objects/info/alternates → ") and str(b) in found[0]
    (git_dir / "objects" / "info" / "alternates").unlink()
    # a submodule's git directory, a pack of our own, a file of info/
    (git_dir / "modules" / "lib").mkdir(parents=True)
    os.mkfifo(git_dir / "modules" / "lib" / "HEAD")
    os.mkfifo(git_dir / "objects" / "pack" / "multi-pack-index")
    os.mkfifo(git_dir / "info" / "sparse-checkout")
    assert gitfiles.problems(git_dir, git_dir) == [
        ".git/modules/lib/HEAD (a FIFO, not a regular file)",
        ".git/info/sparse-checkout (a FIFO, not a regular file)",
        ".git/objects/pack/multi-pack-index (a FIFO, not a regular file)",
    ]


@pytest.mark.parametrize(
    ("name", "size", "bad"),
    [("HEAD", 70_000, True), ("config", 7 << 20, False), ("config", 9 << 20, True),
     ("packed-refs", 300 << 20, False), ("index", 300 << 20, False), ("refs/heads/x", 70_000, True)],
)  # fmt: skip
def test_each_kind_of_git_file_has_its_own_limit(
    tmp_repo: TmpRepo, name: str, size: int, bad: bool
) -> None:
    from gitimprove.git import gitfiles

    kind = "config" if name == "config" else "ref"
    tmp_repo.commit("c", {"a.txt": "a\n"})
    path = tmp_repo.path / ".git" / name
    with open(path, "ab") as f:
        f.truncate(size)
    found = gitfiles.problems(path.parents[len(Path(name).parts) - 1], tmp_repo.path / ".git")
    assert bool(found) == bad, found
    if bad:
        assert found == [f".git/{name} ({size:,} bytes, over {gitfiles.LIMITS[kind]:,})"]


def test_a_git_command_that_runs_out_of_time_names_what_it_waits_on(tmp_repo: TmpRepo) -> None:
    from gitimprove.git import gitfiles

    tmp_repo.commit("c", {"a.txt": "a\n"})
    git_dir = tmp_repo.path / ".git"
    os.mkfifo(git_dir / "info" / "exclude.new")
    said = gitfiles.hung(git_dir, git_dir, "update-ref", 120)
    assert said == (
        "`git update-ref` did not finish in 120s; it waits on "
        ".git/info/exclude.new (a FIFO, not a regular file)"
    )
