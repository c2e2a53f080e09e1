"""The numbers of one decision and the sentence that states them.

A decision's numbers are computed once, here, and written to its note (`metric.value`,
`incumbent`, `delta`, `delta_pct`, `interval`, `interval_pct`); the reason sentence is made
from those same numbers, and every view (log, TSV, status, show, the run's status line)
reads them back from the note. So a number a user sees always agrees with the note.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Change:
    """Candidate against incumbent, in metric units (signed as the metric: candidate −
    incumbent) and in percent of the incumbent."""

    value: float  # the candidate's level
    incumbent: float  # the incumbent's level it was compared with
    delta: float
    delta_pct: float | None
    interval: tuple[float, float] | None = None  # of delta, at the decision's threshold
    interval_pct: tuple[float, float] | None = None

    @classmethod
    def of(
        cls,
        value: float,
        incumbent: float,
        interval: tuple[float, float] | None = None,
    ) -> Change:
        # the change's percent needs its two levels on one side of 0; its interval's percent
        # needs the interval's ends there too (a timing metric's interval may reach below 0
        # seconds while every run was above: the change keeps its percent, the interval is
        # stated in the unit)
        ratio = one_sign(incumbent, value)
        ends = [incumbent + x for x in interval] if interval else []
        return cls(
            value,
            incumbent,
            value - incumbent,
            _pct(value - incumbent, incumbent) if ratio else None,
            interval,
            None
            if not interval or not one_sign(incumbent, value, *ends)
            else _pct_pair(interval, incumbent),
        )

    @classmethod
    def from_gain(
        cls, direction: str, relative: bool, incumbent: float, gain: float, half: float | None
    ) -> Change:
        """From the rule's gain (log units when relative; + = better) and half-width."""

        def level(g: float) -> float:
            sign = 1.0 if direction == "lower" else -1.0
            if relative:
                return incumbent * math.exp(-sign * g)
            return incumbent - sign * g

        value = level(gain)
        interval = None
        if half is not None and math.isfinite(half):
            a, b = level(gain - half) - incumbent, level(gain + half) - incumbent
            interval = (min(a, b), max(a, b))
        return cls.of(value, incumbent, interval)

    def fields(self) -> dict[str, Any]:
        """The note's `metric` fields for this change."""
        out: dict[str, Any] = {
            "value": self.value,
            "incumbent": self.incumbent,
            "delta": self.delta,
            "delta_pct": self.delta_pct,
        }
        if self.interval is not None:
            out["interval"] = list(self.interval)
            out["interval_pct"] = list(self.interval_pct) if self.interval_pct else None
        return out


def one_sign(*levels: float) -> bool:
    """Whether a percent of these levels means anything: all on one side of 0. A change from
    -0.1 to 0.2, or one whose interval reaches past 0, is "+300%" of nothing in particular,
    so such a change is stated in the metric's unit alone."""
    return all(x > 0 for x in levels) or all(x < 0 for x in levels)


def level_pct(value: float, base: float) -> float | None:
    """`value` against `base` in percent of `base`, or None when they straddle 0."""
    return _pct(value - base, base) if one_sign(value, base) else None


NO_PERCENT = "no percent: the levels reach 0"


def _pct(x: float, base: float) -> float | None:
    return x / abs(base) * 100.0 if base else None


def _pct_pair(pair: tuple[float, float], base: float) -> tuple[float, float] | None:
    a, b = _pct(pair[0], base), _pct(pair[1], base)
    return None if a is None or b is None else (a, b)


def num(x: float) -> str:
    """A metric value as people read it: up to 6 significant digits, no float noise."""
    return f"{x:.6g}"


def amount(x: float) -> str:
    return f"{abs(x):.4g}"


def percent(p: float) -> str:
    return f"{abs(p):.1f}%" if abs(p) >= 0.095 else f"{abs(p):.2g}%"


def better_worse(delta: float, direction: str) -> str:
    if delta == 0:
        return "no change"
    better = (delta < 0) == (direction == "lower")
    return "better" if better else "worse"


