"""The agent's program: everything it needs to propose ONE change (DESIGN §7 step 1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gitimprove.git.repo import Repo
    from gitimprove.state.experiments import Experiment

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


def _rows(rows: Sequence[Experiment]) -> str:
    lines = []
    for r in rows:
        shown = f"{r.value:.6g}" if r.value is not None else "-"
        iteration = "-" if r.iteration is None else r.iteration
        lines.append(
            f"- iteration {iteration} {r.commit[:10]} {r.status} "
            f"metric={shown} [{r.approach or 'other'}] {r.description}"
            + (f" — {r.reason}" if r.reason else "")
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
    rows: Sequence[Experiment],
    learnings: Sequence[str] = (),
    ideas: Sequence[str] = (),
    escalation: int = 0,
    family: str | None = None,
    rework_tail: str | None = None,
    round_history: str | None = None,
) -> str:
    recent = list(rows)[-20:]
    worked = [r for r in rows if r.is_keep][-10:]
    failed = [r for r in rows if not r.kept and r.status != "pending"][-10:]
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


def memory_inputs(repo: Repo) -> tuple[list[str], list[str]]:
    """(approved learnings, the team's ideas) from the memory branch, oldest first; entries
    that cannot be read are skipped (the tolerant reader; `doctor` counts them)."""
    from gitimprove.memory import entries

    learnings = [
        str(lrn["body"]).splitlines()[-1]
        for lrn in entries.markdown(repo, "learnings")
        if str(lrn["body"]).strip()
    ]
    ideas = [str(idea["text"]) for idea in entries.ideas(repo)]
    return learnings, ideas
