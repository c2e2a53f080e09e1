"""The words and numbers of a decision and of a run's keeps, from the numbers a note holds."""

from __future__ import annotations

import math

import pytest

from gitimprove.loop import wording
from gitimprove.loop.wording import Change


def test_an_interval_reaching_below_zero_keeps_the_change_percent() -> None:
    # a timing metric: both levels above 0 s, the interval of the change reaching past 0 s
    c = Change.of(0.05, 0.04, (-0.045, 0.065))
    assert c.delta_pct == pytest.approx(25.0)
    assert c.interval_pct is None
    assert wording.change_words(c, "lower") == "25.0% worse (0.01 higher)"
    assert wording.interval_words(c, "lower") == "interval 0.065 worse to 0.045 better"


def test_levels_across_zero_have_no_percent_at_all() -> None:
    c = Change.of(0.02, -0.01, (0.01, 0.05))
    assert c.delta_pct is None and c.interval_pct is None
    assert "no percent" in wording.change_words(c, "higher")


def test_a_one_sided_interval_has_its_percent() -> None:
    c = Change.of(90.0, 100.0, (-12.0, -8.0))
    assert c.delta_pct == pytest.approx(-10.0)
    assert c.interval_pct == pytest.approx((-12.0, -8.0))
    assert wording.interval_words(c, "lower") == "interval 8.0% to 12.0% better"


@pytest.mark.parametrize(
    ("changes", "delta", "pct"),
    [
        ([(-10.0, -10.0)], -10.0, -10.0),
        ([(-10.0, -10.0), (-9.0, -10.0)], -19.0, -19.0),  # compounded, not summed
        ([(-10.0, -10.0), (5.0, 5.555)], -5.0, (0.9 * 1.05555 - 1) * 100),
        ([(-0.3, None), (-0.1, -50.0)], -0.4, None),  # one keep's levels reach 0
    ],
)
def test_keeps_together_are_their_notes_compounded(
    changes: list[tuple[float, float | None]], delta: float, pct: float | None
) -> None:
    got_delta, got_pct = wording.kept_together(list(changes))
    assert got_delta == pytest.approx(delta)
    assert (got_pct is None) == (pct is None)
    if pct is not None:
        assert got_pct == pytest.approx(pct)


def test_keeps_together_in_words() -> None:
    assert wording.kept_words([]) == "no keep"
    assert wording.kept_words([(-2.83, -28.3)]) == "its keep measured -28.3%"
    two = wording.kept_words([(-28.3, -28.3), (-3.6, -5.0)])
    assert two == "the 2 keeps measured -31.9% together (-28.3%, -5.0%)"
    unit = wording.kept_words([(-4.590654, None), (-0.731378, -35.1)])
    assert unit == (
        "the 2 keeps measured -5.322 together (-4.591, -0.7314; no percent: the levels reach 0)"
    )
    many = wording.kept_words([(-1.0, -1.0)] * 7)
    assert many.endswith("(-1.0%, -1.0%, -1.0%, -1.0%, -1.0%, … 2 more)")
    assert math.isclose(float(many.split()[4].rstrip("%")), -6.8, abs_tol=0.05)
