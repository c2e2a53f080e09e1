"""Hermetic fixtures: a private HOME, fixed identities and dates, real git repositories."""

from __future__ import annotations

import compileall
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

PY = sys.executable
ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    """Compile this checkout's code once, before any test starts a child.

    Children import it from the source tree (PYTHONPATH, below); with PYTHONDONTWRITEBYTECODE
    in the environment nothing would ever write its bytecode, and every child would compile
    every module it imports again (about 90 ms a command): the suite ran 40% slower.
    """
    if not hasattr(config, "workerinput"):  # the controller, not each worker of -n
        compileall.compile_dir(ROOT / "gitimprove", quiet=1)


def apply_hermetic(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """A private HOME, fixed identities and dates, and this checkout's code in children."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Ada Tester")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "ada@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Ada Tester")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "ada@example.com")
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
    monkeypatch.setenv("GITIMPROVE_HOST", "testhost")
    # subprocesses run this checkout's code, whatever copy is installed
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for name in (
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GITIMPROVE_CHILD",
        "GITIMPROVE_FAKE_NOW",
        "GITIMPROVE_TOKEN",  # a suite run as the guard of an attempt runs gitimprove itself
    ):
        monkeypatch.delenv(name, raising=False)
    (home / ".gitconfig").write_text(
        "[init]\n\tdefaultBranch = main\n[user]\n\tname = Ada Tester\n\temail = ada@example.com\n"
    )


def build_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """Build a scenario once (for a module-scoped fixture), under the same hermetic settings
    as a test; each test then works on its own copy (`copy_scenario`)."""
    root = factory.mktemp(name)
    with pytest.MonkeyPatch.context() as mp:
        apply_hermetic(mp, factory.mktemp("home"))
        build(root)
    return root


def copy_scenario(root: Path, dest: Path) -> Path:
    shutil.copytree(root, dest, symlinks=True)
    return dest


_SURVIVORS_LOCK = Path(tempfile.gettempdir()) / "gitimprove-tests-survivors.lock"
_SURVIVORS_GATE = Path(tempfile.gettempdir()) / "gitimprove-tests-survivors.gate"


@pytest.fixture(autouse=True)
def survivors_turn(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tests marked `survivors` leave marked orphans (util/marks.py) alive for their own
    resume or doctor to find, and every `git improve run` kills every marked orphan of the
    user, another test's too: such a test runs alone (the lock held exclusively, across
    xdist workers); every other test holds it shared."""
    import fcntl

    alone = request.node.get_closest_marker("survivors") is not None
    # a gate in front of the lock gives a waiting `survivors` test its turn after the tests
    # running now: without it, new shared holders keep coming and it waits for the others'
    # whole share of the suite while its own worker idles
    with open(_SURVIVORS_GATE, "a") as gate, open(_SURVIVORS_LOCK, "a") as f:
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(f, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            fcntl.flock(gate, fcntl.LOCK_UN)
        yield


@pytest.fixture(autouse=True)
def hermetic(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    apply_hermetic(monkeypatch, tmp_path_factory.mktemp("home"))
    yield


def git(cwd: Path, *args: str, check: bool = True, env: Mapping[str, str] | None = None) -> str:
    res = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})}
    )
    if check and res.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {res.stderr}")
    return res.stdout.strip()


