"""The loop's keep/discard rule: sequential, interleaved, noise-aware (docs/noise.md).

One decision compares a candidate (arm B) with its incumbent (arm A) in the rule's scale
(log(value) when `min_delta` is relative; + always means "the candidate is better"):

* The candidate's first runs are compared with the incumbent's recent runs (the *window*);
  a hopeless candidate goes after one or two runs.
* A survivor gets a fresh incumbent run, then runs go to the arm that shrinks the standard
  error most. While the fresh incumbent runs agree with the window, the window counts as
  incumbent runs (*window* mode, cheap). A fresh run far from the window is a glitch, dropped;
  two that agree with each other and not with the window mean the machine changed: from then
  on the decision rests on adjacent B/A pairs alone (*paired* mode), where a burst of load
  that covers a pair cancels in its difference and a pair hit on one side is a glitch.
* Keep is tested at planned looks against a group-sequential boundary (`design.py`), Student-t
  corrected for the estimated σ, unless the candidate's runs fall into two groups; discard as
  soon as an optimistic gain is below what is worth finding or what the budget could confirm.
* How bold it is follows the noise relative to the metric's level (`schedule.py`).
* A deterministic metric decides on one candidate run, compared exactly; no incumbent re-run.
"""

from __future__ import annotations

import copy
import itertools
import math
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from gitimprove.config import MinDelta
from gitimprove.loop import budget, compare, exact
from gitimprove.loop import estimate as est_
from gitimprove.loop.design import design_bounds
from gitimprove.loop.effects import TAU0, EffectPrior
from gitimprove.loop.noise import Noise, NoisePool, resolution
from gitimprove.loop.outcome import Estimate, Outcome, Work
from gitimprove.loop.schedule import SURE_DF, boldness
from gitimprove.loop.stats import t_ppf
from gitimprove.state.record import NoiseRecord

_ND = statistics.NormalDist()


# paired mode keeps on 3 pairs or more: two pairs hit by the same kind of excursion on the
# incumbent's side would look like a gain
PAIRED_LOOKS = (3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128)
SPEND_SHARE = 0.8
# a keep against the window rests on this many fresh incumbent runs at least, whose centre
# is within CONFIRM_SE standard errors of the window's (else the decision goes on paired):
# with one, or the looser test that switches to pairs midway (`consistency`), a window the
# level has moved away from was not caught (docs/noise.md)
CONFIRM_FRESH, CONFIRM_SE = 2, 1.5
YOUNG = 3  # a window from fewer decisions' incumbent runs than this is young
# prior="mixture": the share of the learned shrinkage the curtailment takes off a gain, once
# that many decisions' first runs have taught the prior (effects.py; docs/noise.md)
CP_SHARE, CP_AFTER = 0.4, 10
# a keep against the window goes to adjacent pairs when two incumbent runs or more that
# agree with each other (within SEEN_AGREE·σ) reached the candidate's level: a machine with
# fast and slow stretches (docs/noise.md, step 5). One such run is a tail or a glitch, and
# counting it, or two scattered ones, cost gain under heavy tails
SEEN_AGREE = 1.4
# value > 0: the runs a candidate that will not be kept is expected to take yet
VALUE_DOOMED = 2.0
# paired mode's centre of the trusted differences (a setting, measured in docs/noise.md)
PAIRED_CENTERS = ("mean", "huber", "hl")

Run = Callable[[], float]


