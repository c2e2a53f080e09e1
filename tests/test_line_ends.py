"""Line ends as your own git writes and stores them, under your settings: a measurement
checkout holds each file byte for byte as `git checkout` of the commit writes it in your
repository, and the tree hashed from an agent's files holds what `git add` there stores.

Checked against real git over generated files (text with LF, CRLF, both, a lone CR, a CR at
the end, a NUL early or past 8000 bytes, mostly control bytes, a final ^Z, empty) under every
`core.autocrlf` × `core.eol` × `core.safecrlf`, each with the attributes of a `.gitattributes`,
`.git/info/attributes` or the global attributes file (`core.attributesFile`). The default run
takes a seeded sample of the combinations; `-m slow` takes them all (an agent's workspace,
written fresh and renewed: a larger sample).
"""

from __future__ import annotations

import itertools
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from gitimprove.git.attributes import cleaner, converter, tree_reader
from gitimprove.git.checkout import COUNTS
from gitimprove.git.repo import open_repo
from gitimprove.git.workspace import Workspaces, hash_workspace, made_workspace
from tests.conftest import TmpRepo, git
from tests.loop_helpers import run_rows, value_project

AUTOCRLF = [None, "false", "true", "input"]
EOL = [None, "lf", "crlf"]
SAFECRLF = [None, "true"]
# (where, attribute lines): where the lines are written
ATTRIBUTES = [
    ("none", ""),
    (".gitattributes", "* text=auto\n"),
    (".gitattributes", "* text\n*.bin -text\n"),
    (".gitattributes", "*.t eol=crlf\n*.a text=auto eol=crlf\n*.l eol=lf\n"),
    (".gitattributes", "* -text\n"),
    ("info", "* text eol=crlf\n"),
    ("info", "[attr]win text=auto eol=crlf\n*.a win\n*.t crlf\n"),
    ("global", "* text=auto eol=crlf\n"),
    ("global", "*.t text\n*.l -crlf\n*.a crlf=input\n"),
    ("sub/.gitattributes", "*.t text eol=crlf\n* !text\n*.a -text\n/f1* text=auto\n"),
]
COMBOS = list(itertools.product(AUTOCRLF, EOL, SAFECRLF, range(len(ATTRIBUTES))))
SUFFIXES = [".t", ".a", ".l", ".bin", ""]


