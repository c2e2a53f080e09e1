"""Whether masking a hostile text takes linear time, judged against ordinary text of the same
length masked in the same process just before (a ratio in one run, as the benches take them):
a loaded machine slows both alike, while a backtracking pattern takes hundreds of times the
ordinary text's time on these sizes (minutes, not seconds)."""

from __future__ import annotations

import time
from collections.abc import Callable

ORDINARY = (
    "x = compute(a, b)  # the key and value of the token cache\n"
    "The password checker said: see the secret notes at docs/auth.md, line 12.\n"
)
FACTOR = 25  # the worst shapes take 3-8x ordinary text (measured); quadratic ones, 100x+
FLOOR = 0.05  # seconds: below this, timer and scheduler noise dominate the ordinary time


def _timed(fn: Callable[[str], object], text: str) -> float:
    start = time.perf_counter()
    fn(text)
    return time.perf_counter() - start


def within_linear_time(fn: Callable[[str], object], text: str) -> tuple[bool, str]:
    """(True, "") when `fn(text)` takes at most FACTOR times `fn` on ordinary text of the same
    length; else (False, the two times) for the assertion message."""
    fn("warm up: rules compiled, caches filled")
    ordinary = (ORDINARY * (len(text) // len(ORDINARY) + 1))[: len(text)]
    base = max(_timed(fn, ordinary), FLOOR)
    took = _timed(fn, text)
    if took <= FACTOR * base:
        return True, ""
    base = max(_timed(fn, ordinary), FLOOR)  # once more: a burst of load over the first
    took = min(took, _timed(fn, text))
    return took <= FACTOR * base, f"{took:.2f} s against {base:.2f} s for ordinary text"
