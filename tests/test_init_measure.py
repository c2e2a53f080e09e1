from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gitimprove.state import experiments
from tests.conftest import PY, VALUE_BENCH, TmpRepo, cli, noisy_bench


def note(repo: TmpRepo, commit: str) -> dict:  # type: ignore[type-arg]
    exp = experiments.get(repo.open(), commit)
    assert exp is not None, f"no note on {commit}"
    return exp.state


def test_init_writes_config_records_baseline_and_sets_rewrite_ref(tmp_repo: TmpRepo) -> None:
    head = tmp_repo.commit("initial", {"bench.py": VALUE_BENCH, "value.txt": "100\n"})
    tmp_repo.gen({"value.txt": "55\n"})  # an uncommitted change: init measures HEAD, not this
    res = tmp_repo.cli(
        "init",
        "--metric",
        f"{PY} bench.py",
        "--direction",
        "lower",
        "--guard",
        "true",
        "--sealed",
        "bench.py",
        "--yes",
    )
    assert res.returncode == 0, res.stderr
    assert "baseline score = 100 (median of 3: 100, 100, 100)" in res.stdout
    assert "deterministic" in res.stdout
    text = (tmp_repo.path / ".gitimprove.toml").read_text()
    assert 'name = "score"' in text and 'sealed = ["bench.py"]' in text
    state = note(tmp_repo, head)
    assert state["status"] == "baseline" and state["iteration"] == 0
    assert state["metric"]["samples"] == [100.0, 100.0, 100.0]
    assert tmp_repo.git("config", "notes.rewriteRef") == "refs/notes/improve"
    assert (tmp_repo.path / "value.txt").read_text() == "55\n"  # user's change untouched
    assert not list((tmp_repo.path / ".git" / "improve" / "work").iterdir())


def test_init_refuses_cleanly(tmp_path: Path, tmp_repo: TmpRepo) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    res = cli(outside, "init", "--metric", "echo 1", "--yes")
    assert res.returncode == 1 and "not inside a git repository" in res.stderr
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    res = cli(bare, "init", "--metric", "echo 1", "--yes")
    assert res.returncode == 1 and "bare repository" in res.stderr
    res = tmp_repo.cli("init", "--metric", "echo 1", "--yes")
    assert res.returncode == 1 and "no commit yet" in res.stderr
    tmp_repo.commit("initial")
    res = tmp_repo.cli("init", "--metric", "echo all good", "--yes")
    assert res.returncode == 1
    assert "printed no number" in res.stderr and "all good" in res.stderr
    assert not (tmp_repo.path / ".gitimprove.toml").exists()
    assert tmp_repo.git("for-each-ref", "refs/notes/") == ""
    res = tmp_repo.cli("init", "--yes")
    assert res.returncode == 1 and "--metric" in res.stderr


@pytest.mark.slow
def test_reinit_uses_existing_config_and_force_replaces(project: TmpRepo) -> None:
    res = project.cli("init", "--metric", "echo 2", "--yes")
    assert res.returncode == 1 and "already exists" in res.stderr
    res = project.cli("init", "--yes", "--runs", "1")
    assert res.returncode == 0, res.stderr
    res = project.cli("init", "--metric", "echo 2", "--yes", "--force", "--runs", "1")
    assert res.returncode == 0, res.stderr
    assert 'command = "echo 2"' in (project.path / ".gitimprove.toml").read_text()


def test_measure_keeps_real_gain_and_discards_loss(project: TmpRepo) -> None:
    better = project.commit("experiment(perf): smaller value", {"value.txt": "90\n"})
    worse = project.commit("experiment(perf): larger value", {"value.txt": "95\n"})
    res = project.cli("measure", "--json")
    assert res.returncode == 0, res.stderr
    out = [json.loads(line) for line in res.stdout.splitlines()]
    assert [(o["commit"], o["status"]) for o in out] == [(better, "keep"), (worse, "discard")]
    kept = note(project, better)
    assert (
        kept["iteration"] == 1
        and kept["scope"] == "perf"
        and kept["description"] == "smaller value"
    )
    assert kept["metric"]["samples"] == [90.0]  # deterministic: one run decides
    assert kept["metric"]["incumbent_samples"] == [100.0, 100.0]  # the baseline's, not re-run
    assert kept["metric"]["delta"] == -10.0
    assert kept["reason"].startswith("kept: 10.0% better (10 lower), deterministic metric")
    assert kept["metric"]["value"] == 90 and kept["metric"]["incumbent"] == 100
    lost = note(project, worse)
    assert lost["parent"] == better and lost["status"] == "discard" and lost["iteration"] == 2
    res = project.cli("measure")
    assert "nothing to measure" in res.stdout


