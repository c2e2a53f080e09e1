"""Claude Code in print mode: `claude -p --output-format json` (the program on stdin).

Checked against Claude Code's CLI reference and its result message:
- sealed paths are denied with `Edit(<path>)` rules: Edit rules cover every built-in tool that
  edits files (Write, MultiEdit, NotebookEdit); Claude Code has no `Write(...)` rule and warns
  about one at start;
- `--permission-mode acceptEdits` lets the agent edit, and `--allowedTools Bash(<cmd>:*)`
  lets it run the guard (the tests a rework is asked to fix) without a prompt nobody answers.
  Claude Code checks each simple command of a compound one (`&&`, `||`, `;`, `|`) against the
  rules on its own, so a prefix rule never matches a compound command: the guard gets one rule
  per simple command it is made of (`pytest -q && ruff check .` is `Bash(pytest -q:*)` and
  `Bash(ruff check .:*)`);
- tokens come from `modelUsage` (per model, subagents included: inputTokens, outputTokens,
  cacheReadInputTokens, cacheCreationInputTokens), `usage` (the main loop only) when it is
  missing; cost from `total_cost_usd`;
- a result with `subtype: "error_max_turns"` is an agent that ran out of turns, not a crash:
  its edits are measured like any finished attempt (stop_reason "max_turns");
- the output is one JSON object, or (with `--verbose`) an array of messages whose last
  `type: "result"` entry counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gitimprove.agents import homes
from gitimprove.agents.base import (
    AgentResult,
    AgentTask,
    ExecutableAgent,
    apply_report,
    json_values,
    last_json_object,
)
from gitimprove.redaction import clip

DENIED_BASH = ("git commit", "git push", "git notes", "git update-ref")


def build_argv(executable: str, task: AgentTask, max_turns: int = 30) -> list[str]:
    argv = [
        executable,
        "-p",
        "--output-format",
        "json",
        "--permission-mode",
        "acceptEdits",
        "--max-turns",
        str(max_turns),
        "--no-session-persistence",
    ]
    simple = [part for c in task.commands for part in simple_commands(c)]
    allowed = [f"Bash({part}:*)" for part in dict.fromkeys(simple)]
    if allowed:
        argv += ["--allowedTools", *allowed]
    denied = [f"Edit({path})" for path in task.sealed]
    denied += [f"Bash({c}:*)" for c in DENIED_BASH]
    argv += ["--disallowedTools", *denied]
    return argv


def _skip_redirection(command: str, i: int, cur: list[str]) -> int:
    """At a `>`/`<` outside quotes: drop the redirection (`2>&1`, `> log`, `&>log`, `<in`)
    from the command, as Claude Code does when it matches a rule; the index after it."""
    if cur and cur[-1] in "0123456789&" and (len(cur) == 1 or cur[-2].isspace()):
        cur.pop()
    n = len(command)
    while i < n and command[i] in "<>":
        i += 1
    if command.startswith("&", i) and i + 1 < n and command[i + 1].isdigit():
        return i + 2
    while i < n and command[i] in " \t":
        i += 1
    while i < n and not command[i].isspace() and command[i] not in ";&|()":
        i += 1
    return i


def simple_commands(command: str) -> list[str]:
    """The simple commands of a shell command line, split where the shell runs one after
    another (`&&`, `||`, `;`, `|`, `|&`, `&`, a newline) — not inside quotes, `$(…)` or
    backquotes; redirections (`2>&1`, `> log`) and subshell parentheses dropped, spacing
    normalized."""
    parts: list[str] = []
    cur: list[str] = []
    quote = ""
    depth = 0  # inside $( … ) or ` … `
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if quote:
            cur.append(c)
            if c == "\\" and quote == '"' and i + 1 < n:
                cur.append(command[i + 1])
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
            cur.append(c)
        elif c == "\\" and i + 1 < n:
            cur += [c, command[i + 1]]
            i += 1
        elif command.startswith("$(", i) or (c == "`" and depth == 0):
            depth += 1
            cur.append(command[i : i + 2] if c == "$" else c)
            i += 1 if c == "$" else 0
        elif depth and c in ")`":
            depth -= 1
            cur.append(c)
        elif depth:
            cur.append(c)
        elif c in "<>" or command.startswith("&>", i):
            i = _skip_redirection(command, i + (c == "&"), cur)
            continue
        elif command.startswith(("&&", "||", "|&"), i):
            parts.append("".join(cur))
            cur = []
            i += 1
        elif c in ";|&\n":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    out = []
    for part in parts:
        text = " ".join(part.split()).lstrip("({ ")
        while text.endswith((")", "}")) and text.count(text[-1]) > text.count(
            "(" if text[-1] == ")" else "{"
        ):
            text = text[:-1].rstrip()  # the end of a subshell or group, not of a $( … )
        if text and text not in out:
            out.append(text)
    return out


def _result_message(stdout: str) -> dict[str, Any] | None:
    """The `type: "result"` message: the object `--output-format json` prints, or the last
    result in the array `--verbose` prints."""
    found: dict[str, Any] | None = None
    for value in json_values(stdout):
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, dict) and (item.get("type") == "result" or "result" in item):
                found = item
    return found


def tokens_of(obj: Mapping[str, Any], out: AgentResult) -> dict[str, int] | None:
    def _int(value: Any) -> int:
        return int(out.number("tokens", value, integer=True) or 0)

    model_usage = obj.get("modelUsage")
    if isinstance(model_usage, Mapping) and model_usage:
        totals = {"input": 0, "output": 0, "cache_read": 0, "cache_creation": 0}
        for usage in model_usage.values():
            if not isinstance(usage, Mapping):
                continue
            totals["cache_read"] += _int(usage.get("cacheReadInputTokens"))
            totals["cache_creation"] += _int(usage.get("cacheCreationInputTokens"))
            totals["input"] += _int(usage.get("inputTokens"))
            totals["output"] += _int(usage.get("outputTokens"))
        totals["input"] += totals["cache_read"] + totals["cache_creation"]
        return {k: int(out.number("tokens", v, integer=True) or 0) for k, v in totals.items()}
    usage = obj.get("usage")
    if isinstance(usage, Mapping):
        cache_read = _int(usage.get("cache_read_input_tokens"))
        cache_creation = _int(usage.get("cache_creation_input_tokens"))
        return {
            "input": _int(usage.get("input_tokens")) + cache_read + cache_creation,
            "output": _int(usage.get("output_tokens")),
            "cache_read": cache_read,
            "cache_creation": cache_creation,
        }
    return None


def parse_output(stdout: str, out: AgentResult) -> None:
    """Cost, tokens and turns from the result message; the report from its `result` text."""
    obj = _result_message(stdout)
    if obj is None:
        return
    out.cost_usd = out.number("cost_usd", obj.get("total_cost_usd"))
    tokens = tokens_of(obj, out)
    if tokens is not None:
        out.tokens = tokens
    out.turns = out.number("turns", obj.get("num_turns"), integer=True)
    text = obj.get("result")
    if isinstance(text, str):
        out.summary = clip(" ".join(text.split()), 300) or None
        cost_kept = out.cost_usd
        apply_report(out, last_json_object(text))
        out.cost_usd = cost_kept
    if obj.get("subtype") == "error_max_turns":
        out.stop_reason = "max_turns"  # it worked until its turns ran out: measure its edits
        if out.exit_code not in (None, 0) and not out.timed_out:
            out.exit_code = 0
    elif obj.get("is_error") and out.exit_code == 0:
        out.exit_code = 1


class ClaudeAgent(ExecutableAgent):
    name = "claude"
    default_executable = "claude"
    state = homes.state_of("claude")  # agents/homes.py: never what runs later
    install_hint = (
        "install Claude Code (npm install -g @anthropic-ai/claude-code) or choose another agent"
    )

    def argv(self, task: AgentTask, workdir: Path) -> list[str]:
        return build_argv(self.path, task)

    def parse(self, stdout: str, out: AgentResult) -> None:
        parse_output(stdout, out)
