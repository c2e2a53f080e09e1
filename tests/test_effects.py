"""The learned prior on the agent's effects that moves a keep's window back (docs/noise.md)."""

from __future__ import annotations

import random

import pytest

from gitimprove.config import MinDelta
from gitimprove.loop.effects import EffectPrior
from gitimprove.loop.machine import SCENARIOS, Machine
from gitimprove.loop.outcome import Outcome
from gitimprove.loop.rule import AdaptiveRule
from gitimprove.loop.simulate import Adaptive, aa_keeps, draw_effect


def learned(effects: list[float], sigma: float, seed: int = 1, window: int = 8) -> EffectPrior:
    """A prior fitted to the first runs of candidates with these true effects."""
    rng = random.Random(seed)
    prior = EffectPrior()
    v = sigma * sigma * (1.0 + 1.0 / window)
    for e in effects:
        prior.observe(e + rng.gauss(0.0, v**0.5), v)
    return prior


@pytest.mark.parametrize("sigma", [0.01, 0.02])
def test_no_effect_changes_teach_that_a_lucky_keep_is_luck(sigma: float) -> None:
    nulls = learned([0.0] * 200, sigma)
    rng = random.Random(2)
    real = learned([draw_effect(rng) for _ in range(200)], sigma)
    assert nulls.fit()[0] > 0.7 and 0.35 < real.fit()[0] < 0.65  # 45% of these do nothing
    # a keep 2.2 standard errors over zero: mostly luck when the agent's changes do nothing,
    # mostly real when they often help
    assert nulls.true_gain(0.022, 0.01) < 0.4 * 0.022 < 0.6 * 0.022 < real.true_gain(0.022, 0.01)


def test_a_big_real_gain_is_hardly_shrunk_while_a_marginal_one_is() -> None:
    rng = random.Random(2)
    prior = learned([draw_effect(rng) for _ in range(300)], 0.05)
    big, small = prior.true_gain(0.09, 0.012), prior.true_gain(0.025, 0.012)
    assert big > 0.8 * 0.09  # a normal prior of the same spread would take off a third
    assert small / 0.025 < big / 0.09  # the share taken off grows as the gain nears se


@pytest.mark.parametrize("spike", [0.3, 1.0])
def test_spiked_first_runs_widen_the_prior_so_it_shrinks_less(spike: float) -> None:
    rng = random.Random(3)
    effects = [draw_effect(rng) for _ in range(200)]
    calm = learned(effects, 0.02)
    spiky = learned(effects, 0.02)
    for _ in range(20):  # a tenth of the first runs hit by load
        spiky.observe(-spike, 0.02**2 * 1.125)
    assert spiky.true_gain(0.05, 0.01) >= calm.true_gain(0.05, 0.01) * 0.98


def test_the_candidates_share_of_the_luck_moves_its_runs() -> None:
    prior = learned([0.0] * 100, 0.05)
    window = Outcome(
        True,
        "confident",
        0.05,
        0.045,
        [1.0] * 4,
        [1.0] * 4,
        "BBBABBAB",
        "window",
        16,
        False,
        1.0,
        20,
        4,
        sigma=0.05,
        bound=1.5,
    )
    se = window.half / window.bound
    share = 0.05**2 / 4 / se**2
    assert share < 1  # the window held most of the incumbent's share of the variance
    assert prior.excess_of(window) == pytest.approx(
        share * (0.05 - prior.true_gain(0.05, se)), rel=1e-12
    )
    assert 0 < prior.excess_of(window) < 0.05


def test_first_runs_are_what_the_rule_learns_from_and_resume_rebuilds_them() -> None:
    m = Machine(random.Random("fx"), SCENARIOS["cv5"])
    rule = AdaptiveRule(min_delta=MinDelta(0.0, relative=True))
    calib = rule.calibrate(lambda: m.run(1.0))
    rng = random.Random(9)
    t, outs = 1.0, []
    for _ in range(30):
        e = draw_effect(rng)
        out = rule.decide(lambda t=t: m.run(t), lambda t=t, e=e: m.run(t * (1 - e)))
        outs.append(out)
        t = t * (1 - e) if out.keep else t
    assert len(rule.effects.first) >= 20  # every decision with a window taught it
    replay = AdaptiveRule(min_delta=MinDelta(0.0, relative=True))
    replay.absorb_calibration(calib)
    for out in outs:
        replay.absorb(out, moved=out.keep)
    assert replay.effects.first == rule.effects.first
    assert replay.effects.fit() == rule.effects.fit()
    assert replay.window == rule.window


def test_the_mixture_option_moves_a_keeps_window_by_the_learned_luck() -> None:
    """prior="mixture": the new incumbent's window is its runs moved back by the luck the
    learned prior expects in them; a real 1.5% gain at 1% noise keeps most of its runs' gain."""
    m = Machine(random.Random("lucky"), SCENARIOS["cv1"])
    rule = AdaptiveRule(min_delta=MinDelta(0.0, relative=True), prior="mixture")
    rule.calibrate(lambda: m.run(1.0))
    rng = random.Random(4)
    for _ in range(40):  # the agent's changes: many do nothing, some help, some hurt
        e = draw_effect(rng)
        rule.decide(lambda: m.run(1.0), lambda e=e: m.run(1.0 - e), moved=False)
    for _ in range(30):  # the first keep of a small real gain
        out = rule.decide(lambda: m.run(1.0), lambda: m.run(0.985), moved=False)
        if out.keep:
            break
    assert out.keep
    cand = [rule.tx(v) for v in out.candidate]
    rule.absorb(out, moved=True)  # its first run joins what the prior learns from, first
    excess = rule.effects.excess_of(out)
    assert rule.window == [x + rule.sign * excess for x in cand[-rule.W :]]
    assert 0 < excess < 0.5 * out.gain


@pytest.mark.slow
@pytest.mark.parametrize(
    ("scenario", "prior"),
    [(s, "plug-in") for s in ("cv5", "t3", "spikes", "busycal")]
    + [("cv5", "mixture"), ("busycal", "mixture")],
)
def test_no_effect_keeps_stay_under_5_percent_at_every_decision_index(
    scenario: str, prior: str
) -> None:
    n, iters = 120, 24
    keeps = aa_keeps(
        scenario, range(n), iters=iters, seed="every", make=lambda: Adaptive(prior=prior)
    )
    # each index on its own, and the indexes in blocks of 4 (less chance in one cell)
    assert max(keeps) <= 0.05 * n + 3, keeps  # about 2.5 sd of sampling over a 5% rate
    blocks = [sum(keeps[i : i + 4]) for i in range(0, iters, 4)]
    assert max(blocks) <= 0.05 * 4 * n, keeps
