"""One attempt, stage by stage, on a real temporary repository with a real agent executable.

Each test starts a run for real (markers, context, calibration) and then drives the stages of
`loop/attempt.py` one at a time, checking what each hands to the next.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from gitimprove.git import refs, trees
from gitimprove.loop import baseline, runs
from gitimprove.loop.attempt import (
    AttemptSpec,
    Decided,
    Measured,
    Verdict,
    call_agent,
    commit_tree,
    decide,
    measure_first,
    precheck,
    prepare_workspace,
    run_attempt,
    snapshot_tree,
)
from gitimprove.loop.context import Event, RunContext
from gitimprove.loop.engine import build_context
from gitimprove.loop.history import History
from gitimprove.loop.ledger import record
from gitimprove.state import experiments
from tests.conftest import TmpRepo
from tests.loop_helpers import make_project


def started(tmp_repo: TmpRepo, plan: dict[str, str], *, guard: bool = False) -> RunContext:
    make_project(tmp_repo, plan, guard=guard)
    repo = tmp_repo.open()
    events: list[Event] = []
    opts = runs.RunOptions(run="stages")
    base = runs.head(repo)
    ctx = build_context(repo, "stages", base, opts, events.append)
    cal = baseline.calibrate(ctx)
    baseline.record_baseline(ctx, cal, baseline.check_guard(ctx), new_run=True)
    assert [e["event"] for e in events] == ["noise"]
    return ctx


def spec_for(ctx: RunContext, iteration: int = 1, candidate: int = 0) -> AttemptSpec:
    history = History.read(ctx.repo, ctx.name)
    incumbent = ctx.repo.ref_target(refs.run_branch(ctx.name))
    assert incumbent is not None and history.baseline is not None
    return AttemptSpec(iteration, candidate, incumbent, history, level=0)


def test_stages_one_by_one_to_a_keep(tmp_repo: TmpRepo) -> None:
    ctx = started(tmp_repo, {"1": "set:90"})
    spec = spec_for(ctx)
    with prepare_workspace(ctx, spec) as ws:
        # the workspace is a clone of the incumbent under the run's work folder
        assert (ws.path / "src" / "value.txt").read_text() == "100\n"
        assert ws.name == "stages-1-0" and ws.path.parent.name == "work"
        assert ws.path.name.startswith("stages-1-0-")  # a fresh, random path every time
        assert tmp_repo.git("-C", str(ws.path), "remote") == ""  # no way back to the repository
        assert ws.incumbent_tree == trees.tree_of(ctx.repo, spec.incumbent)

        result = call_agent(ctx, spec, ws, rework=0, rework_tail=None)
        assert result is not None and result.exit_code == 0
        assert "ONE focused change" in ws.prompt.read_text()  # the program it was given
        assert (ws.path / "src" / "value.txt").read_text() == "90\n"

        hashed = snapshot_tree(ctx, ws)
        assert hashed.tree != ws.incumbent_tree and not hashed.refused and not hashed.escaping
        assert precheck(ctx, spec, ws, result, hashed) is None

        commit, scope_name = commit_tree(ctx, spec, hashed.tree, "lower the value")
        assert scope_name == "src"
        message = ctx.repo.commit(commit).message
        assert message.startswith("experiment(src): lower the value")
        assert str(ctx.repo.commit(commit).parents[0].id) == spec.incumbent

        with contextlib.ExitStack() as stack:
            measured = measure_first(ctx, commit, ws, stack)
            assert isinstance(measured, Measured) and measured.first == 90.0
            # the measurement checkout is not the agent's workspace, and its name is random
            co = measured.checkout
            assert co.path != ws.path and co.path.parent == ws.path.parent
            assert "stages" not in co.path.name and co.commit == commit
            assert ctx.guard(co) == {"status": "skipped"}
            assert co.verify() == []
            decided = decide(ctx, spec, measured, rework=0)
        assert isinstance(decided, Decided)
        assert decided.status == "keep" and decided.keep
        assert decided.metric["value"] == 90.0 and decided.decision["runs"] >= 1

        note = {
            "run": ctx.name,
            "iteration": 1,
            "candidate": 0,
            "parent": spec.incumbent,
            "status": decided.status,
            "reason": decided.reason,
            "metric": decided.metric,
        }
        event = record(ctx, commit, note, keep=decided.keep)
    # the program is gone; the workspace is held for the next attempt to renew, until the
    # run closes; the records are in
    assert not ws.prompt.exists() and ws.path.exists()
    ctx.shared.workspaces.close()
    assert not ws.path.exists()
    assert event["status"] == "keep" and event["value"] == 90.0
    assert ctx.repo.ref_target(refs.run_branch(ctx.name)) == commit
    exp = experiments.get(ctx.repo, commit)
    assert exp is not None and exp.status == "keep" and exp.value == 90.0
    archived = tmp_repo.git("log", "--format=%P", "-1", refs.ARCHIVE).split()
    assert commit in archived


@pytest.mark.slow
@pytest.mark.parametrize(
    ("action", "status"),
    [("noop", "no-op"), ("crash", "crash"), ("edit-sealed:80", "sealed")],
)
def test_precheck_names_what_ends_an_attempt(tmp_repo: TmpRepo, action: str, status: str) -> None:
    ctx = started(tmp_repo, {"1": action})
    spec = spec_for(ctx)
    with prepare_workspace(ctx, spec) as ws:
        result = call_agent(ctx, spec, ws, rework=0, rework_tail=None)
        assert result is not None
        verdict = precheck(ctx, spec, ws, result, snapshot_tree(ctx, ws))
    assert isinstance(verdict, Verdict) and verdict.status == status
    assert verdict.reason.startswith(status)


def test_a_duplicate_tree_is_not_measured_twice(tmp_repo: TmpRepo) -> None:
    ctx = started(tmp_repo, {"default": "set:95"})
    first = run_attempt(ctx, spec_for(ctx, 1))
    assert first is not None and first["status"] == "keep"
    # from the run's base, the agent makes the very tree this run already measured
    spec = AttemptSpec(2, 0, ctx.base, History.read(ctx.repo, ctx.name), level=0)
    with prepare_workspace(ctx, spec) as ws:
        result = call_agent(ctx, spec, ws, rework=0, rework_tail=None)
        assert result is not None
        verdict = precheck(ctx, spec, ws, result, snapshot_tree(ctx, ws))
    assert isinstance(verdict, Verdict) and verdict.status == "duplicate"


@pytest.mark.slow
def test_metric_without_a_number_is_a_verdict_not_a_crash(tmp_repo: TmpRepo) -> None:
    ctx = started(tmp_repo, {"1": "text"})
    spec = spec_for(ctx)
    with prepare_workspace(ctx, spec) as ws:
        result = call_agent(ctx, spec, ws, rework=0, rework_tail=None)
        assert result is not None
        hashed = snapshot_tree(ctx, ws)
        assert precheck(ctx, spec, ws, result, hashed) is None
        commit, _ = commit_tree(ctx, spec, hashed.tree, "text")
        with contextlib.ExitStack() as stack:
            measured = measure_first(ctx, commit, ws, stack)
    assert isinstance(measured, Verdict) and measured.status == "metric-error"
    assert measured.metric_tail is not None and "no number" in measured.metric_tail


@pytest.mark.slow
def test_run_attempt_reworks_after_a_guard_failure(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    ctx = started(tmp_repo, {"1": "guard-then-fix:90", "markers": str(markers)}, guard=True)
    event = run_attempt(ctx, spec_for(ctx))
    assert event is not None
    calls = (markers / "calls.log").read_text().split()
    assert calls == ["1.0", "1.0"]  # the first call, then one rework (guard.rework = 1)
    assert "## Rework" in (markers / "prompt-1.0.md").read_text()
    exp = experiments.get(ctx.repo, str(event["commit"]))
    assert exp is not None and exp.status == "keep-reworked" and exp.value == 90.0
