"""The decision rule through the real loop, against the anchors' loops (docs/noise.md).

For each noise regime and seed, three loops run `git improve run` on the same project with the
same agent: gitimprove's rule; keep-if-better on one run (Karpathy's autoresearch); the median
of 5 runs with a 1% min-delta (autoresearch's "Noise: high") — the last two through the
benchmark-only `[metric] rule` setting. The metric is sealed: a simulated machine
(`gitimprove.loop.machine`) with seeded noise reading the true value in src/value.txt. The
agent multiplies that value by (1 - e) each round, e drawn from the seed and the round (45%
no effect — a comment-only change —, 25% slight regressions, 20% gains of 1-3%, 10% of
3-10%), so every proposal's true effect is known and the same for the three loops.

Columns: false keeps (no-gain changes kept), metric runs per decision (calibration included),
cumulative true gain (oracle: every gain kept, nothing else), and gains above 2% missed.
Goal per regime: false keeps <= 0.5x and runs <= 0.85x the median-5 loop's, gain >= its (the
difference paired seed by seed, with its standard error).

`--replay` runs the same three loops in process instead (`gitimprove.loop.simulate.
replay_loop`: the same machine stream, proposals, printed digits and calls into the rule, so
the same decisions as `git improve run` makes — `--check N` compares the two on N seeds), fast
enough for hundreds of seeds: the gain difference at 10 seeds has a standard error of 2-3
points, too wide to tell a change from noise.

Usage: python bench/decide_loop_bench.py [--seeds 10] [--first 0] [--rounds 40] [--jobs 2]
                                         [--regimes cv1,cv5,spikes] [--replay] [--check N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import Pool
from pathlib import Path

from common import ENV, ROOT, run_rows

sys.path.insert(0, str(ROOT))

from gitimprove.loop.simulate import replay_loop

PY = sys.executable
LOOPS = {
    "gitimprove": 'min_delta = "0%"\n',
    "single run": 'rule = "single"\nmin_delta = "0"\n',
    "median of 5": 'rule = "median"\nruns = 5\nmin_delta = "1%"\n',
}
LABELS = {"cv1": "gaussian 1%", "cv5": "gaussian 5%", "spikes": "10% spikes of +10..50%"}

AGENT = """import json, os, pathlib, random
seed, it = os.environ["BENCH_SEED"], int(os.environ["GITIMPROVE_ITERATION"])
rng = random.Random(f"{seed}-effect-{it}")
u = rng.random()
e = 0.0 if u < 0.45 else -rng.uniform(0.0025, 0.03) if u < 0.70 else rng.uniform(0.01, 0.03) if u < 0.90 else rng.uniform(0.03, 0.10)
value = pathlib.Path("src/value.txt")
value.write_text(repr(float(value.read_text()) * (1.0 - e)) + "\\n")
with open("src/notes.txt", "a") as notes:
    notes.write(f"# round {it}: effect {e:+.5f}\\n")
