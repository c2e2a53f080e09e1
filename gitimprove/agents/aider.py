"""aider: `aider --message-file <program> --yes-always --no-auto-commits`; cost from its
"Tokens: … Cost: …" line."""

from __future__ import annotations

import re
from pathlib import Path

from gitimprove.agents import homes
from gitimprove.agents.base import (
    AgentResult,
    AgentTask,
    ExecutableAgent,
    apply_report,
    last_json_object,
)

_TOKENS = re.compile(
    r"Tokens:\s*([\d.,]+)(k|m)?\s+sent.*?([\d.,]+)(k|m)?\s+received\.?(?:\s*Cost:\s*\$([\d.]+)\s+message,\s*\$([\d.]+)\s+session)?",
    re.IGNORECASE,
)


def _float(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:  # "1.2.3": not a number
        return None


def _count(number: str, unit: str | None, out: AgentResult) -> int:
    value = _float(number)
    if value is None:
        return 0
    scaled = value * {"k": 1e3, "m": 1e6}.get((unit or "").lower(), 1)
    return int(out.number("tokens", scaled, integer=True) or 0)


def parse_output(text: str, out: AgentResult) -> None:
    sent = received = 0
    session_cost = None
    for m in _TOKENS.finditer(text):
        sent += _count(m.group(1), m.group(2), out)
        received += _count(m.group(3), m.group(4), out)
        if m.group(6):
            session_cost = out.number("cost_usd", _float(m.group(6)))
    if sent or received:
        out.tokens = {
            "input": int(out.number("tokens", sent, integer=True) or 0),
            "output": int(out.number("tokens", received, integer=True) or 0),
        }
    if session_cost is not None:
        out.cost_usd = session_cost
    apply_report(out, last_json_object(text))


def build_argv(executable: str, task: AgentTask) -> list[str]:
    return [
        executable,
        "--message-file",
        str(task.prompt_file),
        "--yes-always",
        "--no-auto-commits",
        "--no-check-update",
        "--no-pretty",
    ]


class AiderAgent(ExecutableAgent):
    name = "aider"
    default_executable = "aider"
    state = homes.state_of("aider")
    install_hint = "pip install aider-chat, or choose another agent"
    program_on_stdin = False  # aider reads it from --message-file

    def argv(self, task: AgentTask, workdir: Path) -> list[str]:
        return build_argv(self.path, task)

    def parse(self, stdout: str, out: AgentResult) -> None:
        parse_output(stdout, out)
