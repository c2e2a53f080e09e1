"""Claude Code in print mode: `claude -p --output-format json` (the program on stdin).

Checked against Claude Code's CLI reference and its result message:
- sealed paths are denied with `Edit(<path>)` rules: Edit rules cover every built-in tool that
  edits files (Write, MultiEdit, NotebookEdit); Claude Code has no `Write(...)` rule and warns
  about one at start;
- `--permission-mode acceptEdits` lets the agent edit, and `--allowedTools Bash(<guard>:*)`
  lets it run the guard (the tests a rework is asked to fix) without a prompt nobody answers;
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
    allowed = [f"Bash({' '.join(c.split())}:*)" for c in task.commands if c.strip()]
    if allowed:
        argv += ["--allowedTools", *allowed]
    denied = [f"Edit({path})" for path in task.sealed]
    denied += [f"Bash({c}:*)" for c in DENIED_BASH]
    argv += ["--disallowedTools", *denied]
    return argv


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


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def tokens_of(obj: Mapping[str, Any]) -> dict[str, int] | None:
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
        return totals
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
    cost = obj.get("total_cost_usd")
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        out.cost_usd = float(cost)
    tokens = tokens_of(obj)
    if tokens is not None:
        out.tokens = tokens
    if isinstance(obj.get("num_turns"), int):
        out.turns = obj["num_turns"]
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
    state = ("~/.claude", "~/.claude.json", "~/.config/claude")
    install_hint = (
        "install Claude Code (npm install -g @anthropic-ai/claude-code) or choose another agent"
    )

    def argv(self, task: AgentTask, workdir: Path) -> list[str]:
        return build_argv(self.path, task)

    def parse(self, stdout: str, out: AgentResult) -> None:
        parse_output(stdout, out)
