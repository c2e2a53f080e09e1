"""Coding agents behind one Protocol (STYLE.md §10): claude, codex, aider, command, scripted."""
