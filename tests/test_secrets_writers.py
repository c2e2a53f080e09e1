"""No writer bypasses the redactor: every text gitimprove stores goes through
`Repo.write_blob` / `Repo.create_commit`, which mask it.

Two checks: the code cannot create a git object from text anywhere else (a static scan of
the package, which fails when a new writer path appears), and every writer the package has
(notes, memory entries, imports, ideas, signals, the archive, sync merges) leaves no fake
secret in any object of a real repository.
"""

from __future__ import annotations

import ast
import itertools
import json
import subprocess
from pathlib import Path

import pygit2
import pytest

from gitimprove.git import archive, memory, notes, refs, sync
from gitimprove.git.trees import put_paths
from gitimprove.state import experiments, imports
from tests.conftest import ROOT, TmpRepo, git
from tests.secret_corpus import Fake, corpus, windows

PACKAGE = ROOT / "gitimprove"
# pygit2 calls that make an object from content we pass in
OBJECT_WRITERS = frozenset(
    {
        "create_blob",
        "create_blob_fromdisk",
        "create_blob_fromworkdir",
        "create_blob_fromiobase",
        "create_blob_frombuffer",
        "create_commit",
        "create_note",
        "create_tag",
        "amend_commit",
    }
)
# git commands that make objects from text (a message, a file we write)
_WRITES = "commit commit-tree hash-object mktree mktag notes tag fast-import stash merge"
GIT_WRITERS = frozenset(
    f"{_WRITES} cherry-pick rebase revert am apply replace filter-branch".split(" ")
)
# (file, call): why it may bypass the redactor
ALLOWED = {
    ("gitimprove/git/repo.py", "create_blob"): "Repo.write_blob masks with redact_blob first",
    ("gitimprove/git/repo.py", "create_commit"): "Repo.create_commit masks the message first",
    ("gitimprove/git/workspace.py", "create_blob"): "the agent's edit: the user's code, as is",
    ("gitimprove/git/notes.py", "create_blob"): "the TSV digests stored beside the notes: made "
    "from note blobs only, which the redactor passed when they were stored",
    ("gitimprove/loop/demo.py", "commit"): "the demo project's first commit: a fixed message",
}
# wrappers whose list argument is a git command line
GIT_CALLS = frozenset({"git", "_git"})


def _constant(node: ast.expr) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def _receiver(node: ast.expr) -> str:
    return ast.unparse(node)


def _git_subcommand(args: list[ast.expr]) -> str | None:
    """The git subcommand of a literal argv (skipping `-c x=y` and other options)."""
    items: list[str] = []
    for a in args:
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            items.append(a.value)
        elif isinstance(a, ast.Starred):
            items.append("-*")  # an identity prefix: options
        else:
            items.append("?")
    if items and items[0] == "git":
        items = items[1:]
    skip = False
    for item in items:
        if skip:
            skip = False
            continue
        if item == "-c":
            skip = True
            continue
        if item.startswith("-"):
            continue
        return item
    return None


