"""The metric's per-run noise, pooled over every run of unchanged code we have seen.

A *segment* is a few runs of one version of the code taken close together: the calibration
runs, a candidate's runs in one decision, the incumbent's fresh runs in one decision. The noise
is the pooled within-segment standard deviation (rule scale: log(value) for a relative
`min_delta`), after screening out glitches against a robust scale, so a load spike neither
inflates it nor hides in it. Degrees of freedom are counted honestly: a segment of n clean
runs gives n - 1.

The repository's history of the same metric on the same host (earlier runs' notes) enters as
a prior with its own degrees of freedom, capped so the current run soon speaks for itself,
and ignored when it disagrees with what this run measures. A floor keeps σ from collapsing
below the resolution of the printed numbers.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

PRIOR_DF_CAP = 24.0  # the history counts as at most this many degrees of freedom
MIN_SCREEN = 20  # diffs needed before the robust scale screens at its own width
# with fewer diffs (4 at least: a calibration's), the robust scale is this much wider: a
# median of a few diffs is unsteady, and at its own width it would screen ordinary runs
# and bias σ low; wider, it still screens a load spike, which otherwise puts σ at 3-7 times
# the machine's noise for the first decisions of a run (docs/noise.md, step 1)
FEW_DIFFS, FEW_WIDE = 4, 1.5
# the share of runs the screen drops is learned from the decisions' segments of 3+ runs
# (the calibration's, taken on a machine perhaps busy at the start, do not count), once
# this many runs are in them
GLITCH_RUNS = 20
TAIL_DIFFS = 40  # run-to-run differences needed before their kurtosis is measured


@dataclass(frozen=True)
class Noise:
    """σ per run in the rule's scale, its degrees of freedom, and where it came from."""

    sigma: float
    df: float
    own_df: float = 0.0  # from this run's own runs
    prior_df: float = 0.0  # from earlier runs' notes

    @property
    def known(self) -> bool:
        return math.isfinite(self.sigma)

    @property
    def deterministic(self) -> bool:
        return self.sigma == 0.0


UNKNOWN = Noise(math.inf, 0.0)


def resolution(values: Iterable[float]) -> float:
    """The step of the printed numbers (0.001 for 1.234), the smallest over `values`."""
    step = math.inf
    for v in values:
        if v == 0 or not math.isfinite(v):
            continue
        text = f"{abs(v):.12g}"
        if "e" in text:
            mant, _, exp = text.partition("e")
            decimals = len(mant.partition(".")[2]) - int(exp)
        else:
            decimals = len(text.partition(".")[2])
        step = min(step, 10.0 ** (-decimals))
    return step


