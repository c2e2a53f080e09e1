"""The command line: lazy subcommands and the one error boundary (STYLE.md §3, §4).

Exit codes: 0 success; 1 a GitImproveError (its message names the fix); 2 usage;
3 an unexpected crash (traceback in `<git-common-dir>/improve/last-error.log`); 128 + the
signal on SIGINT, SIGTERM or SIGHUP (130, 143, 129), after killing every child process and
removing every workspace.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    import click

COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("gitimprove.commands.init", "Set up .gitimprove.toml and record a baseline."),
    "measure": ("gitimprove.commands.measure", "Measure experiment commits made outside the loop."),
    "log": ("gitimprove.commands.log", "Show the results of every experiment."),
    "show": (
        "gitimprove.commands.show",
        "Show one experiment: diff stat and every recorded field.",
    ),
    "import": (
        "gitimprove.commands.import_",
        "Import results from autoresearch or pi-autoresearch.",
    ),
    "doctor": (
        "gitimprove.commands.doctor",
        "Check configuration and stored state; --repair fixes.",
    ),
    "run": ("gitimprove.commands.run", "Run the improvement loop with a coding agent."),
    "stop": ("gitimprove.commands.stop", "Ask a running loop to stop after this round."),
    "status": (
        "gitimprove.commands.status",
        "Show the current run: best, last rows, escalation, cost.",
    ),
    "plot": ("gitimprove.commands.plot", "Plot a run's attempts and best-so-far line to a PNG."),
    "idea": ("gitimprove.commands.idea", "Add ideas for the loop's agent."),
    "demo": ("gitimprove.commands.demo", "Run the loop end to end on a built-in example, offline."),
    "sync": (
        "gitimprove.commands.sync",
        "Share notes, memory, archive and sessions with a remote.",
    ),
    "hooks": ("gitimprove.commands.hooks", "Install, remove and inspect gitimprove's hooks."),
    "signal": ("gitimprove.commands.signal", "Capture and list learning signals."),
    "memory": ("gitimprove.commands.memory", "Print or write the MEMORY.md view."),
    "reflect": ("gitimprove.commands.reflect", "Turn captured signals into approved learnings."),
    "hook": ("gitimprove.commands.hook", "Entry point for git and Claude Code hooks."),
}
HIDDEN = frozenset({"hook"})


def _build_group() -> click.Group:
    import click

    from gitimprove import __version__

    class LazyGroup(click.Group):
        def list_commands(self, ctx: click.Context) -> list[str]:
            return sorted(COMMANDS)

        def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
            if cmd_name not in COMMANDS:
                return None
            module = __import__(COMMANDS[cmd_name][0], fromlist=["command"])
            command: click.Command = module.command
            if cmd_name in HIDDEN:
                command.hidden = True
            return command

        def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
            rows = [(name, COMMANDS[name][1]) for name in sorted(COMMANDS) if name not in HIDDEN]
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    @click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(__version__, prog_name="git-improve")
    def group() -> None:
        """git improve: optimize a metric with coding agents, remember across sessions,
        and share it all through git.

        Every record lives in git: experiment notes on refs/notes/improve, the memory
        branch improve/memory, and refs under refs/improve/.
        """

    return group


def _log_crash(exc: BaseException) -> str | None:
    import traceback

    from gitimprove.util import gitdir

    text = "".join(traceback.format_exception(exc))
    loc = gitdir.discover()
    if loc is None:
        return None
    try:
        import os

        os.makedirs(loc.improve_dir, exist_ok=True)
        path = os.path.join(loc.improve_dir, "last-error.log")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(f"argv: {sys.argv!r}\n{text}")
        return path
    except OSError:
        return None


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "hook" and len(args) > 1 and args[1] not in ("-h", "--help"):
        from gitimprove.hooks import entry

        return entry.main(args[1:])
    if args and args[0] == "log":  # served without click when it can be (DESIGN §13)
        from gitimprove.state import logview

        served = logview.serve(args[1:])
        if served is not None:
            return served

    from gitimprove.util import proc

    with proc.termination_signals():
        try:
            return _main(args)
        except KeyboardInterrupt as exc:  # a signal while an error was being reported
            return _interrupted(exc)


def _interrupted(exc: BaseException | None) -> int:
    from gitimprove import output
    from gitimprove.util import proc

    while exc is not None and not isinstance(exc, KeyboardInterrupt):
        exc = exc.__cause__ or exc.__context__
    signum = exc.signum if isinstance(exc, proc.Terminated) else proc.stopping()
    name = proc.Terminated(signum).name if signum else "SIGINT"
    try:
        output.echo(f"interrupted ({name}); child processes stopped, workspaces removed", err=True)
    except OSError:  # the terminal went away (SIGHUP)
        pass
    return 128 + (signum or 2)


def _main(args: list[str]) -> int:
    import click

    from gitimprove import output
    from gitimprove.errors import GitImproveError, ran

    ran(args[0] if args and args[0] in COMMANDS else None)
    group = _build_group()
    try:
        _refuse_inside_an_attempt(args)
        result = group.main(args=args, prog_name="git improve", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except GitImproveError as exc:
        output.error(str(exc))
        return exc.exit_code
    except click.exceptions.Abort as exc:
        return _interrupted(exc)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return 2
    except KeyboardInterrupt as exc:
        return _interrupted(exc)
    except BrokenPipeError:
        return 0
    except Exception as exc:
        from gitimprove.errors import from_environment

        refused = from_environment(exc)
        if refused is not None:
            output.error(str(refused))
            return refused.exit_code
        where = _log_crash(exc)
        output.error(f"unexpected internal error: {type(exc).__name__}: {exc}")
        if where:
            output.echo(f"the traceback is in {where}; please report it", err=True)
        return 3
    finally:
        ran(None)  # a hint made later in this process (a test's, a library caller's) names none


# what a process of an attempt may still run: commands that only read (and their help)
_READING = {"log", "show", "status", "plot", "doctor", "--help", "-h", "--version"}
_READING_SUB = {"idea": {"list"}, "signal": {"list"}}


def _refuse_inside_an_attempt(args: list[str]) -> None:
    """A gitimprove command that writes records, refs or state, run by a process of an
    attempt (the agent, the code a metric or guard runs: they carry the attempt's token, and
    one that scrubbed its environment still has its supervisor above it, or its mark),
    is refused: without the sandbox it would write the user's repository as gitimprove
    itself (an idea every later agent reads as the user's, a nested run, a stop, an import),
    signed and witnessed like the harness's own writes."""
    if not args:
        return
    command = args[0]
    rest = [a for a in args[1:] if not a.startswith("-")]
    if command in _READING and "--repair" not in args:
        return
    if command in _READING_SUB and (
        {"-h", "--help"} & set(args) or (rest and rest[0] in _READING_SUB[command])
    ):
        return
    if not os.environ.get("GITIMPROVE_TOKEN") and not _attempt_on_this_repository():  # TOKEN_VAR
        return
    from gitimprove.errors import GitImproveError

    raise GitImproveError(
        f"`git improve {command}` does not run inside an attempt: it writes gitimprove's "
        "records, and an agent or the code it measures may only read them",
        hint="read with `git improve log`, `status`, `show` or `idea list`",
    )


def _attempt_on_this_repository() -> bool:
    """Whether this process, its environment scrubbed of the token, still belongs to an attempt
    (its supervisor above it, or its mark: util/marks.py `attempt_above`) on the repository it
    runs in. An attempt on another repository does not count: this project's own test suite,
    run as the guard of an attempt, runs gitimprove on repositories of its own."""
    from gitimprove.util.marks import attempt_above

    token = attempt_above()
    if token is None:
        return False
    parts = token.split(":")
    if len(parts) < 5:
        return True  # unknown: taken for this repository's
    from gitimprove.errors import GitImproveError
    from gitimprove.git.repo import open_repo
    from gitimprove.util.reaper import repo_key

    try:
        here = repo_key(open_repo(need_work_tree=False).common_dir)
    except (GitImproveError, OSError):
        return True
    return parts[1] == here


def run() -> None:
    sys.exit(main())
