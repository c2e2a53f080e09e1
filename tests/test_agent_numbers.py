"""Numbers an agent reports (cost, tokens, turns) go through one range check: a cost of 400
digits, `1e999`, NaN, a negative or a string is dropped with a note, never a crash and never
shown as a real value. A hostile agent in a real run, then every parser fuzzed."""

from __future__ import annotations

import json
import math
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from gitimprove.agents import aider, claude, codex
from gitimprove.agents.base import LIMITS, AgentResult, apply_report, last_json_object
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project

AGENT = Path(__file__).parent / "agents" / "report_agent.py"
REPORTS = {
    "bigint": '{"description": "x", "cost_usd": 1' + "0" * 400 + "}",
    "inf": '{"description": "x", "cost_usd": 1e999}',
    "nan": '{"description": "x", "cost_usd": NaN}',
    "negative": '{"description": "x", "cost_usd": -3}',
    "string": '{"description": "x", "cost_usd": "12"}',
    "huge-float": '{"description": "x", "cost_usd": 1e300}',
    "digits": '{"description": "x", "cost_usd": 1' + "0" * 5000 + "}",
    "fine": '{"description": "x", "cost_usd": 0.25}',
}


@pytest.mark.slow
def test_a_hostile_report_is_recorded_without_its_numbers(tmp_repo: TmpRepo) -> None:
    names = list(REPORTS)
    plan = tmp_repo.path.parent / "plan.json"
    plan.write_text(json.dumps({str(i): REPORTS[n] for i, n in enumerate(names, 1)}))
    value_project(tmp_repo, f"{sys.executable} {AGENT} {plan}")
    res = tmp_repo.cli("run", "--run", "h", "-n", str(len(names)), "--json")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "h")[1:]
    assert [r["status"] for r in rows] == ["keep"] * len(names), rows
    for name, row in zip(names, rows, strict=True):
        agent = row["agent"]
        if name == "fine":
            assert agent["cost_usd"] == 0.25 and "dropped" not in agent
        elif name == "digits":  # not JSON Python reads at all: no report, no cost
            assert "cost_usd" not in agent
        else:
            assert "cost_usd" not in agent, (name, agent)
            assert agent["dropped"][0].startswith("cost_usd: "), agent
    shown = tmp_repo.cli("log", "--run", "h")
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr


def hostile_number(rng: random.Random) -> Any:
    return rng.choice(
        [
            10 ** rng.randint(0, 500), -(10 ** rng.randint(0, 30)), 1e308 * 10, -1e308 * 10,
            float("nan"), rng.random() * 10 ** rng.randint(-5, 300), True, None, "7", [1], {},
            rng.randint(0, 10**6),
        ]
    )  # fmt: skip


def in_range(result: AgentResult) -> None:
    if result.cost_usd is not None:
        assert math.isfinite(result.cost_usd) and 0 <= result.cost_usd <= LIMITS["cost_usd"]
    for v in result.tokens.values():
        assert isinstance(v, int) and 0 <= v <= LIMITS["tokens"]
    if result.turns is not None:
        assert isinstance(result.turns, int) and 0 <= result.turns <= LIMITS["turns"]
    json.dumps(result.record("x"), allow_nan=False)  # what the note stores is plain JSON


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_fuzz_every_agent_parser(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(150):
        n = lambda: hostile_number(rng)  # noqa: E731
        usage = {"input_tokens": n(), "output_tokens": n(), "cached_input_tokens": n(),
                 "cache_read_input_tokens": n(), "cache_creation_input_tokens": n()}  # fmt: skip
        report = json.dumps({"description": "d", "cost_usd": n()}, allow_nan=True)
        # a report printed by a command agent
        out = AgentResult(0, 1.0)
        apply_report(out, last_json_object("prose " + report))
        in_range(out)
        # Claude Code's result message
        message = {
            "type": "result", "subtype": "success", "total_cost_usd": n(), "num_turns": n(),
            "usage": usage, "result": report,
            "modelUsage": rng.choice([None, {"m": {"inputTokens": n(), "outputTokens": n(),
                                                   "cacheReadInputTokens": n()}}]),
        }  # fmt: skip
        out = AgentResult(0, 1.0)
        claude.parse_output(json.dumps(message, allow_nan=True), out)
        in_range(out)
        # Codex's events
        events = [{"type": "turn.completed", "usage": rng.choice([usage, n()])} for _ in range(3)]
        events.append({"type": "item.completed", "item": {"type": "agent_message", "text": report}})
        out = AgentResult(0, 1.0)
        codex.parse_events("\n".join(json.dumps(e, allow_nan=True) for e in events), out)
        in_range(out)
        # aider's summary lines
        num = rng.choice(["1" * rng.randint(1, 400), "1.2.3", "9" * 320 + ".5", "12,5", "3"])
        line = f"Tokens: {num}k sent, {num} received. Cost: ${num} message, ${num} session."
        out = AgentResult(0, 1.0)
        aider.parse_output(line + "\n" + report, out)
        in_range(out)
