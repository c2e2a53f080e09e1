"""Records an older gitimprove stored unmasked (written here with raw pygit2 around the
redactor) are shown masked by every view until `doctor --secrets --repair` runs: `log` and
its exports, `show`, `status`, `idea list`, `memory`, `signal list` and `reflect`; stderr says once that stored records
hold secrets and names the command that masks them."""

from __future__ import annotations

import json
import re
from itertools import pairwise
from pathlib import Path

import pytest

from gitimprove.git import memory, refs
from tests.conftest import TmpRepo
from tests.secret_corpus import Fake, corpus
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
        "signals/2026/01/s.json": json.dumps(
            {
                "id": "SIG-s",
                "type": "gotcha",
                "status": "captured",
                "session": "s1",
                "content": FAKES[23].text,
                "context": FAKES[24].text,
            }
        ),
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
        ("signal", "list"),
        ("signal", "list", "--json"),
        ("reflect", "--list"),
        ("reflect", "--list", "--json"),
    ],
    ids=lambda a: "-".join(a),
)
def test_every_view_shows_stored_secrets_masked_and_says_so_once(
    stored: TmpRepo, args: tuple[str, ...]
) -> None:
    res = stored.cli(*args)
    assert res.returncode == 0, res.stderr
    assert not left_in(res.stdout, FAKES[:25]), res.stdout
    assert not left_in(res.stderr, FAKES[:25]), res.stderr
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


def _pytest_log(fakes: list[Fake], size: int) -> str:
    """A failing test run's output of about `size` characters, `fakes` scattered in it."""
    import random

    rng = random.Random(1414)
    ordinary = [
        "tests/test_parser.py::test_roundtrip[case-{}] PASSED      [ {}%]",
        "        result = run(['git', 'status'], cwd=tmp_path, check=True)",
        "E       AssertionError: expected 3 rows, got {}",
        "src/app/models.py:{}: in load",
        "    return self._cache[key]",
        "FAILED tests/test_api.py::test_login - KeyError: 'user_id'",
    ]
    lines: list[str] = []
    while sum(map(len, lines)) < size:
        lines.append(rng.choice(ordinary).format(rng.randint(1, 999), rng.randint(1, 99)))
    for fake in fakes:
        lines.insert(rng.randrange(len(lines)), fake.text)
    return "\n".join(lines) + "\n"


def test_a_long_view_is_masked_as_a_stored_record_is() -> None:
    """A view longer than `WHOLE` (a guard's failing output, a long memory) goes through the
    whole redactor too, in windows: every fake of the corpus is masked there, those with no
    cue on their own line (`ENV DB_PASSWORD …`, a `.netrc` block, a heredoc's body) too."""
    from gitimprove.redaction.display import WHOLE, mask_lines

    fakes = corpus(seed=1414)
    assert len(fakes) >= 400
    text = _pytest_log(fakes, 20_000)
    assert len(text) > 6 * WHOLE
    assert not left_in(mask_lines(text), fakes)
    plain = _pytest_log([], 20_000)
    assert mask_lines(plain) == plain and mask_lines(plain, rows=True) == plain


def test_a_long_log_is_masked_a_row_at_a_time_as_its_records_were() -> None:
    """`log` (one record a row) sends every row of a long output through the whole redactor:
    a password in plain prose is masked there as in any other view."""
    from gitimprove.redaction import redact
    from gitimprove.redaction.display import WHOLE, mask_lines

    fakes = [f for f in corpus(seed=1414) if "\n" not in f.text]
    rows = [f"{i}\tcb4f2ac\t0.91\tpass\tkeep\t{f.text}\n" for i, f in enumerate(fakes)]
    text = "iteration\tcommit\tmetric\tguard\tstatus\tdescription\n" + "".join(rows)
    assert len(text) > 4 * WHOLE
    out = mask_lines(text, rows=True)
    alone = "".join(map(redact, text.splitlines(keepends=True)))
    kinds = re.compile(r"\[REDACTED:[a-z0-9-]+:")  # (a tie between two rules names either)
    assert kinds.sub("[", out) == kinds.sub("[", alone)
    assert not left_in(out, fakes)
    prose = "".join(
        f"{i}\tcb4f2ac\t0.91\tpass\tkeep\tthe password is Hunter2xyz{i}\n" for i in range(300)
    )
    assert "Hunter2xyz" not in mask_lines(prose, rows=True)


