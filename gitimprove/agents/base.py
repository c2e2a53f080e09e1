"""The agent Protocol, its task and result, the registry, and helpers every adapter shares."""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from gitimprove.agents import homes
from gitimprove.errors import GitImproveError
from gitimprove.redaction import clip
from gitimprove.util import proc
from gitimprove.util.text import storable

if TYPE_CHECKING:
    from gitimprove.agents.sandbox import Sandbox

FAMILIES = (
    "architecture",
    "config",
    "data",
    "infrastructure",
    "optimization",
    "testing",
    "documentation",
    "other",
)


@dataclass(frozen=True)
class AgentTask:
    prompt_file: Path
    run: str
    iteration: int
    candidate: int = 0
    seed: int = 0
    family: str | None = None
    rework_tail: str | None = None  # the failing guard output, when asked to rework
    sealed: tuple[str, ...] = ()
    mutable: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()  # shell commands the agent may run unasked (the guard's)
    max_output: int = 64_000_000  # bytes of each of its streams kept ([loop] max_output)
    token: dict[str, str] = field(default_factory=dict)  # the attempt's process token (env)
    sandbox: Sandbox | None = None  # how the agent's processes are started


@dataclass
class AgentResult:
    exit_code: int | None
    seconds: float
    timed_out: bool = False
    description: str | None = None
    hypothesis: str | None = None
    approach: str | None = None
    summary: str | None = None
    cost_usd: float | None = None
    tokens: dict[str, int] = field(default_factory=dict)
    turns: int | None = None
    tail: str = ""
    stop_reason: str | None = None  # why a finished agent stopped, when not on its own
    dropped: list[str] = field(default_factory=list)  # numbers of its report out of range
    over: str = ""  # which of its streams went over [loop] max_output

    def number(self, what: str, value: Any, *, integer: bool = False) -> Any:
        """`value` when it is a number in the range `what` may hold, else None (and why is
        kept in `dropped`): the one check every number an agent reports goes through."""
        got = reported_number(value, LIMITS[what], integer=integer)
        if got is None and value is not None:
            self.dropped.append(
                f"{what}: {clip(repr(value), 60)} is not a number from 0 to {LIMITS[what]:g}"
            )
        return got

    def record(self, name: str, rework: int = 0) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": name,
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 3),
            "rework": rework,
        }
        if self.cost_usd is not None:
            out["cost_usd"] = self.cost_usd
        if self.tokens:
            out["tokens"] = self.tokens
        if self.turns is not None:
            out["turns"] = self.turns
        if self.timed_out:
            out["timed_out"] = True
        if self.stop_reason:
            out["stop_reason"] = self.stop_reason
        if self.dropped:
            out["dropped"] = self.dropped[:10]
        return out


# The largest value an agent may report for each number (anything beyond is a forgery or a
# bug: no attempt costs a million dollars or spends a trillion tokens).
LIMITS = {"cost_usd": 1e6, "tokens": 1e12, "turns": 1e6}


def reported_number(value: Any, hi: float, *, integer: bool = False) -> float | int | None:
    """A finite number from 0 to `hi` (an int when `integer`), or None: a bool, a string, NaN,
    infinity (`1e999`), a negative number or an integer of 400 digits is not one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if not 0 <= value <= hi:  # exact for ints of any size: no float conversion
        return None
    return int(value) if integer else float(value)


class Agent(Protocol):
    name: str

    def check(self) -> None:
        """Raise GitImproveError when the agent cannot run here (missing executable)."""

    def run(self, task: AgentTask, workdir: Path, timeout: float) -> AgentResult: ...


def child_env(
    task: AgentTask, workdir: Path, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of the agent contract (DESIGN §9): the child is marked so hooks skip it."""
    env = proc.clean_env(
        {
            "GITIMPROVE_PROMPT_FILE": str(task.prompt_file),
            "GITIMPROVE_WORKDIR": str(workdir),
            "GITIMPROVE_RUN": task.run,
            "GITIMPROVE_ITERATION": str(task.iteration),
            "GITIMPROVE_CANDIDATE": str(task.candidate),
            "GITIMPROVE_CHILD": "1",
        }
    )
    if task.family:
        env["GITIMPROVE_FAMILY"] = task.family
    if extra:
        env.update(extra)
    env.update(task.token)
    return env


