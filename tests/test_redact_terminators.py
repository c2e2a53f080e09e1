"""A provider token ends wherever the next character cannot continue it: gitleaks' rules end
a token at a quote, a blank or `;` (they alert on source files), but a token in a sentence,
in parentheses, markdown, XML, a path, a URL or a CSV row is followed by punctuation."""

from __future__ import annotations

import json
import random
import re

import pytest

from gitimprove import redaction
from gitimprove.redaction import ends, engine
from tests.regex_samples import sample
from tests.secret_corpus import windows

MARKERS = re.compile(r"\[REDACTED:[a-z0-9-]+:[0-9a-f]{4}\]")
# every rule whose token gitleaks ends with its quote/blank/`;` terminator
ENDED = [r for r in engine.load_gitleaks() if engine.TOKEN_END in r.regex]
# what follows a token in prose, markdown, XML, paths, URLs, tables and CSV
TERMINATORS = [".", ",", ")", "]", "|", "*", ":", "<", "/", "&", ">", "}", "!", "?", "#"]


def _found(rule: engine.Rule) -> tuple[str, str]:
    """A sample of the rule's own pattern, cut just after its secret: (text, secret)."""
    rng = random.Random(rule.id + "/end")
    rs = redaction.ruleset()
    for _ in range(300):
        text = sample(rule.regex, rule.flags, rng)
        found = list(rs._rule_spans(rule, text))
        if found:
            start, end = found[0].start, found[0].end
            if start and text[start - 1] in "\"'" and text[end : end + 1] == text[start - 1]:
                end += 1  # a quoted secret is masked inside its quotes: keep the closing one
            return text[:end], text[found[0].start : found[0].end]
    pytest.fail(f"no sample of {rule.id} passes its own entropy and allowlists")


def test_every_ported_terminator_is_widened() -> None:
    assert len(ENDED) >= 140
    with open(engine.GITLEAKS, encoding="utf-8") as fh:
        raw = json.load(fh)["rules"]
    ported = sum(engine.GITLEAKS_END in r["regex"] or ends._AZURE_END in r["regex"] for r in raw)
    assert ported == len(ENDED) + 1
    kept = [r.id for r in engine.load_gitleaks() if engine.GITLEAKS_END in r.regex]
    assert kept == sorted(engine.GENERIC_IDS)  # the catch-all keeps gitleaks' terminator


@pytest.mark.parametrize("rule", ENDED, ids=[r.id for r in ENDED])
def test_a_token_followed_by_punctuation_is_masked(rule: engine.Rule) -> None:
    head, secret = _found(rule)
    ctx = f"{rule.keywords[0]} settings failed to load:\n"
    for end in TERMINATORS:
        for text in (f"{ctx}{head}{end} next", f"{ctx}({head}{end}\n", f"{ctx}{head}{end}"):
            left = MARKERS.sub("", redaction.redact(text))
            leaked = [w for w in windows(secret) if w in left and w not in ctx]
            assert not leaked, (rule.id, end, redaction.redact(text))


def test_a_token_still_ends_at_a_token_character() -> None:
    """`-`, `_`, letters and digits continue a token: a longer run is the token glued to
    what follows it, masked whole (`glued.py`), never cut into a token and a visible rest."""
    assert engine.token_end(engine.GITLEAKS_END) == engine.TOKEN_END
    tok = "dop_v1_" + "3f9a0c4e" * 8
    for ok in (f"({tok})", f"**{tok}**", f"<t>{tok}</t>", f"/k/{tok}/rotate", f"{tok}."):
        assert tok not in redaction.redact(ok), ok
    longer = "x dop_v1_" + "3f9a0c4e" * 9 + "x"
    masked = redaction.redact(longer)
    assert masked.startswith("x [REDACTED:") and masked.endswith("]"), masked
