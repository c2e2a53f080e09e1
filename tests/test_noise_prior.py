"""The noise prior a run takes from earlier runs of the same metric is learned from reference
runs only (baselines' calibrations, decisions' incumbent arms): candidate runs are code an
agent wrote, and a candidate made to repeat exactly would otherwise teach the next run that a
noisy metric is quiet."""

from __future__ import annotations

import random
from typing import Any

import pytest

from gitimprove.loop.history import noise_prior
from gitimprove.loop.rule import AdaptiveRule
from gitimprove.state.record import Experiment

HARNESS = {"metric_command": "python bench.py"}


def exp(i: int, status: str, samples: list[float], incumbent: list[float]) -> Experiment:
    state: dict[str, Any] = {
        "run": "old",
        "status": status,
        "host": "h",
        "ts": f"2026-01-01T00:{i:02d}:00Z",
        "harness": HARNESS,
        "metric": {"value": samples[0], "samples": samples, "incumbent_samples": incumbent},
    }
    return Experiment(f"{i:040x}", state)


def history(rng: random.Random, candidate: Any) -> list[Experiment]:
    noisy = lambda n: [100 + rng.gauss(0, 5) for _ in range(n)]  # noqa: E731
    exps = [exp(0, "baseline", noisy(5), [])]
    exps += [exp(i, "discard", candidate(), noisy(3)) for i in range(1, 40)]
    return exps


def prior_sigma(exps: list[Experiment]) -> float:
    rule = AdaptiveRule(direction="lower")
    got = noise_prior(exps, rule, run="new", metric_command="python bench.py", host="h")
    assert got is not None
    return got.sigma


@pytest.mark.slow
def test_candidates_made_to_repeat_exactly_do_not_make_a_noisy_metric_look_quiet() -> None:
    honest = prior_sigma(
        history(random.Random(1), lambda: [100 + random.gauss(0, 5) for _ in range(4)])
    )
    poisoned = prior_sigma(history(random.Random(1), lambda: [60.0] * 8))
    wild = prior_sigma(history(random.Random(1), lambda: [1.0, 1e6, 3.0, 5e5]))
    assert 3 < honest < 7 and abs(poisoned - honest) / honest < 0.5, (honest, poisoned)
    assert abs(wild - honest) / honest < 0.5, (honest, wild)


def test_a_history_of_candidates_alone_teaches_nothing() -> None:
    exps = [exp(i, "discard", [60.0] * 8, []) for i in range(1, 20)]
    rule = AdaptiveRule(direction="lower")
    assert noise_prior(exps, rule, run="new", metric_command="python bench.py", host="h") is None