def bypasses(source: str, rel: str) -> list[str]:
    """Where `source` could make a git object from text without the redactor."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in OBJECT_WRITERS:
            receiver = _receiver(func.value)
            raw = receiver == "raw" or receiver.endswith(".raw") or "Repository(" in receiver
            if raw and (rel, func.attr) not in ALLOWED:
                out.append(f"{rel}:{node.lineno}: {receiver}.{func.attr}(...)")
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        argv = next((a for a in node.args if isinstance(a, ast.List)), None)
        if name in GIT_CALLS | {"run", "Popen"} and argv is not None:
            sub = _git_subcommand(argv.elts)
            is_git = name in GIT_CALLS or (
                argv.elts and isinstance(argv.elts[0], ast.Constant) and argv.elts[0].value == "git"
            )
            # `hash-object` without `-w` before `--` (nor spliced options that could hold it)
            # writes nothing
            options = list(itertools.takewhile(lambda a: _constant(a) != "--", argv.elts))
            hashes_only = sub == "hash-object" and not any(
                isinstance(a, ast.Starred) or _constant(a) == "-w" for a in options
            )
            if is_git and sub in GIT_WRITERS and (rel, sub) not in ALLOWED and not hashes_only:
                out.append(f"{rel}:{node.lineno}: git {sub}")
    return out


def test_no_code_writes_a_git_object_around_the_redactor() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        found += bypasses(path.read_text(encoding="utf-8"), rel)
    assert not found, "a writer that skips Repo.write_blob / Repo.create_commit:\n" + "\n".join(
        found
    )
    # every exception still exists (a stale one would hide a new writer at that place)
    for rel, call in ALLOWED:
        assert call in (ROOT / rel).read_text(encoding="utf-8"), (rel, call)


def test_the_scan_catches_a_new_writer() -> None:
    """The check above can fail: new writer paths of each kind are found."""
    source = (
        "def f(repo, proc, msg, data):\n"
        "    repo.raw.create_blob(data)\n"
        "    repo.raw.create_commit(None, a, a, msg, t, [])\n"
        "    pygit2.Repository('.').create_tag('v', t, 1, a, msg)\n"
        "    proc.git(['-c', 'user.name=x', 'commit', '-m', msg])\n"
        "    proc.git(['notes', '--ref=improve', 'add', '-m', msg])\n"
        "    proc.run(['git', 'hash-object', '-w', '--stdin'], input=data)\n"
        "    proc.git(['hash-object', '--', *paths])\n"  # names bytes only: not a writer
        "    proc.git(['hash-object', *opts, '--', 'a.txt'])\n"
        "    _git(repo, ['fast-import'])\n"
        "    repo.write_blob(data)\n"
        "    repo.create_commit(t, msg, [])\n"
        "    proc.git(['log', '-1'])\n"
    )
    found = bypasses(source, "gitimprove/new.py")
    assert len(found) == 8, found
    assert not [f for f in found if "write_blob" in f or "log" in f]


# --- every writer, on a real repository --------------------------------------------------

FAKES = corpus(seed=7)


def all_objects(path: Path) -> str:
    out = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"],
        cwd=path,
        capture_output=True,
        check=True,
    ).stdout
    return out.decode("utf-8", errors="replace")


def left_in(dump: str, fakes: list[Fake]) -> list[str]:
    """Families with any 12-character piece of their secret in the object dump."""
    return [
        f.family
        for f in fakes
        if any(w in dump for w in windows(f.secret) if w not in f.text.replace(f.secret, ""))
    ]


@pytest.mark.slow
def test_every_writer_masks_what_it_stores(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    head = tmp_repo.commit("initial", {"a.txt": "a\n"})
    repo = tmp_repo.open()
    chunks = [FAKES[i::6] for i in range(6)]
    text = ["\n".join(f.text for f in chunk) for chunk in chunks]
    # a note line (experiment record) and a raw note line
    experiments.record(repo, head, {"status": "crash", "description": text[0], "tail": text[0]})
    notes.append_lines(repo, {head: [text[1]]})
    # memory entries: JSON, Markdown, an idea through the CLI
    memory.add_entries(
        repo,
        {
            memory.entry_name("signals", "json"): json.dumps({"content": text[2]}),
            memory.entry_name("learnings", "md"): f'+++\ncategory = "x"\n+++\n{text[3]}\n',
        },
    )
    # an argument cannot hold a NUL byte: the CLI gets a NUL-separated list as `\0` escapes
    assert tmp_repo.cli("idea", "add", text[4].replace("\0", "\\0")).returncode == 0
    # a commit message (the archive; experiment commits use the same door)
    archive.append(repo, [head], f"gitimprove: archive\n\n{text[5]}")
    # an import of a results TSV whose descriptions hold secrets
    tsv = tmp_path / "results.tsv"
    rows = [f"{head[:7]}\t1.0\t0.0\tkeep\t{f.text.splitlines()[0]}" for f in FAKES[:20]]
    rows += [f"deadbee\t2.0\t0.0\tdiscard\t{f.text.splitlines()[0]}" for f in FAKES[20:40]]
    tsv.write_text("commit\tval_bpb\tmemory_gb\tstatus\tdescription\n" + "\n".join(rows) + "\n")
    imports.import_file(repo, tsv)
    dump = all_objects(tmp_repo.path)
    assert "[REDACTED:" in dump
    assert not left_in(dump, FAKES), left_in(dump, FAKES)


def test_sync_masks_what_an_older_clone_stored(tmp_path: Path) -> None:
    """A clone running an older gitimprove stored secrets unmasked (written here with raw
    pygit2, around the redactor); merging its records masks them before they are stored."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    clones = []
    for name in ("old", "new"):
        path = tmp_path / name
        git(tmp_path, "clone", "-q", str(origin), str(path))
        clones.append(TmpRepo(path))
    old, new = clones
    head = old.commit("initial", {"a.txt": "a\n"})
    git(old.path, "push", "-q", "origin", "HEAD:main")
    git(new.path, "pull", "-q", "origin", "main")
    fakes = FAKES[:12]
    raw_repo = old.open()
    line = json.dumps({"v": 1, "op": "create", "ts": "2026-01-01", "d": fakes[0].text}) + "\n"
    blob = raw_repo.raw.create_blob(line.encode())
    tree = put_paths(raw_repo, None, {f"{head[:2]}/{head[2:]}": blob})
    sig = raw_repo.signature()
    raw_repo.raw.create_commit(refs.NOTES, sig, sig, "old notes", tree, [])
    entries = {
        f"signals/2026/01/old-{i}.json": raw_repo.raw.create_blob(
            json.dumps({"content": f.text}).encode()
        )
        for i, f in enumerate(fakes[1:])
    }
    tree = put_paths(raw_repo, None, dict(entries))
    raw_repo.raw.create_commit(refs.MEMORY, sig, sig, "old memory", tree, [])
    git(
        old.path,
        "push",
        "-q",
        "origin",
        f"{refs.NOTES}:{refs.NOTES}",
        f"{refs.MEMORY}:{refs.MEMORY}",
    )
    # the new clone has records of its own, so the merge is a real merge
    repo = new.open()
    experiments.record(repo, head, {"status": "keep", "description": "mine"})
    memory.add_entries(repo, {memory.entry_name("ideas", "json"): '{"text": "mine"}'})
    sync.sync(repo, "origin", mode="pull")
    merged = {
        path: data.decode()
        for path, data in memory.iter_entries(repo)
        if path.startswith("signals/")
    }
    assert len(merged) == len(fakes) - 1
    note = notes.read_note(repo, head).decode()
    assert "mine" in note and "[REDACTED:" in note
    tip_objects = note + "".join(merged.values())
    assert not left_in(tip_objects, fakes), left_in(tip_objects, fakes)
    assert all("[REDACTED:" in v for v in merged.values())
    assert isinstance(repo.raw[repo.ref_target(refs.MEMORY)], pygit2.Commit)
