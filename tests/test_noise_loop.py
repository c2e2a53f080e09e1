"""The decision rule through the real loop: `git improve run` in a subprocess, a sealed metric
on a simulated shared machine (seeded noise, load bursts, a busy calibration), and an agent
whose changes have known effects (docs/noise.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import make_project, run_rows

# 2% noise; 6% of runs start a burst of +30% load over 2-3 runs; the first 5 runs (the
# calibration) each +10..50% with probability 0.6
SHARED = {
    "kind": "gauss",
    "cv": 0.02,
    "burst_p": 0.06,
    "burst": 0.30,
    "busy_first": 5,
    "busy_p": 0.6,
    "lo": 0.10,
    "hi": 0.50,
}


def machine_project(
    repo: TmpRepo, tmp: Path, plan: dict[str, Any], params: dict[str, Any], seed: int
) -> Path:
    # the simulated machine keeps its state in a file between metric runs, and imports this
    # package: its measurement runs without the sandbox (which hides /tmp and site-packages there)
    make_project(repo, plan, guard=False, extra='sandbox = "none"\n')
    scenario = tmp / "scenario.json"
    scenario.write_text(json.dumps(params))
    state = tmp / f"machine-{seed}.json"
    command = (
        f"{sys.executable} -m gitimprove.loop.machine --state {state} "
        f"--params-file {scenario} --seed {seed} --value src/value.txt"
    )
    cfg = (repo.path / ".gitimprove.toml").read_text()
    cfg = cfg.replace(f'command = "{sys.executable} bench.py"', f'command = "{command}"')
    cfg = cfg.replace("plateau_patience = 50", "plateau_patience = 1000")
    repo.commit("a metric on a shared machine", {".gitimprove.toml": cfg})
    return state


def attempts(repo: TmpRepo, run: str, n: int) -> list[dict[str, Any]]:
    res = repo.cli("run", "--run", run, "-n", str(n), "--json")
    assert res.returncode == 0, res.stderr
    rows = run_rows(repo, run)[1:]
    assert len(rows) == n and all(r["status"] in ("keep", "discard") for r in rows), rows
    return rows


def check_numbers_agree(row: dict[str, Any]) -> None:
    m = row["metric"]
    assert m["delta"] == pytest.approx(m["value"] - m["incumbent"], abs=1e-12)
    assert m["delta_pct"] == pytest.approx(m["delta"] / m["incumbent"] * 100, abs=1e-9)
    word = "better" if m["delta"] < 0 else "worse"
    assert f"{abs(m['delta_pct']):.1f}% {word}" in row["reason"] or abs(m["delta_pct"]) < 0.1
    cand, inc = row["decision"]["sequence"].count("B"), row["decision"]["sequence"].count("A")
    assert (cand, inc) == (len(m["samples"]), len(m["incumbent_samples"]))
    assert f"{cand} candidate and {inc} incumbent run" in row["reason"]


@pytest.mark.slow
def test_comment_only_changes_on_a_busy_machine_are_not_kept(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    machine_project(tmp_repo, tmp_path, {"default": "comment"}, SHARED, seed=1)
    rows = attempts(tmp_repo, "aa", 10)
    assert sum(r["status"] == "keep" for r in rows) <= 1  # at most the 5% allowed
    for row in rows:
        check_numbers_agree(row)
    base = run_rows(tmp_repo, "aa")[0]
    assert max(base["metric"]["samples"]) > 1.1 * min(base["metric"]["samples"])  # busy


@pytest.mark.slow
def test_a_ten_percent_regression_under_bursts_is_never_kept(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    machine_project(tmp_repo, tmp_path, {"default": "scale:1.10"}, SHARED, seed=2)
    rows = attempts(tmp_repo, "slow", 10)
    assert [r["status"] for r in rows] == ["discard"] * 10
    runs = sorted(r["decision"]["runs"] for r in rows)
    assert runs[len(runs) // 2] <= 2  # hopeless: most go after one or two runs


@pytest.mark.slow
@pytest.mark.parametrize("seed", [11, 12, 13])
def test_sixty_decisions_under_load(tmp_repo: TmpRepo, tmp_path: Path, seed: int) -> None:
    """Per seed: 20 comment-only changes, then 40 rounds alternating 10% and 5% regressions
    (each against the unchanged incumbent): at most 1 keep of the 20, none of the 40."""
    plan: dict[str, Any] = {str(i): "comment" for i in range(1, 21)}
    plan.update({str(i): "scale:1.10" if i % 2 else "scale:1.05" for i in range(21, 61)})
    machine_project(tmp_repo, tmp_path, plan, SHARED, seed=seed)
    rows = attempts(tmp_repo, "sixty", 60)
    assert sum(r["status"] == "keep" for r in rows[:20]) <= 1
    assert [r["status"] for r in rows[20:]] == ["discard"] * 40


@pytest.mark.slow
def test_deterministic_metric_one_run_per_decision_ties_never_kept(tmp_repo: TmpRepo) -> None:
    plan = {
        "1": "set:210.30",  # the same number, another file: a tie
        "2": "comment",  # a tie
        "3": "set:209.9",  # 0.4 better, below min_delta 0.5
        "4": "set:209.8",  # 0.5 better: kept
        "5": "set:209.80",  # a tie with the new incumbent
        "6": "comment",
    }
    make_project(tmp_repo, plan, guard=False, extra="")
    cfg = (tmp_repo.path / ".gitimprove.toml").read_text()
    cfg = cfg.replace('timeout = "20s"', 'timeout = "20s"\nmin_delta = "0.5"', 1)
    tmp_repo.commit("deterministic 210.3", {"src/value.txt": "210.3\n", ".gitimprove.toml": cfg})
    res = tmp_repo.cli("run", "--run", "det", "-n", "6", "--json")
    assert res.returncode == 0, res.stderr
    assert "noise: none" in res.stdout
    rows = run_rows(tmp_repo, "det")
    assert [r["status"] for r in rows] == ["baseline"] + ["discard"] * 3 + ["keep"] + [
        "discard"
    ] * 2
    for row in rows[1:]:  # one candidate run per decision, keeps included
        assert row["decision"]["runs"] == 1 and row["metric"]["incumbent_samples"] == []
        assert row["metric"]["samples"] == [row["metric"]["value"]]
    assert rows[4]["reason"].endswith("deterministic metric, 1 run")
    assert rows[1]["reason"] == "discarded: no change (210.3), deterministic metric, 1 run"
    assert "below min_delta 0.5" in rows[3]["reason"]
    assert rows[4]["metric"]["incumbent"] == 210.3 and rows[4]["metric"]["value"] == 209.8
    assert rows[5]["reason"] == "discarded: no change (209.8), deterministic metric, 1 run"


COUNTING_BENCH = """import pathlib, sys
with open(sys.argv[1], "a") as f:
    f.write("run\\n")
