"""Keep or discard a candidate against an incumbent from fixed sets of samples.

Used by `git improve measure` for experiments made outside the loop: both arms have been run
a fixed number of times, so this is one planned look with Welch's t at the configured
confidence. A metric whose repeats are all identical is deterministic and decides by a
strict comparison with `min_delta` (NOISE.md rule 6). The loop's adaptive, sequential rule
builds on the same vocabulary.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gitimprove.config import MinDelta
from gitimprove.loop.stats import huber, keep_boundary, spread, t_ppf, t_quantile


@dataclass(frozen=True)
class Decision:
    keep: bool
    delta: float  # candidate - incumbent, in metric units (signed as the metric)
    delta_pct: float | None
    gain: float  # improvement, > 0 means the candidate is better
    interval: tuple[float, float] | None  # of the gain, at the confidence
    reason: str

    @property
    def status(self) -> str:
        return "keep" if self.keep else "discard"


def _pct(x: float, base: float) -> float | None:
    return x / abs(base) * 100.0 if base else None


def _fmt_gain(gain: float, base: float, direction: str) -> str:
    pct = _pct(gain, base)
    better = (
        ("lower" if direction == "lower" else "higher")
        if gain >= 0
        else ("higher" if direction == "lower" else "lower")
    )
    amount = f"{abs(pct):.1f}%" if pct is not None else f"{abs(gain):.4g}"
    return f"{amount} {better}"


def decide_fixed(
    candidate: Sequence[float],
    incumbent: Sequence[float],
    *,
    direction: str,
    min_delta: MinDelta,
    confidence: float,
) -> Decision:
    if not candidate or not incumbent:
        raise ValueError("both arms need at least one sample")
    c_mean = statistics.fmean(candidate)
    i_mean = statistics.fmean(incumbent)
    sign = -1.0 if direction == "lower" else 1.0
    delta = c_mean - i_mean
    gain = sign * delta
    threshold = min_delta.value * abs(i_mean) if min_delta.relative else min_delta.value
    runs = f"{len(candidate)}+{len(incumbent)} runs"
    told = _fmt_gain(gain, i_mean, direction)

    deterministic = spread(candidate) == 0.0 and spread(incumbent) == 0.0
    if deterministic:
        keep = gain > 0 and gain >= threshold
        if keep:
            reason = f"kept: {told}, deterministic metric ({runs})"
        elif gain > 0:
            reason = f"discarded: {told}, below min_delta {min_delta} ({runs})"
        else:
            reason = f"discarded: {told}, deterministic metric ({runs})"
        return Decision(keep, delta, _pct(delta, i_mean), gain, (gain, gain), reason)

    if len(candidate) < 2 or len(incumbent) < 2:
        reason = (
            f"discarded: {told}, but a noisy metric needs at least 2 runs on each side ({runs})"
        )
        return Decision(False, delta, _pct(delta, i_mean), gain, None, reason)

    v1 = spread(candidate) ** 2 / len(candidate)
    v2 = spread(incumbent) ** 2 / len(incumbent)
    se = math.sqrt(v1 + v2)
    df_den = (v1**2 / (len(candidate) - 1) if v1 else 0.0) + (
        v2**2 / (len(incumbent) - 1) if v2 else 0.0
    )
    df = (v1 + v2) ** 2 / df_den if df_den > 0 else float(len(candidate) + len(incumbent) - 2)
    t = t_quantile(confidence, max(df, 1.0))
    low, high = gain - t * se, gain + t * se
    keep = low > 0 and gain >= threshold
    pct_lo, pct_hi = _pct(low, i_mean), _pct(high, i_mean)
    interval = (
        f"interval {pct_lo:.1f}–{pct_hi:.1f}%"
        if pct_lo is not None and pct_hi is not None
        else f"interval {low:.4g}–{high:.4g}"
    )
    conf = f"{confidence * 100:g}%"
    if keep:
        reason = f"kept: {told}, {interval} at {conf}, {runs}"
    elif low > 0:
        reason = f"discarded: {told}, below min_delta {min_delta}, {interval}, {runs}"
    else:
        reason = f"discarded: {told}, not confirmed at {conf} ({interval}, {runs})"
    return Decision(keep, delta, _pct(delta, i_mean), gain, (low, high), reason)


# --- the adaptive, sequential rule (NOISE.md) ----------------------------------------------


_ND = statistics.NormalDist()


@dataclass
class AdaptiveOutcome:
    keep: bool
    runs: int
    delta: float  # in the rule's scale (log units when relative): + = candidate better
    se: float
    reason: str
    candidate: list[float]
    incumbent: list[float]  # fresh runs of the incumbent taken in this decision
    window_used: int


class AdaptiveRule:
    """Sequential keep/discard for one noisy metric (NOISE.md; the reference is
    shared/tools/noise_sim.py `AdaptiveKeep`). `decide` takes two callables that run the
    metric on the incumbent and on the candidate and return the number; a callable may
    raise to abort the decision. The rule's state (noise, window) can be saved and
    restored so a resumed run decides as before."""

    def __init__(
        self,
        direction: str = "lower",
        min_delta: MinDelta | None = None,
        max_runs: int = 16,
        confidence: float = 0.95,
        futility: float = 1.0,
        window: int = 12,
        refresh: int = 3,
        outlier_k: float = 3.0,
        calib_runs: int = 5,
        noise_memory: int = 200,
    ) -> None:
        md = min_delta or MinDelta()
        self.sign = 1.0 if direction == "lower" else -1.0
        # a relative min_delta works on log(value), where relative changes are differences
        self.relative = md.relative
        if md.relative:
            self.md = -math.log1p(-md.value) if direction == "lower" else math.log1p(md.value)
        else:
            self.md = md.value
        self.max_runs = max_runs
        self.alpha = 1.0 - confidence
        self.z_fut = futility
        self.W = window
        self.refresh = refresh
        self.k = outlier_k
        self.calib_runs = calib_runs
        self.diffs: deque[float] = deque(maxlen=noise_memory)
        self.window: list[float] = []
        self.last_base: float | None = None
        self.since_refresh = 0
        self._sig: tuple[float, float] | None = None
        self._s0 = 0.0

    # ---- state -------------------------------------------------------------------------
    def state(self) -> dict[str, object]:
        return {
            "diffs": list(self.diffs),
            "window": list(self.window),
            "last_base": self.last_base,
            "since_refresh": self.since_refresh,
        }

    def restore(self, state: dict[str, object]) -> None:
        diffs = state.get("diffs")
        window = state.get("window")
        self.diffs.clear()
        self.diffs.extend(float(x) for x in diffs if isinstance(x, int | float)) if isinstance(
            diffs, list
        ) else None
        self.window = (
            [float(x) for x in window if isinstance(x, int | float)]
            if isinstance(window, list)
            else []
        )
        lb = state.get("last_base")
        self.last_base = float(lb) if isinstance(lb, int | float) else None
        sr = state.get("since_refresh", 0)
        self.since_refresh = int(sr) if isinstance(sr, int) else 0
        self._sig = None

    # ---- noise ------------------------------------------------------------------------
    def tx(self, y: float) -> float:
        if self.relative:
            if y <= 0:
                raise ValueError("a relative min_delta needs a metric above zero")
            return math.log(y)
        return float(y)

    def _note_pair(self, a: float, b: float) -> None:
        self.diffs.append(abs(a - b))
        self._sig = None

    def sigma(self) -> tuple[float, float]:
        if self._sig is not None:
            return self._sig
        if not self.diffs:
            return float("inf"), 1.0
        s0 = 1.4826 * statistics.median(list(self.diffs)) / math.sqrt(2.0)
        if s0 > 0:
            lim = self.k * math.sqrt(2.0) * s0
            ok = [x for x in self.diffs if x <= lim]
        else:
            ok = list(self.diffs)
        s = math.sqrt(sum(x * x for x in ok) / (2.0 * len(ok)))
        self._s0 = s0
        self._sig = (s, float(max(1, len(ok))))
        return self._sig

    def noise_pct(self) -> float | None:
        """Per-run noise as a percentage (relative scale) or None when unknown."""
        s, _ = self.sigma()
        if not math.isfinite(s):
            return None
        return (math.exp(s) - 1.0) * 100.0 if self.relative else None

    def calibrate(self, run_baseline: Callable[[], float]) -> list[float]:
        raw = [run_baseline() for _ in range(self.calib_runs)]
        xs = [self.tx(v) for v in raw]
        for a, b in itertools.pairwise(xs):
            self._note_pair(a, b)
        self.window = xs[-self.W :] if self.W else []
        self.last_base = xs[-1]
        return raw

    def _clean(self, xs: list[float], s: float) -> list[float]:
        if len(xs) < 3 or not s > 0:
            return xs
        m = statistics.median(xs)
        kept = [x for x in xs if abs(x - m) <= self.k * s]
        return kept or xs

    # ---- one decision ----------------------------------------------------------------------
    def decide(
        self, run_baseline: Callable[[], float], run_candidate: Callable[[], float]
    ) -> AdaptiveOutcome:
        used = 0
        old = list(self.window)
        fresh: list[float] = []
        cand: list[float] = []
        raw_fresh: list[float] = []
        raw_cand: list[float] = []

        def take_base() -> None:
            nonlocal used
            v = run_baseline()
            x = self.tx(v)
            used += 1
            if self.last_base is not None:
                self._note_pair(self.last_base, x)
            self.last_base = x
            fresh.append(x)
            raw_fresh.append(v)

        def take_cand() -> None:
            nonlocal used
            v = run_candidate()
            x = self.tx(v)
            used += 1
            if cand:
                self._note_pair(cand[-1], x)
            cand.append(x)
            raw_cand.append(v)

        def finish(keep: bool, d: float, se: float, reason: str) -> AdaptiveOutcome:
            self.since_refresh = 0 if fresh else self.since_refresh + 1
            if keep:
                self.window = []
                self.last_base = None
            else:
                w = old + fresh
                self.window = w[-self.W :] if self.W else []
            return AdaptiveOutcome(keep, used, d, se, reason, raw_cand, raw_fresh, len(old))

        if not self.W or len(old) < max(2, self.W // 2) or self.since_refresh + 1 >= self.refresh:
            take_base()
            if self.W and len(old) < 2:
                take_base()
        take_cand()

        max_c = self.max_runs - len(fresh) - (0 if fresh else 1)
        plan = tuple(sorted({2**j for j in range(1, 8) if 2**j < max_c} | {max(2, max_c)}))
        n_ref_plan = min(len(old) + max(1, len(fresh)), 64)
        a_look = 1.0 - _ND.cdf(keep_boundary(self.alpha, max(1, n_ref_plan), plan))
        next_look = 2

        while True:
            s, df = self.sigma()
            tk = t_ppf(1.0 - a_look, df)
            lim2 = self.k * s * math.sqrt(2.0)
            if len(old) >= 2 and s > 0 and math.isfinite(s):
                mo = statistics.median(old)
                thr = self.k * s * math.sqrt(1.0 + 1.6 / len(old))
                bad = [f for f in fresh if abs(f - mo) > thr]
                good = [f for f in fresh if abs(f - mo) <= thr]
                if bad and not good:
                    if len(bad) >= 2 and max(bad) - min(bad) <= lim2:
                        old = []  # consistent shift: the machine drifted
                    elif used < self.max_runs:
                        take_base()
                        continue
                elif bad:
                    fresh[:] = good  # an isolated glitch
            ref = self._clean(old + fresh, s)
            cc = self._clean(cand, s)
            if s > 0 and math.isfinite(s) and used < self.max_runs:
                if len(ref) == 2 and abs(ref[0] - ref[1]) > lim2:
                    take_base()
                    continue
                if len(cc) == 2 and abs(cc[0] - cc[1]) > lim2:
                    take_cand()
                    continue
            nr, nc = len(ref), len(cc)
            d = self.sign * (huber(ref, self._s0) - huber(cc, self._s0))
            if not math.isfinite(s):
                s = 0.0
            se = s * math.sqrt(1.0 / nr + 1.0 / nc)
            if s == 0.0:
                return finish(d > max(0.0, self.md), d, se, "deterministic metric")
            if nc >= 2 and nr >= 2 and (nc >= next_look or used >= self.max_runs):
                if d - tk * se > 0 and d >= self.md:
                    return finish(True, d, se, "confident improvement")
                while next_look <= nc:
                    next_look *= 2
            a, b = nc, nr
            for _ in range(self.max_runs - used):
                if a <= b:
                    a += 1
                else:
                    b += 1
            target = max(self.md, tk * s * math.sqrt(1.0 / a + 1.0 / b))
            extreme_single = nc == 1 and d < -self.k * s * math.sqrt(1.0 + 1.0 / nr)
            if d + self.z_fut * se < target and not extreme_single:
                return finish(False, d, se, "cannot reach a confident keep")
            if used >= self.max_runs:
                return finish(False, d, se, "inconclusive at max_runs")
            if not fresh:
                take_base()
            elif nc <= nr or extreme_single:
                take_cand()
            else:
                take_base()

    def sentence(self, out: AdaptiveOutcome, confidence: float) -> str:
        """One sentence a person can read, e.g. "kept: 3.1% better, interval 1.2–5.0%, 6 runs"."""
        if self.relative:
            pct = (math.exp(out.delta) - 1.0) * 100.0
            lo = (math.exp(out.delta - 1.96 * out.se) - 1.0) * 100.0
            hi = (math.exp(out.delta + 1.96 * out.se) - 1.0) * 100.0
            amount, interval = f"{abs(pct):.1f}%", f"interval {lo:.1f}–{hi:.1f}%"
        else:
            amount = f"{abs(out.delta):.4g}"
            interval = f"interval {out.delta - 1.96 * out.se:.4g}–{out.delta + 1.96 * out.se:.4g}"
        word = "better" if out.delta >= 0 else "worse"
        if out.reason == "deterministic metric":
            verdict = "kept" if out.keep else "discarded"
            return f"{verdict}: {amount} {word}, deterministic metric, {out.runs} run{'s' if out.runs != 1 else ''}"
        if out.keep:
            return f"kept: {amount} {word}, {interval}, {out.runs} runs"
        if out.reason == "inconclusive at max_runs":
            return f"discarded as inconclusive after {out.runs} runs: {amount} {word}, {interval}"
        return f"discarded after {out.runs} run{'s' if out.runs != 1 else ''}: at best {amount} {word}, below what {self.max_runs} runs could confirm"
