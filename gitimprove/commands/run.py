from __future__ import annotations

import click

from gitimprove import output
from gitimprove.config import parse_duration
from gitimprove.errors import ConfigError, GitImproveError
from gitimprove.git import gitfiles
from gitimprove.git.repo import open_repo
from gitimprove.loop import wording
from gitimprove.loop.engine import Engine, Event, RunOptions


def render(event: Event) -> None:
    kind = event.get("event")
    if kind == "start":
        if event["resumed"]:
            goal = f"; goal: {event['goal']}" if event.get("goal") else ""
            which = "the finished run" if event.get("reopened") else "the unfinished run"
            output.echo(
                f"resuming {which} {event['run']} (base {event['base'][:10]}, agent {event['agent']}, up to iteration {event['iterations']}{goal})"
            )
        else:
            output.echo(
                f"starting run {event['run']} from {event['base'][:10]} with agent {event['agent']} ({event['iterations']} iterations)"
            )
        if event.get("sandbox_message"):
            output.echo(str(event["sandbox_message"]))
        if event.get("killed"):
            output.echo(f"killed {len(event['killed'])} process(es) an interrupted run left behind")
    elif kind == "warning":
        output.warn(str(event.get("message")))
    elif kind == "noise":
        guard = event.get("guard") or {}
        if guard.get("status") == "pass":
            output.echo(f"guard passes on the baseline (exit {guard.get('exit_code')})")
            for line in str(guard.get("tail") or "").strip().splitlines()[-5:]:
                output.echo(f"  | {line}")
        samples, message = event.get("samples") or [], str(event.get("message", ""))
        how = f" (median of {len(samples)} calibration runs)" if len(samples) > 1 else ""
        if len(set(samples)) > 1 and not message.startswith("benchmark rule"):
            # a change is compared with incumbent runs its decision takes beside its own, not
            # with this median: a first keep can sit above a calibration on a quieter machine
            how = how[:-1] + "; each decision compares with incumbent runs beside its own)"
        output.echo(f"baseline {event['baseline']:.6g}{how}; {message}")
    elif kind == "attempt":
        value = event.get("value")
        shown = f"{value:.6g}" if isinstance(value, int | float) else "-"
        level = f" [escalation {event['escalation']}]" if event.get("escalation") else ""
        output.echo(
            f"#{event['iteration']:<3} {event['commit'][:10]} {event['status']:<13} {shown:>10}  {output.safe(event.get('reason') or '')}{level}"
        )
    elif kind == "round":
        if event.get("winner"):
            output.echo(
                f"round {event['iteration']}: candidate {event['winner_candidate']} ({event['winner_family']}) wins; improve/{event['run']} -> {event['winner'][:10]}"
            )
        else:
            why = f" ({event['confirmation']})" if event.get("confirmation") else ""
            output.echo(f"round {event['iteration']}: no winner{why}")
    elif kind == "summary":
        best = event.get("best")
        output.echo(
            f"-- {event['attempts']} attempts, {event['keeps']} kept; best {best:.6g} (baseline {event['baseline']:.6g})"
            if isinstance(best, int | float)
            else f"-- {event['attempts']} attempts"
        )
    elif kind == "stop":
        output.echo(f"stopped: {output.safe(event['reason'])}")
        best, base = event.get("best"), event.get("baseline")
        if isinstance(best, int | float) and isinstance(base, int | float):
            changes = [(d, p) for d, p in event.get("kept_changes") or []]
            if any(d is None for d, _ in changes):  # a keep recorded without its delta
                kept = wording.level_change_words(best, base)
            else:  # each keep as its note measured it (wording.kept_together)
                kept = f"; {wording.kept_words(changes)}"
            output.echo(
                f"best {best:.6g}, baseline {base:.6g}{kept}; {event['keeps']} of {event['attempts']} attempts kept"
            )
        output.echo(
            f"kept experiments: branch improve/{event['run']}; every attempt: refs/improve/archive; records: refs/notes/improve"
        )


@click.command("run")
@click.option(
    "--iterations",
    "-n",
    type=click.IntRange(1),
    help="Rounds in this run (default: loop.iterations); on resume, rounds to add.",
)
@click.option("--goal", default="", help="What to achieve, in words, for the agent's program.")
@click.option(
    "--agent",
    type=click.Choice(["claude", "codex", "aider", "command", "scripted"]),
    help="Override agent.name.",
)
@click.option("--agent-command", help="Override agent.command (for --agent command).")
@click.option("--target", type=float, help="Stop when the best value reaches this.")
@click.option("--max-cost", type=float, help="Stop when the agents have cost this many USD.")
@click.option("--max-time", help="Stop after this long, e.g. 30m or 8h.")
@click.option("--run", "run_name", help="Run name (branch improve/<name>); default: a time stamp.")
@click.option(
    "--resume",
    is_flag=True,
    help="Continue the latest unfinished run (or --run NAME); with -n, that many more rounds.",
)
@click.option(
    "--explore", is_flag=True, help="Confidence 0.90: more gain, about twice the false keeps."
)
@click.option(
    "--strict-ab",
    is_flag=True,
    help="Re-measure the incumbent inside every decision (drifting machines).",
)
@click.option(
    "--candidates",
    "-k",
    type=click.IntRange(1, 7),
    help="Candidates per round: a tournament (default: loop.candidates).",
)
@click.option(
    "--jobs", "-j", type=click.IntRange(1, 64), help="Agents working at once (default: loop.jobs)."
)
@click.option(
    "--measure-jobs",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Metric runs at once (parallel runs skew timings).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for the scripted agent.")
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON event per line on stdout, nothing else."
)
def command(
    iterations: int | None,
    goal: str,
    agent: str | None,
    agent_command: str | None,
    target: float | None,
    max_cost: float | None,
    max_time: str | None,
    run_name: str | None,
    resume: bool,
    explore: bool,
    strict_ab: bool,
    candidates: int | None,
    jobs: int | None,
    measure_jobs: int,
    seed: int,
    as_json: bool,
) -> None:
    """Run the improvement loop: the agent proposes one change per round; each is committed
    as experiment(<scope>): …, measured against fresh runs of the incumbent, checked by the
    guard, and kept (branch improve/<run> moves) or discarded. Every attempt keeps a commit
    and a note. A run survives kill -9: `git improve run --resume` continues it.

    With --candidates K, K agents work each round from the same incumbent, each asked for a
    different approach family; the best one that beats the incumbent, confirmed by one more
    measurement, wins the round.
    """
    try:
        seconds = parse_duration(max_time, "--max-time") if max_time else None
    except ConfigError as exc:
        raise click.BadParameter(exc.message) from None
    opts = RunOptions(
        run=run_name,
        iterations=iterations,
        goal=goal,
        agent=agent,
        agent_command=agent_command,
        target=target,
        max_cost=max_cost,
        max_time=seconds,
        resume=resume,
        explore=explore,
        strict_ab=strict_ab,
        seed=seed,
        candidates=candidates,
        jobs=jobs,
        measure_jobs=measure_jobs,
    )
    planted = gitfiles.outside_problems()
    if planted:  # every git the agent, the metric and the harness run would wait on it
        raise GitImproveError(
            "git would hang on or choke over files outside this repository: "
            + "; ".join(planted[:5]),
            hint="put the regular file back (`git improve doctor` names each; an agent without "
            "the sandbox can plant one), then run again",
        )
    Engine(open_repo(), opts, output.emit_json if as_json else render).run()
