"""The agent's program: everything it needs to propose ONE change (DESIGN §7 step 1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# Marks a transcript as a gitimprove child session, so memory mining skips it.
PROGRAM_MARKER = "<!-- gitimprove:program -->"

ESCALATION = {
    0: "",
    1: "You have had several attempts in a row without a keep. Re-read every file in scope and "
    "the whole results log below before choosing; do not repeat a failed idea.",
    2: "Still no keep. Combine two or three of the past wins (listed below) in a new way.",
    3: "Still no keep. Try the opposite of what has been failing: if tuning failed, restructure; "
    "if adding failed, remove.",
    4: "Still no keep. Make one radical change: a different algorithm or architecture for the "
    "part that dominates the metric.",
    5: "The run is stuck; it will stop after this round with a diagnosis.",
}


def _rows(rows: Sequence[Mapping[str, Any]]) -> str:
    lines = []
    for r in rows:
        metric = r.get("metric") or {}
        value = metric.get("value") if isinstance(metric, Mapping) else None
        shown = f"{value:.6g}" if isinstance(value, int | float) else "-"
        lines.append(
            f"- iteration {r.get('iteration', '-')} {str(r.get('commit', ''))[:10]} {r.get('status')} "
            f"metric={shown} [{r.get('approach') or 'other'}] {r.get('description') or ''}"
            + (f" — {r.get('reason')}" if r.get("reason") else "")
        )
    return "\n".join(lines) or "- (none yet)"


def build(
    *,
    goal: str,
    metric_name: str,
    direction: str,
    metric_command: str,
    mutable: Sequence[str],
    sealed: Sequence[str],
    rows: Sequence[Mapping[str, Any]],
    learnings: Sequence[str] = (),
    ideas: Sequence[str] = (),
    escalation: int = 0,
    family: str | None = None,
    rework_tail: str | None = None,
    round_history: str | None = None,
) -> str:
    recent = list(rows)[-20:]
    worked = [r for r in rows if r.get("status") in ("keep", "keep-reworked")][-10:]
    failed = [
        r for r in rows if r.get("status") not in ("keep", "keep-reworked", "baseline", "pending")
    ][-10:]
    parts = [
        PROGRAM_MARKER,
        "# Your task",
        "",
        f"Goal: {goal or f'make {metric_name} {direction}'}.",
        f"The metric `{metric_name}` is measured by `{metric_command}`; {direction} is better.",
        "",
        "Make exactly ONE focused change to the code, then stop. Do not commit: the harness",
        "commits, measures and decides. Do not touch sealed files; they are restored before",
        "measuring, and an attempt that changes them is rejected.",
        "",
        f"You may change: {', '.join(mutable) or '(anything)'}",
        f"Sealed (never change): {', '.join(['.gitimprove.toml', *sealed])}",
    ]
    if family:
        parts += [
            "",
            f"Approach family for this attempt: **{family}**. Make a change of that kind.",
        ]
    if ESCALATION.get(escalation):
        parts += ["", f"## Escalation level {escalation}", ESCALATION[escalation]]
    if rework_tail is not None:
        parts += [
            "",
            "## Rework",
            "Your last change failed the guard (the tests). Fix it so the guard passes, keeping",
            "the idea. The end of the guard's output:",
            "```",
            rework_tail[-3000:],
            "```",
        ]
    if round_history:
        parts += ["", "## This round so far", round_history]
    parts += ["", "## Recent results (newest last)", _rows(recent)]
    parts += ["", "## What worked", _rows(worked), "", "## What failed", _rows(failed)]
    if learnings:
        parts += ["", "## Approved learnings", *[f"- {x}" for x in learnings]]
    if ideas:
        parts += ["", "## Ideas from the team (try one if it fits)", *[f"- {x}" for x in ideas]]
    parts += [
        "",
        "## When you are done",
        "Print, as the LAST line of your output, one line of JSON:",
        '{"description": "<what you changed, one sentence>", "hypothesis": "<why it should help>", '
        '"approach": "<architecture|config|data|infrastructure|optimization|testing|documentation|other>"}',
        "",
    ]
    return "\n".join(parts)
