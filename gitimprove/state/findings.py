"""One finding of `git improve doctor`: what was checked, whether it holds, and its fix."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Finding:
    check: str
    ok: bool
    message: str
    fix: str | None = None
    repaired: bool = False
