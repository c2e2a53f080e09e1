"""Every candidate `reflect --list` shows can be applied, one after another: applying one
(its words now in CLAUDE.md and the learnings) never makes a listed candidate that resembles
it unreachable, and no signal is left behind captured but never shown."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from gitimprove.memory import signals
from tests.conftest import TmpRepo
from tests.test_reflect_memory import add, listed, repo  # noqa: F401  (a fixture)

FILES = ["src/parse.py", "src/views.py", "lib/cache.py", "app/main.py", "tools/build.py"]
CMDS = ["npm run lint", "cargo build", "make check", "pytest -x", "go vet ./..."]


def seed(repo: TmpRepo, n: int) -> list[str]:  # noqa: F811
    """`n` signals alike in words, about different subjects (so separate candidates), a few
    recurring across sessions (grouped), a few written by `signal add`."""
    ids = []
    for i in range(n):
        f = FILES[i % len(FILES)].replace(".py", f"{i // len(FILES)}.py")
        if i % 3 == 0:
            text = f"{f} was edited 3 times before the tests passed"
            ids.append(add(repo, "project_friction", text, session=f"s{i % 4}"))
        elif i % 3 == 1:
            text = f"`{CMDS[i % len(CMDS)]} {f}` must run before every commit"
            ids.append(add(repo, "convention", text, session=f"s{i % 4}"))
        else:
            text = f"{f} was edited 3 times before the tests passed"  # a recurrence
            ids.append(add(repo, "project_friction", text, session=f"t{i}"))
    for k in range(2):
        res = repo.cli(
            "signal", "add", "--type", "gotcha", "--content",
            f"the fixture in tests/conf{k}.py needs TZ=UTC or the date tests fail",
        )  # fmt: skip
        assert res.returncode == 0, res.stderr
    return ids


@pytest.mark.parametrize(
    "n", [12, pytest.param(30, marks=pytest.mark.slow), pytest.param(124, marks=pytest.mark.slow)]
)
def test_every_listed_candidate_can_be_applied(repo: TmpRepo, n: int) -> None:  # noqa: F811
    seed(repo, n)
    cands = listed(repo)
    assert len(cands) >= 6
    shown = {s for c in cands for s in c["signal_ids"]}
    targets = ["project", "proposal", "global"]
    for k, c in enumerate(cands):
        res = repo.cli("reflect", "--apply", c["id"], "--to", targets[k % 3], "--json")
        assert res.returncode == 0, (k, c["content"], res.stderr)
        assert json.loads(res.stdout)["id"] == c["id"]
    states = {s["id"]: s["status"] for s in signals.all_signals(repo.open())}
    assert {i: states[i] for i in shown} == dict.fromkeys(shown, "promoted")
    assert "captured" not in states.values(), states  # no signal lost
    assert listed(repo) == []


@pytest.mark.slow
def test_dismissing_every_listed_candidate_one_by_one(repo: TmpRepo) -> None:  # noqa: F811
    seed(repo, 12)
    for c in listed(repo):
        res = repo.cli("reflect", "--dismiss", c["id"])
        assert res.returncode == 0, res.stderr
    states = {s["id"]: s["status"] for s in signals.all_signals(repo.open())}
    assert set(states.values()) == {"dismissed"}


@pytest.mark.slow
def test_a_reviewed_signal_never_hides_a_new_one_like_it(repo: TmpRepo) -> None:  # noqa: F811
    """A signal dismissed long ago (out of the list's view) or promoted, and a new one alike:
    the new one is a candidate of its own, listed and applicable; none is left captured."""
    old = (dt.datetime.now(dt.UTC) - dt.timedelta(days=40)).strftime("%Y-%m-%dT%H:%M:%SZ")
    gone = add(repo, "correction", "use pnpm not npm for installs", ts=old)
    assert repo.cli("reflect", "--dismiss", gone).returncode == 0
    kept = add(repo, "gotcha", "tests need TZ=UTC or the date tests fail", category="gotcha")
    assert repo.cli("reflect", "--apply", kept, "--to", "proposal").returncode == 0
    again = add(repo, "correction", "use pnpm, not npm, for installs", session="b")
    recur = add(repo, "gotcha", "the tests need TZ=UTC or date tests fail", session="c")
    cands = listed(repo)
    assert [c["id"] for c in cands] == [again], cands
    res = repo.cli("reflect", "--apply", again, "--to", "project")
    assert res.returncode == 0, res.stderr
    # the recurrence of what was proposed is counted as known, not folded out of sight
    assert "1 already in" in repo.cli("reflect", "--list").stdout
    res = repo.cli("reflect", "--apply", recur, "--to", "project")  # still reachable by id
    assert res.returncode == 0, res.stderr
    states = {s["id"]: s["status"] for s in signals.all_signals(repo.open())}
    assert states == {gone: "dismissed", kept: "promoted", again: "promoted", recur: "promoted"}


def test_applying_a_candidate_applies_every_signal_it_was_listed_with(
    repo: TmpRepo,  # noqa: F811
) -> None:
    """An old captured signal out of the list's view must not regroup, when one is applied,
    the signals the list showed as one candidate: every one of them is promoted."""
    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "theta",
        "iota",
        "kappa",
        "lambda",
    ]
    old = (dt.datetime.now(dt.UTC) - dt.timedelta(days=40)).strftime("%Y-%m-%dT%H:%M:%SZ")
    stale = add(repo, "correction", " ".join(words), ts=old)
    first = add(repo, "correction", " ".join([*words[:9], "omega"]), session="a")
    second = add(repo, "correction", " ".join([*words[:8], "omega", "sigma"]), session="b")
    (cand,) = listed(repo)
    assert set(cand["signal_ids"]) == {first, second}
    res = repo.cli("reflect", "--apply", cand["id"], "--to", "project")
    assert res.returncode == 0, res.stderr
    states = {s["id"]: s["status"] for s in signals.all_signals(repo.open())}
    assert states[first] == states[second] == "promoted", (states, stale)
    assert listed(repo) == []
