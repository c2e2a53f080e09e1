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
        try:
            words = shlex.split(self.template)
        except ValueError as exc:
            raise ConfigError(f"agent.command cannot be split into words: {exc}") from None
        first = words[0] if words else ""
        if not first or "{" in first:
            return
        if "/" not in first:
            import shutil

            if shutil.which(first) is None:
                raise GitImproveError(
                    f"the agent command `{first}` is not on PATH", hint="fix [agent] command"
                )
        elif first.startswith(("/", "~")):  # a relative path names a file of the workspace
            import os

            path = os.path.expanduser(first)
            if not os.path.isfile(path) or not os.access(path, os.X_OK):
                missing = "does not exist" if not os.path.exists(path) else "is not executable"
                raise GitImproveError(
                    f"the agent command `{first}` {missing}", hint="fix [agent] command"
                )

    def run(self, task: AgentTask, workdir: Path, timeout: float) -> AgentResult:
        cmd = self.template.format(
            prompt_file=shlex.quote(str(task.prompt_file)), workdir=shlex.quote(str(workdir))
        )
        res, out = run_process(cmd, task, workdir, timeout, shell=True)
        apply_report(out, last_json_object(res.stdout))
        return out
