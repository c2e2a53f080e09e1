"""What a results file means but does not say: which way is better, and which zeros are no
measurement. Pure, shared by the TSV and JSONL readers.

Direction. Only the plugin's `# metric_direction` line and pi's `config` line state it. When a
file states none, the kept rows tell: each keep is an improvement, so the sign of its `delta`
(the file's own, where it has one) or of its change from the previous kept value says which way
is better. Discards speak only when no keep does (a discard may have been better and still
refused, by its guard). A direction is inferred only when nearly all votes agree (4 in 5), or
two in three do and the kept values went that way from first to last; otherwise it stays
unknown, and nothing writes one.

Zeros. Karpathy's `program.md` logs a run that crashed as `0.000000` with memory `0.0`; forks
log runs aborted before validation the same way under `discard`. A zero is no value when the
row was not kept and it says so (its status, or any text cell: "aborted", "crash", "OOM",
"timed out", …), or when every number of the row is zero in a file whose measured rows never
are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

KEPT = frozenset({"baseline", "keep", "keep-reworked"})
NOT_MEASURED_STATUS = frozenset({"crash", "timeout", "metric-error", "pending"})
AGREEMENT = 0.8  # the share of votes one direction needs
MAJORITY = 2 / 3  # ... or this share, when the kept line went that way overall

_NOT_MEASURED = re.compile(
    r"\b(?:abort(?:ed|s)?|crash(?:ed|es)?|oom|out of memory|timed? ?out|time ?limit|killed|"
    r"not (?:measured|evaluated|validated|run|scored)|never (?:ran|finished|measured)|"
    r"no (?:result|measurement|metric|score|value)s?|did ?n[o']?t (?:run|finish|complete)|"
    r"fail(?:ed|ure|s)?|errors?|exception|diverged|nan|skipped|incomplete|interrupted)\b",
    re.IGNORECASE,
)


def says_not_measured(texts: Iterable[str]) -> bool:
    """Whether a row's words say it has no measurement ("Aborted before validation")."""
    return any(_NOT_MEASURED.search(t) for t in texts if t)


@dataclass(frozen=True)
class Evidence:
    """One row, as direction inference sees it."""

    status: str  # gitimprove's status
    value: float | None
    delta: float | None = None  # the file's own delta column, signed, when it has one


def infer_direction(rows: Sequence[Evidence]) -> str | None:
    """Which way is better when the kept rows agree on it, else None (unknown): nearly all
    keeps moved one way, or most did and the kept line went that way overall."""
    votes = _votes(rows, keeps=True)
    trend = _trend(rows) if votes else 0
    if not votes:
        votes = _votes(rows, keeps=False)
    if not votes:
        return None
    higher = sum(1 for v in votes if v > 0)
    lower = len(votes) - higher
    share = AGREEMENT * len(votes)
    if higher >= share or (trend > 0 and higher >= MAJORITY * len(votes)):
        return "higher"
    if lower >= share or (trend < 0 and lower >= MAJORITY * len(votes)):
        return "lower"
    return None


def _trend(rows: Sequence[Evidence]) -> int:
    """+1 when the last kept value is above the first, -1 when below, else 0."""
    kept = [r.value for r in rows if r.status in KEPT and r.value is not None]
    if len(kept) < 2 or kept[-1] == kept[0]:
        return 0
    return 1 if kept[-1] > kept[0] else -1


def _votes(rows: Sequence[Evidence], *, keeps: bool) -> list[int]:
    """+1 for "higher is better", -1 for "lower": from keeps (their gain), or from discards
    (the opposite of their change)."""
    votes: list[int] = []
    reference: float | None = None  # the value last kept
    has_deltas = any(r.delta is not None for r in rows)
    for row in rows:
        kept = row.status in KEPT
        if row.status == "baseline" or (kept and reference is None):
            reference = row.value if row.value is not None else reference
            continue
        if has_deltas:
            change = row.delta
        elif row.value is not None and reference is not None:
            change = row.value - reference
        else:
            change = None
        if change:
            if keeps and kept:
                votes.append(1 if change > 0 else -1)
            elif not keeps and row.status == "discard":
                votes.append(-1 if change > 0 else 1)
        if kept and row.value is not None:
            reference = row.value
    return votes
