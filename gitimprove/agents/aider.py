"""aider: `aider --message-file <program> --yes-always --no-auto-commits`; cost from its
"Tokens: … Cost: …" line."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from gitimprove.agents.base import (
    AgentResult,
    AgentTask,
    apply_report,
    last_json_object,
    require_executable,
    run_process,
)

_TOKENS = re.compile(
    r"Tokens:\s*([\d.,]+)(k|m)?\s+sent.*?([\d.,]+)(k|m)?\s+received\.?(?:\s*Cost:\s*\$([\d.]+)\s+message,\s*\$([\d.]+)\s+session)?",
    re.IGNORECASE,
)


def _count(number: str, unit: str | None) -> int:
    value = float(number.replace(",", ""))
    return int(value * {"k": 1e3, "m": 1e6}.get((unit or "").lower(), 1))


def parse_output(text: str, out: AgentResult) -> None:
    sent = received = 0
    session_cost = None
    for m in _TOKENS.finditer(text):
        sent += _count(m.group(1), m.group(2))
        received += _count(m.group(3), m.group(4))
        if m.group(6):
            session_cost = float(m.group(6))
    if sent or received:
        out.tokens = {"input": sent, "output": received}
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


class AiderAgent:
    name = "aider"

    def __init__(self, command: str = "") -> None:
        self.executable = shlex.split(command)[0] if command.strip() else "aider"

    def check(self) -> None:
        self.path = require_executable(
            self.executable, "pip install aider-chat, or choose another agent"
        )

    def run(self, task: AgentTask, workdir: Path, timeout: float) -> AgentResult:
        res, out = run_process(
            build_argv(getattr(self, "path", self.executable), task), task, workdir, timeout
        )
        parse_output(res.stdout, out)
        return out
