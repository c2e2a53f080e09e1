"""One decision's outcome, and the working state of a decision in progress."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Outcome:
    """One decision, with everything needed to replay it into the rule and to report it."""

    keep: bool
    verdict: (
        str  # confident | futile | inconclusive | below-min-delta | deterministic | stored-best
        # | two-modes (confident, but the candidate's runs fall into two groups: not kept)
    )
    gain: float  # rule scale, + = candidate better
    half: float  # half-width of the interval at the decision's threshold (rule scale)
    candidate: list[float]  # raw values, in run order
    incumbent: list[float]  # fresh incumbent runs, raw, in run order
    sequence: str  # run order, "B" candidate / "A" incumbent, e.g. "BBABB"
    mode: str  # window | paired | exact | stored
    window_used: int
    window_reset: bool
    reference: float  # the incumbent's level the gain is measured from (raw units)
    n_ref: int  # incumbent runs behind the estimate (window included)
    n_cand: int  # candidate runs behind the estimate
    sigma: float = 0.0  # σ per run used (rule scale)
    bound: float = 0.0  # the threshold z the gain was held to (half = bound·se)

    @property
    def runs(self) -> int:
        return len(self.sequence)

    def record(self) -> dict[str, Any]:
        """The note's `decision` block: what the rule needs to replay it on resume."""
        return {
            "runs": self.runs,
            "rule": self.verdict,
            "keep": self.keep,
            "gain": self.gain,
            "half": self.half,
            "bound": self.bound,
            "sigma": self.sigma,
            "sequence": self.sequence,
            "mode": self.mode,
            "window_used": self.window_used,
            "window_reset": self.window_reset,
            "n_ref": self.n_ref,
            "n_cand": self.n_cand,
        }


@dataclass
class Work:
    """The runs of the decision in progress (rule scale and raw)."""

    b: list[float] = field(default_factory=list)
    a: list[float] = field(default_factory=list)
    raw_b: list[float] = field(default_factory=list)
    raw_a: list[float] = field(default_factory=list)
    seq: list[str] = field(default_factory=list)
    split: int | None = None  # where the window was found stale: pairs count from here


@dataclass
class Estimate:
    mode: str
    gain: float
    se: float
    n_ref: int
    n_cand: int
    level: float  # the incumbent's level (rule scale)
    need: str | None = None  # an arm that must run before a verdict
    reset: bool = False
    fresh: int = 0  # fresh incumbent runs behind the estimate
