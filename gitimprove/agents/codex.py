"""OpenAI Codex CLI: `codex exec --json` in workspace-write mode (the program on stdin, `-`).

Events (one JSON object a line): `thread.started`, `turn.started`, `item.started|updated|
completed` (an `agent_message` item carries the agent's text), `turn.completed` with
`usage: {input_tokens, cached_input_tokens, output_tokens}` (cached tokens are part of the
input), `turn.failed` and a top-level `error`.
"""

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
from gitimprove.redaction import clip


def build_argv(executable: str, workdir: Path) -> list[str]:
    return [
        executable,
        "exec",
        "--json",
        "--sandbox",
        "workspace-write",
        "--skip-git-repo-check",
        "-C",
        str(workdir),
        "-",
    ]


def parse_events(stdout: str, out: AgentResult) -> None:
    tokens = {"input": 0, "output": 0, "cache_read": 0}
    turns = 0
    last_message = None
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "turn.completed":
            turns += 1
            usage = event.get("usage") or {}
            tokens["input"] += int(usage.get("input_tokens", 0) or 0)
            tokens["output"] += int(usage.get("output_tokens", 0) or 0)
            tokens["cache_read"] += int(usage.get("cached_input_tokens", 0) or 0)
        elif kind in ("turn.failed", "error") and out.exit_code == 0:
            out.exit_code = 1
        elif kind == "item.completed":
            item = event.get("item") or {}
            if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                last_message = item["text"]
    if turns:
        out.turns = turns
        out.tokens = tokens
    if last_message:
        out.summary = clip(" ".join(last_message.split()), 300)
        apply_report(out, last_json_object(last_message))


class CodexAgent(ExecutableAgent):
    name = "codex"
    default_executable = "codex"
    state = ("~/.codex",)
    install_hint = "install the Codex CLI (npm install -g @openai/codex) or choose another agent"

    def argv(self, task: AgentTask, workdir: Path) -> list[str]:
        return build_argv(self.path, workdir)

    def parse(self, stdout: str, out: AgentResult) -> None:
        parse_events(stdout, out)
