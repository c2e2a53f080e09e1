"""The loop's own overhead per attempt, agent and metric (nearly) instant (DESIGN §13).

Runs `git improve run` with a `command` agent that changes one line and a metric that prints
a number, then subtracts from each attempt's wall time the agent's own seconds and the
metric runs (timed separately). Budget: 150 ms per attempt.

Usage: python bench/loop_bench.py [--iterations 30]
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

AGENT = "import os, pathlib\np = pathlib.Path('src/n.txt')\np.write_text(os.environ['GITIMPROVE_ITERATION'] + '\\n')\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=30)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gitimprove-loop-bench-"))
    try:
        repo = tmp / "repo"
        loop_project(repo, AGENT, "[loop]\nplateau_patience = 1000\nstuck_after = 1000\n")
        py = sys.executable
        metric_times = []
        for _ in range(10):
            t0 = time.perf_counter()
            subprocess.run([py, "metric.py"], cwd=repo, env=ENV, check=True, capture_output=True)
            metric_times.append(time.perf_counter() - t0)
        metric_s = statistics.median(metric_times)
        t0 = time.perf_counter()
        res = subprocess.run(
            [py, "-m", "gitimprove", "run", "--run", "bench", "-n", str(a.iterations), "--json"],
            cwd=repo,
            env=ENV,
            capture_output=True,
            text=True,
        )
        total = time.perf_counter() - t0
        if res.returncode != 0:
            print(res.stderr)
            return 1
        rows = run_rows(repo, "bench")
        overheads = []
        for r in rows:
            if r.get("status") == "baseline":
                continue
            start = datetime.fromisoformat(r["started"].replace("Z", "+00:00"))
            end = datetime.fromisoformat(r["finished"].replace("Z", "+00:00"))
            wall = (end - start).total_seconds()
            runs = (r.get("decision") or {}).get("runs", 0)
            overheads.append(wall - r["agent"]["seconds"] - runs * metric_s)
        per = statistics.median(overheads) * 1000
        agent_total = sum(r["agent"]["seconds"] for r in rows if r.get("status") != "baseline")
        metric_total = (
            sum((r.get("decision") or {}).get("runs", 0) for r in rows) * metric_s + 5 * metric_s
        )
        whole = (total - agent_total - metric_total) / max(1, len(overheads)) * 1000
        print(
            f"whole command, minus agent and metric time, per attempt: {whole:.1f} ms (start-up and calibration included)"
        )
        print(f"{len(overheads)} attempts in {total:.1f}s (whole command, calibration included)")
        print(
            f"metric run {metric_s * 1000:.1f} ms; statuses: "
            + ", ".join(sorted({r["status"] for r in rows}))
        )
        print(
            f"loop overhead per attempt (median): {per:.1f} ms  (p90 {statistics.quantiles(overheads, n=10)[-1] * 1000:.1f} ms; budget 150 ms) {'ok' if per <= 150 else 'OVER'}"
        )
        return 0 if per <= 150 else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