class NoisePool:
    """Segments of same-code runs (rule scale), most recent last, bounded in total runs."""

    def __init__(self, k: float = 3.0, memory: int = 400) -> None:
        self.k = k
        self.memory = memory
        self.segments: deque[tuple[float, ...]] = deque()
        self.calib: deque[bool] = deque()  # which segments are a calibration's
        self._runs = 0
        self.prior: Noise | None = None
        self.floor = 0.0
        self._cache: Noise | None = None
        self._base: tuple[list[float], float, float, float] | None = None
        self.calibrated = math.inf  # σ right after the calibration: no candidate's runs in it

    def add(self, runs: Sequence[float], *, calibration: bool = False) -> None:
        if len(runs) < 2 or (not calibration and self._flat(runs)):
            return
        self.segments.append(tuple(runs))
        self.calib.append(calibration)
        self._runs += len(runs)
        while self._runs > self.memory and len(self.segments) > 1:
            self._runs -= len(self.segments.popleft())
            self.calib.popleft()
        self._cache = None
        self._base = None
        if calibration:
            self.calibrated = self.noise().sigma

    def set_prior(self, prior: Noise | None) -> None:
        self.prior = prior
        self._cache = None
        self._base = None

    def copy(self) -> NoisePool:
        other = NoisePool(self.k, self.memory)
        other.segments = deque(self.segments)
        other.calib = deque(self.calib)
        other._runs = self._runs
        other.prior = self.prior
        other.floor = self.floor
        other.calibrated = self.calibrated
        return other

    def _flat(self, runs: Sequence[float]) -> bool:
        """Runs that repeat one value exactly while the code's runs are known to vary: a
        candidate that prints a constant. Its zero spread is not the metric's noise and must
        not pull the pooled σ down (nor make its own estimate look exact)."""
        if max(runs) != min(runs):
            return False
        diffs = self._stored()[0]
        return bool(diffs) and max(diffs) > 0.0

    def _stored(self) -> tuple[list[float], float, float, float]:
        """(diffs, screening scale, sum of squares, df) of the stored segments, cached."""
        if self._base is None:
            diffs = [abs(b - a) for s in self.segments for a, b in itertools.pairwise(s)]
            scale = self._scale(diffs)
            ss, df = _pooled(self.segments, scale, self.k)
            self._base = (diffs, scale, ss, df)
        return self._base

    def _scale(self, diffs: Sequence[float]) -> float:
        """A robust σ for screening glitches: from fewer than MIN_SCREEN diffs, where a
        median is unsteady, FEW_WIDE times wider (none from fewer than FEW_DIFFS)."""
        prior = self.prior.sigma if self.prior is not None and self.prior.known else 0.0
        robust = 1.4826 * statistics.median(diffs) / math.sqrt(2.0) if diffs else 0.0
        if len(diffs) < MIN_SCREEN:
            return max(prior, FEW_WIDE * robust) if len(diffs) >= FEW_DIFFS else prior
        return max(robust, 0.0 if len(diffs) >= 2 * MIN_SCREEN else prior)

    def glitch_share(self) -> float:
        """The share of the decisions' runs (in segments of 3+) the screen drops as lone
        glitches (one run far, its neighbours not); 0 until GLITCH_RUNS such runs are known. Under Gaussian noise it is a few
        in a thousand; on a machine hit by load spikes, about the share of runs spiked."""
        _, scale, _, _ = self._stored()
        seen = dropped = 0
        for seg, calibration in zip(self.segments, self.calib, strict=True):
            if calibration or len(seg) < 3:
                continue
            seen += len(seg)
            m = statistics.median(seg)
            far = [scale > 0 and abs(x - m) > self.k * scale for x in seg]
            # a glitch is one run: a run far whose neighbours are not (a wave of load or a
            # slow state moves several runs in a row, which is not a glitch)
            dropped += sum(
                f and not (i and far[i - 1]) and not (i + 1 < len(far) and far[i + 1])
                for i, f in enumerate(far)
            )
        return dropped / seen if seen >= GLITCH_RUNS else 0.0

    def tails(self) -> float:
        """The excess kurtosis of the run-to-run differences within the decisions' segments
        (not the calibration's: a busy start is not the machine's tails), 0 until TAIL_DIFFS
        are known: 0 under Gaussian noise, several under heavy tails, spikes or bursts."""
        d = [
            b - a
            for seg, calibration in zip(self.segments, self.calib, strict=True)
            if not calibration
            for a, b in itertools.pairwise(seg)
        ]
        if len(d) < TAIL_DIFFS:
            return 0.0
        m = statistics.fmean(d)
        var = statistics.fmean((x - m) ** 2 for x in d)
        return statistics.fmean((x - m) ** 4 for x in d) / var**2 - 3.0 if var > 0 else 0.0

    def own(self, extra: Sequence[Sequence[float]] = ()) -> tuple[float, float]:
        """(variance, df) of this run's segments (plus `extra` ones), glitches screened out."""
        diffs, scale, ss, df = self._stored()
        extra = [tuple(e) for e in extra if len(e) >= 2 and not self._flat(e)]
        if extra:
            more = [abs(b - a) for s in extra for a, b in itertools.pairwise(s)]
            if len(diffs) < 2 * MIN_SCREEN:  # the extra runs still move the scale
                all_segs = [*self.segments, *extra]
                scale = self._scale(diffs + more)
                ss, df = _pooled(all_segs, scale, self.k)
            else:
                ss2, df2 = _pooled(extra, scale, self.k)
                ss, df = ss + ss2, df + df2
            diffs = diffs + more
        if not diffs:
            return math.nan, 0.0
        if max(diffs) == 0.0:
            return 0.0, float(sum(len(s) - 1 for s in (*self.segments, *extra)))
        if df == 0:
            return math.nan, 0.0
        return ss / df, df

    def noise(self, extra: Sequence[Sequence[float]] = ()) -> Noise:
        if not extra and self._cache is not None:
            return self._cache
        var, df = self.own(extra)
        prior = self.prior
        if df == 0:
            out = (
                Noise(max(prior.sigma, self.floor), prior.df, 0.0, prior.df)
                if prior is not None
                else UNKNOWN
            )
        elif var == 0.0:  # the runs repeated exactly: a noisy history does not fit them
            out = Noise(0.0, df, df)
        else:
            pdf = min(prior.df, PRIOR_DF_CAP) if prior is not None and prior.known else 0.0
            if prior is not None and pdf and not _agrees(var, df, prior.sigma**2, pdf):
                pdf = 0.0
            pooled = (var * df + (prior.sigma**2 * pdf if prior is not None and pdf else 0.0)) / (
                df + pdf
            )
            out = Noise(max(math.sqrt(pooled), self.floor), df + pdf, df, pdf)
        if not extra:
            self._cache = out
        return out


def _pooled(segs: Iterable[Sequence[float]], scale: float, k: float) -> tuple[float, float]:
    ss, df = 0.0, 0
    for seg in segs:
        kept = _screen(seg, scale, k)
        if len(kept) >= 2:
            m = statistics.fmean(kept)
            ss += sum((x - m) ** 2 for x in kept)
            df += len(kept) - 1
    return ss, float(df)


def _screen(seg: Sequence[float], scale: float, k: float) -> list[float]:
    """Drop glitches: with 3+ runs, those more than k·scale from the median; of two runs that
    disagree by more than k·√2·scale, neither is trusted."""
    if not scale > 0:
        return list(seg)
    if len(seg) == 2:
        return list(seg) if abs(seg[0] - seg[1]) <= k * math.sqrt(2.0) * scale else []
    m = statistics.median(seg)
    return [x for x in seg if abs(x - m) <= k * scale]


def _agrees(var: float, df: float, pvar: float, pdf: float) -> bool:
    """Does this run's variance fit the history's? A loose two-sided check (ratio of the
    variances within what chance gives at these degrees of freedom, roughly 99%)."""
    if pvar <= 0 or var <= 0:
        return pvar == var
    ratio = var / pvar
    spread = 2.6 * math.sqrt(2.0 / df + 2.0 / pdf)  # sd of log(ratio) ≈ sqrt(2/df1 + 2/df2)
    return abs(math.log(ratio)) <= spread