def change_words(change: Change, direction: str) -> str:
    """ "10.1% better (0.0027 lower)", or "no change (210.3)"."""
    d = change.delta
    if d == 0:
        return f"no change ({num(change.value)})"
    word = better_worse(d, direction)
    unit = f"{amount(d)} {'lower' if d < 0 else 'higher'}"
    if change.delta_pct is None:
        why = f"; {NO_PERCENT}" if change.incumbent else ""
        return f"{word} by {amount(d)} ({'lower' if d < 0 else 'higher'}{why})"
    return f"{percent(change.delta_pct)} {word} ({unit})"


def interval_words(change: Change, direction: str) -> str:
    """ "interval 8.3% to 12.0% better" (in the metric's unit when the levels reach 0)."""
    if change.interval is None:
        return ""
    lo, hi = change.interval_pct or change.interval
    sign = -1.0 if direction == "lower" else 1.0
    g1, g2 = sorted((sign * lo, sign * hi))  # as gains: + = better
    fmt = percent if change.interval_pct else amount

    def one(g: float) -> str:
        return "0" if g == 0 else f"{fmt(g)} {'better' if g > 0 else 'worse'}"

    if g1 > 0 or g2 < 0:
        word = "better" if g1 > 0 else "worse"
        a, b = sorted((abs(g1), abs(g2)))
        return f"interval {fmt(a)} to {fmt(b)} {word}"
    return f"interval {one(g1)} to {one(g2)}"


def runs_words(n_cand: int, n_inc: int, n_earlier: int = 0) -> str:
    text = f"{n_cand} candidate and {n_inc} incumbent run{'s' if n_inc != 1 else ''}"
    if n_cand == 1 and n_inc == 0 and not n_earlier:
        return "1 run"
    if n_earlier:
        text += f" (+{n_earlier} earlier incumbent run{'s' if n_earlier != 1 else ''})"
    return text


def level_change_words(value: float, base: float, digits: int = 1) -> str:
    """ " (-23.6%)" for a level against a baseline, or " (+0.305)" when they straddle 0."""
    pct = level_pct(value, base)
    if pct is None:
        return f" ({value - base:+.4g}; {NO_PERCENT})"
    return f" ({pct:+.{digits}f}%)"


def kept_together(changes: list[tuple[float | None, float | None]]) -> tuple[float, float | None]:
    """The keeps of a run taken together, as their notes measured each (`(delta,
    delta_pct)` in order): the deltas summed, and the percents compounded when every keep
    has one. Each keep was measured against incumbent runs beside its own, so this is what
    the notes say; the best level against the baseline's calibration, two measurements taken
    at different times, may differ from it on a noisy machine."""
    total = sum(d or 0.0 for d, _ in changes)
    pcts = [p for _, p in changes]
    if not changes or any(p is None for p in pcts):
        return total, None
    ratio = 1.0
    for p in pcts:
        ratio *= 1.0 + (p or 0.0) / 100.0
    return total, (ratio - 1.0) * 100.0


def kept_words(changes: list[tuple[float | None, float | None]], shown: int = 5) -> str:
    """ "the 2 keeps measured -32.0% together (-28.3%, -5.1%)", from the keeps' notes."""
    if not changes:
        return "no keep"
    total, pct = kept_together(changes)

    def one(d: float | None, p: float | None) -> str:
        return f"{p:+.1f}%" if pct is not None and p is not None else f"{d or 0.0:+.4g}"

    each = [one(d, p) for d, p in changes[:shown]]
    if len(changes) > shown:
        each.append(f"… {len(changes) - shown} more")
    why = "" if pct is not None else f"; {NO_PERCENT}"
    whole = f"{pct:+.1f}%" if pct is not None else f"{total:+.4g}"
    if len(changes) == 1:
        return f"its keep measured {whole}{why}"
    return f"the {len(changes)} keeps measured {whole} together ({', '.join(each)}{why})"


def verdict_free(reason: str) -> str:
    """A decision's sentence without its verdict ("kept: " / "discarded: "), for a
    tournament candidate whose keep the round decides: a beaten candidate's note must not
    say "kept"."""
    for word in ("kept: ", "discarded: "):
        if reason.startswith(word):
            return reason[len(word) :]
    return reason