def test_log_remembers_clean_rows_only(tmp_path: Path) -> None:
    """The digests `log` keeps between renders are those of rows the redactor left as they
    were: a row holding a secret is masked again at every render, never remembered; a file
    of another version or damaged is not read."""
    from gitimprove.redaction.display import WHOLE, mask_lines, row_digest
    from gitimprove.state import logview
    from gitimprove.util.gitdir import Location

    secret = FAKES[0]
    rows = [f"{i}\tcb4f2ac\t0.91\tpass\tkeep\tattempt {i}\n" for i in range(400)]
    rows.append(f"400\tcb4f2ac\t0.91\tpass\tkeep\t{secret.text}\n")
    text = "".join(rows)
    assert len(text) > WHOLE
    clean: set[bytes] = set()
    first = mask_lines(text, rows=True, clean=clean)
    assert clean == {row_digest(r) for r in rows[:-1]}
    assert mask_lines(text, rows=True, clean=clean) == first
    assert not left_in(first, [secret])
    loc = Location(str(tmp_path), str(tmp_path), None)
    logview._keep_clean_rows(loc, clean)
    assert logview._clean_rows(loc) == clean
    kept = tmp_path / "improve" / "cache" / "log-clean-rows"
    kept.write_bytes(kept.read_bytes()[:-1])
    assert logview._clean_rows(loc) == set()
    kept.write_bytes(kept.read_bytes().replace(b"gitimprove-clean-rows", b"gitimprove-clean-rowz"))
    assert logview._clean_rows(loc) == set()


def test_windows_overlap_by_a_margin_and_cover_the_text() -> None:
    """A secret up to `MARGIN` long lies whole in one window, whatever the lines around it."""
    from gitimprove.redaction import MARGIN, _windows, redact_windows

    for text in ("a\n" * 50_000, "x" * 100_000, ("y" * 3000 + "\n") * 40):
        spans = list(_windows(text, 16384))
        assert spans[0][0] == 0 and spans[-1][1] == len(text)
        assert all(b - a <= 16384 for a, b in spans)
        assert all(a2 <= b1 - MARGIN and a2 > a1 for (a1, b1), (a2, _) in pairwise(spans))
    # a token at every place a window ends
    token = "ghp_" + "k3Jd9QmZ2xW7pL4vB8nR1tY6cF5hG0sA2eU4"[:36]
    filler = "ordinary text of a log line\n" * 800
    for at in range(16384 - 40, 16384 + 4, 7):
        text = filler[:at] + token + filler[at:]
        assert token[4:16] not in redact_windows(text, 16384)


def test_a_long_log_sends_every_row_a_secret_can_be_on_to_the_redactor() -> None:
    """A long `log` masks only the rows `_suspect` picks (the whole redactor on ten thousand
    rows would take seconds: DESIGN §13's cold `log`): every row of the corpus and of
    gitleaks' samples that the redactor masks is among them, prose and drawn passwords
    included; an ordinary row of a TSV, its guard's "pass" included, is not."""
    from gitimprove.redaction import redact
    from gitimprove.redaction.display import _suspect
    from tests.secret_corpus_gitleaks import gitleaks_fakes

    masked = [
        row
        for fake in corpus(15) + gitleaks_fakes()
        for row in fake.text.splitlines()
        if redact(row) != row
    ]
    assert len(masked) > 500
    assert [row for row in masked if not _suspect(row)] == []
    ordinary = "7\t2026-11-25T03:57:36Z\tcb4f2ac\t99.993\t-0.001\tpass\t-\tdiscard\tattempt 7\n"
    assert not _suspect(ordinary)
    assert _suspect(ordinary.replace("attempt 7", "the admin password is " + "hunter" + "2"))