def cli(
    cwd: Path, *args: str, input: str | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `python -m gitimprove ARGS` as a real subprocess."""
    return subprocess.run(
        [PY, "-m", "gitimprove", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=input,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


def cli_popen(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    """`python -m gitimprove ARGS` started, not waited for, in a session of its own (so a
    test can signal it or its whole group)."""
    return subprocess.Popen(
        [PY, "-m", "gitimprove", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def wait_for(path: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def main_in_process(
    cwd: Path,
    args: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    stdin: bytes = b"",
) -> tuple[int, str, str]:
    """`git improve ARGS` through `cli.main` in this process (the same error boundary as the
    real command, without an interpreter start): (exit code, stdout, stderr)."""
    import io

    from gitimprove import cli as cli_module

    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = cli_module.main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


class TmpRepo:
    def __init__(self, path: Path) -> None:
        self.path = path

    def gen(self, files: Mapping[str, str]) -> None:
        for rel, content in files.items():
            target = self.path / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)

    def commit(self, message: str, files: Mapping[str, str] | None = None) -> str:
        if files:
            self.gen(files)
        git(self.path, "add", "-A")
        git(self.path, "commit", "-q", "--allow-empty", "-m", message)
        return git(self.path, "rev-parse", "HEAD")

    def git(self, *args: str, check: bool = True) -> str:
        return git(self.path, *args, check=check)

    def cli(
        self, *args: str, input: str | None = None, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return cli(self.path, *args, input=input, env=env)

    def open(self):  # type: ignore[no-untyped-def]
        from gitimprove.git.repo import open_repo

        return open_repo(self.path)


def without_digests(root: Path) -> Path:
    """The repository at `root` with its notes tree as a writer that stores no digests left
    it (`git notes`, an older gitimprove): the `gitimprove-digests` folder dropped in a new
    notes commit, so that a `log` reads and parses the notes (state/noteindex.py)."""
    listing = git(root, "ls-tree", "refs/notes/improve")
    kept = [line for line in listing.splitlines() if "gitimprove-digests" not in line]
    set_notes_tree(root, kept, "no digests")
    return root


def set_notes_tree(root: Path, entries: list[str], message: str) -> None:
    """refs/notes/improve moved to a new notes commit whose top tree holds `entries`
    (`git ls-tree` lines), as a writer other than gitimprove would leave it."""
    tree = mktree(root, entries)
    commit = git(root, "commit-tree", tree, "-p", "refs/notes/improve", "-m", message)
    git(root, "update-ref", "refs/notes/improve", commit)


def mktree(root: Path, entries: list[str]) -> str:
    """A tree object made by `git mktree` from `git ls-tree` lines."""
    return subprocess.run(
        ["git", "mktree"], cwd=root, input="".join(e + "\n" for e in entries),
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip


def hash_blob(root: Path, data: bytes) -> str:
    """A blob object written by `git hash-object -w`."""
    return subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], cwd=root, input=data, capture_output=True,
        check=True,
    ).stdout.decode().strip()  # fmt: skip


def fast_commits(repo: TmpRepo, n: int, branch: str) -> list[str]:
    """n distinct commits on `branch`, quickly (one fast-import stream), oldest first."""
    lines = []
    for i in range(n):
        msg = f"{branch}-{i}"
        lines += [
            f"commit refs/heads/{branch}",
            f"mark :{i + 1}",
            f"committer A <a@a> {1767323045 + i} +0000",
            f"data {len(msg)}",
            msg,
        ]
        if i:
            lines.append(f"from :{i}")
        lines.append("")
    subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=repo.path,
        input="\n".join(lines) + "\n",
        text=True,
        check=True,
    )
    return repo.git("rev-list", "--reverse", branch).split()


def log_rows(repo: TmpRepo) -> list[dict[str, object]]:
    """What `git improve log --format jsonl` prints, read in-process (no cache)."""
    from gitimprove.state import views
    from gitimprove.util import gitdir

    loc = gitdir.discover(str(repo.path))
    assert loc is not None
    return [e.to_row() for e in views.load_rows(loc, use_cache=False)]


def log_tsv(repo: TmpRepo, layout: str = "tsv") -> str:
    """What `git improve log --format <layout>` prints for a tsv layout, in-process."""
    from gitimprove.state import views
    from gitimprove.util import gitdir

    loc = gitdir.discover(str(repo.path))
    assert loc is not None
    rows = views.load_rows(loc, use_cache=False)
    views.one_metric(rows, layout)
    return views.render_tsv(rows, views.direction_of(rows), layout)


@pytest.fixture
def visible_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private home outside /tmp: the sandbox's /tmp is its own, so a home there is out of
    its sight whatever the harness hides."""
    home = Path(tempfile.mkdtemp(prefix="gitimprove-home-", dir="/var/tmp"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def tmp_repo(tmp_path: Path) -> TmpRepo:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q")
    repo = TmpRepo(path)
    return repo


# A metric whose value is the number in value.txt: deterministic, so decisions are exact.
VALUE_BENCH = (
    "import pathlib\nprint(f\"METRIC score={float(pathlib.Path('value.txt').read_text()):g}\")\n"
)


def noisy_bench(path: str = "value.txt", cv: float = 0.01) -> str:
    """A metric: the number in `path` times seeded Gaussian noise of `cv`, seeded per call
    from a counter file outside the checkout (its first argument, else $NOISE_COUNTER), so
    runs are reproducible. A sandboxed metric cannot write outside its checkout (a folder of
    /tmp its command names is visible, read-only), so tests using it run without a sandbox."""
    return f"""import os, pathlib, random, sys
v = float(pathlib.Path({path!r}).read_text())
counter = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else os.environ["NOISE_COUNTER"])
n = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(n + 1))
random.seed(n)
print(f"METRIC score={{v * (1 + random.gauss(0, {cv})):.6f}}")
"""


@pytest.fixture
def project(tmp_repo: TmpRepo) -> TmpRepo:
    """A repository with a deterministic metric, initialized with a baseline."""
    tmp_repo.commit("initial", {"bench.py": VALUE_BENCH, "value.txt": "100\n"})
    res = tmp_repo.cli("init", "--metric", f"{PY} bench.py", "--yes", "--runs", "2")
    assert res.returncode == 0, res.stderr
    tmp_repo.commit("add gitimprove config")
    return tmp_repo


Gen = Callable[[Mapping[str, str]], None]


@pytest.fixture(scope="module")
def log_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The notes of every kind the cold `log` is compared on (`test_log_cold.build_corpus`),
    built once per session."""
    from tests.test_log_cold import build_corpus

    return build_once(tmp_path_factory, "log-corpus", build_corpus)
