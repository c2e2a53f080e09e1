"""The hot hooks do not mask: they keep the raw window a masked cut looks at, and the flush
masks then cuts. What the flush gives must be exactly what masking at once gave
(`clip` / `clip_tail`), whatever the text: secrets straddling the cut or the window's edge,
private keys that shrink when masked, markers cut in two."""

from __future__ import annotations

import json
import random

import pytest

from gitimprove.memory import capture, deferred
from gitimprove.redaction import MARGIN, clip, clip_tail
from tests.secret_corpus import Fake, corpus, windows

FAKES = corpus(seed=1414)
LIMITS = (60, 200, 300, 500, 2000)
MARK = "[REDACTED:github-pat:3f2a]"


def _filler(rng: random.Random, n: int) -> str:
    words = ("ok", "Traceback", "line", "error:", "at", "src/app.py:12", "\n", "value", "=")
    out: list[str] = []
    size = 0
    while size < n:
        w = rng.choice(words)
        out.append(w)
        size += len(w) + 1
    return " ".join(out)[:n]


def _pem(rng: random.Random, lines: int) -> str:
    import base64

    body = "\n".join(base64.b64encode(rng.randbytes(48)).decode() for _ in range(lines))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"


def _texts() -> list[tuple[str, int]]:
    """(text, limit): a secret (or a key, or a marker) laid across every point a cut or a
    window's edge falls on, from either end, in texts shorter and far longer than a window."""
    rng = random.Random(14)
    out: list[tuple[str, int]] = []
    for n in range(240):
        limit = LIMITS[n % len(LIMITS)]
        fake = FAKES[(n * 11) % len(FAKES)]
        piece = fake.text
        kind = n % 6
        if kind == 4:
            piece = _pem(rng, rng.choice((3, 40, 120)))
        elif kind == 5:
            piece = MARK
        # where the piece's middle lies: the cut, half a margin past it (where a longer
        # text's window is cut), the window's edge, or anywhere
        point = rng.choice(
            (limit, limit + MARGIN // 2, limit + MARGIN, rng.randrange(0, limit + MARGIN + 50))
        )
        before = max(0, point - len(piece) // 2 + rng.randrange(-3, 4))
        after = rng.choice((0, 10, MARGIN, 3 * MARGIN))
        text = _filler(rng, before) + piece + _filler(rng, after)
        if n % 2:  # the same, from the end (clip_tail)
            text = _filler(rng, after) + piece + _filler(rng, before)
        out.append((text, limit))
    return out


CASES = _texts()


def _through_spool(expr: dict[str, object]) -> dict[str, object]:
    """An expression as a spool file holds it (JSON text) and a flush reads it back."""
    back: dict[str, object] = json.loads(json.dumps(expr, ensure_ascii=False))
    return back


@pytest.mark.slow
@pytest.mark.parametrize("tail", [False, True], ids=["head", "tail"])
def test_a_deferred_cut_is_exactly_the_masked_cut(tail: bool) -> None:
    cases = CASES[1::2] if tail else CASES[0::2]
    assert sum(len(t) > lim + MARGIN for t, lim in cases) >= 20  # windowed texts are there
    for text, limit in cases:
        expected = clip_tail(text, limit) if tail else clip(text, limit)
        expr = _through_spool(deferred.cut(text, limit, tail=tail))
        assert len(str(expr["text"])) <= limit + MARGIN  # a hook keeps a window, no more
        assert deferred.render(expr) == expected, (limit, text[:80])


def test_what_the_hooks_keep_is_masked_at_the_flush() -> None:
    """Through a real cut, each secret laid across the cut leaves nothing of itself."""
    for fake in FAKES[:80]:
        at = fake.text.index(fake.secret) + len(fake.secret) // 2
        text = "x" * (500 - at) + fake.text + " tail"
        out = deferred.render(_through_spool(deferred.cut(text, 500)))
        assert out == clip(text, 500)
        assert not any(w in out for w in windows(fake.secret)), (fake.family, out)


def _signal(content: object, context: object, defer: bool) -> dict[str, object]:
    return capture.make_signal(
        type_="failure",
        content=content,  # type: ignore[arg-type]
        context=context,  # type: ignore[arg-type]
        session="s",
        hook="PostToolUseFailure",
        now="2026-11-20T10:00:00.000000Z",
        defer=defer,
    )


@pytest.mark.slow
def test_a_deferred_signal_finishes_as_the_signal_made_at_once() -> None:
    """The tool-failure signal as the hook spools it (the tool's name, then the error cut at
    500, all cut at 2,000; the command cut at 300), finished at the flush, is the very signal
    masking at once gave."""
    rng = random.Random(7)
    for n, (text, _) in enumerate(CASES[:120]):
        tool = rng.choice(("Bash", "  Bash", "mcp__db__query", " ", "", " \n" * 3000 + "T" * 7000))
        command = FAKES[n % len(FAKES)].text + " " + "y" * rng.randrange(0, 400)
        now = _signal(f"{tool} failed: {clip(text.strip(), 500)}", clip(command, 300), False)
        spooled = _signal(
            [deferred.head(f"{tool} failed: ", 2000), deferred.cut(text.strip(), 500)],
            [deferred.cut(command, 300)],
            True,
        )
        assert spooled["content"] == spooled["context"] == ""  # nothing shown before the flush
        later = deferred.finish(json.loads(json.dumps(spooled)))
        assert {**later, "id": ""} == {**now, "id": ""}


def test_an_entry_a_hook_did_not_write_is_masked_not_dropped() -> None:
    """A spool file whose deferred field is not one a hook writes keeps its text, masked."""
    fake: Fake = FAKES[3]
    entry = {"v": 1, "id": "SIG-x", "content": "", "raw": {"content": {"cut": "x", "t": fake.text}}}
    out = deferred.finish_entry(json.dumps(entry).encode()).decode()
    assert "raw" not in json.loads(out)
    assert "[REDACTED:" in out and not any(w in out for w in windows(fake.secret))
    assert deferred.finish_entry(b"not json") == b"not json"  # left to the blob redactor
