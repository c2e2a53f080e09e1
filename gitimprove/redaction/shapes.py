"""More shapes of a credential recognised by its context (beside `context.py`)."""

from __future__ import annotations

from gitimprove.redaction.engine import Rule

RULES: list[Rule] = []
