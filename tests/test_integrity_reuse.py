"""A measurement checkout is kept for the next run only when it is provably as written (the
full `lstat` listing, atime included; no extended attribute, no file-system flag, no mount on
the work folder); anything else a run did gets the next run a checkout written anew, and a
mark a run leaves never reaches a later one. File-system flags (`chattr +i`, `+a`) are cleared
before removing, the attempt `tampered` naming the path; a stacked mount is taken off and the
attempt `tampered`. Hostile code in real runs, and the mechanism on real folders."""

from __future__ import annotations

import array
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitimprove.git.checkout import COUNTS, checkout, finish_removals, scan
from gitimprove.git.space import NoSpace
from gitimprove.loop.context import Shared
from gitimprove.util import inodes
from tests.conftest import PY, TmpRepo
from tests.loop_helpers import run_rows, value_project
from tests.test_integrity_metadata import _honest_only, _user_xattrs
from tests.test_integrity_persist import persist_project

FILES = {"bench.py": "print(1)\n", "pkg/a.py": "A = 1\n", "pkg/sub/b.txt": "bb\n"}


def _flag(path: Path, flag: int) -> bool:
    """Set a file-system flag as `chattr` does; False where this file system or process
    cannot (a probe: the tests that need it skip)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        buf = array.array("i", [0, 0])
        fcntl.ioctl(fd, inodes.FS_IOC_GETFLAGS, buf, True)
        buf[0] |= flag
        fcntl.ioctl(fd, inodes.FS_IOC_SETFLAGS, buf, False)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def _unflag(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        buf = array.array("i", [0, 0])
        fcntl.ioctl(fd, inodes.FS_IOC_GETFLAGS, buf, True)
        buf[0] &= ~(inodes.IMMUTABLE | inodes.APPEND)
        fcntl.ioctl(fd, inodes.FS_IOC_SETFLAGS, buf, False)
    finally:
        os.close(fd)


def _can_flag(tmp_path: Path) -> bool:
    probe = tmp_path / "flag-probe"
    probe.write_text("x")
    if not _flag(probe, inodes.IMMUTABLE):
        return False
    _unflag(probe)
    return True


def _can_mount(tmp_path: Path) -> bool:
    probe = tmp_path / "mount-probe"
    probe.mkdir()
    res = subprocess.run(["mount", "--bind", probe, probe], capture_output=True, check=False)
    if res.returncode != 0:
        return False
    subprocess.run(["umount", probe], check=False)
    return True


def _hostile(how: str, path: Path, tmp_path: Path) -> None:
    """What a run does to its checkout that must not let the next run have it."""
    a, b = path / "pkg" / "a.py", path / "pkg" / "sub" / "b.txt"
    st = a.stat()
    if how == "add-file":
        (path / "pkg" / "cache.bin").write_bytes(b"x")
    elif how == "add-remove":  # nothing added in the end: the folder's times moved
        (path / "pkg" / "tmp").write_text("x")
        (path / "pkg" / "tmp").unlink()
    elif how == "content-same-size-mtime-back":
        a.write_text("A = 2\n")
        os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif how == "mtime-back":
        os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns - 10**9))
    elif how == "atime":
        os.utime(b, ns=(1234567890 * 10**9, b.stat().st_mtime_ns))
    elif how == "hard-link-out":
        os.link(a, tmp_path / "outside")
    elif how == "hard-link-in-removed":  # linked and unlinked again: the link count is back
        os.link(a, path / "pkg" / "again")
        (path / "pkg" / "again").unlink()
    elif how == "chmod-back":
        os.chmod(a, 0o600)
        os.chmod(a, st.st_mode & 0o7777)
    elif how == "same-copy":  # the same bytes, a new inode
        data = a.read_bytes()
        a.unlink()
        a.write_bytes(data)
        os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif how == "rename-back":
        os.rename(b, path / "pkg" / "moved")
        os.rename(path / "pkg" / "moved", b)
    elif how == "folder-mode":
        os.chmod(path / "pkg" / "sub", 0o700)
    elif how == "root-sticky":
        os.chmod(path, 0o1755)
    elif how == "fallocate":  # blocks beyond the end: the size stays
        subprocess.run(["fallocate", "-n", "-l", "1M", a], check=True)
    elif how == "symlink-swap":
        os.rename(b, tmp_path / "b.txt")
        os.symlink(tmp_path / "b.txt", b)
    else:
        raise AssertionError(how)


HOSTILE = [
    "add-file",
    "add-remove",
    "content-same-size-mtime-back",
    "mtime-back",
    "atime",
    "hard-link-out",
    "hard-link-in-removed",
    "chmod-back",
    "same-copy",
    "rename-back",
    "folder-mode",
    "root-sticky",
    "symlink-swap",
    "fallocate",
]


def test_an_untouched_checkout_is_kept_and_a_read_one_too(tmp_repo: TmpRepo) -> None:
    commit = tmp_repo.commit("c", FILES)
    before = dict(COUNTS)
    with checkout(tmp_repo.open(), commit) as co:
        first = co.path
        assert co.reset() == [] and co.path == first  # nothing happened: kept
        for rel in FILES:  # an honest run reads its files (and lists its folders)
            (co.path / rel).read_bytes()
        list(os.scandir(co.path / "pkg"))
        assert co.verify() == []
        assert co.reset() == [] and co.path == first
    assert COUNTS["reused"] - before["reused"] == 2
    assert COUNTS["rewritten"] == before["rewritten"]


@pytest.mark.parametrize("how", HOSTILE)
def test_anything_a_run_did_gets_a_checkout_written_anew(
    tmp_repo: TmpRepo, tmp_path: Path, how: str
) -> None:
    commit = tmp_repo.commit("c", FILES)
    before = dict(COUNTS)
    with checkout(tmp_repo.open(), commit) as co:
        first = co.path
        _hostile(how, first, tmp_path)
        assert not co.unchanged()
        co.reset()
        assert co.path != first and not first.exists()
        assert COUNTS["rewritten"] - before["rewritten"] == 1
        assert co.verify() == [] and co.unchanged()
        for rel, text in FILES.items():
            assert (co.path / rel).read_text() == text
        names = sorted(p.name for p in co.path.rglob("*"))
        assert names == ["a.py", "b.txt", "bench.py", "pkg", "sub"]


def test_an_extended_attribute_gets_a_checkout_written_anew(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    if not _user_xattrs(tmp_path):
        pytest.skip("this file system has no user extended attributes")
    commit = tmp_repo.commit("c", FILES)
    with checkout(tmp_repo.open(), commit) as co:
        first = co.path
        os.setxattr(first / "pkg" / "a.py", "user.mark", b"1")
        os.removexattr(first / "pkg" / "a.py", "user.mark")  # gone, and the ctime moved
        assert not co.unchanged()
        co.reset()
        assert co.path != first
        assert co.unchanged()
        # one whose ctime said nothing (a clock set back): the attribute alone is enough
        os.setxattr(co.path / "pkg", "user.mark", b"1")
        co.snapshot = scan(co.path)
        assert not co.unchanged()


def test_a_flag_on_a_file_or_folder_is_cleared_and_named(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    if not _can_flag(tmp_path):
        pytest.skip("cannot set file-system flags here (needs root and a file system with them)")
    commit = tmp_repo.commit("c", FILES)
    with checkout(tmp_repo.open(), commit) as co:
        first = co.path
        assert _flag(first / "pkg" / "a.py", inodes.IMMUTABLE)
        assert _flag(first / "pkg" / "sub", inodes.APPEND)
        assert not co.unchanged()
        left = co.reset()
        assert left == ["pkg/a.py (immutable, chattr +i)", "pkg/sub (append-only, chattr +a)"]
        assert not first.exists() and not first.with_name(first.name + ".trash").exists()
        assert co.path != first and co.verify() == []
        assert not list(co.path.parent.glob("*.trash*"))
        # one whose ctime said nothing (a clock set back): the flag alone is enough
        assert _flag(co.path / "pkg" / "a.py", inodes.APPEND)
        co.snapshot = scan(co.path)
        try:
            assert not co.unchanged()
        finally:
            _unflag(co.path / "pkg" / "a.py")


def test_a_link_to_a_folder_left_in_a_flagged_folder_is_never_followed(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """What the first removal leaves (a folder that cannot be emptied: append-only here, or
    of mode 000 to a user who is not root) is made writable again folder by folder; a link to
    a folder of the user's left there is neither followed nor a traceback (Python's `chmod`
    of a link without following it raises NotImplementedError on Linux)."""
    if not _can_flag(tmp_path):
        pytest.skip("cannot set file-system flags here (needs root and a file system with them)")
    commit = tmp_repo.commit("c", FILES)
    users = tmp_path / "users"
    users.mkdir(mode=0o755)
    with checkout(tmp_repo.open(), commit) as co:
        first = co.path
        (first / "pkg" / "sub" / "up").symlink_to(users)
        assert _flag(first / "pkg" / "sub", inodes.APPEND)
        assert co.reset() == ["pkg/sub (append-only, chattr +a)"]
        assert not first.exists() and co.verify() == []
    assert users.is_dir() and users.stat().st_mode & 0o777 == 0o755


def test_a_flag_this_process_cannot_clear_stops_with_what_to_do(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """The harness without CAP_LINUX_IMMUTABLE (root with it dropped): a flag set by another
    process cannot be cleared; the reset says so (lsattr, chattr -i, the path), no traceback,
    and nothing of the checkout is half-removed without a pid file naming it."""
    if not _can_flag(tmp_path):
        pytest.skip("cannot set file-system flags here (needs root and a file system with them)")
    if subprocess.run(["setpriv", "--help"], capture_output=True, check=False).returncode != 0:
        pytest.skip("setpriv is not installed")
    commit = tmp_repo.commit("c", FILES)
    go, ready = tmp_path / "go", tmp_path / "ready"
    script = f"""
