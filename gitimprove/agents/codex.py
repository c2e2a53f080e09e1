"""OpenAI Codex CLI: `codex exec --json` in workspace-write mode (the program on stdin, `-`).

Events (one JSON object a line, as codex-rs/exec's `ThreadEvent`): `thread.started`,
`turn.started`, `item.started|updated|completed` (an `agent_message` item carries the agent's
text), `turn.completed` with `usage: {input_tokens, cached_input_tokens, output_tokens}`
(cached tokens are part of the input), `turn.failed {error: {message}}`, and a top-level
`error {message}`. Codex emits `error` for problems it goes on from — a dropped stream it
retries ("Reconnecting... 1/5") — and keeps running; the turn fails only with `turn.failed`.
So an attempt failed when a turn failed or the process exited non-zero, never for an `error`
event alone (its message is kept as the summary when the agent said nothing).
"""

from __future__ import annotations

import json
from pathlib import Path

from gitimprove.agents import homes
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
    last_error = None
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested past reading
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "turn.completed":
            turns += 1
            usage = event.get("usage") or {}
            if not isinstance(usage, dict):
                usage = {}
            for key, name in (("input", "input_tokens"), ("output", "output_tokens"),
                              ("cache_read", "cached_input_tokens")):  # fmt: skip
                tokens[key] += int(out.number("tokens", usage.get(name), integer=True) or 0)
        elif kind == "turn.failed":
            if out.exit_code == 0:
                out.exit_code = 1
            error = event.get("error")
            if isinstance(error, dict) and isinstance(error.get("message"), str):
                last_error = error["message"]
        elif kind == "error" and isinstance(event.get("message"), str):
            last_error = event["message"]  # retried or not, the turn's end decides
        elif kind == "item.completed":
            item = event.get("item") or {}
            if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                last_message = item["text"]
    if turns:
        out.turns = turns
        out.tokens = {k: int(out.number("tokens", v, integer=True) or 0) for k, v in tokens.items()}
    if last_message:
        out.summary = clip(" ".join(last_message.split()), 300)
        apply_report(out, last_json_object(last_message))
    elif last_error and out.exit_code != 0:
        out.summary = " ".join(last_error.split())[:300]


class CodexAgent(ExecutableAgent):
    name = "codex"
    default_executable = "codex"
    state = homes.state_of("codex")
    install_hint = "install the Codex CLI (npm install -g @openai/codex) or choose another agent"

    def argv(self, task: AgentTask, workdir: Path) -> list[str]:
        return build_argv(self.path, workdir)

    def parse(self, stdout: str, out: AgentResult) -> None:
        parse_events(stdout, out)