def require_executable(name: str, install_hint: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise GitImproveError(f"the agent executable `{name}` is not on PATH", hint=install_hint)
    return path


_WINDOW = 1 << 10  # what a start is read from first: an error costs its position in the text


def json_values(text: str, limit: int = 200_000) -> list[Any]:
    """Every top-level JSON object or array in `text`, in order: one per line, pretty-printed
    over many lines, inside a ```json fence or after prose.

    Each `{` or `[` is tried, so what a failed try costs must not grow with the text: json
    counts the lines before every error it raises (the whole text before it), a nest too
    deep to read fails again from each of its brackets, and a nest of long values is read to
    its end from each. A try reads a window of the text, the whole rest only when it ran to
    the window's end (not after 64 such reads failed; after 2,000 tries that ran out, the
    text is read no further), and a nest too deep to read is skipped 256 levels at a time:
    an agent's output of brackets held the loop for 26 s before, now well under one."""
    text = text[-limit:]
    decoder = json.JSONDecoder()
    out: list[Any] = []
    long_misses = misses = 0  # whole reads that failed, tries that ran out and failed
    i = 0
    while True:
        starts = [p for p in (text.find("{", i), text.find("[", i)) if p >= 0]
        if not starts:
            return out
        i = min(starts)
        window = text[i : i + _WINDOW]
        try:
            try:
                value, end = decoder.raw_decode(window)
                end += i
            except json.JSONDecodeError as exc:
                if not _ran_out(exc, window, i + len(window) < len(text)):
                    raise
                misses += 1
                if misses > 2000:
                    return out
                if long_misses >= 64:
                    raise
                try:
                    value, end = decoder.raw_decode(text, i)
                except ValueError:
                    long_misses += 1
                    raise
                misses -= 1  # read whole: no miss
        except ValueError:
            i += 1
            continue
        except RecursionError:  # nested past what JSON can be read to: skip the nest
            i = _deeper(text, i)
            continue
        if isinstance(value, dict | list):
            out.append(value)
        i = end


def _ran_out(exc: json.JSONDecodeError, window: str, cut: bool) -> bool:
    """Whether reading failed at the end of a window cut from a longer text (a value, a
    string or a literal running past it), not at an error of its own."""
    return cut and (exc.pos >= len(window) - 16 or exc.msg.startswith("Unterminated string"))


def _deeper(text: str, i: int, levels: int = 256) -> int:
    """The bracket `levels` deeper than the one at `i` (outside strings), where the brackets
    opened at `i` close, or the end of `text`: a nest too deep to read is skipped a step at a
    time, so the brackets of its outer levels are not tried again one by one."""
    depth = 0
    quoted = escaped = False
    for at in range(i, len(text)):
        c = text[at]
        if quoted:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c in "[{":
            if depth == levels:
                return at
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth == 0:
                return at + 1
    return len(text)


def last_json_object(text: str) -> dict[str, Any] | None:
    """The last JSON object in `text`, whatever its layout (a report an agent printed)."""
    for value in reversed(json_values(text)):
        if isinstance(value, dict):
            return value
    return None


def apply_report(result: AgentResult, report: Mapping[str, Any] | None) -> None:
    """Fill description, hypothesis, approach and cost from a `{"description": …}` report."""
    if not report:
        return
    for key in ("description", "hypothesis", "approach", "summary"):
        value = report.get(key)
        if isinstance(value, str) and value.strip():
            setattr(result, key, clip(" ".join(storable(value).split()), 300))
    if "cost_usd" in report:
        cost = result.number("cost_usd", report.get("cost_usd"))
        if cost is not None:
            result.cost_usd = cost


def run_process(
    argv: list[str] | str,
    task: AgentTask,
    workdir: Path,
    timeout: float,
    *,
    shell: bool = False,
    input: str | None = None,
    state: Sequence[str] = (),
) -> tuple[proc.Result, AgentResult]:
    """Run the agent's command in the workspace (in the sandbox, when one is in force).

    `state` names the files and folders of the user's home the agent must be able to write
    (its session files: a name ending in "/" is a folder, made if missing); everything else
    is read-only in the sandbox. A name starting with "~copy:" is a file the agent rewrites
    that also holds what runs outside the sandbox later (MCP servers in ~/.claude.json): the
    agent writes a private copy of it, thrown away after the call."""
    # its cleanup errors ignored: an agent without the sandbox can move $TMPDIR away
    with tempfile.TemporaryDirectory(
        prefix="gitimprove-state-", ignore_cleanup_errors=True
    ) as scratch:
        extra: dict[str, str] = {}
        if task.sandbox is not None and (task.sandbox.active or task.sandbox.contained):
            if task.sandbox.contained:  # its own temporary folder, as bwrap's private /tmp
                tmp = Path(scratch, "tmp")
                tmp.mkdir()
                # Landlock binds nothing: a home of links with the private folders in place
                home, writable = homes.private_home(state, Path(scratch))
                writable, overlays = [*writable, tmp], list[tuple[Path, Path]]()
                extra = {"TMPDIR": str(tmp), "HOME": str(home)}
            else:
                writable, overlays = homes.binds(state, Path(scratch))
            argv, shell = task.sandbox.wrap(
                argv,
                shell=shell,
                workdir=workdir,
                readable=[task.prompt_file],
                writable=writable,
                overlays=overlays,
            )
        elif task.sandbox is not None:
            argv, shell = task.sandbox.wrap(argv, shell=shell, workdir=workdir)
        res = proc.run(
            argv, cwd=workdir, timeout=timeout, shell=shell, env=child_env(task, workdir, extra),
            input=input, limit=task.max_output,
        )  # fmt: skip
    out = AgentResult(
        exit_code=None if res.timed_out else res.returncode,
        seconds=res.seconds,
        timed_out=res.timed_out,
        tail=res.tail(2000),
        over=res.over,
    )
    return res, out


class ExecutableAgent:
    """An agent that is a CLI on PATH: subclasses say how to call it and how to read it."""

    name = ""
    default_executable = ""
    install_hint = ""
    program_on_stdin = True
    state: tuple[str, ...] = ()  # home files the agent writes (writable in the sandbox)

    def __init__(self, command: str = "") -> None:
        import shlex

        self.executable = shlex.split(command)[0] if command.strip() else self.default_executable
        self.path = self.executable

    def check(self) -> None:
        self.path = require_executable(self.executable, self.install_hint)

    def argv(self, task: AgentTask, workdir: Path) -> list[str]:
        raise NotImplementedError

    def parse(self, stdout: str, out: AgentResult) -> None:
        raise NotImplementedError

    def run(self, task: AgentTask, workdir: Path, timeout: float) -> AgentResult:
        program = task.prompt_file.read_text(encoding="utf-8") if self.program_on_stdin else None
        res, out = run_process(
            self.argv(task, workdir), task, workdir, timeout, input=program, state=self.state
        )
        self.parse(res.stdout, out)
        return out