print(f"METRIC score={float(pathlib.Path('src/value.txt').read_text()):g}")
"""


@pytest.mark.slow
@pytest.mark.parametrize("start", [0, 1, 2])
def test_deterministic_metric_costs_one_run_per_decision_keeps_included(
    tmp_repo: TmpRepo, tmp_path: Path, start: int
) -> None:
    """An agent whose changes cycle improvement / tie / worse (from each point of the cycle):
    every metric run is counted by the sealed benchmark itself. Calibration aside, the runs
    are exactly the decisions; every improvement is kept, no tie and no loss ever is."""
    cycle = ["scale:0.9", "comment", "scale:1.1"]
    n = 9
    plan = {str(i): cycle[(start + i - 1) % 3] for i in range(1, n + 1)}
    make_project(tmp_repo, plan, guard=False, extra='sandbox = "none"\n')
    counter = tmp_path / "runs.log"
    cfg = (tmp_repo.path / ".gitimprove.toml").read_text()
    cfg = cfg.replace(f'"{sys.executable} bench.py"', f'"{sys.executable} bench.py {counter}"')
    tmp_repo.commit(
        "count the metric's runs", {"bench.py": COUNTING_BENCH, ".gitimprove.toml": cfg}
    )
    res = tmp_repo.cli("run", "--run", "cyc", "-n", str(n), "--json")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "cyc")
    base, decided = rows[0], rows[1:]
    assert len(decided) == n and len(base["metric"]["samples"]) == 5
    assert counter.read_text().count("run") == 5 + n  # calibration + one run per decision
    expected = ["keep" if plan[str(i)] == "scale:0.9" else "discard" for i in range(1, n + 1)]
    assert [r["status"] for r in decided] == expected
    for row in decided:
        assert row["decision"]["runs"] == 1 and row["metric"]["incumbent_samples"] == []
        assert row["reason"].endswith("deterministic metric, 1 run"), row["reason"]
        if row["status"] == "keep":
            assert row["metric"]["value"] < row["metric"]["incumbent"]
        else:
            assert row["metric"]["value"] >= row["metric"]["incumbent"]


@pytest.mark.slow
def test_every_number_shown_comes_from_the_note(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    """log (table, TSV), status, show and the run's own status lines all print the note's
    value and delta, and the reason states them; none recomputes them from other rows."""
    plan = {"1": "scale:0.85", "2": "comment"}
    plan.update({str(i): "scale:1.2" for i in range(3, 13)})  # 10 more discards
    machine_project(tmp_repo, tmp_path, plan, {"kind": "gauss", "cv": 0.03}, seed=4)
    res = tmp_repo.cli("run", "--run", "v", "-n", "12")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "v")
    by_commit = {r["commit"]: r for r in rows}
    assert [r["status"] for r in rows[1:3]] == ["keep", "discard"]
    for row in rows[1:]:
        check_numbers_agree(row)
        m = row["metric"]
        # the run's status line: the note's value and reason
        assert (
            f"{row['commit'][:10]} {row['status']:<13} {m['value']:>10.6g}  {row['reason']}"
            in res.stdout
        )
    tsv = tmp_repo.cli("log", "--run", "v", "--format", "tsv").stdout.splitlines()
    header = tsv[1].split("\t")
    assert len(tsv) == len(rows) + 2
    for line in tsv[2:]:
        cell = dict(zip(header, line.split("\t"), strict=True))
        short, value, delta = cell["commit"], cell["metric"], cell["delta"]
        row = next(r for c, r in by_commit.items() if c.startswith(short))
        want = row["metric"].get("delta", 0.0) if row["status"] != "baseline" else 0.0
        assert float(delta) == pytest.approx(want, rel=1e-9, abs=1e-12)
        assert float(value) == pytest.approx(row["metric"]["value"], rel=1e-9)
    status = tmp_repo.cli("status").stdout
    last_keep = rows[1]
    assert f"best {last_keep['metric']['value']:.6g} at {last_keep['commit'][:10]}" in status
    # the headline's change is the keep's own, as its note measured it (not the best level
    # against the calibration's median, taken at another time)
    kept = f"its keep measured {last_keep['metric']['delta_pct']:+.1f}%"
    assert kept in status and kept in res.stdout, (status, res.stdout)
    lines = status.splitlines()
    table = [
        ln.split()
        for ln in lines[lines.index(next(ln for ln in lines if ln.startswith("----"))) + 1 :]
    ]
    deltas = {cells[1]: cells[3] for cells in table}
    assert len(deltas) == 10
    for short, delta in deltas.items():  # none of the last 10 is a keep: deltas not all 0
        row = next(r for c, r in by_commit.items() if c.startswith(short))
        assert float(delta) == pytest.approx(row["metric"]["delta"], rel=1e-9, abs=1e-12)
    assert any(float(d) != 0 for d in deltas.values())
    shown = tmp_repo.cli("show", rows[3]["commit"]).stdout
    assert f"reason: {rows[3]['reason']}" in shown


def decisions(repo: TmpRepo, run: str) -> list[tuple[Any, ...]]:
    return [
        (r["iteration"], r["status"], r["metric"]["samples"], r["metric"].get("incumbent_samples"))
        for r in run_rows(repo, run)
    ]


@pytest.mark.slow
def test_a_resumed_noisy_run_decides_as_the_uninterrupted_one(
    tmp_repo: TmpRepo, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Killed right after a note, resumed: with the machine's noise continuing where it
    stopped, every later decision is the same as in a run that never stopped, so the rule
    rebuilt from the notes (noise, window, budget) is the rule the run had."""
    plan = {"1": "scale:0.9", "2": "comment", "3": "scale:1.03", "4": "scale:0.95", "5": "comment"}
    plan.update({"6": "scale:0.97", "7": "comment", "8": "scale:1.1"})
    params = {"kind": "gauss", "cv": 0.02, "burst_p": 0.05, "burst": 0.3}
    ref_dir = tmp_path_factory.mktemp("ref")
    (ref_dir / "repo").mkdir()
    ref = TmpRepo(ref_dir / "repo")
    ref.git("init", "-q")
    machine_project(ref, ref_dir, plan, params, seed=8)
    assert ref.cli("run", "--run", "k", "-n", "8").returncode == 0
    machine_project(tmp_repo, tmp_path, plan, params, seed=8)
    res = tmp_repo.cli(
        "run", "--run", "k", "-n", "8", env={"GITIMPROVE_FAILPOINT": "after-log:4.0"}
    )
    assert res.returncode == 137
    assert tmp_repo.cli("run", "--resume").returncode == 0
    assert decisions(tmp_repo, "k") == decisions(ref, "k")


