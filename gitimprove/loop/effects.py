"""How big the agent's changes are, learned from the run: the prior behind a kept gain.

A kept candidate's runs become its window (the incumbent's reused runs), but they were
selected for looking good: taken as they are, the new incumbent looks better than it is and
the next candidates look worse (the rule turns conservative). The window is moved back by
the part of the kept gain expected to be luck, under a prior on the agent's true effects
learned from the run (empirical Bayes).

The prior is a mixture: a share p0 of changes that do nothing (a point mass at 0) and the
rest spread as a normal of spread τ. With one component a normal prior shrinks a large real
gain as much as a lucky small one, and the next no-effect changes look better by what was
wrongly taken off; the mixture shrinks a keep just over its threshold (likely a lucky
no-effect change) and hardly one far over it. p0 and τ are fitted by EM to every decision's
first candidate run against the window (`d1`, taken before anything about the candidate
was known: d1 ~ p0·N(0, v) + (1 − p0)·N(0, τ² + v), v = σ²(1 + 1/n_window)), with weak
priors (p0 ½, τ0 = 3% of the level, each worth N0 decisions). A first run hit by a spike
widens τ, which shrinks less: the error goes the safe way (back to the old correction).

Only the candidate's share of the luck moves its runs (its share of the gain's variance):
the incumbent's share was in runs the new window does not hold. The state is the list of
first runs in decision order, so replaying the notes on resume rebuilds it exactly.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from gitimprove.loop import estimate as est_
from gitimprove.loop.noise import Noise
from gitimprove.loop.outcome import Outcome

TAU0 = 0.03  # the prior's spread of real effects, as a share of the metric's level
N0 = 10.0  # the weight of the priors on p0 and τ, in decisions
P00 = 0.5  # the prior share of changes that do nothing
ITER = 25  # EM iterations per fit
_ND = statistics.NormalDist()


def _normal(x: float, var: float) -> float:
    return math.exp(-0.5 * x * x / var) / math.sqrt(2.0 * math.pi * var)


class EffectPrior:
    """p0 and τ of the agent's true effects (rule scale), learned decision by decision."""

    def __init__(self, tau0: float = TAU0) -> None:
        self.tau0 = tau0
        self.first: list[tuple[float, float]] = []  # (d1, its noise variance v)
        self._fit: tuple[float, float] | None = None

    def observe(self, d1: float, noise_var: float) -> None:
        if math.isfinite(d1) and math.isfinite(noise_var) and noise_var > 0:
            self.first.append((d1, noise_var))
            self._fit = None

    def observe_first(
        self, sign: float, cand: Sequence[float], window: Sequence[float], noise: Noise, k: float
    ) -> None:
        """A finished decision (rule scale): its first candidate run against the window it
        was compared with, under the noise known before the decision."""
        sigma = noise.sigma if noise.known else 0.0
        wc = est_.clean(window, sigma, k) if sigma > 0 else []
        if cand and len(wc) >= 2:
            d1 = sign * (est_.center(wc, sigma) - cand[0])
            self.observe(d1, sigma * sigma * (1.0 + 1.0 / len(wc)))

    def fit(self) -> tuple[float, float]:
        """(p0, τ²) by EM, MAP under the weak priors."""
        if self._fit is not None:
            return self._fit
        p0, t2 = P00, self.tau0**2
        for _ in range(ITER if self.first else 0):
            r_sum = m2 = 0.0
            for d, v in self.first:
                w0 = p0 * _normal(d, v)
                w1 = (1.0 - p0) * _normal(d, t2 + v)
                r = w1 / (w0 + w1) if w0 + w1 > 0 else 1.0
                s = t2 / (t2 + v)
                r_sum += r
                m2 += r * ((s * d) ** 2 + s * v)  # E[θ² | d, a real effect]
            n = len(self.first)
            p0 = (N0 * P00 + n - r_sum) / (N0 + n)
            t2 = max((0.1 * self.tau0) ** 2, (N0 * self.tau0**2 + m2) / (N0 + r_sum))
        self._fit = (p0, t2)
        return self._fit

    def true_gain(self, gain: float, se: float) -> float:
        """E[true gain | measured `gain` with standard error se] under the fitted mixture."""
        p0, t2 = self.fit()
        v = se * se
        w0 = p0 * _normal(gain, v)
        w1 = (1.0 - p0) * _normal(gain, t2 + v)
        real = w1 / (w0 + w1) if w0 + w1 > 0 else 1.0
        return real * t2 / (t2 + v) * gain

    def worth(self, gain: float, se: float, se_end: float, bar: float) -> tuple[float, float]:
        """(E[θ · kept], P(kept)) for a candidate's true gain θ: θ's posterior given the
        `gain` measured with standard error se, under the fitted mixture, and kept when the
        estimate at the budget's end (standard error se_end) clears `bar`."""
        p0, t2 = self.fit()
        v = se * se
        w0 = p0 * _normal(gain, v)
        w1 = (1.0 - p0) * _normal(gain, t2 + v)
        real = w1 / (w0 + w1) if w0 + w1 > 0 else 1.0
        mu, var = gain * t2 / (t2 + v), t2 * v / (t2 + v)
        # the end's estimate is a·gain + (1 − a)·θ̂ of the runs to come, θ̂ ~ N(θ, ·)
        a = min(1.0, se_end * se_end / v)
        if a >= 1.0:
            return (real * mu, 1.0) if gain > bar else (0.0, 0.0)
        beta, g2 = 1.0 - a, (1.0 - a) * se_end * se_end
        m = a * gain - bar + beta * mu
        s = math.sqrt(beta * beta * var + g2)
        p_none = _ND.cdf((a * gain - bar) / math.sqrt(g2))
        p_real = _ND.cdf(m / s)
        value = real * (mu * p_real + beta * var / s * _ND.pdf(m / s))
        return value, real * p_real + (1.0 - real) * p_none

    def runs_to_keep(self, gain: float, se: float, t: float, used: int, left: int) -> float:
        """The runs a decision that has used `used` runs would take yet to clear t standard
        errors, were the posterior gain of a real effect true (se shrinking as 1/√runs);
        the rest of the budget if that gain is none."""
        _, t2 = self.fit()
        mu = gain * t2 / (t2 + se * se)
        if mu <= 0:
            return float(left)
        need = used * (t * se / mu) ** 2
        return float(min(left, max(1.0, need - used)))

    def excess_of(self, out: Outcome) -> float:
        """The candidate's share of a kept gain's luck (rule scale, + = better)."""
        se = out.half / max(out.bound, 1e-9)
        luck = max(0.0, out.gain - self.true_gain(out.gain, se))
        return luck * min(1.0, (out.sigma**2 / max(1, out.n_cand)) / se**2)
