"""Records a sync brings in pass through the redactor, also on a fast-forward (the remote's
commits adopted as they are), and `doctor --secrets` sees commit messages that only a
remote-tracking ref reaches. The remote's records were pushed by an older gitimprove that
stored them unmasked (written here with raw pygit2 around the redactor)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gitimprove.git import memory, notes, objects, refs
from gitimprove.state import secrets
from tests.conftest import PY, TmpRepo, git
from tests.secret_corpus import corpus
from tests.test_git_hooks_sync import clone, remote  # noqa: F401  (a fixture)
from tests.test_secrets_doctor import raw_commit
from tests.test_secrets_writers import all_objects, left_in

FAKES = corpus(seed=77)


def leaky_remote(bare: Path, tmp_path: Path) -> TmpRepo:
    """An older clone pushes notes and memory holding secrets to `bare`."""
    old = clone(bare, tmp_path / "old")
    repo = old.open()
    head = old.git("rev-parse", "HEAD")
    lines = "".join(
        json.dumps({"v": 1, "op": "create", "ts": "2026-01-01", "description": f.text}) + "\n"
        for f in FAKES[:10]
    )
    raw_commit(repo, refs.NOTES, {f"{head[:2]}/{head[2:]}": lines}, "notes")
    entries = {
        "FORMAT": memory.FORMAT_TEXT,
        **{
            f"signals/2026/01/s{n}.json": json.dumps({"id": f"SIG-{n}", "content": f.text})
            for n, f in enumerate(FAKES[10:30])
        },
        "ideas/2026/01/plain.json": json.dumps({"text": "nothing secret here"}),
    }
    raw_commit(repo, refs.MEMORY, entries, "memory")
    old.git("push", "-q", "origin", refs.NOTES, refs.MEMORY)
    return old


def tips_hold(repo: TmpRepo) -> list[str]:
    opened = repo.open()
    dump = "".join(
        data.decode("utf-8", "replace")
        for ref in (refs.NOTES, refs.MEMORY)
        for _, _, data in objects.tip_blobs(opened, ref)
    )
    return left_in(dump, FAKES[:30])


def test_a_fast_forward_sync_masks_what_it_adopts(remote: Path, tmp_path: Path) -> None:  # noqa: F811
    leaky_remote(remote, tmp_path)
    fresh = clone(remote, tmp_path / "fresh")  # no notes, no memory: the tips are created
    behind = clone(remote, tmp_path / "behind")
    behind.git("fetch", "-q", "origin", f"{refs.NOTES}:{refs.NOTES}")  # then a fast-forward
    for c in (fresh, behind):
        res = c.cli("sync")
        assert res.returncode == 0, res.stderr
        assert not tips_hold(c), tips_hold(c)
        opened = c.open()
        assert len(list(memory.iter_entries(opened, "signals/"))) == 20  # nothing lost
        lines = [
            json.loads(x)
            for _, data in notes.iter_notes(opened)
            for x in data.decode().splitlines()
        ]
        assert len(lines) == 10 and all(ln["description"] for ln in lines)
        assert sum("[REDACTED:" in ln["description"] for ln in lines) == 10
        scan = secrets.scan(opened)
        assert not scan.current  # the tips are masked; the adopted history is reported
        assert set(scan.history) == {refs.NOTES, refs.MEMORY}
    # the masking commit went back to the remote with the push
    shown = git(remote, "show", f"{refs.MEMORY}:signals/2026/01/s0.json")
    assert "[REDACTED:" in shown and not left_in(shown, FAKES[10:11])


WORKER = """
import sys
from gitimprove.git.repo import open_repo
from gitimprove.git.sync import sync
sync(open_repo(sys.argv[1]))
"""


@pytest.mark.slow
def test_clones_syncing_a_leaky_remote_at_once_all_end_masked(
    remote: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    leaky_remote(remote, tmp_path)
    clones = [clone(remote, tmp_path / f"c{n}") for n in range(4)]
    for n, c in enumerate(clones):  # each clone has a record of its own to share
        memory.add_entries(c.open(), {f"ideas/2026/02/own{n}.json": json.dumps({"n": n})})
    procs = [subprocess.Popen([PY, "-c", WORKER, str(c.path)]) for c in clones]
    assert [p.wait(timeout=300) for p in procs] == [0] * 4
    for c in clones:
        assert c.cli("sync").returncode == 0
    for c in clones:
        assert not tips_hold(c)
        names = {p for p, _ in memory.iter_entries(c.open(), "")}
        assert {f"ideas/2026/02/own{n}.json" for n in range(4)} <= names
        assert len([p for p in names if p.startswith("signals/")]) == 20
    listing = git(remote, "ls-tree", "-r", "--name-only", refs.MEMORY).split()
    dump = "".join(git(remote, "show", f"{refs.MEMORY}:{p}") for p in listing)
    assert not left_in(dump, FAKES[10:30])
    git(remote, "fsck", "--no-progress")


def test_doctor_reports_messages_only_remote_tracking_refs_reach(
    remote: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    other = clone(remote, tmp_path / "other")
    repo = other.open()
    base = other.git("rev-parse", "HEAD")
    run = raw_commit(
        repo, "refs/heads/improve/r9", {"x.txt": "x"}, f"experiment(x): {FAKES[40].text}"
    )
    other.git("push", "-q", "origin", "improve/r9")
    # an experiment kept and pushed onto a feature branch of the user's
    other.git("checkout", "-q", "-b", "feature", base)
    kept = raw_commit(
        repo, "refs/heads/feature", {"y.txt": "y"}, f"experiment(y): {FAKES[41].text}"
    )
    mine = raw_commit(repo, "refs/heads/feature", {"z.txt": "z"}, f"wip: {FAKES[42].text}")
    other.git("push", "-q", "origin", "feature")
    # a memory branch an older clone pushed holds a secret: fetched, never synced here
    raw_commit(
        repo, refs.MEMORY, {"signals/2026/01/x.json": json.dumps({"c": FAKES[43].text})}, "m"
    )
    other.git("push", "-q", "origin", refs.MEMORY)
    here = clone(remote, tmp_path / "here")
    here.git("fetch", "-q", "origin")
    assert here.git("branch", "--list", "improve/r9", "feature") == ""  # remote-tracking only
    res = here.cli("doctor", "--secrets")
    assert res.returncode == 1
    out = res.stdout + res.stderr
    assert "2 commit message(s) gitimprove wrote hold a secret" in out, out
    assert run[:10] in out and kept[:10] in out
    assert mine[:10] not in out  # the user's own commit message is theirs, not a record
    assert "history of refs/remotes/origin/improve/memory hold a secret" in out, out
    assert not left_in(out, FAKES[40:44])


def _old_local_records(old: TmpRepo, fakes: list, tag: str) -> None:  # type: ignore[type-arg]
    """Records an older gitimprove wrote in this clone, unmasked, never pushed: a note
    line and memory entries (one under a name that holds a secret)."""
    repo = old.open()
    head = old.git("rev-parse", "HEAD")
    line = "".join(
        json.dumps({"v": 1, "op": "create", "ts": "2026-01-01", "description": f.text}) + "\n"
        for f in fakes[:5]
    )
    tip = repo.ref_target(refs.NOTES)
    prior = ""
    if tip:
        prior = "".join(
            d.decode()
            for _, p, d in objects.tip_blobs(repo, refs.NOTES)
            if "/" in p and p[:2] == head[:2]
        )
    raw_commit(repo, refs.NOTES, {f"{head[:2]}/{head[2:]}": prior + line}, "notes")
    entries = {
        f"signals/2026/02/{tag}{n}.json": json.dumps({"id": f"SIG-{tag}{n}", "content": f.text})
        for n, f in enumerate(fakes[5:])
    }
    if repo.ref_target(refs.MEMORY) is None:
        entries["FORMAT"] = memory.FORMAT_TEXT
    entries[f"signals/2026/02/{fakes[0].secret}.json"] = json.dumps({"id": "SIG-named"})
    raw_commit(repo, refs.MEMORY, entries, "memory")


@pytest.mark.parametrize("remote_has_records", [False, True])
def test_sync_never_pushes_local_versions_that_hold_a_secret(
    remote: Path,  # noqa: F811
    tmp_path: Path,
    remote_has_records: bool,
) -> None:
    """A clone whose records an older gitimprove stored unmasked (never pushed) syncs with
    the current one: the push carries one masked commit on top of what the remote had, so
    no object the remote receives holds any piece of a secret, and no record is lost."""
    fakes = [f for f in corpus(seed=1515) if "/" not in f.secret and len(f.secret) < 120][:40]
    if remote_has_records:
        other = clone(remote, tmp_path / "other")
        assert other.cli("idea", "add", "tune the cache size").returncode == 0
        assert other.cli("sync").returncode == 0
    old = clone(remote, tmp_path / "old")
    _old_local_records(old, fakes[:20], "a")
    # the current gitimprove writes on top (masked), then syncs
    add = old.cli("signal", "add", "--type", "gotcha", "--content", fakes[20].text)
    assert add.returncode == 0, add.stderr
    _old_local_records(old, fakes[21:], "b")
    res = old.cli("sync")
    assert res.returncode == 0, res.stderr
    assert left_in(all_objects(remote), fakes) == []
    assert "held a secret" in res.stderr and fakes[0].secret[:10] not in res.stdout + res.stderr
    fresh = clone(remote, tmp_path / "fresh")
    fresh.git("fetch", "-q", "origin", f"{refs.NOTES}:{refs.NOTES}")
    assert left_in(all_objects(fresh.path), fakes) == []
    # every record is still there, masked: the note's lines and each memory entry
    repo = old.open()
    names = [p for _, p, _ in objects.tip_blobs(repo, refs.MEMORY)]
    expected = (20 - 5 + 1) + (len(fakes) - 21 - 5 + 1)  # each call: entries and a named one
    assert sum(p.startswith("signals/2026/02/") for p in names) == expected
    assert any(p.startswith("signals/2026/02/REDACTED-") for p in names)
    note = "".join(d.decode() for _, p, d in objects.tip_blobs(repo, refs.NOTES) if "/" in p)
    assert note.count('"op": "create"') == 10 and "[REDACTED:" in note
    if remote_has_records:  # built on what the remote had, never rewriting it
        assert any(p.startswith("ideas/") for p in names)
    # a clean sync afterwards changes nothing and warns of nothing
    again = old.cli("sync")
    assert again.returncode == 0 and "held a secret" not in again.stderr
    assert git(remote, "rev-parse", refs.MEMORY) == old.git("rev-parse", refs.MEMORY)


def test_sync_holds_back_an_archive_whose_messages_hold_a_secret(
    remote: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Experiment commits an older gitimprove made from an agent's description that held
    a secret cannot be masked (a message is part of the commit's id, the key of its note):
    sync does not push the archive that would share them, says why, and pushes the rest."""
    from gitimprove.git import archive

    fakes = [f for f in corpus(seed=2718) if "\n" not in f.text][:12]
    old = clone(remote, tmp_path / "old")
    repo = old.open()
    attempts = [
        raw_commit(repo, f"refs/heads/improve/r{n}", {"x.txt": str(n)}, f"experiment(x): {f.text}")
        for n, f in enumerate(fakes)
    ]
    clean = raw_commit(repo, "refs/heads/improve/ok", {"y.txt": "y"}, "experiment(y): a clean one")
    archive.append(repo, [clean])
    assert old.cli("sync").returncode == 0
    assert git(remote, "rev-parse", refs.ARCHIVE) == old.git("rev-parse", refs.ARCHIVE)
    archive.append(repo, attempts)
    assert old.cli("idea", "add", "try a smaller batch").returncode == 0
    res = old.cli("sync")
    assert res.returncode == 0, res.stderr
    assert left_in(all_objects(remote), fakes) == []
    assert "refs/improve/archive not pushed: 12 commit message(s)" in res.stderr, res.stderr
    assert left_in(res.stdout + res.stderr, fakes) == []
    assert git(remote, "rev-parse", refs.MEMORY) == old.git("rev-parse", refs.MEMORY)
    assert git(remote, "rev-parse", refs.ARCHIVE) != old.git("rev-parse", refs.ARCHIVE)