def generated(rng: random.Random) -> bytes:
    """A file of one of the shapes that decide git's conversion."""
    words = [b"alpha", b"be ta", b"\tgamma", b"x = 1;", b"\xc3\xa9t\xc3\xa9"]
    lines = [rng.choice(words) for _ in range(rng.randint(1, 12))]
    shape = rng.choice(
        ["lf", "crlf", "mixed", "lone-cr", "cr-end", "nul", "nul-late", "control", "ctrl-z",
         "empty", "no-newline"]
    )  # fmt: skip
    if shape == "empty":
        return b""
    ends = {"lf": [b"\n"], "crlf": [b"\r\n"], "mixed": [b"\n", b"\r\n"]}.get(shape, [b"\n"])
    data = b"".join(line + rng.choice(ends) for line in lines)
    if shape == "lone-cr":
        at = rng.randrange(len(data) + 1)
        data = data[:at] + b"\r" + data[at:]
    elif shape == "cr-end":
        data += b"\r"
    elif shape == "nul":
        at = rng.randrange(min(len(data), 7999) + 1)
        data = data[:at] + b"\0" + data[at:]
    elif shape == "nul-late":
        data = data * (8200 // len(data) + 1) + b"\0tail\n"
    elif shape == "control":
        data += bytes(rng.choice([1, 2, 3, 127, 5]) for _ in range(rng.randint(1, 40))) + b"\n"
    elif shape == "ctrl-z":
        data += b"\x1a"
    elif shape == "no-newline":
        data = data.rstrip(b"\r\n")
    return data


def files_of(rng: random.Random, count: int) -> dict[str, bytes]:
    """`count` files, one in three in the folder `sub/`."""
    return {
        f"{'sub/' if i % 3 == 2 else ''}f{i:02d}{rng.choice(SUFFIXES)}": generated(rng)
        for i in range(count)
    }


def configure(
    repo: Path, combo: tuple[str | None, str | None, str | None, int]
) -> dict[str, bytes]:
    """Write the settings of `combo` into the repository's config and attributes files; the
    `.gitattributes` files the commit is to hold."""
    autocrlf, eol, safecrlf, which = combo
    for name, value in (("autocrlf", autocrlf), ("eol", eol), ("safecrlf", safecrlf)):
        if value is None:
            git(repo, "config", "--unset", f"core.{name}", check=False)
        else:
            git(repo, "config", f"core.{name}", value)
    where, lines = ATTRIBUTES[which]
    info = repo / ".git" / "info" / "attributes"
    info.parent.mkdir(exist_ok=True)
    info.write_text(lines if where == "info" else "")
    glob = repo.parent / "global-attributes"
    glob.write_text(lines if where == "global" else "")
    git(repo, "config", "core.attributesFile", str(glob))
    return {where: lines.encode()} if where.endswith(".gitattributes") else {}


def commit_raw(repo: Path, files: dict[str, bytes]) -> str:
    """A commit of `files` as they are (no conversion on the way in); one file in four
    executable."""
    raw = pygit2.Repository(str(repo))
    index = pygit2.Index()
    for i, (name, data) in enumerate(files.items()):
        mode = pygit2.enums.FileMode.BLOB_EXECUTABLE if i % 4 == 1 else pygit2.enums.FileMode.BLOB
        index.add(pygit2.IndexEntry(name, raw.create_blob(data), mode))
    sig = pygit2.Signature("t", "t@t", 0, 0)
    return str(raw.create_commit(None, sig, sig, "raw", index.write_tree(raw), []))


def combos(count: int, seed: int) -> list[tuple[str | None, str | None, str | None, int]]:
    return random.Random(seed).sample(COMBOS, count)


def check_combo(
    base: Path, combo: tuple[str | None, str | None, str | None, int], seed: int
) -> None:
    """One combination: checkout and add by real git against the harness's conversion."""
    rng = random.Random(seed)
    repo = base / "repo"
    if not repo.exists():
        git(base, "init", "-q", "repo")
    attributes = configure(repo, combo)
    old = files_of(rng, 40)
    commit = commit_raw(repo, {**old, **attributes})
    index = base / f"index-{seed}"
    out = base / f"out-{seed}"
    out.mkdir()
    env = {"GIT_INDEX_FILE": str(index)}
    git(repo, f"--work-tree={out}", "checkout", "-f", commit, "--", ".", env=env)
    opened = open_repo(repo)
    tree = opened.raw[commit].peel(pygit2.Tree)
    convert = converter(opened, tree)
    wrong = [name for name, data in old.items() if convert(name, data) != (out / name).read_bytes()]
    assert not wrong, f"{combo}: checkout differs for " + ", ".join(
        f"{n} {old[n]!r:.60} -> git {(out / n).read_bytes()!r:.60}" for n in wrong
    )
    # git add of new contents over an index holding the commit
    new = {name: generated(rng) if rng.random() < 0.8 else data for name, data in old.items()}
    for name, data in new.items():
        (out / name).write_bytes(data)
    if rng.random() < 0.5:  # the work tree's own .gitattributes, which git add reads first
        (out / ".gitattributes").write_text(rng.choice(ATTRIBUTES[1:5])[1])
    git(repo, "read-tree", commit, env=env)
    held = tree_reader(opened, tree)

    def read(path: str) -> bytes | None:
        return (out / path).read_bytes() if (out / path).is_file() else held(path)

    clean = cleaner(opened, read, tree)
    refused: set[str] = set()
    while True:
        res = subprocess.run(
            # not the work tree's .gitattributes itself: git may refuse it too, and
            # it must stay what git reads the attributes of the others from
            ["git", f"--work-tree={out}", "add", "-A", "--", ".", ":!.gitattributes"],
            cwd=repo, capture_output=True, text=True, env={**os.environ, **env},
        )  # fmt: skip
        if res.returncode == 0:
            break
        found = re.search(
            r"fatal: (?:CRLF|LF) would be replaced by (?:LF|CRLF) in (\S+)", res.stderr
        )
        assert found is not None, res.stderr
        refused.add(found[1])
        (out / found[1]).unlink()
    staged = dict(
        (line.split("\t")[1], line.split()[1])
        for line in git(repo, "ls-files", "-s", env=env).splitlines()
    )
    problems = []
    for name, data in new.items():
        got = clean(name, data)
        if isinstance(got, str):
            if name not in refused:
                problems.append(f"{name} {data!r:.60}: refused ({got}), git adds it")
        elif name in refused:
            problems.append(f"{name} {data!r:.60}: git refuses it")
        elif staged.get(name) != str(pygit2.hash(got)):
            problems.append(f"{name} {data!r:.60}: stored {got!r:.60}")
    assert not problems, f"{combo}: " + "; ".join(problems)


@pytest.mark.parametrize("n", range(4))
def test_line_ends_are_git_s_on_a_sample_of_settings(tmp_path: Path, n: int) -> None:
    for i, combo in enumerate(combos(5, n)):
        check_combo(tmp_path, combo, 1000 * n + i)


@pytest.mark.slow
def test_line_ends_are_git_s_under_every_setting(tmp_path: Path) -> None:
    for i, combo in enumerate(COMBOS):
        check_combo(tmp_path, combo, 7 + i)


def test_a_workspace_file_with_crlf_is_stored_as_git_add_stores_it(tmp_repo: TmpRepo) -> None:
    """Under `core.autocrlf = true` an agent's CRLF becomes LF in the tree hashed from its
    files, a file already committed with CRLF keeps it, and binary data is left alone; under
    `core.safecrlf = true` a file git would refuse is left out, named."""
    tmp_repo.commit("a", {"a.txt": "one\n", "held.txt": "x\r\ny\r\n"})
    tmp_repo.git("config", "core.autocrlf", "true")
    repo = tmp_repo.open()
    head = tmp_repo.git("rev-parse", "HEAD")
    with made_workspace(repo, head, "w") as made:
        ws = made.path
        (ws / "a.txt").write_bytes(b"one\r\ntwo\r\n")
        (ws / "held.txt").write_bytes(b"x\r\ny\r\nz\r\n")
        (ws / "data.bin").write_bytes(b"\0\r\n")
        hashed = hash_workspace(repo, ws, known=made)
        tree = repo.raw[hashed.tree].peel(pygit2.Tree)
        blobs = {e.name: repo.raw[e.id].data for e in tree}
        assert blobs["a.txt"] == b"one\ntwo\n"
        assert blobs["held.txt"] == b"x\r\ny\r\nz\r\n"
        assert blobs["data.bin"] == b"\0\r\n"
        assert hashed.refused == []
        tmp_repo.git("config", "core.autocrlf", "input")
        tmp_repo.git("config", "core.safecrlf", "true")
        (ws / "a.txt").write_bytes(b"one\r\ntwo\n")
        hashed = hash_workspace(repo, ws, known=made)
        assert hashed.refused == [
            "a.txt (git add refuses it: CRLF would be replaced by LF (core.safecrlf))"
        ]


CRLF_AWARE = """data = open("src/value.txt", "rb").read()
extra = 50 if data.endswith(bytes([13, 10])) else 0
print(f"METRIC score={float(data) + extra:g}")
"""
CRLF_WRITER = """import pathlib
pathlib.Path("src/value.txt").write_bytes(b"99\\r\\n")
"""


@pytest.mark.slow
@pytest.mark.parametrize("autocrlf", ["true", "input"])
def test_what_is_measured_is_what_your_checkout_gives_under_core_autocrlf(
    tmp_repo: TmpRepo, tmp_path: Path, autocrlf: str
) -> None:
    """With your `core.autocrlf`, an agent that writes CRLF: the kept commit holds what your
    `git add` stores (LF), every value recorded is the one the benchmark prints in a work tree
    your git checks the commit out into (CRLF under `true`: 150 and 149; LF under `input`)."""
    agent = tmp_path / "agent.py"
    agent.write_text(CRLF_WRITER)
    value_project(tmp_repo, f"{sys.executable} {agent}", CRLF_AWARE, timeouts=True)
    tmp_repo.git("config", "core.autocrlf", autocrlf)
    res = tmp_repo.cli("run", "--run", "c", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "c")
    assert [r["status"] for r in rows] == ["baseline", "keep"], [r.get("reason") for r in rows]
    extra = 50 if autocrlf == "true" else 0
    assert [r["metric"]["value"] for r in rows] == [100 + extra, 99 + extra]
    assert tmp_repo.git("cat-file", "blob", "improve/c:src/value.txt") == "99"
    for commit in (rows[0]["commit"], "improve/c"):
        here = tmp_path / f"mine-{commit[:6].replace('/', '-')}"
        tmp_repo.git("worktree", "add", "-q", "--detach", str(here), commit)
        out = subprocess.run(
            [sys.executable, "bench.py"], cwd=here, capture_output=True, text=True, check=True
        )
        value = [r for r in rows if commit in (r["commit"], "improve/c")][-1]["metric"]["value"]
        assert out.stdout.strip() == f"METRIC score={value:g}"


def check_workspace(
    base: Path, combo: tuple[str | None, str | None, str | None, int], seed: int
) -> None:
    """One combination: the agent's workspace, written fresh and then brought from one commit
    to the next (a kept workspace renewed), holds what real git's checkout writes; its own git
    stores each file as yours does, its index holds the commit's blobs, and the tree hashed
    from its files is the commit's."""
    rng = random.Random(seed)
    repo = base / f"repo-{seed}"
    git(base, "init", "-q", repo.name)
    attributes = configure(repo, combo)
    old = files_of(rng, 24)
    first = commit_raw(repo, {**old, **attributes})
    new = {name: generated(rng) if rng.random() < 0.5 else data for name, data in old.items()}
    second = commit_raw(repo, {**new, **attributes, "added.t": generated(rng)})
    opened = open_repo(repo)
    pool = Workspaces()
    renewed = COUNTS["renewed"]
    try:
        for i, commit in enumerate((first, second)):
            out = base / f"out-{seed}-{i}"
            out.mkdir()
            env = {"GIT_INDEX_FILE": str(base / f"index-{seed}-{i}")}
            git(repo, f"--work-tree={out}", "checkout", "-f", commit, "--", ".", env=env)
            with made_workspace(opened, commit, "w", pool) as made:
                names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
                wrong = [n for n in names if (made.path / n).read_bytes() != (out / n).read_bytes()]
                assert not wrong, f"{combo} {i}: the workspace differs from git for {wrong}"
                # its own git stores each file as yours does from your checkout
                paths = "\n".join(names) + "\n"
                yours, its = (
                    subprocess.run(
                        ["git", "hash-object", "--stdin-paths"],
                        cwd=cwd,
                        input=paths,
                        capture_output=True,
                        text=True,
                        env={**os.environ, **more},
                    )
                    for cwd, more in ((out, {"GIT_DIR": str(repo / ".git")}), (made.path, {}))
                )
                assert (its.returncode, its.stdout) == (yours.returncode, yours.stdout), combo
                listed = git(made.path, "ls-files", "-s").splitlines()
                assert [line.split()[:2] for line in listed] == [
                    line.split()[:3:2] for line in git(repo, "ls-tree", "-r", commit).splitlines()
                ], combo
                hashed = hash_workspace(opened, made.path, known=made)
                assert hashed.tree == str(opened.raw[commit].peel(pygit2.Tree).id), combo
        assert COUNTS["renewed"] == renewed + 1, "the second workspace was not the first renewed"
    finally:
        pool.close()


@pytest.mark.parametrize("n", range(2))
def test_the_workspace_is_what_your_checkout_writes_on_a_sample_of_settings(
    tmp_path: Path, n: int
) -> None:
    for i, combo in enumerate(combos(4, 50 + n)):
        check_workspace(tmp_path, combo, 3000 * n + i)


@pytest.mark.slow
def test_the_workspace_is_what_your_checkout_writes_under_many_settings(tmp_path: Path) -> None:
    for i, combo in enumerate(combos(80, 77)):
        check_workspace(tmp_path, combo, 11 + i)