class AdaptiveRule:
    WINDOW = 16  # recent incumbent runs reused across decisions

    def __init__(
        self,
        direction: str = "lower",
        min_delta: MinDelta | None = None,
        max_runs: int | None = None,
        confidence: float = 0.95,
        futility: float = 1.25,
        window: int = WINDOW,
        outlier_k: float = 3.0,
        calib_runs: int = 5,
        spend: float = 2.0,
        consistency: float = 3.0,
        first_a: int = 3,
        find: float = 0.9,
        inherit: float = 1.0,
        looks: tuple[int, ...] = (2, 4, 8, 16, 32, 64, 128, 256),
        curtail: float = 0.1,
        adapt: bool = True,
        prior: str = "plug-in",
        confirm_exact: int = 0,
        huber_k: float = 1.5,
        paired_center: str = "mean",
        two_k: float | None = None,
        two_k_tails: float = 0.0,
        value: float = 0.0,
        value_alone: bool = False,
    ) -> None:
        md = min_delta or MinDelta()
        self.direction = direction
        self.sign = 1.0 if direction == "lower" else -1.0
        self.relative = md.relative
        self.min_delta = md
        if md.relative:
            self.md = -math.log1p(-md.value) if direction == "lower" else math.log1p(md.value)
        else:
            self.md = md.value
        self.auto_budget = max_runs is None
        self.max_runs = max_runs if max_runs is not None else 24
        self.confidence = confidence
        # the design spends 80% of the allowed false-keep chance: the rest is margin for what
        # a Gaussian design with known σ does not model (tails, glitches, σ estimated)
        self.alpha = SPEND_SHARE * (1.0 - confidence)
        self.z_fut = futility  # optimism of the discard test, in standard errors
        self.W = window
        self.k = outlier_k  # glitch threshold, in σ
        self.calib_runs = calib_runs
        self.spend = spend
        self.consistency = consistency
        self.first_a = first_a  # candidate runs before the first fresh incumbent run
        self.find = find  # the smallest gain worth finding, in σ (or min_delta if larger)
        self.inherit = inherit  # share of the winner's curse taken off an inherited window
        self.looks = tuple(looks)
        self.curtail = curtail  # discard when the chance to be kept at the end falls below
        self.adapt = adapt  # alpha, find and curtail follow the relative noise (schedule.py)
        self.prior = prior  # how a keep's window is moved back: "mixture" (effects.py), "plug-in"
        # a deterministic metric's keep must repeat exactly on this many runs (0 or 1: one run)
        self.confirm_exact = confirm_exact
        # robust centres (docs/noise.md, "robust estimates"): an arm's or the window's Huber
        # centre caps a run's pull at huber_k·σ; paired mode's centre of the trusted
        # differences: "mean", "huber" or "hl" (Hodges-Lehmann)
        if paired_center not in PAIRED_CENTERS:
            raise ValueError(f"paired_center must be one of {', '.join(PAIRED_CENTERS)}")
        self.huber_k = huber_k
        self.paired_center = paired_center
        # two candidate runs apart by more than two_k·√2·σ take a third, judged meanwhile by
        # the better (the median of three then); None: the glitch threshold outlier_k
        self.two_k = two_k
        # two_k applies only where the runs' differences have an excess kurtosis of this or
        # more (tails heavier than Gaussian noise's: a third run sooner); 0: everywhere
        self.two_k_tails = two_k_tails
        self.k2: float | None = two_k  # the decision's own: two_k, or None below the tails
        # value > 0: a candidate also goes when the gain it can still bring (its posterior
        # under the prior of effects, times its chance to be kept) is worth less than the
        # runs it would take, at `value`·τ0 per run (docs/noise.md, "a gain-aware discard")
        self.value = value
        # value_alone: the gain-aware test in place of the futility and curtailment tests
        # (once there is a window and σ rests on SURE_DF degrees of freedom)
        self.value_alone = value_alone
        self.pool = NoisePool(outlier_k)
        self.effects = EffectPrior()
        self.window: list[float] = []
        # how many decisions' incumbent runs the window holds (up to YOUNG): a young window
        # has not yet been seen to hold over time (docs/noise.md, step 5)
        self.window_from = 0
        self.exact: float | None = None  # the incumbent's value, for a deterministic metric
        self.level0 = 0.0  # the calibration's median (for saying how big σ is)

    def tx(self, y: float) -> float:
        if self.relative:
            if y <= 0:
                raise ValueError("a relative min_delta needs a metric above zero")
            return math.log(y)
        return float(y)

    def untx(self, x: float) -> float:
        return math.exp(x) if self.relative else x

    def noise(self) -> Noise:
        return self.pool.noise()

    @property
    def deterministic(self) -> bool:
        return self.exact is not None

    def calibrate(self, run_base: Run) -> list[float]:
        raw = [run_base() for _ in range(self.calib_runs)]
        self.absorb_calibration(raw)
        return raw

    def absorb_calibration(self, raw: Sequence[float]) -> None:
        xs = [self.tx(v) for v in raw]
        self.level0 = statistics.median(raw) if raw else 0.0
        self.effects = EffectPrior(TAU0 * (1.0 if self.relative else abs(self.level0)))
        if raw:
            step = resolution(raw)
            if math.isfinite(step):
                scale = abs(statistics.median(raw)) if self.relative else 1.0
                self.pool.floor = step / scale / math.sqrt(12.0) if scale else 0.0
        self.pool.add(xs, calibration=True)
        # the calibration teaches the noise, but is never the reference for a keep: taken
        # on a busy machine it would make every later run look faster; the first decision
        # compares with fresh incumbent runs, paired, and those start the window
        self.window, self.window_from = [], 0
        noise = self.pool.noise()
        self.exact = raw[-1] if raw and noise.deterministic else None

    def worth_finding(self) -> float:
        """The smallest gain worth finding (rule scale): min_delta, or `find`·σ if larger."""
        noise = self.noise()
        find = boldness(self, noise.sigma).find if noise.known else 0.0
        return max(self.md, find * noise.sigma) if noise.known else self.md

    def plan_budget(self) -> int:
        return budget.plan(self)

    def budget_record(self) -> dict[str, Any]:
        return budget.record(self)

    def restore_budget(self, rec: NoiseRecord | None) -> None:
        budget.restore(self, rec)

    def noise_message(self) -> str:
        return budget.message(self)

    def confirmer(self) -> AdaptiveRule:
        """A tournament winner's confirmation: same noise and budget, fresh paired runs only."""
        other = copy.copy(self)
        other.W, other.window, other.pool = 0, [], self.pool.copy()
        return other

    def decide(
        self, run_base: Run, run_cand: Run, *, moved: bool | None = None, absorb: bool = True
    ) -> Outcome:
        """Decide one candidate. `moved`: whether a keep makes the candidate the incumbent
        (default: yes). `absorb=False` leaves the rule's state alone (a tournament takes its
        round's outcomes in at the round's end, in candidate order)."""
        exact = self.exact is not None
        out = self._decide_exact(run_cand) if exact else self._decide(run_base, run_cand)
        if absorb:
            self.absorb(out, moved=out.keep if moved is None else moved)
        return out

    def _decide_exact(self, run_cand: Run) -> Outcome:
        assert self.exact is not None
        return exact.decide_exact(
            self.exact, run_cand, sign=self.sign, min_delta=self.min_delta,
            confirm=self.confirm_exact, confidence=self.confidence, max_runs=self.max_runs,
        )  # fmt: skip

    def _decide(self, run_base: Run, run_cand: Run) -> Outcome:
        budget.plan(self)  # an automatic budget follows the noise as it is learned
        w = Work()
        window = list(self.window)
        heavy = not self.two_k_tails or self.pool.tails() >= self.two_k_tails
        self.k2 = self.two_k if heavy else None

        def take(arm: str) -> None:
            v = run_cand() if arm == "B" else run_base()
            (w.b if arm == "B" else w.a).append(self.tx(v))
            (w.raw_b if arm == "B" else w.raw_a).append(v)
            w.seq.append(arm)

        take("B")
        noise0 = self.pool.noise()
        wc = est_.clean(window, noise0.sigma if noise0.known else 0.0, self.k)
        nw = len(wc) if len(wc) >= 2 and self.W else 0
        bold = boldness(self, noise0.sigma if noise0.known else 0.0, nw, noise0.df)
        designs = {
            "window": design_bounds(
                bold.alpha, nw, self.max_runs, not nw, self.spend, self.first_a, self.looks
            ),
            "paired": design_bounds(
                bold.alpha, 0, self.max_runs, True, self.spend, 1, PAIRED_LOOKS
            ),
        }
        next_look = 0
        mode = ""
        # the gain-aware discard waits for a window and a σ on SURE_DF degrees of freedom: a σ
        # inflated early (a spiked calibration) makes every candidate look hopeless to it,
        # and candidates discarded after one run teach σ nothing
        sure = bool(nw) and noise0.df >= SURE_DF
        while True:
            used = len(w.seq)
            noise = self.pool.noise([w.b, w.a])
            sigma = noise.sigma if noise.known else 0.0
            est = self._estimate(w, window, sigma)
            if est.mode != mode:
                mode, next_look = est.mode, 0
            looks, bounds = designs[est.mode]
            nc = est.n_cand
            # each planned look is tested once: when the candidate's runs first reach it and
            # the fresh incumbent runs it needs are in (as the design plans it)
            fresh = est.fresh >= (3 if est.mode == "paired" else 1)
            ready = fresh and not est.need
            due = [i for i, n in enumerate(looks) if n <= nc and i >= next_look] if ready else []
            at_look = bool(due) or (ready and used >= self.max_runs and next_look <= len(looks))
            z = bounds[due[-1]] if due else bounds[-1]
            look_before = next_look
            next_look = due[-1] + 1 if due else (len(looks) + 1 if at_look else next_look)
            df = float(min(400, max(1, int(noise.df))))
            tk = t_ppf(round(_ND.cdf(z), 6), df) if sigma > 0 else z
            d, se = est.gain, est.se
            if at_look and est.n_cand >= 2 and est.n_ref >= 2 and d - tk * se > 0 and d >= self.md:
                young = self.window_from < YOUNG
                judged: Estimate | None = est
                if young and est.mode == "window" and not self._window_holds(w, window, sigma, est):
                    # a keep against the window needs fresh incumbent runs that confirm it
                    # (two at least, close to it): a window the machine's level has moved
                    # away from (drift, a wave of load) would make no change look good.
                    # This decision's own runs, taken in turns, need no window: a candidate
                    # they show better on their own is kept on them
                    judged = self._on_own_runs(w, sigma)
                    if judged is not None and not (
                        judged.gain - tk * judged.se > 0 and judged.gain >= self.md
                    ):
                        judged = None
                if (
                    judged is not None
                    and judged.mode == "window"
                    and self._seen_there(w, window, sigma, judged)
                ):
                    # the incumbent itself ran, lately, about as well as the candidate does
                    # now, on two runs or more: the machine has fast stretches (a quiet moment
                    # between other jobs) that can cover one arm's runs and not the other's.
                    # Only adjacent pairs can tell a gain from that: pairs from here
                    if used < self.max_runs:
                        w.split = len(w.seq)
                        take("A" if w.seq[-1] == "B" else "B")
                        continue
                    return self._outcome(False, "inconclusive", est, tk, w, window, sigma)
                if judged is None:
                    if used < self.max_runs:
                        next_look = look_before
                        if est.fresh >= CONFIRM_FRESH:
                            w.split = len(w.seq)  # stale: pairs from here on
                        take("A" if est.fresh < CONFIRM_FRESH or w.seq[-1] == "B" else "B")
                        continue
                    return self._outcome(False, "inconclusive", est, tk, w, window, sigma)
                two = est_.two_modes(w.b, self.pool.calibrated, self.k)  # forged in some runs
                verdict = "two-modes" if two else "confident"
                return self._outcome(verdict == "confident", verdict, judged, tk, w, window, sigma)
            # discard when even an optimistic gain is below what is worth finding, or below
            # what the rest of the budget could still confirm
            se_end = self._se_after(est, self.max_runs - used, sigma)
            t_end = t_ppf(round(_ND.cdf(bounds[-1]), 6), df) if sigma > 0 else 0.0
            target = max(self.md, t_end * se_end, bold.find * sigma)
            extreme = nc <= 1 and d < -self.k * sigma * math.sqrt(1.0 + 1.0 / max(1, est.n_ref))
            # ... or when, were the current estimate true, the rest of the budget would
            # still not get it kept (conditional power below `curtail`)
            spare = (
                math.sqrt(max(1e-24, se * se - se_end * se_end)) if math.isfinite(se) else math.inf
            )
            d_cp = d  # with the learned prior, the curtailment's gain is partly shrunk
            if (
                self.prior == "mixture"
                and math.isfinite(se)
                and len(self.effects.first) >= CP_AFTER
            ):
                d_cp = d - CP_SHARE * max(0.0, d - self.effects.true_gain(d, se))
            hopeless = bold.curtail > 0 and _ND.cdf((d_cp - t_end * se_end) / spare) < bold.curtail
            futile = d + self.z_fut * se < target or hopeless
            gain_aware = self.value > 0 and math.isfinite(se) and sure
            if gain_aware and (self.value_alone or not futile):
                # gain-aware: what the candidate can still bring against the runs it would
                # take (to a keep, were its posterior gain true; VALUE_DOOMED if not kept).
                # The prior's defaults, not learned: under load spikes the first runs it is
                # learned from widen τ, and a 3% gain then reads as most likely no change
                prior = EffectPrior(self.effects.tau0)
                worth, p_keep = prior.worth(d, se, se_end, max(self.md, t_end * se_end))
                left = self.max_runs - used
                runs = p_keep * prior.runs_to_keep(d, se, t_end, used, left)
                runs += (1.0 - p_keep) * min(left, VALUE_DOOMED)
                futile = worth < self.value * self.effects.tau0 * runs
            if futile and not extreme:
                verdict = "below-min-delta" if d - tk * se > 0 else "futile"
                return self._outcome(False, verdict, est, tk, w, window, sigma)
            if used >= self.max_runs:
                return self._outcome(False, "inconclusive", est, tk, w, window, sigma)
            take(est.need or self._next(est, w, extreme))

    def _on_own_runs(self, w: Work, sigma: float) -> Estimate | None:
        """The candidate's runs against the fresh incumbent runs of this decision alone (two
        or more of each, glitches dropped), without the window."""
        b, _ = est_.arm(w.b, sigma, self.k, self.k2)
        a, _ = est_.arm(w.a, sigma, self.k)
        if len(a) < CONFIRM_FRESH or len(b) < 2 or not sigma > 0:
            return None
        level = est_.center(a, sigma, self.huber_k)
        d = self.sign * (level - est_.center(b, sigma, self.huber_k))
        se = sigma * math.sqrt(1.0 / len(a) + 1.0 / len(b))
        return Estimate("window", d, se, len(a), len(b), level, None, fresh=len(a))

    def _seen_there(self, w: Work, window: list[float], sigma: float, est: Estimate) -> bool:
        """Whether two runs of the incumbent or more (its window, this decision's fresh runs)
        were more than k·σ better than the incumbent's centre, covered half the candidate's
        gain or more, and agree with each other (within SEEN_AGREE·σ): a level the incumbent
        reaches on this machine without any change, a fast stretch. One such run, or two far
        apart, are tails or glitches."""
        if not sigma > 0:
            return False
        reach = max(self.k * sigma, est.gain / 2.0)
        xs = sorted(x for x in [*window, *w.a] if self.sign * (est.level - x) >= reach)
        return any(b - a <= SEEN_AGREE * sigma for a, b in itertools.pairwise(xs))

    def _window_holds(self, w: Work, window: list[float], sigma: float, est: Estimate) -> bool:
        """Whether this decision's fresh incumbent runs confirm the window: two at least, and
        their centre within CONFIRM_SE standard errors of the window's."""
        if est.fresh < CONFIRM_FRESH or not sigma > 0:
            return est.fresh >= CONFIRM_FRESH
        wc = est_.clean(window, sigma, self.k)
        cw = est_.center(wc, sigma, self.huber_k)
        lim = self.k * sigma * math.sqrt(1.0 + 1.0 / len(wc))
        good = [x for x in w.a if abs(x - cw) <= lim]
        spread = sigma * math.sqrt(1.0 / len(good) + 1.0 / len(wc))
        return abs(est_.center(good, sigma, self.huber_k) - cw) <= CONFIRM_SE * spread

    def _next(self, est: Estimate, w: Work, extreme: bool) -> str:
        if extreme:  # one very bad run may be a glitch: one more before giving up
            return "B"
        if est.mode == "paired":
            return "A" if w.seq[-1] == "B" else "B"
        if est.fresh == 0:
            if w.a:  # the fresh runs so far were glitches: interleave, so a burst hits both
                return "A" if w.seq[-1] == "B" else "B"
            return "A" if len(w.b) >= self.first_a else "B"
        return "B" if len(w.b) <= est.n_ref else "A"  # as design.arms plans it

    def _se_after(self, est: Estimate, left: int, sigma: float) -> float:
        if est.mode == "paired":
            return math.sqrt(2.0) * sigma / math.sqrt(max(1.0, est.n_cand + left / 2.0))
        a, b = est.n_ref, est.n_cand
        for _ in range(left):
            if b <= a:
                b += 1
            else:
                a += 1
        return sigma * math.sqrt(1.0 / max(1, a) + 1.0 / max(1, b))

    def _estimate(self, w: Work, window: list[float], sigma: float) -> Estimate:
        return compare.estimate(self, w, window, sigma)

    def _outcome(
        self,
        keep: bool,
        verdict: str,
        est: Estimate,
        bound: float,
        w: Work,
        window: list[float],
        sigma: float,
    ) -> Outcome:
        finite = est.se > 0 and math.isfinite(est.se)
        return Outcome(
            keep,
            verdict,
            est.gain,
            bound * est.se if finite else 0.0,
            list(w.raw_b),
            list(w.raw_a),
            "".join(w.seq),
            est.mode,
            len(window) if est.mode == "window" else 0,
            est.reset,
            self.untx(est.level),
            est.n_ref,
            est.n_cand,
            sigma,
            bound if finite else 0.0,
        )

    def absorb(self, out: Outcome, *, moved: bool) -> None:
        """Take a finished decision into the rule's state (live, and when replaying notes)."""
        if out.mode == "exact":
            if moved:  # a noisy candidate kept on its mean: the incumbent is noisy now
                self.exact = out.candidate[0] if len(set(out.candidate)) == 1 else None
            if self.exact is None:
                self.pool.add([self.tx(v) for v in out.candidate])
            return
        b = [self.tx(v) for v in out.candidate]
        a = [self.tx(v) for v in out.incumbent]
        self.effects.observe_first(self.sign, b, self.window, self.pool.noise(), self.k)
        self.pool.add(b)
        self.pool.add(a)
        if moved:
            self.window = self._inherited(out, b)
            self.window_from = YOUNG
        elif out.window_reset or not self.window:
            self.window = a[-self.W :] if self.W else []
            self.window_from = 1 if self.window else 0
        else:
            self.window = (self.window + a)[-self.W :] if self.W else []
            self.window_from = min(YOUNG, self.window_from + (1 if a else 0))

    def moved_to(self, out: Outcome) -> None:
        """The incumbent became this decision's candidate (a tournament's winner)."""
        if out.mode == "exact":
            self.exact = out.candidate[0] if len(set(out.candidate)) == 1 else None
        else:
            self.window = self._inherited(out, [self.tx(v) for v in out.candidate])
            self.window_from = YOUNG

    def _inherited(self, out: Outcome, b: list[float]) -> list[float]:
        """The new incumbent's window: its runs from the decision that kept it, moved back by
        their estimated selection bias (the winner's curse): a keep just over its threshold
        was probably lucky, one far over it hardly. Plug-in estimate: the mean excess of a
        normal over the threshold, λ(c − z)·se, the candidate's share of it by variance."""
        if not self.inherit or not self.W or not b or not out.sigma > 0 or not out.half > 0:
            return []
        se = out.half / max(out.bound, 1e-9)
        share = min(1.0, (out.sigma**2 / max(1, out.n_cand)) / se**2)
        if self.prior == "mixture":
            excess = self.effects.excess_of(out)
        else:
            z = out.gain / se
            lam = _ND.pdf(out.bound - z) / max(1e-12, 1.0 - _ND.cdf(out.bound - z))
            excess = lam * se * share
        shift = self.sign * self.inherit * excess
        return [x + shift for x in b[-self.W :]]