import pathlib, sys, time
from gitimprove.git.checkout import StuckFlags, checkout
from tests.conftest import TmpRepo
repo = TmpRepo(pathlib.Path({str(tmp_repo.path)!r})).open()
with checkout(repo, {commit!r}) as co:
    pathlib.Path({str(ready)!r}).write_text(str(co.path))
    while not pathlib.Path({str(go)!r}).exists():
        time.sleep(0.02)
    try:
        co.reset()
    except StuckFlags as exc:
        print(exc)
        sys.exit(1)
"""
    proc = subprocess.Popen(
        [
            "setpriv",
            "--inh-caps=-linux_immutable",
            "--bounding-set=-linux_immutable",
            sys.executable,
            "-c",
            script,
        ],
        cwd=Path(__file__).parents[1],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    flagged = None
    try:
        for _ in range(1500):
            if ready.exists() and ready.read_text():
                break
            if proc.poll() is not None:
                break
            time.sleep(0.02)
        path = Path(ready.read_text())
        flagged = path / "pkg" / "a.py"
        assert _flag(flagged, inodes.IMMUTABLE)
        go.write_text("")
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, out + err
    assert "Traceback" not in out + err
    assert "lsattr" in out and "chattr -i" in out and "a.py" in out, out
    trash = path.with_name(path.name + ".trash")
    assert (trash / "pkg" / "a.py").exists()  # left whole where it cannot be removed ...
    assert trash.with_name(trash.name + ".pid").exists()  # ... and named for doctor --repair
    _unflag(trash / "pkg" / "a.py")


def test_a_bind_mount_on_the_checkout_is_taken_off_and_named(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    if not _can_mount(tmp_path):
        pytest.skip("cannot mount here (needs root)")
    commit = tmp_repo.commit("c", FILES)
    with checkout(tmp_repo.open(), commit) as co:
        first = co.path
        for _ in range(2):  # stacked twice: listing and lstat stay exactly as written
            subprocess.run(["mount", "--bind", first, first], check=True)
        subprocess.run(["mount", "--bind", first / "pkg", first / "pkg" / "sub"], check=True)
        try:
            assert inodes.mounts_under(first)
            left = co.reset()
            assert any("(a mount, taken off)" in x for x in left), left
            assert not inodes.mounts_under(first.parent)
            assert co.path != first and co.verify() == []
        finally:
            for _ in range(4):
                subprocess.run(["umount", "-l", first], capture_output=True, check=False)


# --- real runs ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_an_honest_run_keeps_its_checkouts_and_says_so(tmp_repo: TmpRepo) -> None:
    agent = tmp_repo.path.parent / "agent.py"
    agent.write_text(
        "import os, pathlib\n"
        "p = pathlib.Path('src/value.txt')\n"
        "p.write_text(str(100 - int(os.environ['GITIMPROVE_ITERATION'])) + '\\n')\n"
        'print(\'{"description": "lower"}\')\n'
    )
    value_project(tmp_repo, f"{sys.executable} {agent}")
    res = tmp_repo.cli("run", "--run", "r", "-n", "2", "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    stop = events[-1]
    assert stop["event"] == "stop"
    assert stop["checkouts"]["reused"] > 0, stop
    assert [r["status"] for r in run_rows(tmp_repo, "r")] == ["baseline", "keep", "keep"]


NEW_MARKS = ["file-atime", "content-back", "file-mtime"]


@pytest.mark.slow
@pytest.mark.parametrize("how", NEW_MARKS)
def test_a_mark_on_a_file_never_reaches_a_later_run(tmp_repo: TmpRepo, how: str) -> None:
    persist_project(tmp_repo, f"meta:{how}", "none")
    _honest_only(tmp_repo)


@pytest.mark.slow
def test_a_file_xattr_never_reaches_a_later_run(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    if not _user_xattrs(tmp_path):
        pytest.skip("this file system has no user extended attributes")
    persist_project(tmp_repo, "meta:file-xattr", "none")
    _honest_only(tmp_repo)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("how", "named"),
    [
        ("chattr-file", "data/random.txt"),
        ("chattr-folder", "data (immutable, chattr +i)"),
        ("append-folder", "out (append-only, chattr +a)"),
    ],
)
def test_a_flag_set_by_the_metric_is_tampered_and_the_run_goes_on(
    tmp_repo: TmpRepo, tmp_path: Path, how: str, named: str
) -> None:
    if not _can_flag(tmp_path):
        pytest.skip("cannot set file-system flags here (needs root and a file system with them)")
    persist_project(tmp_repo, f"meta:{how}", "none")
    res = tmp_repo.cli("run", "--run", "p", "-n", "2")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "p")
    assert [r["status"] for r in rows] == ["baseline", "tampered", "keep"], rows
    assert named in str(rows[1]["reason"]), rows[1]["reason"]
    assert rows[2]["metric"]["value"] == 90 and 80 not in rows[2]["metric"]["incumbent_samples"]


@pytest.mark.slow
def test_a_bind_mount_by_the_metric_is_tampered_and_taken_off(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    if not _can_mount(tmp_path):
        pytest.skip("cannot mount here (needs root)")
    persist_project(tmp_repo, "meta:bind-mount", "none")
    work = tmp_repo.path / ".git" / "improve" / "work"
    try:
        res = tmp_repo.cli("run", "--run", "p", "-n", "2")
        assert res.returncode == 0, res.stdout + res.stderr
        rows = run_rows(tmp_repo, "p")
        assert [r["status"] for r in rows] == ["baseline", "tampered", "keep"], rows
        assert "a mount, taken off" in str(rows[1]["reason"]), rows[1]["reason"]
        assert not inodes.mounts_under(work)
    finally:
        for point in inodes.mounts_under(work):
            subprocess.run(["umount", "-l", point], check=False)


# --- a full disk ---------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "disk"
    where.mkdir()
    res = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", where], capture_output=True
    )
    if res.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", where], check=False)


def _disk_repo(where: Path) -> TmpRepo:
    (where / "repo").mkdir()
    subprocess.run(["git", "init", "-q"], cwd=where / "repo", check=True)
    repo = TmpRepo(where / "repo")
    return repo


def _fill(where: Path, leave: int) -> None:
    """Fill the file system of `where` until `leave` bytes are free."""
    free = shutil.disk_usage(where).free
    with open(where / "junk", "wb") as f:
        f.write(b"\0" * max(0, free - leave))  # tmpfs allocates zero pages too
    assert abs(shutil.disk_usage(where).free - leave) < 1 << 20


def test_a_used_checkout_is_removed_before_the_commit_is_written_anew(small_disk: Path) -> None:
    """Room for one copy of the commit, not two: writing it anew still works."""
    repo = _disk_repo(small_disk)
    blob = os.urandom(4 << 20)  # stored as is: git cannot compress it
    commit = repo.commit("c", {"bench.py": "print(1)\n"})
    (repo.path / "big.bin").write_bytes(blob)
    subprocess.run(["git", "add", "big.bin"], cwd=repo.path, check=True)
    subprocess.run(["git", "commit", "-qm", "big"], cwd=repo.path, check=True)
    commit = repo.git("rev-parse", "HEAD")
    with checkout(repo.open(), commit) as co:
        first = co.path
        _fill(small_disk, 2 << 20)  # less than the 4 MB a second copy needs
        co.reset(rewrite=True)
        assert co.path != first and not first.exists()
        assert (co.path / "big.bin").read_bytes() == blob
        assert co.verify() == []


def test_a_checkout_on_a_full_disk_says_what_is_free_and_leaves_nothing(
    small_disk: Path,
) -> None:
    repo = _disk_repo(small_disk)
    commit = repo.commit("c", {"bench.py": "print(1)\n", "data.bin": "x" * (2 << 20)})
    opened = repo.open()
    work = opened.improve_dir / "work"
    work.mkdir(parents=True, exist_ok=True)
    _fill(small_disk, 64 << 10)
    with pytest.raises(NoSpace) as got, checkout(opened, commit):
        pass
    text = str(got.value)
    assert "no space left on device while writing a measurement checkout" in text
    assert "bytes free" in text and "run the command again" in text  # no command ran
    assert list(work.iterdir()) == []  # no half-written checkout, no pid file


def test_a_link_of_the_commit_is_kept_and_one_made_anew_is_not(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("c", FILES)
    os.symlink("a.py", tmp_repo.path / "pkg" / "link.py")
    subprocess.run(["git", "add", "pkg/link.py"], cwd=tmp_repo.path, check=True)
    subprocess.run(["git", "commit", "-qm", "link"], cwd=tmp_repo.path, check=True)
    commit = tmp_repo.git("rev-parse", "HEAD")
    with checkout(tmp_repo.open(), commit) as co:
        first = co.path
        assert co.reset() == [] and co.path == first
        link = first / "pkg" / "link.py"
        os.unlink(link)
        os.symlink("b.py", link)  # the same length, another target
        assert not co.unchanged()
        co.reset()
        assert co.path != first and os.readlink(co.path / "pkg" / "link.py") == "a.py"


def test_a_kept_candidates_checkout_becomes_the_incumbents(tmp_repo: TmpRepo) -> None:
    """Not written again: the incumbent's checkout is the kept candidate's, kept as a spare
    when the incumbent changes again (and the candidate's context leaves it alone); the
    spares are removed when the run ends."""
    first = tmp_repo.commit("a", FILES)
    second = tmp_repo.commit("b", {"pkg/a.py": "A = 2\n"})
    repo = tmp_repo.open()
    shared = Shared(1, 1)
    try:
        old = shared.incumbent_checkout(repo, first, "inc")
        old_path = old.path
        with checkout(repo, second) as cand:
            path = cand.path
        assert not path.exists()  # a candidate not kept is removed with its context
        with checkout(repo, second) as cand:
            shared.adopt_checkout(cand)
            path = cand.path
        assert path.exists() and shared.spares.held() == [old]  # the old incumbent's: a spare
        got = shared.incumbent_checkout(repo, second, "inc")
        assert got is cand and got.path == path and got.verify() == []
        again = shared.incumbent_checkout(repo, first, "inc")  # the incumbent changes again
        # the spare of `first` is taken (under a new name), `second`'s becomes a spare
        assert again.commit == first and again.verify() == [] and again.path != old_path
        assert [co.path for co in shared.spares.held()] == [path]
    finally:
        shared.close()
    finish_removals()
    assert not any((repo.improve_dir / "work").glob("m-*"))


MOUNTING_AGENT = """import os, pathlib, subprocess
it = int(os.environ["GITIMPROVE_ITERATION"])
pathlib.Path("src/value.txt").write_text(f"{100 - it}\\n")
if it == 2:  # the incumbent's checkout, stacked on itself: every lstat stays as it was
    for d in pathlib.Path.cwd().parent.glob("m-*"):
        if d.is_dir() and not d.name.endswith(".trash"):
            subprocess.run(["mount", "--bind", str(d), str(d)], check=True)
print('{"description": "lower"}')
"""


@pytest.mark.slow
def test_a_mount_an_agent_stacks_on_a_checkout_is_tampered_and_taken_off(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    if not _can_mount(tmp_path):
        pytest.skip("cannot mount here (needs root)")
    agent = tmp_path / "agent.py"
    agent.write_text(MOUNTING_AGENT)
    value_project(tmp_repo, f"{sys.executable} {agent}")
    work = tmp_repo.path / ".git" / "improve" / "work"
    try:
        res = tmp_repo.cli("run", "--run", "r", "-n", "3")
        assert res.returncode == 0, res.stdout + res.stderr
        rows = run_rows(tmp_repo, "r")
        assert [r["status"] for r in rows] == ["baseline", "keep", "tampered", "keep"], rows
        assert "a mount on the checkouts" in str(rows[2]["reason"]), rows[2]["reason"]
        assert "taken off" in str(rows[2]["reason"])
        assert not inodes.mounts_under(work)
    finally:
        for point in inodes.mounts_under(work):
            subprocess.run(["umount", "-l", point], check=False)


FLAGGED_BENCH = """import os, pathlib, sys, time
value = open("src/value.txt").read().strip()
if value != "100" and not os.path.exists({once!r}):  # the candidate's first run
    open({once!r}, "w").close()
    pathlib.Path({ready!r}).write_text(os.getcwd())
    deadline = time.monotonic() + 30
    while not os.path.exists({go!r}) and time.monotonic() < deadline:
        time.sleep(0.02)
print("METRIC score=" + value)
"""


@pytest.mark.slow
def test_a_flag_the_harness_cannot_clear_records_the_attempt_and_stops(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """The run without CAP_LINUX_IMMUTABLE; another process makes a file of the candidate's
    checkout immutable while it is measured: the attempt is recorded `tampered`, the run stops
    (exit 1) naming the path, `lsattr` and `chattr -i`, no traceback."""
    if not _can_flag(tmp_path):
        pytest.skip("cannot set file-system flags here (needs root and a file system with them)")
    if subprocess.run(["setpriv", "--help"], capture_output=True, check=False).returncode != 0:
        pytest.skip("setpriv is not installed")
    once, ready, go = tmp_path / "once", tmp_path / "ready", tmp_path / "go"
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import pathlib\npathlib.Path('src/value.txt').write_text('90\\n')\n"
        'print(\'{"description": "lower"}\')\n'
    )
    bench = FLAGGED_BENCH.format(once=str(once), ready=str(ready), go=str(go))
    value_project(tmp_repo, f"{sys.executable} {agent}", bench)
    proc = subprocess.Popen(
        [
            "setpriv",
            "--inh-caps=-linux_immutable",
            "--bounding-set=-linux_immutable",
            sys.executable,
            "-m",
            "gitimprove",
            "run",
            "--run",
            "f",
            "-n",
            "2",
        ],
        cwd=tmp_repo.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    flagged = None
    try:
        deadline = time.monotonic() + 120
        while not (ready.exists() and ready.read_text()) and proc.poll() is None:
            assert time.monotonic() < deadline, "the candidate was never measured"
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        flagged = Path(ready.read_text()) / "bench.py"
        assert _flag(flagged, inodes.IMMUTABLE)
        go.write_text("")
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        work = tmp_repo.path / ".git" / "improve" / "work"
        for path in work.rglob("bench.py"):
            _unflag(path)
    assert proc.returncode == 1, out + err
    assert "Traceback" not in out + err
    assert "lsattr" in err and "chattr -i" in err and "bench.py" in err, err
    rows = run_rows(tmp_repo, "f")
    assert [r["status"] for r in rows] == ["baseline", "tampered"], rows
    assert "bench.py" in str(rows[1]["reason"])
    # the user cleared the flag (above): doctor removes what was left, the run goes on
    res = tmp_repo.cli("doctor", "--repair")
    assert "Traceback" not in res.stdout + res.stderr
    assert not list((tmp_repo.path / ".git" / "improve" / "work").glob("*.trash*"))
    res = tmp_repo.cli("run", "--resume", "--run", "f")
    assert res.returncode == 0, res.stdout + res.stderr
    statuses = [r["status"] for r in run_rows(tmp_repo, "f")]
    assert statuses[:2] == ["baseline", "tampered"] and len(statuses) == 3, statuses


def test_a_mount_on_a_folder_named_with_spaces_is_found(tmp_path: Path) -> None:
    if not _can_mount(tmp_path):
        pytest.skip("cannot mount here (needs root)")
    folder = tmp_path / "work dir\twith\\odd names"
    (folder / "m-x").mkdir(parents=True)
    subprocess.run(["mount", "--bind", folder / "m-x", folder / "m-x"], check=True)
    try:
        assert inodes.mounts_under(folder) == [os.path.realpath(folder / "m-x")]
        assert inodes.unmount(str(folder / "m-x"))
        assert inodes.mounts_under(folder) == []
    finally:
        subprocess.run(["umount", "-l", folder / "m-x"], capture_output=True, check=False)


@pytest.mark.slow
def test_a_run_that_writes_a_cache_gets_its_checkout_written_anew(tmp_repo: TmpRepo) -> None:
    """The channel a kept checkout would open: a `cache.bin` the next run finds. Counted in
    the stop event, and no run ever found it."""
    persist_project(tmp_repo, "cache", "none")
    res = tmp_repo.cli("run", "--run", "p", "-n", "2", "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    stop = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")][-1]
    assert stop["checkouts"]["rewritten"] >= 1, stop  # after the run that wrote it
    rows = run_rows(tmp_repo, "p")
    assert rows[1]["status"] == "discard" and set(rows[1]["metric"]["samples"]) == {103}
    assert rows[2]["status"] == "keep" and 80 not in rows[2]["metric"]["incumbent_samples"]


# --- a ctime given back with the system clock ----------------------------------------------------


CLOCK_TESTS = "GITIMPROVE_TEST_CLOCK"


def _can_set_clock() -> bool:
    """Whether this process may set the system clock (root with CAP_SYS_TIME): a probe that
    sets it to what it reads, a step of a few microseconds. Only with GITIMPROVE_TEST_CLOCK=1:
    a step is seen by every process of the machine (the watches of tests running beside these
    would see it too), so these tests run alone, on request (`-n0 -k clock`)."""
    import ctypes

    if os.environ.get(CLOCK_TESTS) != "1":
        return False

    class T(ctypes.Structure):
        _fields_ = [("s", ctypes.c_long), ("ns", ctypes.c_long)]

    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    now = T()
    libc.clock_gettime(0, ctypes.byref(now))
    return int(libc.clock_settime(0, ctypes.byref(now))) == 0


def test_content_changed_with_the_clock_set_back_never_reaches_a_later_run(
    tmp_repo: TmpRepo,
) -> None:
    """The measured code (as root, without the sandbox) rewrites a sealed file of its checkout,
    sets the clock back to the ctime the file had, puts its times back and sets the clock
    forward: every `lstat` is as written. The step of the clock is seen: the checkout is
    re-hashed (the change named) and never kept, so no later run reads the forged file."""
    if not _can_set_clock():
        pytest.skip(f"sets the system clock: {CLOCK_TESTS}=1, root with CAP_SYS_TIME, run alone")
    persist_project(tmp_repo, "meta:content-clock", "none")
    res = tmp_repo.cli("run", "--run", "p", "-n", "2")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "p")
    assert [r["status"] for r in rows] == ["baseline", "tampered", "keep"], rows
    assert "data/random.txt (changed" in str(rows[1]["reason"]), rows[1]["reason"]
    assert rows[2]["metric"]["value"] == 90 and 80 not in rows[2]["metric"]["incumbent_samples"]


def test_a_step_of_the_clock_alone_only_gets_a_checkout_written_anew(tmp_repo: TmpRepo) -> None:
    """An honest step of the clock (an administrator, `chronyd` at start) while a checkout is
    in use is no tampering: its files are hashed, found as written, and the next run gets a
    copy written anew."""
    if not _can_set_clock():
        pytest.skip(f"sets the system clock: {CLOCK_TESTS}=1, root with CAP_SYS_TIME, run alone")
    commit = tmp_repo.commit("files", FILES)
    before = dict(COUNTS)
    with checkout(tmp_repo.open(), commit) as co:
        assert co.verify() == []
        assert _can_set_clock()  # a step of a few microseconds
        assert co.verify() == [] and co.verify(after_run=True) == []
        first = co.path
        assert co.reset() == []
        assert co.path != first and COUNTS["rewritten"] == before["rewritten"] + 1
        assert co.verify() == [] and co.unchanged()


MARKING_BENCH = (
    "import os, pathlib\n"
    "if os.path.exists('mark.py'):\n"
    "    exec(pathlib.Path('mark.py').read_text())\n"
    "print(f\"METRIC score={float(pathlib.Path('value.txt').read_text()):g}\")\n"
)
MARKS = {
    "mount": "import subprocess\nsubprocess.run(['mount', '--bind', '.', '.'], check=True)\n",
    "flag": "import subprocess\npathlib.Path('out').write_text('1')\n"
    "subprocess.run(['chattr', '+i', 'out'], check=True)\n",
    "append-folder": "import subprocess\nos.mkdir('kept')\npathlib.Path('kept/x').write_text('1')\n"
    "subprocess.run(['chattr', '+a', 'kept'], check=True)\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("how", sorted(MARKS))
@pytest.mark.parametrize("by", ["metric", "guard"])
def test_measure_names_a_mount_or_flag_a_run_left_as_run_does(
    tmp_repo: TmpRepo, tmp_path: Path, how: str, by: str
) -> None:
    if not (_can_mount(tmp_path) if how == "mount" else _can_flag(tmp_path)):
        pytest.skip("cannot mount or set file-system flags here (needs root)")
    guard = f"{PY} -c \"exec(open('g.py').read()) if __import__('os').path.exists('g.py') else 0\""
    tmp_repo.commit("initial", {"bench.py": MARKING_BENCH, "value.txt": "100\n"})
    res = tmp_repo.cli(
        "init", "--metric", f"{PY} bench.py", "--guard", guard, "--yes", "--runs", "1"
    )
    assert res.returncode == 0, res.stdout + res.stderr
    tmp_repo.commit("add gitimprove config")
    name = "mark.py" if by == "metric" else "g.py"
    code = MARKS[how] if by == "metric" else "import os, pathlib\n" + MARKS[how]
    tmp_repo.commit("experiment(perf): smaller", {"value.txt": "90\n", name: code})
    res = tmp_repo.cli("measure")
    out = res.stdout + res.stderr
    assert res.returncode == 1 and "Traceback" not in out, out
    who = "a metric run" if by == "metric" else "the guard"
    assert f"{who} marked its checkout" in res.stderr, out
    assert ("a mount" if how == "mount" else "chattr") in res.stderr, out
    assert not inodes.mounts_under(tmp_repo.path / ".git" / "improve" / "work")


@pytest.mark.parametrize("mark", ["xattr", "noatime-flag", "immutable-flag"])
def test_a_mark_set_after_the_last_proof_is_found(
    tmp_repo: TmpRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mark: str
) -> None:
    """A checkout proved once is not opened file by file again while every `lstat` is as
    proved (setting a flag or an attribute moves the change time); one set since is found."""
    if mark == "xattr" and not _user_xattrs(tmp_path):
        pytest.skip("this file system has no user extended attributes")
    if mark.endswith("-flag") and not _can_flag(tmp_path):
        pytest.skip("this file system or process cannot set file-system flags")
    commit = tmp_repo.commit("c", FILES)
    opened: list[str] = []
    real = inodes.marked

    def counted(path: str, dir_fd: int | None = None) -> bool:
        opened.append(path)
        return real(path, dir_fd)

    monkeypatch.setattr(inodes, "marked", counted)
    with checkout(tmp_repo.open(), commit) as co:
        time.sleep(0.3)  # the change times settle
        assert co.unchanged()
        assert len(opened) > len(FILES)  # every entry looked at once
        opened.clear()
        assert co.unchanged()
        assert len(opened) == 1  # the root alone
        target = co.path / "pkg" / "a.py"
        before = target.lstat().st_ctime_ns
        time.sleep(0.01)
        if mark == "xattr":
            os.setxattr(target, "user.mark", b"1")
        else:
            assert _flag(target, 0x80 if mark == "noatime-flag" else inodes.IMMUTABLE)
        try:
            assert target.lstat().st_ctime_ns != before
            assert not co.unchanged()
            left = co.reset()  # written anew; a flag that kept it from being removed named
            assert bool(left) == (mark == "immutable-flag"), left
            assert not inodes.marked(str(co.path / "pkg" / "a.py"))
        finally:
            if mark == "immutable-flag" and target.exists():
                _unflag(target)
