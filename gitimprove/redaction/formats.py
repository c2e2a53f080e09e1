"""Provider token formats that need no keyword beside them, and wallet seed phrases.

Each format names itself by a prefix or a fixed shape (SonarQube `squ_`, Segment `sgp_`,
Contentful `CFPAT-`, HubSpot `pat-na1-<uuid>`, Typeform `tfp_`, Yandex `AQVN…` / `y0_…`,
Telnyx `KEY<hex>_…`, Braintree `access_token$production$…$…`, a Zapier hook URL, an Azure AD
client secret `…8Q~…`), so the token is masked wherever it stands, whatever follows it.

A BIP-39 seed phrase (12 to 24 words of the BIP-39 English list, `resources/secrets/
bip39-english.txt`) is the whole of a wallet's key: twelve or more consecutive list words,
separated by blanks, commas or line breaks and optionally numbered (`1. abandon 2. ability`),
are masked as one. Ordinary prose is never twelve list words in a row: it needs words the
list leaves out (`the`, `and`, `to`, `is`, `of`).
"""

from __future__ import annotations

import itertools
import os
import re

from gitimprove.redaction.engine import DATA, SPECIFIC, Rule, compiled

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# a run holding a digit: `[\w-]{n,}` alone would take an identifier after the prefix
_D = r"(?=[\w-]*\d)"

RULES: list[Rule] = [
    Rule("sonarqube-token", r"\bsq[uap]_[0-9a-f]{40}\b", ("squ_", "sqa_", "sqp_")),
    Rule("segment-public-api-token", r"\bsgp_" + _D + r"[A-Za-z0-9]{30,}\b", ("sgp_",)),
    Rule("contentful-pat", r"\bCFPAT-" + _D + r"[\w-]{40,}", ("cfpat-",)),
    Rule(
        "hubspot-private-app-token",
        r"\bpat-(?:na|eu|ap)\d{1,2}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
        ("pat-na", "pat-eu", "pat-ap"),
    ),
    Rule("typeform-pat", r"\btfp_" + _D + r"[\w.=-]{40,}", ("tfp_",)),
    Rule("yandex-api-key", r"\bAQVN[\w-]{35,38}(?![\w-])", ("aqvn",)),
    Rule("yandex-oauth-token", r"\by[0-3]_" + _D + r"[\w-]{40,}", ("y0_", "y1_", "y2_", "y3_")),
    Rule("telnyx-api-key", r"\bKEY[0-9A-F]{26,40}_[A-Za-z0-9]{16,}\b", ("key",)),
    Rule(
        "braintree-access-token",
        r"\baccess_token\$(?:production|sandbox|development|qa)\$[0-9a-z]{8,}\$[0-9a-f]{20,}\b",
        ("access_token$",),
    ),
    Rule(
        "zapier-webhook-url",
        r"(?:https?://)?hooks\.zapier\.com/hooks/(?:catch|standard)/\d+/[A-Za-z0-9]+/?",
        ("hooks.zapier.com",),
    ),
    Rule(
        # three characters, a digit and `Q~`, then 31 to 34 more: however it ends (`:`, `.`)
        "azure-ad-client-secret",
        r"(?<![\w~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{29,34}[A-Za-z0-9_~-](?![\w~-])",
        ("q~",),
    ),
]

_words: frozenset[str] | None = None


def bip39_words() -> frozenset[str]:
    global _words
    if _words is None:
        with open(os.path.join(DATA, "bip39-english.txt"), encoding="utf-8") as fh:
            _words = frozenset(w.strip() for w in fh if w.strip())
    return _words


SEED_MIN = 12
# a word, maybe numbered (`3.`, `3)`); words apart by blanks, a comma or a line break
# (quoted in a list, `["abandon", "ability", …]`; joined by `-` or ` | `; a YAML list's items)
_WORD = r"(?:\d{1,2}[.):]?[ \t]*)?[\"']?[a-z]{3,8}[\"']?"
# (never empty: a run of letters is one word; a line break may follow or precede a `-`)
# (a `|` between blanks only: `…|next` and `; echo done` end a phrase)
# (each word with its separator taken whole, `(?>…)`: blanks split between the `[ \t]*` in
# every way made a run of short words on a line take exponential time)
_SEP = r"(?=[ \t,\r\n-])[ \t]*(?:,|-|(?<=[ \t])\|(?=[ \t]))?[ \t]*(?:\r?\n[ \t]*-?[ \t]*)?"
_RUN = r"(?<![\w-])(?>" + _WORD + _SEP + r"){11,}" + _WORD + r"(?![\w-])"
_ONE = r"(?:\d{1,2}[.):]?[ \t]*)?[\"']?([a-z]{3,8})(?![a-z0-9_])"


def _seed_phrases(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    """The runs of `SEED_MIN` or more consecutive list words in a run of short words."""
    known = bip39_words()
    text = m.string
    run: list[tuple[int, int, str]] = []
    for w in re.finditer(_ONE, text[m.start() : m.end()]):
        at = m.start()
        if w.group(1) in known:
            quoted = text[at + w.start()] in "\"'"  # a quoted word: its quotes stay
            run.append((at + (w.start(1) if quoted else w.start()), at + w.end(), w.group(1)))
            continue
        yield from _phrase(run)
        run = []
    yield from _phrase(run)


def _phrase(run: list[tuple[int, int, str]]) -> Iterable[tuple[int, int]]:
    # a phrase repeats few words (twelve times `yes` is not one), and is in no order: the
    # word list itself, or a piece of it, is in alphabetical order (a random phrase has
    # about half its neighbours in order)
    found = [w for _, _, w in run]
    ascending = sum(a <= b for a, b in itertools.pairwise(found))
    if len(run) < SEED_MIN or ascending >= (len(found) - 1) * 0.85:
        return  # (nearly) in order: the list, or a piece of it next to another word
    if len(set(found)) * 3 >= len(run) * 2:
        yield run[0][0], run[-1][1]


def may_hold_phrase(text: str) -> bool:
    """Whether `text` holds `SEED_MIN` list words at all: a set lookup per short word, so a
    text that is no phrase never compiles or runs the phrase's pattern."""
    if len(text) < SEED_MIN * 4 - 1:
        return False
    known = bip39_words()
    n = 0
    for w in compiled(r"(?<![a-z])[a-z]{3,8}(?![a-z])", 0).findall(text):
        if w in known:
            n += 1
            if n >= SEED_MIN:
                return True
    return False


# words are apart by a blank, a tab, a comma or a line break: one of them is the keyword,
# and `may_hold_phrase` the real prefilter
RULES.append(
    Rule(
        "seed-phrase",
        _RUN,
        (" ", "\t", ",", "\n"),
        expand=_seed_phrases,
        priority=SPECIFIC,
        gate=may_hold_phrase,
    )
)
