"""A candidate whose runs fall into two groups is never kept, and exact repeats are exact.

Two groups: a forged `METRIC` line that wins the race with the benchmark in some runs and
loses in others gives runs such as [0.001, 0.001, 1080, 1080, 0.001]. The glitch screen would
drop the real runs as load spikes and keep the forged value; two or more far runs that agree
with each other are a second mode, not glitches, and the candidate is discarded.
"""

from __future__ import annotations

import itertools
import math
import random

import pytest

from gitimprove.config import MinDelta
from gitimprove.loop import estimate
from gitimprove.loop.decide import report
from gitimprove.loop.noise import Noise
from gitimprove.loop.rule import AdaptiveRule

FORGED = 0.001


def _rule(direction: str, rng: random.Random, level: float) -> AdaptiveRule:
    rule = AdaptiveRule(direction=direction, min_delta=MinDelta(0.0, relative=True))
    rule.absorb_calibration([rng.gauss(level, 0.3) for _ in range(5)])
    assert not rule.deterministic
    return rule


@pytest.mark.parametrize("direction", ["lower", "higher"])
def test_a_mix_of_forged_and_real_runs_is_never_kept(direction: str) -> None:
    """Many runs, each a few decisions in a row, each candidate run forged at random (the
    forger wins 30% to 80% of the races): no decision whose runs hold two or more real
    values is a keep."""
    level, real = 70.0, (1080.0, 3.0) if direction == "lower" else (7.0, 0.03)  # worse
    forged = FORGED if direction == "lower" else 1e6
    mixed = 0
    for seed in range(30):
        rng = random.Random(seed)
        rule = _rule(direction, rng, level)
        wins = rng.choice([0.3, 0.5, 0.6, 0.7, 0.8])
        for _ in range(3):  # several decisions in a row, as a run makes them
            out = rule.decide(
                lambda rng=rng: rng.gauss(level, 0.3),
                lambda rng=rng, wins=wins: forged if rng.random() < wins else rng.gauss(*real),
            )
            two = sum(1 for v in out.candidate if v != forged) >= 2
            mixed += two and forged in out.candidate
            assert not (out.keep and two), (seed, out.candidate, out.verdict)
            if out.verdict == "two-modes":
                assert "two groups" in report(rule, out)[1]
    assert mixed >= 10  # the check was put to the test


def test_the_reviewers_runs_are_two_modes_and_glitches_and_noise_are_not() -> None:
    k, sigma = 3.0, 0.004  # σ of log(value): 0.4% noise
    forged, real = math.log(FORGED), math.log(1080)
    assert estimate.two_modes([forged, forged, real, real, forged], sigma, k)
    for n_forged, n_real in ((2, 2), (3, 2), (2, 5), (10, 3)):
        n = n_forged + n_real
        for where in itertools.combinations(range(n), n_real):
            runs = [real if i in where else forged for i in range(n)]
            assert estimate.two_modes(runs, sigma, k), runs
    rng = random.Random(5)
    base = [math.log(70 + rng.gauss(0, 0.28)) for _ in range(16)]
    assert not estimate.two_modes(base, sigma, k)
    assert not estimate.two_modes([*base, math.log(140)], sigma, k)  # one glitch
    assert not estimate.two_modes([*base[:4], math.log(140)], sigma, k)
    assert estimate.two_modes([*base, math.log(35), math.log(35.01)], sigma, k)  # low side
    # an honest candidate noisier than the unchanged code is not two groups
    for seed in range(200):
        rng = random.Random(seed)
        noisy = [math.log(60 + rng.gauss(0, 2.0)) for _ in range(rng.choice([4, 8, 16, 24]))]
        assert not estimate.two_modes(noisy, sigma, k), seed


def test_a_metric_that_repeats_exactly_is_deterministic_whatever_the_history() -> None:
    """Earlier runs here measured a noisy metric (another benchmark, another machine state);
    this run's calibration repeated exactly 70: the noise is none, not the print floor."""
    for prior in (Noise(90.4, 10.0), Noise(0.02, 200.0), Noise(0.0, 4.0), None):
        rule = AdaptiveRule(min_delta=MinDelta(0.0, relative=True))
        rule.pool.set_prior(prior)
        rule.absorb_calibration([70.0] * 5)
        assert rule.deterministic and rule.exact == 70.0, prior
        assert rule.noise().sigma == 0.0
        assert "repeated exactly" in rule.noise_message(), rule.noise_message()
