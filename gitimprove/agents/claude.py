"""Claude Code in print mode: `claude -p --output-format json` (the program on stdin)."""

from __future__ import annotations

import json
from pathlib import Path

from gitimprove.agents.base import (
    AgentResult,
    AgentTask,
    ExecutableAgent,
    apply_report,
    last_json_object,
)


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
    denied = [f"{tool}({path})" for path in task.sealed for tool in ("Edit", "Write")]
    denied += [
        "Bash(git commit:*)",
        "Bash(git push:*)",
        "Bash(git notes:*)",
        "Bash(git update-ref:*)",
    ]
    argv += ["--disallowedTools", *denied]
    return argv


def parse_output(stdout: str, out: AgentResult) -> None:
    """Cost, tokens and turns from the result object; the report from its `result` text."""
    obj = last_json_object(stdout)
    if obj is None:
        try:
            obj = json.loads(stdout)
        except ValueError:
            return
    if not isinstance(obj, dict):
        return
    cost = obj.get("total_cost_usd")
    if isinstance(cost, int | float):
        out.cost_usd = float(cost)
    usage = obj.get("usage")
    if isinstance(usage, dict):
        tokens = {
            "input": int(usage.get("input_tokens", 0) or 0)
            + int(usage.get("cache_creation_input_tokens", 0) or 0)
            + int(usage.get("cache_read_input_tokens", 0) or 0),
            "output": int(usage.get("output_tokens", 0) or 0),
        }
        out.tokens = tokens
    if isinstance(obj.get("num_turns"), int):
        out.turns = obj["num_turns"]
    text = obj.get("result")
    if isinstance(text, str):
        out.summary = " ".join(text.split())[:300] or None
        cost_kept = out.cost_usd
        apply_report(out, last_json_object(text))
        out.cost_usd = cost_kept
    if obj.get("is_error") and out.exit_code == 0:
        out.exit_code = 1


class ClaudeAgent(ExecutableAgent):
    name = "claude"
    default_executable = "claude"
    install_hint = (
        "install Claude Code (npm install -g @anthropic-ai/claude-code) or choose another agent"
    )

    def argv(self, task: AgentTask, workdir: Path) -> list[str]:
        return build_argv(self.path, task)

    def parse(self, stdout: str, out: AgentResult) -> None:
        parse_output(stdout, out)
