"""One decision's estimate of the candidate's gain, from the runs taken so far (docs/noise.md,
steps 3 and 5): against the window, or from adjacent pairs once the machine changed."""

from __future__ import annotations

import math
import statistics
from typing import TYPE_CHECKING

from gitimprove.loop import estimate as est_
from gitimprove.loop.outcome import Estimate, Work

if TYPE_CHECKING:
    from gitimprove.loop.rule import AdaptiveRule


def estimate(rule: AdaptiveRule, w: Work, window: list[float], sigma: float) -> Estimate:
    """The decision's estimate so far: against the window while the fresh incumbent runs agree
    with it (*window* mode), else from adjacent B/A pairs alone (*paired* mode)."""
    k = rule.k
    wc = est_.clean(window, sigma, k)
    b, need_b = est_.arm(w.b, sigma, k, rule.k2)
    if len(wc) >= 2 and w.split is None and rule.W:
        cw = est_.center(wc, sigma, rule.huber_k)
        lim = k * sigma * math.sqrt(1.0 + 1.0 / len(wc))
        far = [x for x in w.a if abs(x - cw) > lim]
        good = [x for x in w.a if abs(x - cw) <= lim]
        stale = False
        if len(far) >= 2:
            # two incumbent runs, apart in time, that agree with each other and not with
            # the window: the machine changed (one such run alone is a glitch, dropped)
            x, y = far[-2:]
            stale = abs(x - y) <= k * math.sqrt(2.0) * sigma and (x - cw) * (y - cw) > 0
        if not stale and len(good) >= 2:
            spread = sigma * math.sqrt(1.0 / len(good) + 1.0 / len(wc))
            stale = abs(est_.center(good, sigma, rule.huber_k) - cw) > rule.consistency * spread
        if stale:
            # pairs only from here on; the runs that revealed the change are left out,
            # or choosing to pair because of them would bias the pairs
            w.split = len(w.seq)
        else:
            ref = wc + good
            level = est_.center(ref, sigma, rule.huber_k)
            if need_b:  # two candidate runs disagree: judged by the better, a third decides
                d = max(rule.sign * (level - x) for x in w.b)
                se = sigma * math.sqrt(1.0 / len(ref) + 1.0)
                return Estimate("window", d, se, len(ref), 1, level, "B", fresh=len(good))
            d = rule.sign * (level - est_.center(b, sigma, rule.huber_k))
            se = sigma * math.sqrt(1.0 / len(ref) + 1.0 / len(b))
            need = "A" if w.a and not good and w.seq[-1] == "B" else None  # a glitch
            return Estimate("window", d, se, len(ref), len(b), level, need, fresh=len(good))
    start = w.split or 0
    nb0, na0 = w.seq[:start].count("B"), w.seq[:start].count("A")
    prs = est_.pairs(w.seq[start:], w.b[nb0:], w.a[na0:])
    diffs = [rule.sign * (pa - pb) for pb, pa in prs]
    kept, tie_break = est_.clean_pairs(prs, diffs, sigma, k)
    nxt = "A" if w.seq[-1] == "B" else "B"
    reset = w.split is not None
    if not kept or tie_break:  # pairs that disagree: judged by the better, more decide
        if diffs:
            best = max(kept or range(len(diffs)), key=lambda i: diffs[i])
            se = math.sqrt(2.0) * sigma
            return Estimate("paired", diffs[best], se, 1, 1, prs[best][1], nxt, reset, 1)
        level = w.a[-1] if w.a else (window[-1] if window else w.b[0])
        d = rule.sign * (level - w.b[-1])
        return Estimate("paired", d, math.inf, 0, 0, level, nxt, reset)
    trusted = [diffs[i] for i in kept]
    if rule.paired_center == "huber":
        d = est_.center(trusted, math.sqrt(2.0) * sigma, rule.huber_k)
    elif rule.paired_center == "hl":
        d = est_.hodges_lehmann(trusted)
    else:
        d = statistics.fmean(trusted)
    se = math.sqrt(2.0) * sigma / math.sqrt(len(kept))
    level = statistics.fmean(prs[i][1] for i in kept)
    n = len(kept)
    return Estimate("paired", d, se, n, n, level, None, reset, n)
