"""Random strings a regular expression matches: a format-valid sample of every rule's secret.

Walks the parsed pattern (Python's own parser) and picks at random: a branch, a repeat
count, a character of a class. Used to send one fake of each gitleaks rule through the
redactor; a sample that does not match (a boundary or a terminator chose badly) is retried.
"""

from __future__ import annotations

import random
import re
import string
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser as P  # type: ignore[attr-defined]
from typing import Any

PRINTABLE = [c for c in string.printable if c not in "\x0b\x0c\r"]
_CATEGORY = {
    C.CATEGORY_DIGIT: string.digits,
    C.CATEGORY_NOT_DIGIT: string.ascii_letters + "-_.",
    C.CATEGORY_SPACE: " ",
    C.CATEGORY_NOT_SPACE: string.ascii_letters + string.digits,
    C.CATEGORY_WORD: string.ascii_letters + string.digits + "_",
    C.CATEGORY_NOT_WORD: " -.:/",
}


def _in_set(items: list[Any], ignore_case: bool) -> list[str]:
    allowed: set[str] = set()
    negate = False
    for op, arg in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            allowed.add(chr(arg))
        elif op is C.RANGE:
            allowed.update(chr(c) for c in range(arg[0], arg[1] + 1))
        elif op is C.CATEGORY:
            allowed.update(_CATEGORY[arg])
    if ignore_case:
        allowed |= {c.swapcase() for c in allowed}
    if negate:
        return [c for c in string.ascii_letters + string.digits + " ._-" if c not in allowed]
    return sorted(c for c in allowed if c.isprintable() or c in "\n\t")


class Sampler:
    def __init__(self, rng: random.Random, ignore_case: bool) -> None:
        self.rng = rng
        self.ignore_case = ignore_case
        self.groups: dict[int, str] = {}

    def walk(self, parsed: Any) -> str:
        return "".join(self.node(op, arg) for op, arg in parsed)

    def node(self, op: Any, arg: Any) -> str:
        rng = self.rng
        if op is C.LITERAL:
            return chr(arg)
        if op is C.NOT_LITERAL:
            return rng.choice([c for c in string.ascii_letters if c != chr(arg)])
        if op is C.ANY:
            return rng.choice(string.ascii_letters + string.digits)
        if op is C.IN:
            return rng.choice(_in_set(arg, self.ignore_case))
        if op is C.CATEGORY:
            return rng.choice(_CATEGORY[arg])
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
            low, high, sub = arg
            high = low + 12 if high is C.MAXREPEAT else min(high, low + 80)
            return "".join(self.walk(sub) for _ in range(rng.randint(low, max(low, high))))
        if op is C.SUBPATTERN:
            group, add, _del, sub = arg
            saved = self.ignore_case
            self.ignore_case = bool(add & re.IGNORECASE) or saved
            text = self.walk(sub)
            self.ignore_case = saved
            if group:
                self.groups[group] = text
            return text
        if op is C.BRANCH:
            return self.walk(rng.choice(arg[1]))
        if op is C.GROUPREF:
            return self.groups.get(arg, "")
        if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            return ""
        raise ValueError(f"cannot sample {op}")


def sample(pattern: str, flags: int, rng: random.Random) -> str:
    parsed = P.parse(pattern, flags)
    ignore_case = bool((flags | parsed.state.flags) & re.IGNORECASE)
    return Sampler(rng, ignore_case).walk(parsed)
