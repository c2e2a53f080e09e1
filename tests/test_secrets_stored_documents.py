"""A stored document is never masked less than the same text read as plain text.

Records are JSON and are masked string by string (docs/secrets.md), but a rule may read a
credential from the fields around a string (`{"param": "client_secret", "val": "…"}`, a
nested `{"credentials": {"prod": "…"}}`): a JSON line standing in a document (a learning's
Markdown written by an older gitimprove, a note line, the document itself) must lose its
secrets all the same. Checked over the fake corpus at several seeds, then end to end:
records an older gitimprove stored with plain git, `doctor --secrets --repair`, the
history dropped as docs/secrets.md says, and a fresh clone holds no piece of any fake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitimprove.git import memory, refs
from gitimprove.redaction import redact, redact_blob
from tests.conftest import TmpRepo, git
from tests.secret_corpus import Fake, corpus
from tests.test_secrets_writers import all_objects, left_in


def _documents(f: Fake) -> list[str]:
    return [
        f.text,
        f"+++\ncategory = 'x'\n+++\n{f.text}\n",
        f"{f.text}\n{f.text}\n",
        json.dumps({"content": f.text}) + "\n" + f.text + "\n",
    ]


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("seed", [3, 1515, 90210])
@pytest.mark.slow
def test_a_document_masks_what_its_text_masks(seed: int) -> None:
    missed = []
    for f in corpus(seed=seed):
        if f.secret[:10] in redact(f.text):
            continue  # the text itself keeps it: a rule's gap, not the document's
        for doc in _documents(f):
            out = redact_blob(doc).decode()
            if f.secret[:10] in out:
                missed.append(f"{f.family}: {doc[:60]!r}")
                break
            if _is_json(doc):
                assert json.loads(out) is not None  # a JSON document stays valid JSON
    assert missed == []


def test_ordinary_json_records_pass_unchanged() -> None:
    head = "4f7cf13976a1b2c3d4e5f60718293a4b5c6d7e8f"
    for record in (
        {"v": 1, "op": "create", "commit": head, "tree": head, "metric_hash": head + head[:24]},
        {"param": "batch_size", "val": "64"},
        {"credentials": {"prod": "see the vault"}},
        {"session_key": "a1b2c3d4e5f60718", "import_id": "0123456789abcdef"},
        {"description": '"token": "<your token here>"'},
    ):
        text = json.dumps(record) + "\n"
        assert redact_blob(text).decode() == text


def _plain_git_commit(repo: TmpRepo, ref: str, files: dict[str, str], message: str) -> None:
    """A commit made with git's own plumbing, as an older gitimprove stored its records."""

    def tree(prefix: str) -> str:
        kids: dict[str, list[tuple[str, str]]] = {}
        for path, oid in blobs.items():
            if path.startswith(prefix):
                head, _, rest = path[len(prefix) :].partition("/")
                kids.setdefault(head, []).append((rest, oid))
        lines = [
            f"100644 blob {items[0][1]}\t{name}"
            if items == [("", items[0][1])]
            else f"040000 tree {tree(prefix + name + '/')}\t{name}"
            for name, items in kids.items()
        ]
        return git_in(["mktree"], "\n".join(lines) + "\n")

    def git_in(args: list[str], data: str) -> str:
        import subprocess

        res = subprocess.run(
            ["git", *args], cwd=repo.path, input=data, capture_output=True, text=True, check=True
        )
        return res.stdout.strip()

    blobs = {p: git_in(["hash-object", "-w", "--stdin"], d) for p, d in files.items()}
    commit = repo.git("commit-tree", tree(""), "-m", message)
    repo.git("update-ref", ref, commit)


