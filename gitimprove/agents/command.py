"""Any command: a template with {prompt_file} and {workdir}, run in the workspace."""

from __future__ import annotations

import shlex
from pathlib import Path

from gitimprove.agents.base import (
    AgentResult,
    AgentTask,
    apply_report,
    last_json_object,
    run_process,
)
from gitimprove.errors import ConfigError, GitImproveError


class CommandAgent:
    name = "command"

    def __init__(self, template: str) -> None:
        self.template = template

    def check(self) -> None:
        if not self.template.strip():
            raise ConfigError(
                'agent.name = "command" needs agent.command',
                hint='set [agent] command = "./my-agent {prompt_file}" (placeholders: {prompt_file}, {workdir})',
            )
        try:
            self.template.format(prompt_file="p", workdir="w")
        except (KeyError, IndexError, ValueError) as exc:
            raise ConfigError(
                f"agent.command has an unknown placeholder: {exc}",
                hint="use {prompt_file} and {workdir}",
            ) from None
        first = shlex.split(self.template)[0] if shlex.split(self.template) else ""
        if first and "/" not in first and "{" not in first:
            import shutil

            if shutil.which(first) is None:
                raise GitImproveError(
                    f"the agent command `{first}` is not on PATH", hint="fix [agent] command"
                )

    def run(self, task: AgentTask, workdir: Path, timeout: float) -> AgentResult:
        cmd = self.template.format(
            prompt_file=shlex.quote(str(task.prompt_file)), workdir=shlex.quote(str(workdir))
        )
        res, out = run_process(cmd, task, workdir, timeout, shell=True)
        apply_report(out, last_json_object(res.stdout))
        return out
