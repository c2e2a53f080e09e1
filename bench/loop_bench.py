"""The loop's own overhead per attempt, agent and metric (nearly) instant (DESIGN §13).

Runs `git improve run` with a `command` agent that changes one line and a metric that prints
a number, then subtracts from each attempt's wall time the agent's own seconds and the
metric runs (timed separately). Budget: 150 ms per attempt.

The overhead includes every integrity check of an attempt (the repository snapshot before and
after the agent, the sweep for leftover processes, the tree hashed from the files, the
checkout verified before and after each run, the run's refs checked before the record). With
`--sandbox all` (the default) it runs once with `[agent] sandbox = "none"`, once with
"landlock" (when the kernel has it) and once with "bwrap" (when usable; `both`: none and
bwrap); a sandbox's own cost (starting bubblewrap, entering the Landlock domain) is part of
the agent's time, so it is reported as the difference of the agents' median times.

Without the sandbox the files the user's ignore rules hide from `git status` are watched too
(git/ignored.py): `--ignored-files 20000` puts that many in an ignored `.venv/` of the work
tree (a virtualenv's size), walked once per run and then kept by inotify.

Usage: python bench/loop_bench.py [--iterations 30] [--sandbox all|both|none|landlock|bwrap]
    [--checkout-files 2000] [--loose-objects 2500] [--ignored-files 20000]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from common import ENV, loop_project, run_rows
from gitimprove.util.supervise import LANDLOCK_ABI_NEEDED, landlock_abi

AGENT = "import os, pathlib\np = pathlib.Path('src/n.txt')\np.write_text(os.environ['GITIMPROVE_ITERATION'] + '\\n')\n"


def plant_loose(repo: Path, count: int) -> None:
    """`count` more loose objects in the repository's store (blobs no tree names), as a
    repository that has not been packed for a while holds."""
    paths = repo / ".git" / "bench-blobs"
    paths.mkdir()
    names = []
    for i in range(count):
        (paths / f"b{i}").write_text(f"loose blob {i}\n")
        names.append(str(paths / f"b{i}"))
    subprocess.run(
        ["git", "hash-object", "-w", "--stdin-paths"],
        cwd=repo,
        env=ENV,
        input="\n".join(names) + "\n",
        text=True,
        check=True,
        capture_output=True,
    )
    shutil.rmtree(paths)


def loose_count(repo: Path) -> int:
    objects = repo / ".git" / "objects"
    return sum(len(list(d.iterdir())) for d in objects.glob("[0-9a-f][0-9a-f]"))


def plant_ignored(repo: Path, count: int) -> None:
    """`count` files in an ignored `.venv/` of the work tree, 100 a folder, as a virtualenv."""
    with open(repo / ".git" / "info" / "exclude", "a") as f:
        f.write(".venv/\n")
    site = repo / ".venv" / "lib" / "python3" / "site-packages"
    for i in range(count):
        folder = site / f"pkg{i // 100}"
        if i % 100 == 0:
            folder.mkdir(parents=True)
        (folder / f"m{i % 100}.py").write_bytes(b"")


def measure(
    iterations: int, sandbox: str, files: int = 0, loose: int = 0, ignored: int = 0
) -> dict[str, float] | None:
    tmp = Path(tempfile.mkdtemp(prefix="gitimprove-loop-bench-"))
    try:
        repo = tmp / "repo"
        loop_project(
            repo,
            AGENT,
            "[loop]\nplateau_patience = 1000\nstuck_after = 1000\n",
            agent_config=f'sandbox = "{sandbox}"\n',
            files=files,
        )
        if loose:
            plant_loose(repo, loose)
        if ignored:
            plant_ignored(repo, ignored)
        py = sys.executable
        metric_times = []
        for _ in range(10):
            t0 = time.perf_counter()
            subprocess.run([py, "metric.py"], cwd=repo, env=ENV, check=True, capture_output=True)
            metric_times.append(time.perf_counter() - t0)
        metric_s = statistics.median(metric_times)
        t0 = time.perf_counter()
        res = subprocess.run(
            [py, "-m", "gitimprove", "run", "--run", "bench", "-n", str(iterations), "--json"],
            cwd=repo,
            env=ENV,
            capture_output=True,
            text=True,
        )
        total = time.perf_counter() - t0
        if res.returncode != 0:
            print(res.stderr)
            return None
        rows = run_rows(repo, "bench")
        overheads, agents = [], []
        for r in rows:
            if r.get("status") == "baseline":
                continue
            start = datetime.fromisoformat(r["started"].replace("Z", "+00:00"))
            end = datetime.fromisoformat(r["finished"].replace("Z", "+00:00"))
            wall = (end - start).total_seconds()
            runs = (r.get("decision") or {}).get("runs", 0)
            overheads.append(wall - r["agent"]["seconds"] - runs * metric_s)
            agents.append(r["agent"]["seconds"])
        per = statistics.median(overheads) * 1000
        agent_total = sum(agents)
        metric_total = (
            sum((r.get("decision") or {}).get("runs", 0) for r in rows) * metric_s + 5 * metric_s
        )
        whole = (total - agent_total - metric_total) / max(1, len(overheads)) * 1000
        print(
            f"[sandbox = {sandbox}, {files} more files in the tree, "
            f"{loose_count(repo)} loose objects at the end, {ignored} ignored files]"
        )
        print(
            f"  whole command, minus agent and metric time, per attempt: {whole:.1f} ms (start-up and calibration included)"
        )
        print(f"  {len(overheads)} attempts in {total:.1f}s (whole command, calibration included)")
        print(
            f"  metric run {metric_s * 1000:.1f} ms; agent (with its sandbox) median {statistics.median(agents) * 1000:.1f} ms; statuses: "
            + ", ".join(sorted({r["status"] for r in rows}))
        )
        print(
            f"  loop overhead per attempt (median): {per:.1f} ms  (p90 {statistics.quantiles(overheads, n=10)[-1] * 1000:.1f} ms; budget 150 ms) {'ok' if per <= 150 else 'OVER'}"
        )
        return {"overhead_ms": per, "agent_ms": statistics.median(agents) * 1000}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument(
        "--sandbox", choices=("all", "both", "none", "landlock", "bwrap"), default="all"
    )
    ap.add_argument(
        "--checkout-files",
        type=int,
        default=0,
        help="more small files in the measured tree (a realistic project: 2000)",
    )
    ap.add_argument(
        "--loose-objects",
        type=int,
        default=0,
        help="more loose objects in the repository's store (an unpacked repository: 2500)",
    )
    ap.add_argument(
        "--ignored-files",
        type=int,
        default=0,
        help="files in an ignored .venv/ of the work tree (a virtualenv: 20000)",
    )
    a = ap.parse_args()
    every = {"all": ["none", "landlock", "bwrap"], "both": ["none", "bwrap"]}
    modes = every.get(a.sandbox, [a.sandbox])
    if "bwrap" in modes and shutil.which("bwrap") is None:
        print("bubblewrap is not installed: not measured")
        modes = [m for m in modes if m != "bwrap"] or ["none"]
    if "landlock" in modes and landlock_abi() < LANDLOCK_ABI_NEEDED:
        print("this kernel has no Landlock to contain writes: not measured")
        modes = [m for m in modes if m != "landlock"] or ["none"]
    results = {}
    for mode in modes:
        got = measure(a.iterations, mode, a.checkout_files, a.loose_objects, a.ignored_files)
        if got is None:
            return 1
        results[mode] = got
    for mode, what in (("landlock", "its Landlock domain"), ("bwrap", "bubblewrap start-up")):
        if mode in results and "none" in results:
            extra = results[mode]["agent_ms"] - results["none"]["agent_ms"]
            print(f"sandbox = {mode} adds {extra:.1f} ms to each agent call ({what})")
    return 0 if all(r["overhead_ms"] <= 150 for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