COUNTING_BENCH = (
    "import os, pathlib\n"
    "v = float(pathlib.Path('value.txt').read_text())\n"
    "with open(os.environ['RUN_LOG'], 'a') as f:\n"
    "    f.write(f'{v:g}\\n')\n"
    "print(f'METRIC score={v:g}')\n"
)


def test_measure_of_a_deterministic_metric_runs_each_candidate_once(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """As the loop does: one candidate run per decision, the incumbent's recorded exact
    value not re-run, a tie or a gain below min_delta never kept, compared exactly."""
    log = tmp_path / "runs.log"
    env = {"RUN_LOG": str(log)}
    tmp_repo.commit("initial", {"bench.py": COUNTING_BENCH, "value.txt": "210.3\n"})
    res = tmp_repo.cli("init", "--metric", f"{PY} bench.py", "--yes", "--runs", "3", env=env)
    assert res.returncode == 0, res.stderr
    cfg = (tmp_repo.path / ".gitimprove.toml").read_text()
    tmp_repo.commit(
        "config", {".gitimprove.toml": cfg.replace('min_delta = "0"', 'min_delta = "1%"')}
    )
    log.write_text("")
    tie = tmp_repo.commit("experiment(x): comment only", {"notes.txt": "# a comment\n"})
    small = tmp_repo.commit("experiment(x): 0.5% better", {"value.txt": "209.25\n"})
    better = tmp_repo.commit("experiment(x): 10% better", {"value.txt": "189.27\n"})
    worse = tmp_repo.commit("experiment(x): worse", {"value.txt": "200\n"})
    res = tmp_repo.cli("measure", "--json", env=env)
    assert res.returncode == 0, res.stderr
    out = {o["commit"]: o["status"] for o in map(json.loads, res.stdout.splitlines())}
    assert out == {tie: "discard", small: "discard", better: "keep", worse: "discard"}
    # one run per candidate, in order, and no run of an incumbent
    assert log.read_text().split() == ["210.3", "209.25", "189.27", "200"]
    for commit in (tie, small, better, worse):
        state = note(tmp_repo, commit)
        assert len(state["metric"]["samples"]) == 1 and "not re-run" in state["reason"]
        m = state["metric"]
        assert m["delta"] == m["value"] - m["incumbent"]
    assert note(tmp_repo, tie)["metric"]["delta"] == 0.0  # exactly: no float noise
    assert note(tmp_repo, tie)["reason"].startswith("discarded: no change (210.3)")
    assert "below min_delta" in note(tmp_repo, small)["reason"]
    assert note(tmp_repo, worse)["metric"]["incumbent"] == 189.27  # the kept one, exact


def test_status_shows_commits_measured_outside_a_loop(project: TmpRepo) -> None:
    res = project.cli("status")
    assert (
        res.returncode == 1 and "no run yet" in res.stderr and "git improve measure" in res.stderr
    )
    better = project.commit("experiment(perf): smaller value", {"value.txt": "90\n"})
    project.commit("experiment(perf): larger value", {"value.txt": "95\n"})
    assert project.cli("measure").returncode == 0
    res = project.cli("status")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "no loop run yet; the commits measured with `git improve measure`:"
    assert lines[1] == f"best 90 at {better[:10]}, baseline 100 (-10.00%), lower is better"
    assert lines[2].startswith("2 attempts, 1 kept;")
    got = json.loads(project.cli("status", "--json").stdout)
    assert (got["run"], got["best"], got["baseline"], got["kept"]) == (None, 90.0, 100.0, 1)


@pytest.mark.slow
def test_measure_records_failures_with_their_status(project: TmpRepo) -> None:
    crash = project.commit("experiment(x): crash", {"value.txt": "oops\n"})
    project.commit("experiment(x): back", {"value.txt": "100\n"})
    guard_cfg = (
        (project.path / ".gitimprove.toml")
        .read_text()
        .replace('[guard]\ncommand = ""', '[guard]\ncommand = "test -f ok.txt"')
    )
    project.commit("tighten guard", {".gitimprove.toml": guard_cfg})
    gfail = project.commit("experiment(x): no ok file", {"value.txt": "80\n"})
    res = project.cli("measure", crash, gfail)
    assert res.returncode == 0, res.stderr
    assert note(project, crash)["status"] == "crash"
    assert "ValueError" in note(project, crash)["metric_tail"]
    state = note(project, gfail)
    assert state["status"] == "guard-fail" and state["guard"]["status"] == "fail"


@pytest.mark.slow
def test_noisy_metric_keeps_a_real_gain(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    env = {"NOISE_COUNTER": str(tmp_path / "counter")}
    tmp_repo.commit("initial", {"bench.py": noisy_bench(), "value.txt": "100\n"})
    res = tmp_repo.cli("init", "--metric", f"{PY} bench.py", "--yes", "--runs", "5", env=env)
    assert res.returncode == 0, res.stderr
    assert "noise ≈" in res.stdout
    gain = tmp_repo.commit("experiment(x): 10% better", {"value.txt": "90\n"})
    same = tmp_repo.commit("experiment(x): no real change", {"value.txt": "90\n", "other.txt": "x"})
    res = tmp_repo.cli("measure", "--runs", "5", env=env)
    assert res.returncode == 0, res.stderr
    assert note(tmp_repo, gain)["status"] == "keep"
    assert note(tmp_repo, same)["status"] == "discard"
    why = note(tmp_repo, same)["reason"]  # as its noisy runs fell: a little better, or worse
    assert why.startswith("discarded: ") and ("not confirmed" in why or "worse" in why), why
    m = note(tmp_repo, gain)["metric"]  # the numbers the reason states are the note's
    assert (
        m["delta"] == m["value"] - m["incumbent"]
        and m["interval"][0] < m["delta"] < m["interval"][1]
    )
    assert f"{abs(m['delta_pct']):.1f}% better" in note(tmp_repo, gain)["reason"]


@pytest.mark.slow
def test_post_commit_hook_gives_pending_note_then_measure_finishes_it(project: TmpRepo) -> None:
    plain = project.commit("ordinary commit", {"readme": "x"})
    assert project.cli("hook", "post-commit").returncode == 0
    exp_commit = project.commit("experiment(perf): try 70", {"value.txt": "70\n"})
    res = project.cli("hook", "post-commit")
    assert res.returncode == 0 and res.stdout == ""
    assert experiments.get(project.open(), plain) is None
    state = note(project, exp_commit)
    assert (state["status"], state["description"], state["scope"]) == ("pending", "try 70", "perf")
    res = project.cli("measure")
    assert res.returncode == 0, res.stderr
    assert note(project, exp_commit)["status"] == "keep"


def test_hook_fails_open(project: TmpRepo, tmp_path: Path) -> None:
    project.commit("experiment(x): one", {"value.txt": "1\n"})
    (project.path / ".gitimprove.toml").write_text("[metric\nbroken")
    res = project.cli("hook", "post-commit")
    assert res.returncode == 0  # a broken config never breaks a commit
    (project.path / ".gitimprove.toml").write_text('[metric]\ncommand = "x"\n')
    saved = project.git("rev-parse", "refs/notes/improve")
    blob = project.git("hash-object", "-w", "value.txt")
    project.git("update-ref", "refs/notes/improve", blob)  # a broken notes ref: an internal error
    try:
        res = project.cli("hook", "post-commit")
    finally:
        project.git("update-ref", "refs/notes/improve", saved)
    assert res.returncode == 0
    log = (project.path / ".git" / "improve" / "hooks.log").read_text()
    assert "post-commit: internal error, ignored" in log
    plain = tmp_path / "plain"
    plain.mkdir()
    assert cli(plain, "hook", "post-commit").returncode == 0
    assert project.cli("hook", "no-such-event").returncode == 0
    assert project.cli("hook", "post-commit", env={"GITIMPROVE_CHILD": "1"}).returncode == 0


def test_amend_and_rebase_keep_the_note(project: TmpRepo) -> None:
    c = project.commit("experiment(x): amend me", {"value.txt": "90\n"})
    project.cli("measure")
    project.git("commit", "-q", "--amend", "-m", "experiment(x): amended")
    amended = project.git("rev-parse", "HEAD")
    assert amended != c
    assert note(project, amended)["status"] == "keep"
    project.git("checkout", "-q", "-b", "side", "HEAD~1")
    project.commit("side work", {"side.txt": "s"})
    project.git("checkout", "-q", "main")
    project.git("rebase", "-q", "side")
    rebased = project.git("rev-parse", "HEAD")
    assert rebased != amended
    assert note(project, rebased)["status"] == "keep"


def test_init_asks_for_what_is_missing(tmp_repo: TmpRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from gitimprove.cli import _build_group
    from gitimprove.commands import init as init_cmd

    tmp_repo.commit("initial", {"bench.py": VALUE_BENCH, "value.txt": "7\n"})
    monkeypatch.chdir(tmp_repo.path)
    monkeypatch.setattr(init_cmd, "_interactive", lambda: True)
    monkeypatch.setattr(init_cmd, "_found", lambda: "claude")  # as if claude were installed
    answers = f"{PY} bench.py\nhigher\n\nsrc/**, lib/**\n\n"
    result = CliRunner().invoke(_build_group(), ["init", "--runs", "1"], input=answers)
    assert result.exit_code == 0, result.output
    assert "Metric command" in result.output and "Better is" in result.output
    assert "Coding agent (claude, codex, aider, command, scripted) [claude]" in result.output
    text = (tmp_repo.path / ".gitimprove.toml").read_text()
    assert 'direction = "higher"' in text and 'mutable = ["src/**", "lib/**"]' in text
    assert 'name = "claude"' in text and "\ncommand = " not in text.split("[agent]")[1]


@pytest.mark.slow
def test_init_asks_for_a_command_agent_and_its_command_which_then_runs(
    tmp_repo: TmpRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from gitimprove.cli import _build_group
    from gitimprove.commands import init as init_cmd

    agent = tmp_path / "agent.py"  # follows the agent contract: edits its cwd, exits 0
    agent.write_text(
        "import json, pathlib\n"
        "pathlib.Path('value.txt').write_text('6\\n')\n"
        "print(json.dumps({'description': 'smaller value'}))\n"
    )
    tmp_repo.commit("initial", {"bench.py": VALUE_BENCH, "value.txt": "7\n"})
    monkeypatch.chdir(tmp_repo.path)
    monkeypatch.setattr(init_cmd, "_interactive", lambda: True)
    monkeypatch.setattr(init_cmd, "_found", lambda: "command")  # no agent installed
    answers = f"{PY} bench.py\nlower\n\n\n\n{PY} {agent}\n"
    result = CliRunner().invoke(_build_group(), ["init", "--runs", "2"], input=answers)
    assert result.exit_code == 0, result.output
    assert "[command]" in result.output and "Agent command" in result.output
    text = (tmp_repo.path / ".gitimprove.toml").read_text()
    assert 'name = "command"' in text and f'command = "{PY} {agent}"' in text
    tmp_repo.commit("gitimprove config")
    res = tmp_repo.cli("run", "--run", "asked", "-n", "1")
    assert res.returncode == 0, res.stderr
    assert "kept: 14.3% better (1 lower)" in res.stdout


TRAILER_BENCH = (
    "import pathlib, random\n"
    "v = float(pathlib.Path('value.txt').read_text())\n"
    "noise = float(pathlib.Path('noise.txt').read_text())\n"
    "print(f'METRIC score={v * (1 + random.gauss(0, noise)):.6g}')\n"
    "print('debug: METRIC score=4')  # the benchmark's own trailer, every run\n"
    "extra = pathlib.Path('extra.txt')\n"
    "if extra.exists():  # what the measured code prints after it\n"
    "    print(extra.read_text().strip())\n"
)


@pytest.mark.parametrize("noise", ["0", "0.002"])
def test_measure_reads_a_benchmark_with_a_trailer_as_its_baseline_printed_it(
    tmp_repo: TmpRepo, noise: str
) -> None:
    """A benchmark that prints a line naming its metric after its own (a debug line) is
    measured by `measure` as the baseline printed it, deterministic or noisy: the honest
    candidate decided on its value, one that prints another such line a metric-error."""
    tmp_repo.commit(
        "initial", {"bench.py": TRAILER_BENCH, "value.txt": "200\n", "noise.txt": noise}
    )
    res = tmp_repo.cli("init", "--metric", f"{PY} bench.py", "--yes", "--runs", "3")
    assert res.returncode == 0, res.stderr
    better = tmp_repo.commit("experiment(x): 10% better", {"value.txt": "180\n"})
    forged = tmp_repo.commit("experiment(x): prints a line", {"extra.txt": "METRIC score=1\n"})
    res = tmp_repo.cli("measure", "--json")
    assert res.returncode == 0, res.stderr
    out = {o["commit"]: o for o in map(json.loads, res.stdout.splitlines())}
    assert out[better]["status"] == "keep", out[better]
    assert note(tmp_repo, better)["metric"]["value"] == pytest.approx(180, rel=0.02)
    assert out[forged]["status"] == "metric-error", out[forged]
    reason = note(tmp_repo, forged)["reason"]
    assert reason.startswith("metric-error: a line naming `METRIC score`"), reason
    assert "'METRIC score=1'" in reason
