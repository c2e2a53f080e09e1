"""Records an older gitimprove stored unmasked (written here with raw pygit2 around the
redactor) are shown masked by every view until `doctor --secrets --repair` runs: `log` and
its exports, `show`, `status`, `idea list` and `memory`; stderr says once that stored records
hold secrets and names the command that masks them."""

from __future__ import annotations

import json

import pytest

from gitimprove.git import memory, refs
from tests.conftest import TmpRepo
from tests.secret_corpus import corpus
from tests.test_secrets_doctor import raw_commit
from tests.test_secrets_writers import left_in

FAKES = corpus(seed=1414)[:40]
REPAIR = "git improve doctor --secrets --repair"


@pytest.fixture
def stored(tmp_repo: TmpRepo) -> TmpRepo:
    head = tmp_repo.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n'})
    repo = tmp_repo.open()
    lines = [
        {
            "v": 1,
            "op": "create",
            "ts": "2026-01-01T00:00:00Z",
            "run": "r1",
            "round": 1,
            "status": "keep",
            "value": 1.0,
            "description": " ; ".join(f.text for f in FAKES[:20]),
            "hypothesis": FAKES[20].text,
        }
    ]
    note = "".join(json.dumps(x) + "\n" for x in lines)
    raw_commit(repo, refs.NOTES, {f"{head[:2]}/{head[2:]}": note}, "notes")
    entries = {
        "FORMAT": memory.FORMAT_TEXT,
        "ideas/2026/01/c.json": json.dumps({"id": "IDEA-c", "text": FAKES[21].text}),
        "learnings/2026/01/b.md": f"+++\ncategory = 'command'\n+++\n{FAKES[22].text}\n",
    }
    raw_commit(repo, refs.MEMORY, entries, "memory")
    return tmp_repo


@pytest.mark.parametrize(
    "args",
    [
        ("log",),
        ("log", "--format", "tsv"),
        ("log", "--format", "jsonl"),
        ("log", "--format", "karpathy"),
        ("log", "--no-cache"),
        ("show", "HEAD"),
        ("show", "--json", "HEAD"),
        ("status", "--run", "r1"),
        ("idea", "list"),
        ("memory",),
    ],
    ids=lambda a: "-".join(a),
)
def test_every_view_shows_stored_secrets_masked_and_says_so_once(
    stored: TmpRepo, args: tuple[str, ...]
) -> None:
    res = stored.cli(*args)
    assert res.returncode == 0, res.stderr
    assert not left_in(res.stdout, FAKES[:23]), res.stdout
    assert not left_in(res.stderr, FAKES[:23]), res.stderr
    assert "[REDACTED:" in res.stdout
    assert res.stderr.count(REPAIR) == 1, res.stderr
    if args[-1] == "jsonl" or "--json" in args:
        for line in res.stdout.splitlines():
            json.loads(line)  # still JSON


def test_a_second_log_from_the_cache_is_masked_too(stored: TmpRepo) -> None:
    first = stored.cli("log", "--format", "tsv")
    again = stored.cli("log", "--format", "tsv")
    assert again.stdout == first.stdout and not left_in(again.stdout, FAKES[:23])
    assert again.stderr.count(REPAIR) == 1


def test_after_the_repair_the_views_say_nothing(stored: TmpRepo) -> None:
    stored.cli("doctor", "--secrets", "--repair")
    for args in (("log",), ("show", "HEAD"), ("idea", "list"), ("memory",)):
        res = stored.cli(*args)
        assert REPAIR not in res.stderr, (args, res.stderr)
        assert not left_in(res.stdout, FAKES[:23])


def test_a_short_view_is_masked_as_a_stored_record_is() -> None:
    """`show`, `status`, `idea list`: a short text goes through the whole redactor, so a
    secret with no cue on its own line (a heredoc's body, a `.netrc` line, a tool's
    output after its command) is masked as it would have been when stored."""
    from gitimprove.redaction import redact
    from gitimprove.redaction.display import WHOLE, mask_lines

    fakes = corpus(seed=1414)
    assert len(fakes) >= 400
    shown = [f for f in fakes if len(f.text) < WHOLE]
    assert not [f.family for f in shown if mask_lines(f.text) != redact(f.text)]
    lines = [json.dumps({"description": f.text}) + "\n" for f in shown[:50]]
    out = mask_lines("".join(lines), json_lines=True)
    assert not left_in(out, shown[:50]), out
    assert [json.loads(line)["description"] for line in out.splitlines()]
    plain = (
        "commit 3f2a9c0\nstatus  keep\nvalue   0.9132 (was 0.9201)\ndescription: retry the parser\n"
    )
    assert mask_lines(plain) == plain
