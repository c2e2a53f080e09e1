"""A secret in a tree entry's NAME is a leak like one in its content: every path gitimprove
writes into a record's tree is masked (memory entries, imports, spooled entries, sync
merges and fast-forwards, repairs), stays a valid and unique path, and `doctor --secrets`
scans the names of the records' entries too."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from gitimprove.git import memory, objects, refs
from gitimprove.git.trees import put_paths
from gitimprove.redaction import redact_path
from gitimprove.state import secrets
from tests.conftest import PY, TmpRepo, git
from tests.secret_corpus import corpus, windows
from tests.test_git_hooks_sync import clone, remote  # noqa: F401  (a fixture)
from tests.test_secrets_doctor import raw_commit

# provider tokens that may stand in a file name (no `/`, no blank)
NAMED = [
    f
    for f in corpus(seed=5)
    if f.secret.replace("_", "").replace("-", "").replace(".", "").isalnum()
    and 16 <= len(f.secret) <= 120
][:12]


def all_names(path: Path) -> str:
    """Every path any tree of any object in the repository holds."""
    return git(path, "rev-list", "--objects", "--all")


def leaked(dump: str) -> list[str]:
    return [f.family for f in NAMED if any(w in dump for w in windows(f.secret))]


def test_a_masked_name_is_a_valid_unique_path() -> None:
    assert len(NAMED) >= 8
    seen = set()
    for f in NAMED:
        path = f"signals/2026/11/{f.secret}.json"
        masked = redact_path(path)
        assert masked != path and not leaked(masked), (f.family, masked)
        assert masked.startswith("signals/2026/11/REDACTED-") and masked.endswith(".json")
        assert not set(masked) & set(":[]\\\0 ") and "//" not in masked
        assert redact_path(masked) == masked  # masking twice changes nothing
        seen.add(masked)
    assert len(seen) == len(NAMED)
    for plain in ("signals/2026/11/20261123T014933Z-3fa2c9e1.json", "ab/cdef0123456789", "FORMAT"):
        assert redact_path(plain) == plain


def test_every_tree_write_masks_names_and_keeps_every_entry(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("initial", {"a.txt": "a\n"})
    repo = tmp_repo.open()
    tok = NAMED[0].secret
    entries = {f"signals/2026/11/{f.secret}.json": f'{{"n": {n}}}\n' for n, f in enumerate(NAMED)}
    entries[f"imports/{tok}/rows.jsonl"] = '{"n": "dir"}\n'  # a directory name, too
    assert memory.add_entries(repo, entries) == len(entries)
    assert memory.add_entries(repo, entries) == 0  # repeating a write adds nothing
    got = dict(memory.iter_entries(repo))
    assert len(got) == len(entries) + 1  # + FORMAT
    assert sorted(got.values()) == sorted(
        e.encode() for e in [*entries.values(), memory.FORMAT_TEXT]
    )
    assert not leaked(all_names(tmp_repo.path))
    # two different blobs whose masked names would be one path both stay
    tip = repo.commit(repo.ref_target(refs.MEMORY)).tree
    a, b = repo.raw.create_blob(b"a\n"), repo.raw.create_blob(b"b\n")
    masked = redact_path(f"x/{tok}")
    tree = repo.raw[put_paths(repo, tip, {masked: a, f"x/{tok}": b})]
    names = [p for p, _ in objects.walk_blobs(repo, tree) if p.startswith("x/")]  # type: ignore[arg-type]
    assert len(names) == 2 and not leaked(" ".join(names))


def test_spooled_and_cli_entries_with_a_secret_name(tmp_repo: TmpRepo) -> None:
    """A hook spools under a name it chooses from its payload's time and host; an entry whose
    name holds a token (a planted spool file) is flushed under a masked name."""
    tmp_repo.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n'})
    from gitimprove.memory import spool
    from gitimprove.memory.signals import flush

    improve = str(tmp_repo.path / ".git" / "improve")
    for f in NAMED[:3]:
        spool.put(improve, f"signals/2026/11/{f.secret}.json", {"id": "SIG-x", "content": "x"})
    assert flush(tmp_repo.open()) == 3
    assert len(list(memory.iter_entries(tmp_repo.open(), "signals/"))) == 3
    assert not leaked(all_names(tmp_repo.path))


def test_sync_masks_names_a_remote_holds(remote: Path, tmp_path: Path) -> None:  # noqa: F811
    old = clone(remote, tmp_path / "old")
    repo = old.open()
    files = {"FORMAT": memory.FORMAT_TEXT}
    files |= {f"signals/2026/11/{f.secret}.json": json.dumps({"n": n}) for n, f in enumerate(NAMED)}
    raw_commit(repo, refs.MEMORY, files, "memory")
    old.git("push", "-q", "origin", refs.MEMORY)
    fresh = clone(remote, tmp_path / "fresh")  # no memory branch: the remote's is adopted
    mine = clone(remote, tmp_path / "mine")  # a memory branch of its own: a merge
    assert mine.cli("idea", "add", "try caching the parser").returncode == 0
    for c in (fresh, mine):
        res = c.cli("sync")
        assert res.returncode == 0, res.stderr
        opened = c.open()
        tip = opened.ref_target(refs.MEMORY)
        names = [p for p, _ in objects.walk_blobs(opened, opened.commit(tip).tree)]
        assert not leaked(" ".join(names)), names
        assert sum(p.startswith("signals/") for p in names) == len(NAMED)  # nothing lost
        assert not secrets.scan(opened).current
    tip = git(remote, "rev-parse", refs.MEMORY).strip()
    assert not leaked(git(remote, "ls-tree", "-r", "--name-only", tip))  # pushed back masked


def test_doctor_finds_and_repairs_a_secret_name(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n'})
    repo = tmp_repo.open()
    tok = NAMED[2].secret
    raw_commit(
        repo,
        refs.MEMORY,
        {"FORMAT": memory.FORMAT_TEXT, f"signals/2026/11/{tok}.json": '{"id": "SIG-1"}'},
        "memory",
    )
    res = tmp_repo.cli("doctor", "--secrets")
    assert res.returncode == 1 and "1 record(s) hold a secret" in res.stdout, res.stdout
    assert "REDACTED" in res.stdout and not leaked(res.stdout + res.stderr)
    res = tmp_repo.cli("doctor", "--secrets", "--repair")
    assert "masked in a new commit" in res.stdout, res.stdout
    tip = repo.ref_target(refs.MEMORY)
    names = git(tmp_repo.path, "ls-tree", "-r", "--name-only", tip)
    assert not leaked(names) and names.count("signals/") == 1
    assert dict(memory.iter_entries(repo, "signals/")).popitem()[1] == b'{"id": "SIG-1"}'
    res = tmp_repo.cli("doctor", "--secrets")  # the old name stays in the history
    assert "old version(s) of records in the history" in res.stdout, res.stdout


WRITER = """
import sys
from gitimprove.git import memory
from gitimprove.git.repo import open_repo
repo = open_repo(sys.argv[1])
for n in range(6):
    memory.add_entries(repo, {f"signals/2026/11/{sys.argv[2]}-{n}.json": f"{sys.argv[3]} {n}\\n"})
"""


def test_writers_at_once_keep_every_masked_entry(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("initial", {"a.txt": "a\n"})
    procs = [
        subprocess.Popen(
            [PY, "-c", WRITER, str(tmp_repo.path), f.secret, f"w{i}"],
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, f in enumerate(NAMED[:4])
    ]
    for p in procs:
        _, err = p.communicate(timeout=240)
        assert p.returncode == 0, err
    entries = dict(memory.iter_entries(tmp_repo.open(), "signals/"))
    assert len(entries) == 24 and len(set(entries.values())) == 24
    assert not leaked(all_names(tmp_repo.path))
