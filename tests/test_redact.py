"""Redaction: every fake of the corpus is masked whatever the text around it, also when the
text is cut or stored as JSON; real transcripts and the project's own files lose nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gitimprove.redaction import clip, clip_tail, marker, redact, redact_blob, spans
from tests.conftest import ROOT
from tests.secret_corpus import Fake, corpus, windows

FIXTURES = ROOT / "tests" / "fixtures" / "claude-transcripts"
CORPUS = corpus()
MARKERS = re.compile(r"\[REDACTED:[a-z0-9-]+:[0-9a-f]{4}\]")


def leaked(fake: Fake, stored: str) -> list[str]:
    """Pieces of the secret left in `stored` (markers aside: they name the rule)."""
    rest = MARKERS.sub("", stored)
    return [
        w for w in windows(fake.secret) if w in rest and w not in fake.text.replace(fake.secret, "")
    ]


def test_the_corpus_is_large_and_covers_the_families() -> None:
    assert len(CORPUS) >= 70
    assert len({f.family for f in CORPUS}) == len(CORPUS)
    assert len({f.secret for f in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("fake", CORPUS, ids=[f.family for f in CORPUS])
def test_every_fake_is_masked_in_its_own_context(fake: Fake) -> None:
    out = redact(fake.text)
    assert not leaked(fake, out), out
    assert "[REDACTED:" in out
    assert redact(out) == out


@pytest.mark.parametrize("fake", CORPUS, ids=[f.family for f in CORPUS])
def test_every_fake_is_masked_inside_stored_json(fake: Fake) -> None:
    """A record is JSON: escaped newlines and quotes must not hide a secret, and the masked
    record is still valid JSON with every other field intact."""
    record = {"v": 1, "content": f"Bash failed: {fake.text}", "nested": {"tail": [fake.text]}}
    for blob in (
        json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n",
        json.dumps(record, sort_keys=True, indent=2),
    ):
        out = redact_blob(blob.encode()).decode()
        assert not leaked(fake, out), out
        assert json.loads(out)["v"] == 1


@pytest.mark.parametrize("fake", CORPUS, ids=[f.family for f in CORPUS])
def test_a_cut_through_a_secret_leaves_nothing_of_it(fake: Fake) -> None:
    """Text is shortened before it is stored; masking comes first, so a secret straddling
    the cut loses no characters to the kept side."""
    at = fake.text.index(fake.secret) + len(fake.secret) // 2
    head = "x" * (500 - at) + " "
    text = head + fake.text + " " + "y" * 600
    cut = 500 + 1
    assert not leaked(fake, clip(text, cut)), clip(text, cut)
    tail = "z" * 600 + " " + fake.text + " " + "w" * (1500 - (len(fake.text) - at))
    assert not leaked(fake, clip_tail(tail, 1500)), clip_tail(tail, 1500)


def test_cuts_never_split_a_marker() -> None:
    gh = "ghp_" + "k3Jd9QmZ2xW7pL4vB8nR1tY6cF5hG0sA2eU4"
    mark = marker("github-pat", gh)
    for n in range(1, 40):
        head = clip("a" * n + gh + "b" * 100, n + 10)
        # (a marker the cut dropped leaves `…` where it was)
        assert head == "a" * n + "\u2026" or head.endswith(mark) or mark in head, head
        assert len(head) <= n + 10
        tail = clip_tail("a" * 100 + gh + "." + "b" * n, n + 10)
        assert "REDACTED" not in tail or tail.startswith(mark) or mark in tail
        assert len(tail) <= n + 10 and ("REDACTED" in tail or tail == "\u2026." + "b" * n), tail
        # a glued run is masked whole, its marker kept whole or dropped by any cut
        glued = clip_tail("a" * 100 + gh + "b" * n, n + 10)
        assert "REDACTED" not in glued or glued.lstrip("a").startswith("[REDACTED:github-pat:"), (
            glued
        )


def test_a_key_gives_a_json_value_its_context() -> None:
    doc = json.dumps({"user": "bob", "password": "Tr0ub4dor&3x", "DB_PASSWORD": "s3cr3tPw!"})
    out = json.loads(redact_blob(doc.encode()))
    assert out["user"] == "bob"
    assert out["password"].startswith("[REDACTED:password:")
    assert out["DB_PASSWORD"].startswith("[REDACTED:password:")
    escaped = json.dumps({"error": json.dumps({"client_secret": "q8Wv2Lk9Zr4Tm1Xs"})})
    assert "q8Wv2Lk9Zr4Tm1Xs" not in redact_blob(escaped.encode()).decode()


def test_a_document_that_is_not_json_is_masked_as_text() -> None:
    gl = "glpat-" + "Qw3rTy7uIo9pAs2dFg4h"
    md = f'+++\ncreated = "2026-01-02"\n+++\nNever paste {gl} in a prompt\n'
    out = redact_blob(md.encode()).decode()
    assert gl not in out and out.startswith('+++\ncreated = "2026-01-02"\n+++\n')
    mixed = f'{{"v": 1, "ok": true}}\nnot json {gl}\n{{"v": 1, "t": "{gl}"}}\n'
    out = redact_blob(mixed.encode()).decode()
    assert gl not in out
    assert json.loads(out.splitlines()[2])["t"].startswith("[REDACTED:")
    assert redact_blob(b"\xff\xfe binary \x00") == b"\xff\xfe binary \x00"


TRANSCRIPTS = sorted(FIXTURES.glob("*/*.jsonl"))


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, marks=pytest.mark.slow) if p.stat().st_size > 1_000_000 else p
        for p in TRANSCRIPTS
    ],
    ids=[p.name for p in TRANSCRIPTS],
)
def test_real_transcripts_lose_nothing(path: Path) -> None:
    """Every line of the real Claude Code transcripts, stored as the JSON it is (strings
    decoded, keys as context) and as raw text (escapes and all), passes unchanged: none of
    them holds a secret. (The two largest run with the slow set: masking is ~1 MB/s.)"""
    raw = path.read_bytes()
    assert redact_blob(raw) == raw, path.name
    lines = raw.decode().splitlines()
    for line in lines:
        assert redact(line) == line, f"{path.name}: {line[:120]!r}"
    assert len(TRANSCRIPTS) >= 8 and lines


# gitleaks' patterns and the public example keys its allowlists name (rules, not text), and
# the corpus module, which spells out the shape of every fake (a private key JSON field...),
# and the list of the shapes a review found getting through, written out as fakes
RULE_DATA = (
    "gitleaks.toml",
    "gitleaks.json",
    "secret_corpus.py",
    "secret_corpus_tools.py",
    "secret_corpus_program.py",
    "test_redact_tools.py",
    "test_redact_shapes.py",
    "test_redact_program_text.py",
)


def _own_files() -> list[Path]:
    tops = ("gitimprove", "docs", "bench", "scripts", "githooks", "tests")
    files = [ROOT / "README.md", ROOT / "pyproject.toml"]
    for top in tops:
        files += [
            p
            for p in sorted((ROOT / top).rglob("*"))
            if p.is_file()
            and p.suffix in ("", ".py", ".md", ".toml", ".json", ".txt", ".sh", ".1")
            and "fixtures" not in p.parts
            and "__pycache__" not in p.parts
            and p.name not in RULE_DATA
        ]
    return files


# The only secrets in the project's own files: the fakes written out in these tests.
TEST_FAKES = {
    # (templates whose value follows an escape's letter: `"\\n{}"` under a credential's name)
    "tests/test_redact_glued.py": ["\\\\n{}\\\\n", "\\\\n{}"],
    # (the fifth review's fakes, some split by string concatenation)
    "tests/test_redact_review.py": [
        "HRKU-AAbC12dEf3GhI4jKl5MnO6pQr7StU8vWx9Yz0",
        'AQVN" + "1a2b3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXy',
        'CFPAT-" + "x9Y8w7V6u5T4s3R2q1P0o9N8m7L6k5J4i3H2g1F0e9D',
        'KEY0184A1B2C3D4E5F6A7B8C9D0E1F2A3B4_" + "Ab3dEf6hIj9kLm2nOp5qRs',
        "Vb7#qTz2mLx9w",
        "hK4-pRw8nZq2",
        "https://hooks.zapier.com/hooks/catch/1234567/abc9d2e/",
        'sgp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0',
        'sqp_" + "0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b',
        'squ_" + "4f1c9a2b7e3d8c6a5b4f1e2d3c9a8b7e6f5a4b3c',
        'tfp_" + "9Hk3JqL9xW2mZpR7tY5vN8cB4aQ1sD6fG0hJ2kL4zX7cV_1a2B3c',
        'y0_" + "AgAAAABk3JqL9xW2mZpR7tY5vN8cB4aQ1sD6fG0hJ2kL4zX7cV9b',
    ],
    "tests/test_reflect_memory.py": ["abc123secret99"],
    # (forged attempt tokens given as GITIMPROVE_TOKEN: a value under a *_TOKEN name)
    "tests/test_integrity_marks.py": ["gi1:k:r:1:x", "gi1:k:r:{me}:x"],
    "tests/test_integrity_strays.py": ["gi1:0:p:1:00"],
    # (tests split tokens by string concatenation; the decoded view reads them whole)
    "tests/test_redact_calls.py": [
        "Hb4!tQz9mLw2",
        "r7Kq2Zp9Lx4Wv8Nb3Mt6Yc1F",
        "R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW",
        "RdescudvJCsgt3ub+b+dWRWJTmaaJObG",
        "4821",
        # (pieces: the hashes whole would be found here)
        "6BB4837EB74329105EE4568DDA7DC67ED2CA2AD",
        "a3556571e93b0d20722ba62be61e8c2d",
        "31d6cfe0d16ae931b73c59d7e0c089c0",
    ],
    "tests/test_redact.py": [
        "Tr0ub4dor&3x",
        "s3cr3tPw!",
        "q8Wv2Lk9Zr4Tm1Xs",
        "k3Jd9QmZ2xW7pL4vB8nR1tY6cF5hG0sA2eU4",
        "Qw3rTy7uIo9pAs2dFg4h",
    ],
    "tests/test_redact_shapes.py": ["k3Jd9QmZ2xW7pL4vB8nR1tY6cF5hG0sA2eU4"],
    # (a token laid at every place a window of a long view ends)
    "tests/test_secrets_shown.py": [
        'ghp_" + "k3Jd9QmZ2xW7pL4vB8nR1tY6cF5hG0sA2eU4',
        "Hunter2xyz",  # (a password in prose on each row of a long log)
    ],
    "tests/test_secret_rules.py": [
        "1234:5678",
        "Xk3v9Qp2Lm",
        "k3Jd9QmZ2xW7pL4vB8nR1tY6cF5hG0sA2eU4",
        "Q2w3E4r5T6y7U8i9O0p1A2s3D4f5G6h7J8k9",
        "Z9x8C7v6B5n4M3l2K1j0H9g8F7d6S5a4P3o2",
    ],
    "tests/test_redact_wrapped.py": [
        'github_pat_11AQ3ZK7Y0mXvP2s9LtQ4n_" + "Hx7Kc2Vb9Nq4Wm1Zr8Ts5Yp3Lg6Fd0Ja',
        "https://hooks.slack.com/services/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",
        '7123456789:AAH" + "k3Jd9QmZ2xW7pL4vB8nR1tY6cF5hG0sA',
        'SK" + "0f1e2d3c4b5a69788796a5b4c3d2e1f0',
    ],
    "tests/test_redact_real_code.py": [
        "anonymous@",
        "1*tchar",
        "node-cache-Linux-x64-npm-",
        '"Xk3v9Qp2Lm7R"',
        "!vaultXk3v9Qp2Lm",
        "${DB_PASSWORD:-Xk3v9Qp2Lm}",
        "Tr0ub4dor-9x",
        "Xk3v9Qp2Lm7Rt5Wz8Yb4",
        "Xk3v9-Qp2Lm",
    ],
    "tests/test_redact_commands.py": ["s3cr3tC0mmunity{PW2[:3]}"],
    # a template of a braced ODBC password holding `;` (`PWD={{{p};x=y}}` is `PWD={<pw>;x=y}`)
    "tests/test_redact_command_lines.py": ["{{{p};x=y}}"],
    # the cases a file holds one after the other read as one text: a list of strings that
    # pass one by one follows a line naming recovery codes, so its code-like words are read
    # as that list's codes; a CVS root's template with its password; a test's password
    "tests/test_redact_recovery_codes.py": ["sha256sum", "4f8k2-9xq7m", "abcd-1234", "1234 5678"],
    "tests/test_redact_syntaxes.py": ["1234 5678", 'n" + "a1b2c3d4e5'],
    "tests/test_redact_lookalikes.py": ["pserver:anoncvs:{s}"],
    "tests/test_redact_short_keyed.py": ["u8jzP!de0Igx"],
    "tests/test_redact_lines_survive.py": [
        "Xk29vLqPz81Wm",
        "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8Lm2Nv4T",
        "7f3e9b2a4c1d8e6f",
    ],
    "bench/hooks_bench.py": [
        "Hunter2xyz!",
        "q8Wv2Lk9Zr4Tm1Xs9fQ2",
        "ghp_k3Jd9QmZ2xW7pL4vB8nR1tY6cF5hG0sA2eU4",
    ],
}


@pytest.mark.slow
def test_the_projects_own_files_lose_nothing() -> None:
    """Source, docs, scripts, the vendored gitleaks config: each mask found must be one of
    the fakes the tests write out on purpose; everything else passes through unchanged."""
    masks = 0
    for path in _own_files():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        for s in spans(text):
            masks += 1
            found = text[s.start : s.end]
            allowed = TEST_FAKES.get(rel, []) + _literal_fakes(rel, text)
            if rel == "tests/test_redact.py":  # this list itself
                allowed += [f for fakes in TEST_FAKES.values() for f in fakes]
            assert any(found in f or f in found for f in allowed), (rel, s.kind, found[:80])
    assert masks < 90  # every one a listed fake of a test file


def _literal_fakes(rel: str, text: str) -> list[str]:
    """Fakes a test spells out as string literals next to the word that makes them one."""
    if not rel.startswith("tests/"):
        return []
    return re.findall(r"\"((?:ghp|glpat|sk|xox[bp])[-_][^\"]+)\"", text)