@pytest.mark.slow
def test_a_second_run_pools_the_first_runs_noise(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    machine_project(tmp_repo, tmp_path, {"default": "comment"}, {"kind": "gauss", "cv": 0.02}, 5)
    assert tmp_repo.cli("run", "--run", "one", "-n", "3").returncode == 0
    res = tmp_repo.cli("run", "--run", "two", "-n", "1")
    assert res.returncode == 0, res.stderr
    assert "pooled with earlier runs of this metric on this machine" in res.stdout
    noise = run_rows(tmp_repo, "two")[0]["noise"]
    # a budget planned from the pooled noise (15 to 17 runs at 2% noise, schedule.py)
    assert noise["prior_used"] and noise["prior_df"] >= 4 and 12 <= noise["max_runs"] <= 24
    first = run_rows(tmp_repo, "one")[0]["noise"]
    assert first["prior_sigma"] is None  # nothing earlier to learn from


CONSTANT_BENCH = """import math, pathlib, random
state = pathlib.Path({state!r})
n = int(state.read_text()) if state.exists() else 0
state.write_text(str(n + 1))
words = pathlib.Path("src/value.txt").read_text().split()
if words[0] == "const":  # a candidate that prints one number, whatever the machine does
    print(f"METRIC score={{float(words[1]):.6g}}")
else:
    noise = random.Random(f"{seed}-{{n}}").gauss(0.0, 0.05)
    print(f"METRIC score={{float(words[0]) * math.exp(noise):.6g}}")
"""


@pytest.mark.slow
@pytest.mark.parametrize("seed", [3, 4, 5])
def test_a_constant_candidate_against_a_noisy_incumbent_uses_the_runs_noise(
    tmp_repo: TmpRepo, tmp_path: Path, seed: int
) -> None:
    """A candidate whose runs repeat one number exactly has no spread; that is not the
    metric's noise (5% per run here): each decision keeps the σ the run measured (it used to
    pool the constant runs in, σ fell to a third and a 3% gain looked certain)."""
    values = ["97", "96.5", "97.5", "98", "96", "97.2"]
    plan = {str(i): "set:const " + v for i, v in enumerate(values, 1)}
    make_project(tmp_repo, plan, guard=False, extra='sandbox = "none"\n')
    bench = CONSTANT_BENCH.format(state=str(tmp_path / "runs"), seed=seed)
    tmp_repo.commit("a noisy metric", {"bench.py": bench})
    rows = attempts(tmp_repo, "const", len(values))
    for row in rows:
        runs = row["metric"]["samples"]
        assert len(set(runs)) == 1 and runs[0] == float(row["metric"]["value"])
        assert row["decision"]["sigma"] > 3.0, (row["decision"], row["reason"])
        check_numbers_agree(row)


@pytest.mark.slow
def test_the_real_loop_and_its_in_process_replay_decide_alike() -> None:
    """`bench/decide_loop_bench.py --replay` measures the real loop on hundreds of seeds by
    replaying it in process: it is only worth that if `git improve run` makes the very same
    decisions (keeps by round, metric runs, final value), for the three loops."""
    import subprocess

    bench = Path(__file__).resolve().parents[1] / "bench" / "decide_loop_bench.py"
    args = ["--check", "1", "--first", "3", "--rounds", "12", "--regimes", "spikes"]
    res = subprocess.run(
        [sys.executable, str(bench), *args, "--jobs", "2"],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0 and "agree on 3 of 3" in res.stdout, res.stdout + res.stderr


@pytest.mark.slow
def test_the_roles_bench_accounts_for_every_run_of_the_replayed_loop() -> None:
    """`bench/decide_roles.py` splits the replayed loop's runs by role: the calibration, the
    candidate runs of each class of true effect and the fresh incumbent runs must add up to
    every metric run the loop made, and the classes of decisions to every decision."""
    from gitimprove.loop.simulate import replay_loop

    bench = Path(__file__).resolve().parents[1] / "bench"
    sys.path.insert(0, str(bench))
    try:
        import decide_roles
    finally:
        sys.path.remove(str(bench))
    seeds = range(7, 10)
    per, lost, n = decide_roles.roles("spikes", seeds, 15, decide_roles.Recorded)
    total = sum(replay_loop("spikes", "gitimprove", s, 15).runs for s in seeds)
    assert n == 45
    classes = ("no gain", "gain < 2%", "gain >= 2%")
    parts = per["calibration"] + per["fresh incumbent"]
    parts += sum(per.get(f"candidate, {c}", 0.0) for c in classes)
    assert parts * n == pytest.approx(total)
    assert sum(per.get(f"decisions, {c}", 0.0) for c in classes) == pytest.approx(1.0)
    assert per["calibration"] * n == 5 * len(seeds)
    assert per["fresh incumbent"] == pytest.approx(
        sum(per.get(f"fresh incumbent, {c}", 0.0) for c in classes)
    )
    assert sum(lost.values()) <= per.get("decisions, gain >= 2%", 0.0) * n


def test_the_paired_bench_compares_a_setting_with_the_defaults_on_the_same_draws() -> None:
    """`bench/decide_paired.py` with a setting at its default value: the variant makes the
    defaults' decisions on the same machine's draws, so their difference is exactly none; a
    setting that is no keyword of the rule is an error, not a silent default."""
    bench = Path(__file__).resolve().parents[1] / "bench" / "decide_paired.py"
    args = ["--regimes", "spikes", "--seeds", "2", "--rounds", "8", "--jobs", "1"]
    same = subprocess.run(
        [sys.executable, str(bench), "--set", "huber_k=1.5", *args],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "variant-defaults +0.00 ± 0.00 points, runs x1.000" in same.stdout, same.stdout
    bad = subprocess.run(
        [sys.executable, str(bench), "--set", "no_such=1", *args], capture_output=True, text=True
    )
    assert bad.returncode != 0 and "no_such" in bad.stderr
