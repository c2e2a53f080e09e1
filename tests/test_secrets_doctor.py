"""`git improve doctor --secrets`: secrets stored before redaction (by an older gitimprove,
written here with raw pygit2 around the redactor) are found on every gitimprove ref, shown
only masked, masked by `--repair` in new compare-and-swap commits, and what a new commit
cannot undo (history, commit messages) is explained."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gitimprove.git import memory, notes, refs
from gitimprove.git.repo import Repo
from gitimprove.git.trees import put_paths
from gitimprove.state import secrets
from tests.conftest import PY, TmpRepo, git
from tests.secret_corpus import corpus
from tests.test_secrets_writers import left_in

FAKES = corpus(seed=99)


def raw_commit(repo: Repo, ref: str, files: dict[str, str], message: str) -> str:
    """A commit on `ref` made with pygit2 directly: what an older gitimprove stored."""
    tip = repo.ref_target(ref)
    base = repo.commit(tip).tree if tip else None
    blobs = {p: repo.raw.create_blob(d.encode()) for p, d in files.items()}
    tree = put_paths(repo, base, blobs, mask=False)  # not even its names masked
    sig = repo.signature()
    return str(repo.raw.create_commit(ref, sig, sig, message, tree, [tip] if tip else []))


@pytest.fixture
def leaky(tmp_repo: TmpRepo) -> TmpRepo:
    head = tmp_repo.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n'})
    repo = tmp_repo.open()
    line = json.dumps({"v": 1, "op": "create", "ts": "2026-01-01", "description": FAKES[0].text})
    raw_commit(repo, refs.NOTES, {f"{head[:2]}/{head[2:]}": line + "\n"}, "notes")
    entries = {
        "FORMAT": memory.FORMAT_TEXT,
        "signals/2026/01/a.json": json.dumps({"id": "SIG-a", "content": FAKES[1].text}),
        "learnings/2026/01/b.md": f"+++\ncategory = 'x'\n+++\n{FAKES[2].text}\n",
        "imports/0123456789abcdef.jsonl": json.dumps({"commit": "dead", "d": FAKES[3].text}),
        "ideas/2026/01/c.json": json.dumps({"text": "nothing secret here"}),
    }
    raw_commit(repo, refs.MEMORY, entries, "memory")
    # an experiment commit whose message holds a secret, kept alive by a run branch
    exp = raw_commit(
        repo, "refs/heads/improve/r1", {"x.txt": "x"}, f"experiment(x): {FAKES[4].text}"
    )
    assert exp
    return tmp_repo


def doctor(repo: TmpRepo, *args: str) -> subprocess.CompletedProcess[str]:
    return repo.cli("doctor", "--secrets", *args)


def test_a_clean_repository_has_no_secret(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n'})
    res = doctor(tmp_repo, "--json")
    found = [json.loads(x) for x in res.stdout.splitlines()]
    assert {"check": "secrets", "ok": True} in [{k: f[k] for k in ("check", "ok")} for f in found]
    assert not [f for f in found if f["check"].startswith("secrets") and not f["ok"]]


def test_doctor_finds_every_stored_secret_and_shows_them_masked(leaky: TmpRepo) -> None:
    res = doctor(leaky)
    assert res.returncode == 1
    out = res.stdout + res.stderr
    assert "4 record(s) hold a secret" in out
    for place in ("note ", "memory signals/2026/01/a.json", "memory learnings/", "import imports/"):
        assert place in out, out
    assert "1 commit message(s) gitimprove wrote hold a secret" in out
    assert "--repair" in out and "revoke" in out
    assert not left_in(out, FAKES[:5]), "doctor printed a secret in the clear"
    assert out.count("[REDACTED:") >= 5


def test_repair_masks_the_tips_and_explains_the_rest(leaky: TmpRepo) -> None:
    repo = leaky.open()
    old_notes, old_memory = repo.ref_target(refs.NOTES), repo.ref_target(refs.MEMORY)
    res = doctor(leaky, "--repair")
    out = res.stdout + res.stderr
    assert res.returncode == 1  # the history and the message are still there: that is the truth
    assert "[fixed] secrets: 4 record(s) held a secret; masked in a new commit" in out
    assert "old version(s) of records in the history of refs/notes/improve" in out
    assert "old version(s) of records in the history of refs/heads/improve/memory" in out
    assert "rewriting the history" in out and "docs/secrets.md" in out
    assert not left_in(out, FAKES[:5])
    # one new commit per ref, on the old tip (compare-and-swap, nothing else changed)
    repo = leaky.open()
    assert [str(p) for p in repo.commit(refs.NOTES).parent_ids] == [old_notes]
    assert [str(p) for p in repo.commit(refs.MEMORY).parent_ids] == [old_memory]
    tips = notes.read_note(repo, leaky.git("rev-parse", "HEAD")).decode()
    tips += "".join(d.decode() for _, d in memory.iter_entries(repo))
    assert not left_in(tips, FAKES[:4]) and tips.count("[REDACTED:") >= 4
    assert "nothing secret here" in tips and len(list(memory.iter_entries(repo))) == 5
    # still readable records: the note parses, the masked JSON entries are JSON
    assert json.loads(tips.splitlines()[0])["op"] == "create"
    assert json.loads(memory.read_entry(repo, "signals/2026/01/a.json") or b"")["content"]
    tips_before = (repo.ref_target(refs.NOTES), repo.ref_target(refs.MEMORY))
    again = doctor(leaky, "--repair").stdout
    assert "held a secret" not in again  # nothing left to mask: no new commit
    after = leaky.open()
    assert (after.ref_target(refs.NOTES), after.ref_target(refs.MEMORY)) == tips_before


def test_the_explanation_says_where_the_records_were_pushed(leaky: TmpRepo, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    leaky.git("remote", "add", "origin", str(remote))
    # pushed as an older gitimprove's sync did (the current one pushes them masked)
    leaky.git("push", "-q", "origin", refs.NOTES, refs.MEMORY)
    assert leaky.cli("sync", "origin").returncode == 0  # fetches our own refs
    out = doctor(leaky, "--repair").stdout
    assert "refs/notes/improve hold a secret; pushed to origin" in out
    assert "in every clone" in out
    scan = secrets.scan(leaky.open())
    assert scan.shared[refs.NOTES] == ["origin"] and not scan.current


WRITER = """
import json, sys
from gitimprove.git import memory
from gitimprove.git.repo import open_repo
from gitimprove.state import experiments
repo = open_repo(sys.argv[1])
w = sys.argv[2]
for i in range(15):
    experiments.record(repo, sys.argv[3], {"status": "pending", "description": f"w{w}-{i}"})
    memory.add_entries(repo, {memory.entry_name("ideas", "json"): json.dumps({"text": f"w{w}-{i}"})})
"""
REPAIRER = """
import sys
from gitimprove.git.repo import open_repo
from gitimprove.state import secrets
for _ in range(5):
    secrets.repair(open_repo(sys.argv[1]))
"""


@pytest.mark.slow
def test_repair_while_others_write_loses_nothing(leaky: TmpRepo) -> None:
    head = leaky.git("rev-parse", "HEAD")
    procs = [
        subprocess.Popen([PY, "-c", WRITER, str(leaky.path), str(w), head]) for w in range(4)
    ] + [subprocess.Popen([PY, "-c", REPAIRER, str(leaky.path)]) for _ in range(2)]
    assert [p.wait(timeout=300) for p in procs] == [0] * 6
    repo = leaky.open()
    note = notes.read_note(repo, head).decode()
    assert {f"w{w}-{i}" for w in range(4) for i in range(15)} <= set(
        json.loads(x).get("description") for x in note.splitlines()
    )
    ideas = {json.loads(d)["text"] for _, d in memory.iter_entries(repo, "ideas/")}
    assert {f"w{w}-{i}" for w in range(4) for i in range(15)} <= ideas
    tips = note + "".join(d.decode() for _, d in memory.iter_entries(repo))
    assert not left_in(tips, FAKES[:4])
