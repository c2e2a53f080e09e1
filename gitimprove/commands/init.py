from __future__ import annotations

import dataclasses
import shutil
import sys

import click

from gitimprove import output
from gitimprove.loop import setup

AGENTS = ["claude", "codex", "aider", "command", "scripted"]


def _interactive() -> bool:
    return sys.stdin.isatty()


def _found() -> str:
    """The first coding agent installed here (the default answer), else `command`."""
    return next((a for a in ("claude", "codex", "aider") if shutil.which(a)), "command")


@click.command("init")
@click.option("--metric", help='Command that prints the metric (e.g. "python bench.py").')
@click.option("--direction", type=click.Choice(["lower", "higher"]), help="Which way is better.")
@click.option(
    "--name", "metric_name", help="The metric's name (default: from its output, else 'metric')."
)
@click.option(
    "--extract",
    help='How to read the number: auto, "regex:<pattern>", "json:<key>", "line:<name>".',
)
@click.option("--guard", help='Command that must pass for a change to be kept (e.g. "pytest -q").')
@click.option("--mutable", multiple=True, help="Path pattern the agent may change (repeatable).")
@click.option(
    "--sealed",
    multiple=True,
    help="Path pattern pinned during a run (repeatable; default: the files the metric and "
    "guard commands name).",
)
@click.option(
    "--agent",
    type=click.Choice(AGENTS),
    help="Coding agent.",
)
@click.option(
    "--agent-command",
    help='The command of a `command` agent ("{prompt_file}" and "{workdir}" are filled in).',
)
@click.option(
    "--runs", type=click.IntRange(1, 100), default=3, show_default=True, help="Baseline runs."
)
@click.option("--force", is_flag=True, help="Replace an existing .gitimprove.toml.")
@click.option("--yes", "-y", is_flag=True, help="Ask nothing; use defaults for what is not given.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def command(
    metric: str | None,
    direction: str | None,
    metric_name: str | None,
    extract: str | None,
    guard: str | None,
    mutable: tuple[str, ...],
    sealed: tuple[str, ...],
    agent: str | None,
    agent_command: str | None,
    runs: int,
    force: bool,
    yes: bool,
    as_json: bool,
) -> None:
    """Set up gitimprove in this repository and record a baseline.

    Writes .gitimprove.toml from the options (asking for what is missing unless --yes),
    runs the metric on HEAD in a separate checkout, shows the value and its spread, records
    the baseline as a note on HEAD, and sets notes.rewriteRef so amend and rebase keep notes.
    """
    interactive = not yes and _interactive()
    answers = setup.InitOptions(
        metric=metric,
        direction=direction,
        name=metric_name,
        extract=extract,
        guard=guard,
        mutable=list(mutable) or None,
        sealed=list(sealed) or None,
        agent=agent,
        agent_command=agent_command,
        runs=runs,
        force=force,
    )
    if interactive and setup.needs_questions(answers):
        answers = setup.InitOptions(
            metric=metric or click.prompt("Metric command (prints a number)"),
            direction=direction
            or click.prompt("Better is", type=click.Choice(["lower", "higher"]), default="lower"),
            name=metric_name,
            extract=extract,
            guard=guard
            if guard is not None
            else click.prompt("Guard command (empty for none)", default="", show_default=False),
            mutable=answers.mutable
            or [
                p.strip()
                for p in click.prompt("Paths the agent may change", default="**").split(",")
            ],
            sealed=answers.sealed,
            agent=agent
            or click.prompt("Coding agent", type=click.Choice(AGENTS), default=_found()),
            agent_command=agent_command,
            runs=runs,
            force=force,
        )
        if answers.agent == "command" and not answers.agent_command:
            answers = dataclasses.replace(
                answers,
                agent_command=click.prompt(
                    "Agent command ({prompt_file} and {workdir} are filled in)"
                ),
            )
    progress = None if as_json else (lambda msg: output.echo(f"  {msg}"))
    if not as_json:
        output.echo(f"measuring the baseline ({runs} runs) in a separate checkout of HEAD…")
    result = setup.init_project(answers, progress=progress)
    if as_json:
        output.emit_json(
            {
                "config": str(result.config_path),
                "created_config": result.created_config,
                "commit": result.baseline.commit,
                "value": result.baseline.value,
                "samples": result.baseline.samples,
                "noise": result.noise,
                "guard": result.guard,
                "sealed": list(result.sealed),
            }
        )
        return
    b = result.baseline
    output.echo(
        f"baseline {result.metric_name} = {b.value:.10g} (median of {len(b.samples)}: "
        + ", ".join(f"{s:.10g}" for s in b.samples)
        + ")"
    )
    output.echo(result.noise)
    if result.guard.get("status") == "pass":
        output.echo(f"guard passes on the baseline (exit {result.guard.get('exit_code')})")
        for line in str(result.guard.get("tail") or "").strip().splitlines()[-5:]:
            output.echo(f"  | {line}")
    output.echo(f"recorded as a note on {b.commit[:10]} (refs/notes/improve)")
    if result.created_config:
        output.echo(f"wrote {result.config_path.name}; commit it so the loop and your team use it")
        if result.sealed:
            output.echo(
                "sealed (the agent may not change them): "
                + ", ".join(result.sealed)
                + "; `[scope] sealed` in the file chooses"
            )
        else:
            output.echo(
                "nothing is sealed: the agent may change every file, the benchmark and the "
                "tests too; list what decides the number in `[scope] sealed`"
            )
    output.echo(
        "next: commit experiments as `experiment(<scope>): <what>` and run `git improve measure`"
    )
