"""When a run stops, and how hard it pushes when stuck (DESIGN §7 step 8).

Stop conditions (iterations, target, circuit breaker, cost and time caps, `git improve
stop`), the stuck ladder's escalation level, and the stall stops (the ladder's top, the
plateau), which leave a diagnosis on the memory branch as an improvement proposal.
"""

from __future__ import annotations

import time

from gitimprove.git import memory
from gitimprove.loop import runs
from gitimprove.loop.context import RunContext
from gitimprove.loop.history import History
from gitimprove.util.clock import utc_now

STUCK_LEVEL = 5  # the ladder's top: stop with a diagnosis


def stop_reason(ctx: RunContext, history: History, iteration: int) -> str | None:
    if runs.stop_requested(ctx.repo, ctx.name):
        return "stop requested (git improve stop)"
    if iteration > ctx.iterations:
        return f"iterations reached ({ctx.iterations})"
    best = history.best(ctx.cfg.direction)
    target = ctx.target
    if (
        target is not None
        and best is not None
        and (best <= target if ctx.cfg.direction == "lower" else best >= target)
    ):
        return f"target reached ({best:.6g})"
    crashes = history.crashed_rounds()
    if crashes >= int(ctx.cfg.get("loop", "circuit_breaker")):
        return f"circuit breaker: {crashes} rounds in a row crashed"
    spent = history.spent()
    cap = ctx.max_cost
    if cap is not None and spent >= cap:
        return f"cost cap reached (${spent:.2f} of ${cap:.2f})"
    if time.monotonic() - ctx.started >= ctx.max_time:
        return f"time cap reached ({ctx.max_time:.0f}s)"
    return None


def stalled(ctx: RunContext, history: History) -> str | None:
    """The stuck ladder's top, or the plateau, whichever comes first: a stop reason, with a
    diagnosis written to the memory branch. With the defaults the ladder's top comes first
    (5 × stuck_after = 50 rounds without a keep, plateau_patience 60)."""
    since_keep = history.rounds_since_keep()
    if escalation(ctx, history) >= STUCK_LEVEL:
        diagnose(ctx, history)
        return f"stuck: escalation level {STUCK_LEVEL} reached after {since_keep} rounds without a keep; a diagnosis was written to the memory branch"
    if since_keep >= int(ctx.cfg.get("loop", "plateau_patience")):
        diagnose(ctx, history)
        return (
            f"plateau: no keep in {since_keep} rounds; a diagnosis was written to the memory branch"
        )
    return None


def escalation(ctx: RunContext, history: History) -> int:
    """Rounds without a keep since the last keep, over stuck_after, capped at the top."""
    return min(STUCK_LEVEL, history.rounds_since_keep() // int(ctx.cfg.get("loop", "stuck_after")))


def diagnose(ctx: RunContext, history: History) -> None:
    """Write why the run is stuck to the memory branch."""
    recent = list(history.attempts)[-max(1, history.rounds_since_keep()) :][-50:]
    counts: dict[str, int] = {}
    for e in recent:
        counts[str(e.status)] = counts.get(str(e.status), 0) + 1
    body = "\n".join(
        [
            "+++",
            'kind = "proposal"',
            f'source = "run {ctx.name}"',
            f'created = "{utc_now()}"',
            "+++",
            f"# Run {ctx.name} is stuck",
            "",
            f"{len(recent)} attempts without a keep. Outcomes: "
            + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
            + ".",
            "",
            "Approaches tried: " + ", ".join(sorted({e.approach or "other" for e in recent})) + ".",
            "",
            "Consider: a less noisy metric (more iterations inside the benchmark), a wider scope, or a new goal.",
            "",
        ]
    )
    memory.add_entries(
        ctx.repo,
        {memory.entry_name("proposals", "md"): body},
        message=f"gitimprove: diagnosis of stuck run {ctx.name}",
    )
