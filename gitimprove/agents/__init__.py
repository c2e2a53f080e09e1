"""Agents behind one Protocol (DESIGN §9): the registry; each adapter is a module of its own.

The registry imports an adapter only when it is asked for, and `base` imports no adapter, so
the package has no import circle.
"""

from __future__ import annotations

from gitimprove.agents.base import FAMILIES, Agent, AgentResult, AgentTask
from gitimprove.errors import GitImproveError

__all__ = ["FAMILIES", "NAMES", "Agent", "AgentResult", "AgentTask", "make"]

NAMES = ("claude", "codex", "aider", "command", "scripted")


def make(name: str, command: str = "") -> Agent:
    """A new agent adapter by name."""
    if name == "command":
        from gitimprove.agents.command import CommandAgent

        return CommandAgent(command)
    if name == "scripted":
        from gitimprove.agents.scripted import ScriptedAgent

        return ScriptedAgent()
    if name == "claude":
        from gitimprove.agents.claude import ClaudeAgent

        return ClaudeAgent(command)
    if name == "codex":
        from gitimprove.agents.codex import CodexAgent

        return CodexAgent(command)
    if name == "aider":
        from gitimprove.agents.aider import AiderAgent

        return AiderAgent(command)
    raise GitImproveError(
        f"unknown agent {name!r}", hint="use claude, codex, aider, command or scripted"
    )