print(json.dumps({"description": f"effect={e:+.6f}", "hypothesis": "bench", "approach": "optimization"}))
"""


@dataclass
class Tally:
    decisions: int = 0
    null: int = 0
    false_keeps: int = 0
    big: int = 0
    big_missed: int = 0
    runs: int = 0
    gains: list[float] = field(default_factory=list)
    oracle: list[float] = field(default_factory=list)
    keeps: list[str] = field(default_factory=list)  # per seed: "K" kept, "." not, by round

    def add(self, other: Tally) -> None:
        for name in ("decisions", "null", "false_keeps", "big", "big_missed", "runs"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.gains += other.gains
        self.oracle += other.oracle
        self.keeps += other.keeps


def replayed(job: tuple[str, str, int, int]) -> tuple[tuple[str, str, int], Tally]:
    """One loop and seed, replayed in process (`--replay`)."""
    regime, loop, seed, rounds = job
    r = replay_loop(regime, loop, seed, rounds)
    t = Tally(r.decisions, r.null, r.false_keeps, r.big, r.big_missed, r.runs)
    t.gains, t.oracle = [r.gain], [r.oracle]
    t.keeps = ["".join("K" if k else "." for k in r.keeps)]
    return (regime, loop, seed), t


def one_loop(tmp: Path, regime: str, loop: str, seed: int, rounds: int) -> Tally:
    repo = tmp / f"{regime}-{loop.replace(' ', '_')}-{seed}"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "value.txt").write_text("1.0\n")
    (repo / "src" / "notes.txt").write_text("# notes\n")
    (repo / "agent.py").write_text(AGENT)
    state = tmp / f"{repo.name}.machine.json"
    metric = (
        f"{PY} -m gitimprove.loop.machine --state {state} --scenario {regime} "
        f"--seed {seed} --value src/value.txt --name seconds"
    )
    (repo / ".gitimprove.toml").write_text(
        f'[metric]\ncommand = "{metric}"\ndirection = "lower"\n{LOOPS[loop]}'
        f'[scope]\nmutable = ["src/**"]\nsealed = ["agent.py"]\n'
        f"[loop]\niterations = {rounds}\nplateau_patience = 1000\nstuck_after = 1000\n"
        f'[agent]\nname = "command"\ncommand = "{PY} {repo / "agent.py"}"\n'
        # the simulated machine keeps its state in a file between metric runs, which a
        # sandboxed metric (a private /tmp) could not; this bench measures decisions
        'sandbox = "none"\n'
    )
    env = {**ENV, "BENCH_SEED": str(seed)}
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "bench"],
    ):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    res = subprocess.run(
        [PY, "-m", "gitimprove", "run", "--run", "b", "--json"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    if res.returncode != 0:
        raise SystemExit(f"{repo.name}: git improve run failed:\n{res.stderr}")
    rows = [r for r in run_rows(repo, "b") if r.get("status") != "baseline"]
    t = Tally(decisions=len(rows), runs=json.loads(state.read_text())["n"])
    oracle = 1.0
    marks = ""
    for r in rows:
        e = float(str(r["description"]).split("=")[1])
        kept = r["status"] in ("keep", "keep-reworked")
        marks += "K" if kept else "."
        if e <= 0:
            t.null += 1
            t.false_keeps += kept
        else:
            oracle *= 1.0 - e
        if e > 0.02:
            t.big += 1
            t.big_missed += not kept
    final = subprocess.run(
        ["git", "show", "improve/b:src/value.txt"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    ).stdout
    t.gains.append(100.0 * (1.0 - float(final)))
    t.oracle.append(100.0 * (1.0 - oracle))
    t.keeps.append(marks)
    shutil.rmtree(repo, ignore_errors=True)
    return t


def run_jobs(
    jobs: list[tuple[str, str, int]], a: argparse.Namespace, replay: bool | None = None
) -> list[tuple[tuple[str, str, int], Tally]]:
    """Each (regime, loop, seed): in process (`--replay`, a pool of processes) or as a real
    `git improve run` (each a process of its own, `--jobs` at once)."""
    if a.replay if replay is None else replay:
        with Pool(a.jobs) as pool:
            return pool.map(replayed, [(*j, a.rounds) for j in jobs])
    tmp = Path(tempfile.mkdtemp(prefix="gitimprove-decide-loop-"))
    try:
        with ThreadPoolExecutor(a.jobs) as threads:
            return list(threads.map(lambda j: (j, one_loop(tmp, *j, a.rounds)), jobs))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check(a: argparse.Namespace) -> int:
    """The real loop and its replay, seed by seed: the same keeps, runs and gain."""
    seeds = range(a.first, a.first + a.check)
    jobs = [(r, loop, s) for r in a.regimes.split(",") for s in seeds for loop in LOOPS]
    real = dict(run_jobs(jobs, a, replay=False))
    same = 0
    for job, tally in sorted(run_jobs(jobs, a, replay=True), key=lambda x: x[0]):
        r = real[job]
        agree = (r.keeps, r.runs, [round(g, 6) for g in r.gains]) == (
            tally.keeps,
            tally.runs,
            [round(g, 6) for g in tally.gains],
        )
        same += agree
        if not agree:
            print(f"{job}: real {r.keeps} {r.runs} runs, replay {tally.keeps} {tally.runs} runs")
    print(f"# real and replayed loops agree on {same} of {len(jobs)}")
    return 0 if same == len(jobs) else 1


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--regimes", default="cv1,cv5,spikes")
    ap.add_argument("--first", type=int, default=0, help="the first seed")
    ap.add_argument("--replay", action="store_true", help="replay the loops in process")
    ap.add_argument("--check", type=int, default=0, help="compare real and replayed on N seeds")
    a = ap.parse_args()
    if a.check:
        return check(a)
    regimes = a.regimes.split(",")
    seeds = range(a.first, a.first + a.seeds)
    jobs = [(r, loop, s) for r in regimes for s in seeds for loop in LOOPS]
    t0 = time.time()
    total: dict[tuple[str, str], Tally] = {}
    # every seed's tally lands at its seed's place: the gain difference is paired by seed
    for (regime, loop, _), tally in sorted(run_jobs(jobs, a), key=lambda x: x[0]):
        total.setdefault((regime, loop), Tally()).add(tally)
    how = "replayed in process" if a.replay else "real `git improve run`"
    print(
        f"# seeds {seeds.start}-{seeds.stop - 1} x {a.rounds} rounds per loop, {how}; {time.time() - t0:.0f}s"
    )
    print()
    print(
        "| noise | loop | false keeps | runs per decision | true gain % (oracle) | gains > 2% missed |"
    )
    print("|---|---|---:|---:|---:|---:|")
    ok = True
    for regime in regimes:
        for loop in LOOPS:
            t = total[(regime, loop)]
            print(
                f"| {LABELS.get(regime, regime)} | {loop} | {100 * t.false_keeps / max(1, t.null):.1f}% "
                f"| {t.runs / max(1, t.decisions):.2f} | {statistics.fmean(t.gains):.1f} "
                f"({statistics.fmean(t.oracle):.1f}) | {100 * t.big_missed / max(1, t.big):.0f}% |"
            )
        ours, med = total[(regime, "gitimprove")], total[(regime, "median of 5")]
        fk = (ours.false_keeps / max(1, ours.null)) / max(1e-9, med.false_keeps / max(1, med.null))
        runs = (ours.runs / ours.decisions) / (med.runs / med.decisions)
        # the same seeds in the same order for every loop: the gain difference is paired
        diffs = [x - y for x, y in zip(ours.gains, med.gains, strict=True)]
        gain = statistics.fmean(diffs)
        se = statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else float("inf")
        met = fk <= 0.5 and runs <= 0.85 and gain >= 0
        ok &= met
        print(
            f"| {LABELS.get(regime, regime)} | gitimprove / median of 5 | {fk:.2f}x | {runs:.2f}x | {gain:+.1f} ± {se:.1f} | "
            f"{'ok' if met else 'MISSED'} |"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
