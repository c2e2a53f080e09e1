"""Signals, MEMORY.md and `git improve reflect`."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitimprove.git import memory
from gitimprove.memory import signals
from tests.conftest import TmpRepo


@pytest.fixture
def repo(tmp_repo: TmpRepo) -> TmpRepo:
    tmp_repo.commit(
        "initial",
        {
            ".gitimprove.toml": '[metric]\ncommand = "echo 1"\n',
            "CLAUDE.md": "# Project\n\n- Use ruff for lint.\n",
        },
    )
    return tmp_repo


def add(
    repo: TmpRepo,
    type_: str,
    content: str,
    session: str = "s1",
    ts: str | None = None,
    category: str | None = None,
) -> str:
    sig = signals.make_signal(
        type_=type_, content=content, session=session, hook="test", now=ts, category=category
    )
    signals.add_now(repo.open(), sig)
    return str(sig["id"])


def listed(repo: TmpRepo) -> list[dict]:  # type: ignore[type-arg]
    res = repo.cli("reflect", "--list", "--json")
    assert res.returncode == 0, res.stderr
    return [json.loads(line) for line in res.stdout.splitlines()]


def test_signal_add_masks_secrets_and_lists(repo: TmpRepo) -> None:
    res = repo.cli(
        "signal",
        "add",
        "--type",
        "command",
        "--content",
        "deploy with DEPLOY_TOKEN=abc123secret99",
        "--tag",
        "deploy",
    )
    assert res.returncode == 0, res.stderr
    (sig,) = signals.all_signals(repo.open())
    assert (
        "abc123secret99" not in sig["content"]
        and sig["tags"] == ["deploy"]
        and sig["category"] == "command"
    )
    assert repo.cli("signal", "add", "--type", "nonsense", "--content", "x").returncode == 2


def test_candidates_group_recurring_signals_and_drop_known_ones(repo: TmpRepo) -> None:
    add(repo, "correction", "use pnpm not npm for installs", session="a")
    add(repo, "correction", "use pnpm, not npm, for installs", session="b")
    add(repo, "correction", "use pnpm not npm for installs!", session="c")
    add(repo, "convention", "Use ruff for lint.")  # already in CLAUDE.md
    add(repo, "project_friction", "4 searches came back empty before finding src/parser.py")
    cands = listed(repo)
    assert len(cands) == 2
    pnpm = cands[0]
    assert pnpm["confidence"] == 3 and pnpm["sessions"] == 3 and len(pnpm["signal_ids"]) == 3
    assert pnpm["kind"] == "agent-side" and cands[1]["kind"] == "project-side"
    assert "1 already in CLAUDE.md" in repo.cli("reflect", "--list").stdout


@pytest.mark.slow
def test_apply_project_global_proposal_and_dismiss(repo: TmpRepo) -> None:
    first = add(repo, "correction", "use pnpm not npm for installs")
    second = add(repo, "gotcha", "tests need TZ=UTC or the date tests fail", category="gotcha")
    third = add(repo, "project_friction", "no README section explains how to run the benchmarks")
    fourth = add(repo, "correction", "prefer short commit subjects", category="preference")
    res = repo.cli("reflect", "--apply", first, "--to", "project", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    text = (repo.path / "CLAUDE.md").read_text()
    assert (
        "- Use ruff for lint." in text
        and "## Learnings (git improve reflect)\n- use pnpm not npm for installs" in text
    )
    assert Path(out["backup"]).read_text() == "# Project\n\n- Use ruff for lint.\n"
    res = repo.cli("reflect", "--apply", fourth, "--to", "global")
    assert res.returncode == 0, res.stderr
    home_md = Path(os.environ["HOME"]) / ".claude" / "CLAUDE.md"  # the hermetic HOME
    assert "prefer short commit subjects" in home_md.read_text()
    assert repo.cli("reflect", "--apply", third, "--to", "proposal").returncode == 0
    ((_, proposal),) = memory.iter_entries(repo.open(), "proposals/")
    assert b"how to run the benchmarks" in proposal
    assert repo.cli("reflect", "--dismiss", second).returncode == 0
    assert listed(repo) == []
    states = {s["id"]: s["status"] for s in signals.all_signals(repo.open())}
    assert states == {first: "promoted", second: "dismissed", third: "promoted", fourth: "promoted"}
    assert len(list(memory.iter_entries(repo.open(), "learnings/"))) == 2
    res = repo.cli("reflect", "--apply", first, "--to", "project")
    assert res.returncode == 1 and "no captured signal" in res.stderr
    # learnings show in MEMORY.md, newest first
    mem = repo.cli("memory").stdout
    assert mem.index("prefer short commit subjects") < mem.index("use pnpm not npm")


def test_interactive_reflect_one_at_a_time_oldest_first(
    repo: TmpRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gitimprove.cli import _build_group
    from gitimprove.commands import reflect as reflect_cmd

    def ago(days: int) -> str:
        return (dt.datetime.now(dt.UTC) - dt.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    old = add(repo, "correction", "always run make check before pushing", ts=ago(6))
    add(repo, "gotcha", "the cache dir must be writable", ts=ago(3))
    add(repo, "command", "run `make bench` for the numbers", ts=ago(1))
    monkeypatch.chdir(repo.path)
    monkeypatch.setattr(reflect_cmd, "_interactive", lambda: True)
    result = CliRunner().invoke(_build_group(), ["reflect"], input="p\ns\nq\n")
    assert result.exit_code == 0, result.output
    assert result.output.index("always run make check") < result.output.index(
        "cache dir must be writable"
    )
    assert "Learning 1 of 3" in result.output and "stopped; the rest stay" in result.output
    states = {s["content"]: s["status"] for s in signals.all_signals(repo.open())}
    assert states["always run make check before pushing"] == "promoted"
    assert states["the cache dir must be writable"] == "dismissed"
    assert states["run `make bench` for the numbers"] == "captured"
    assert old


def test_ttl_drops_old_signals_from_views_but_keeps_them(repo: TmpRepo) -> None:
    add(repo, "gotcha", "an old gotcha from long ago", ts="2020-01-01T00:00:00.000000Z")
    add(repo, "gotcha", "a fresh gotcha")
    assert [c["content"] for c in listed(repo)] == ["a fresh gotcha"]
    assert "an old gotcha" not in repo.cli("memory").stdout
    assert len(signals.all_signals(repo.open())) == 2  # never deleted
    assert "an old gotcha" in repo.cli("signal", "list", "--all").stdout


def test_memory_md_is_capped_and_pruned(repo: TmpRepo, tmp_path: Path) -> None:
    entries = {}
    for i in range(260):
        entries[f"learnings/2026/11/{i:04d}.md"] = (
            f'+++\ncreated = "2026-11-{1 + i % 28:02d}T00:00:00Z"\ncategory = "command"\n+++\nlearning number {i}\n'
        )
    memory.add_entries(repo.open(), entries)
    out = tmp_path / "MEMORY.md"
    res = repo.cli("memory", "--output", str(out))
    assert res.returncode == 0, res.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 180 and "pruned to 180 lines" in lines[-1]
