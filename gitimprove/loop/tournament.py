"""Tournaments (DESIGN §7 step 6 with K candidates): families, the round's history, the launch
budget, ranking, the winner's confirmation, and the round's one transaction."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gitimprove import agents
from gitimprove.git import strays
from gitimprove.loop import ledger, siblings, wording
from gitimprove.loop.attempt import AttemptSpec, run_attempt
from gitimprove.loop.context import Event, MetricFailed, RoundBudget, RunContext
from gitimprove.loop.decide import report
from gitimprove.loop.history import History, group_rounds, outcome_of
from gitimprove.loop.integrity import Tampered, fresh_checkout
from gitimprove.loop.rule import AdaptiveRule
from gitimprove.state.experiments import Experiment


def families(history: Sequence[Experiment], iteration: int, candidates: int) -> list[str]:
    """K different approach families; never the one that won the last 3 rounds in a row."""
    winners = []
    for rnd in group_rounds(history):
        won = [e for e in rnd if e.is_keep]
        winners.append((won[0].family_or_approach or "") if won else "")
    banned = (
        winners[-1] if len(winners) >= 3 and winners[-1] and len(set(winners[-3:])) == 1 else None
    )
    allowed = [f for f in agents.FAMILIES if f != banned]
    start = (iteration * candidates) % len(allowed)
    return [allowed[(start + i) % len(allowed)] for i in range(candidates)]


def round_history(history: History, last: int = 5) -> str:
    lines = []
    for rnd in history.rounds()[-last:]:
        parts = []
        for e in sorted(rnd, key=lambda e: e.candidate):
            word = "won" if e.is_keep else ("crashed" if e.is_crash else "lost")
            parts.append(
                f"{e.family_or_approach or 'other'} {word} ({e.status}: {e.description or '-'})"
            )
        lines.append(f"- round {rnd[0].iteration}: " + "; ".join(parts))
    return "\n".join(lines) or "- (no earlier rounds)"


def round_budget(history: History, iteration: int) -> RoundBudget:
    """The run's spending so far, and the trees this round's finished candidates made."""
    attempts = [e for e in history.attempts if e.agent is not None and e.agent.seconds is not None]
    costs = [e.cost_usd for e in attempts]
    return RoundBudget(
        spent=sum(costs),
        avg_cost=(sum(costs) / len(costs)) if costs and sum(costs) > 0 else None,
        avg_seconds=(
            sum(e.agent.seconds or 0.0 for e in attempts if e.agent) / len(attempts)
            if attempts
            else None
        ),
        trees={e.tree: e.candidate for e in history.in_round(iteration) if e.tree},
    )


def run_round(
    ctx: RunContext, iteration: int, incumbent: str, history: History, level: int
) -> str | None:
    """Run one tournament round; returns a stop reason when no candidate could be launched."""
    finished = {e.candidate for e in history.in_round(iteration)}
    fams = families(history.without_round(iteration), iteration, ctx.candidates)
    text = round_history(history)
    ctx.shared.new_round(round_budget(history, iteration))
    todo = [c for c in range(ctx.candidates) if c not in finished]
    with ThreadPoolExecutor(max_workers=max(1, len(todo))) as pool:
        futures = [
            pool.submit(
                run_attempt,
                ctx,
                AttemptSpec(iteration, c, incumbent, history, level, fams[c], text),
            )
            for c in todo
        ]
        for fut in futures:
            event = fut.result()
            if event is not None:
                ctx.emit(event)
    cands = History.read(ctx.repo, ctx.name).in_round(iteration)
    if not cands:
        return "budget: what is left of the cost or time cap cannot cover another candidate"
    ctx.emit(finalize(ctx, iteration, incumbent, cands))
    return None


def confirm(ctx: RunContext, winner: str, incumbent: str) -> tuple[bool, str, dict[str, Any]]:
    """Measure the winner once more against fresh, interleaved runs of the incumbent: picking
    the best of K inflates its apparent gain, so the branch moves only if it holds again."""
    if not isinstance(ctx.rule, AdaptiveRule):
        return True, "not confirmed (benchmark rule)", {}
    rule = ctx.rule.confirmer()
    inc = ctx.incumbent_checkout(incumbent)
    with contextlib.ExitStack() as stack:
        with ctx.shared.lock:
            wco = fresh_checkout(stack, ctx.repo, winner, f"{ctx.name}-confirm", ctx.shared.spares)
        try:
            with ctx.shared.rule_lock:
                out = rule.decide(lambda: ctx.metric(inc), lambda: ctx.metric(wco))
        except MetricFailed as exc:
            return False, f"the confirmation run failed: {exc.run.error}", {}
        except Tampered as exc:
            ctx.shared.drop_checkout(exc.checkout)
            return False, exc.reason, {"tampered": exc.paths[:50]}
    _, sentence = report(rule, out)
    record = {
        "runs": out.runs,
        "keep": out.keep,
        "gain": out.gain,
        "samples": out.candidate,
        "incumbent_samples": out.incumbent,
        "sequence": out.sequence,
    }
    return out.keep, sentence, record


def _rank(cands: Sequence[Experiment]) -> list[Experiment]:
    measured = [e for e in cands if e.decision is not None and e.status in ("pending", "discard")]
    return sorted(measured, key=lambda e: -((e.decision.gain if e.decision else None) or 0.0))


def finalize(ctx: RunContext, iteration: int, incumbent: str, cands: list[Experiment]) -> Event:
    """Rank, confirm the winner, then one transaction: every candidate's final line and
    the fast-forward of improve/<run>. A candidate whose window was open while gitimprove's
    folder changed, with another's open too (the writer unknown), is `tampered`, never kept;
    so is one whose agent wrote into another candidate's workspace or checkout."""
    ctx.look_at_incumbent()  # kept across rounds: what a sibling wrote there is laid now
    spoiled = {e.commit: strays.late(f"{ctx.name}-{iteration}-{e.candidate}") for e in cands}
    # what each agent wrote into a sibling's workspace or checkout (loop/siblings.py)
    wrote = {e.commit: siblings.blamed(f"{ctx.name}-{iteration}-{e.candidate}") for e in cands}
    ranked = _rank([e for e in cands if not spoiled[e.commit] and not wrote[e.commit]])
    eligible = [e for e in ranked if e.decision is not None and e.decision.keep]
    winner = eligible[0] if eligible else None
    winner_failed = None
    confirmation: dict[str, Any] = {}
    sentence = ""
    if winner is not None:
        ok, sentence, confirmation = confirm(ctx, winner.commit, incumbent)
        if not ok:
            winner, winner_failed = None, winner
    updates: dict[str, dict[str, Any]] = {}
    n = len(ranked)
    for e in cands:
        rank = ranked.index(e) + 1 if e in ranked else None
        upd: dict[str, Any] = {
            "stage": "final",
            "round": iteration,
            "rank": rank,
            "winner": winner.commit if winner else None,
        }
        if winner is not None and e is winner:
            rework = e.decision.rework if e.decision else 0
            upd.update(
                status="keep-reworked" if rework else "keep",
                reason=f"won round {iteration} (rank 1 of {n}); {e.reason}; confirmed: {wording.verdict_free(sentence)}",
                confirmation=confirmation,
            )
        elif winner_failed is not None and e is winner_failed:
            upd.update(
                status="discard",
                reason=f"won round {iteration} but failed the confirmation: {wording.verdict_free(sentence)}; {e.reason}",
                confirmation=confirmation,
            )
        elif e in eligible:
            best = winner or winner_failed
            assert best is not None
            upd.update(
                status="discard",
                reason=f"beaten by candidate {best.candidate} ({best.family}) in round {iteration}, rank {rank} of {n}; {e.reason}",
            )
        elif rank is not None:
            upd.update(reason=f"{e.reason}; rank {rank} of {n}")
        if spoiled[e.commit] and e.status in ("pending", "discard"):
            upd.update(
                status="tampered",
                reason="tampered: gitimprove's folder changed while this candidate's window was "
                "open with another's (the writer unknown): " + ", ".join(spoiled[e.commit][:10]),
                tampered=spoiled[e.commit][:50],
            )
        if wrote[e.commit] and e.status != "tampered":
            upd.update(
                status="tampered",
                reason="tampered: its agent wrote into another candidate's files while it "
                "worked (without the sandbox): " + "; ".join(wrote[e.commit][:10]),
                tampered=wrote[e.commit][:50],
            )
        updates[e.commit] = upd
    ledger.commit_round(ctx, iteration, incumbent, updates, winner)
    with ctx.shared.rule_lock:  # the round's outcomes enter the rule in candidate order
        for e in sorted(cands, key=lambda e: e.candidate):
            out = outcome_of(e)
            if out is not None:
                ctx.rule.absorb(out, moved=winner is not None and e.commit == winner.commit)
    return {
        "event": "round",
        "run": ctx.name,
        "iteration": iteration,
        "winner": winner.commit if winner else None,
        "winner_candidate": winner.candidate if winner else None,
        "winner_family": winner.family if winner else None,
        "confirmation": sentence or None,
        "candidates": {str(e.candidate): updates[e.commit].get("status", e.status) for e in cands},
    }
