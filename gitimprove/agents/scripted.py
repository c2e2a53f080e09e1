"""The built-in scripted agent: a seeded mutator, deterministic, for tests and the demo.

It edits lines of the mutable files marked as tunable:

    STEP = 1.0  # tune[optimization]: 0.1 | 0.3 | 1.0 | 3.0

Each attempt picks one tunable (of the requested approach family when one is given) and sets
it to another of its choices. The pick depends only on the seed, the iteration, the
candidate index and the files' content, so a resumed run makes the same moves.
"""

from __future__ import annotations

import hashlib
import random
import re
import time
from dataclasses import dataclass
from pathlib import Path

from gitimprove.agents.base import FAMILIES, AgentResult, AgentTask

_TUNE = re.compile(
    r"^(?P<indent>\s*)(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<value>.+?)\s*#\s*tune(?:\[(?P<family>\w+)\])?:\s*(?P<choices>.+?)\s*$"
)


@dataclass(frozen=True)
class Tunable:
    path: Path
    line: int
    name: str
    value: str
    family: str
    choices: tuple[str, ...]


def find_tunables(workdir: Path) -> list[Tunable]:
    found = []
    for path in sorted(workdir.rglob("*.py")):
        if ".git" in path.relative_to(workdir).parts:
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            m = _TUNE.match(line)
            if m:
                choices = tuple(c.strip() for c in m.group("choices").split("|") if c.strip())
                family = m.group("family") if m.group("family") in FAMILIES else "other"
                found.append(
                    Tunable(path, i, m.group("name"), m.group("value").strip(), family, choices)
                )
    return found


class ScriptedAgent:
    name = "scripted"

    def check(self) -> None:
        return None

    def run(self, task: AgentTask, workdir: Path, timeout: float) -> AgentResult:
        start = time.monotonic()
        tunables = [t for t in find_tunables(workdir) if len(t.choices) > 1]
        if not tunables:
            return AgentResult(
                0,
                time.monotonic() - start,
                summary="no tunable lines found",
                description="no change",
            )
        digest = hashlib.sha256()
        for t in tunables:
            digest.update(f"{t.name}={t.value};".encode())
        rng = random.Random(
            f"{task.seed}-{task.iteration}-{task.candidate}-{task.rework_tail is not None}-{digest.hexdigest()}"
        )
        try:
            program = task.prompt_file.read_text(encoding="utf-8")
        except OSError:
            program = ""
        moves = [(t, c) for t in tunables for c in t.choices if c != t.value]
        # like a real agent, do not repeat a move the program shows was already tried
        fresh = [(t, c) for t, c in moves if f"set {t.name} = {c} (was {t.value})" not in program]
        moves = fresh or moves
        preferred = [(t, c) for t, c in moves if task.family and t.family == task.family]
        pick, new = rng.choice(preferred or moves)
        lines = pick.path.read_text(encoding="utf-8").splitlines(keepends=True)
        old_line = lines[pick.line]
        lines[pick.line] = old_line.replace(
            f"{pick.name} = {pick.value}", f"{pick.name} = {new}", 1
        )
        pick.path.write_text("".join(lines), encoding="utf-8")
        return AgentResult(
            0,
            time.monotonic() - start,
            description=f"set {pick.name} = {new} (was {pick.value})",
            hypothesis=f"{pick.name} = {new} finds better minima than {pick.value}",
            approach=pick.family,
            cost_usd=0.0,
            turns=1,
        )