@pytest.mark.slow
def test_repair_masks_json_lines_an_older_gitimprove_stored(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    fakes = corpus(seed=4711)
    shaped = [f for f in fakes if f.text.startswith("{") and "\n" not in f.text]
    assert len(shaped) >= 10
    tmp_repo.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n'})
    files = {"FORMAT": memory.FORMAT_TEXT}
    for n, f in enumerate(shaped):
        files[f"learnings/2026/01/l{n}.md"] = f"+++\ncategory = 'x'\n+++\n{f.text}\n"
        files[f"proposals/2026/01/p{n}.md"] = f"# a proposal\n\n{f.text}\n\nContext: x\n"
    _plain_git_commit(tmp_repo, refs.MEMORY, files, "gitimprove: memory")
    head = tmp_repo.git("rev-parse", "HEAD")
    tmp_repo.git("notes", "--ref=improve", "add", "-m", "\n".join(f.text for f in shaped), head)
    found = tmp_repo.cli("doctor", "--secrets")
    assert found.returncode == 1 and left_in(found.stdout + found.stderr, shaped) == []
    assert f"{2 * len(shaped) + 1} record(s) hold a secret" in found.stdout
    repaired = tmp_repo.cli("doctor", "--secrets", "--repair", "--drop-history")
    assert "masked in a new commit" in repaired.stdout, repaired.stdout
    assert "held secrets; each is now one commit" in repaired.stdout, repaired.stdout
    # the history, dropped as docs/secrets.md says (these refs were never pushed)
    for ref in (refs.NOTES, refs.MEMORY):
        assert tmp_repo.git("rev-list", "--count", ref) == "1"
    after = tmp_repo.cli("doctor", "--secrets")
    assert "[ok ] refs:" in after.stdout and "secrets in history" not in after.stdout
    tmp_repo.git("reflog", "expire", "--expire=now", "--all")
    tmp_repo.git("gc", "-q", "--prune=now")
    assert left_in(all_objects(tmp_repo.path), shaped) == []
    clone = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", "--no-local", str(tmp_repo.path), str(clone))
    git(
        clone, "fetch", "-q", "origin", f"{refs.NOTES}:{refs.NOTES}", f"{refs.MEMORY}:{refs.MEMORY}"
    )
    assert left_in(all_objects(clone), shaped) == []
    # every record is still there
    names = git(clone, "ls-tree", "-r", "--name-only", refs.MEMORY).splitlines()
    assert len(names) == 2 * len(shaped) + 1


def test_drop_history_leaves_a_pushed_ref_as_it_is(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    """A ref this clone knows was pushed keeps its history (the remote and other clones
    have it; a sync would merge it back): doctor says so and changes nothing there."""
    fake = corpus(seed=27)[0]
    tmp_repo.commit("initial", {"a.txt": "a\n"})
    head = tmp_repo.git("rev-parse", "HEAD")
    tmp_repo.git("notes", "--ref=improve", "add", "-m", fake.text, head)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    tmp_repo.git("remote", "add", "origin", str(remote))
    tmp_repo.git("push", "-q", "origin", refs.NOTES)  # as an older gitimprove's sync did
    tmp_repo.git(
        "fetch", "-q", "origin", f"+{refs.NOTES}:refs/improve/remotes/origin/notes/improve"
    )
    res = tmp_repo.cli("doctor", "--secrets", "--repair", "--drop-history")
    assert "was not dropped: it was pushed to origin" in res.stdout, res.stdout
    assert tmp_repo.git("rev-list", "--count", refs.NOTES) == "2"  # the masking commit on top
    assert fake.secret[:10] not in res.stdout + res.stderr


def test_drop_history_needs_secrets_and_repair(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("initial", {"a.txt": "a\n"})
    res = tmp_repo.cli("doctor", "--drop-history")
    assert res.returncode != 0 and "needs --secrets --repair" in res.stderr
    assert "Traceback" not in res.stderr


def test_views_of_records_an_older_gitimprove_stored_show_them_masked(tmp_repo: TmpRepo) -> None:
    """Learnings and ideas stored unmasked (plain git, before any repair) are masked in
    MEMORY.md written into the work tree (one `git add` from a commit) and in `idea list`."""
    fakes = [f for f in corpus(seed=6174) if "\n" not in f.text][:40]
    tmp_repo.commit("initial", {"a.txt": "a\n"})
    files = {"FORMAT": memory.FORMAT_TEXT}
    for n, f in enumerate(fakes):
        files[f"learnings/2026/01/l{n}.md"] = (
            f"+++\ncreated = '2026-01-01T00:00:00Z'\ncategory = 'gotcha'\nscope = 'project'\n"
            f"+++\n{f.text}\n"
        )
        files[f"ideas/2026/01/i{n}.json"] = json.dumps(
            {"text": f.text, "ts": "2026-01-01T00:00:00Z"}
        )
    _plain_git_commit(tmp_repo, refs.MEMORY, files, "gitimprove: memory")
    wrote = tmp_repo.cli("memory", "-o", "MEMORY.md")
    assert wrote.returncode == 0, wrote.stderr
    shown = (tmp_repo.path / "MEMORY.md").read_text(encoding="utf-8")
    assert shown.count("[REDACTED:") >= len(fakes) // 2  # the learnings are in it
    assert left_in(shown, fakes) == []
    listed = tmp_repo.cli("idea", "list")
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == len(fakes)
    assert left_in(listed.stdout, fakes) == []
