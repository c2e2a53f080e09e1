"""Parallel agents in a tournament round (issue: tournaments).

A round of 4 candidates whose agents each take 2 s: with --jobs 2 the round's agent phase
should take about 4 s of wall time, not 8. Prints both, in one run.

Usage: python bench/tournament_bench.py [--seconds 2] [--candidates 4]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ENV, loop_project, run_rows


def one_round(py: str, candidates: int, jobs: int, seconds: float) -> tuple[float, float, float]:
    tmp = Path(tempfile.mkdtemp(prefix="gitimprove-tournament-bench-"))
    try:
        repo = tmp / "repo"
        agent = (
            "import os, time, pathlib\n"
            f"time.sleep({seconds})\n"
            "pathlib.Path('src/n.txt').write_text(os.environ['GITIMPROVE_CANDIDATE'] + '\\n')\n"
        )
        loop_project(repo, agent)
        t0 = time.perf_counter()
        res = subprocess.run(
            [
                py,
                "-m",
                "gitimprove",
                "run",
                "--run",
                "b",
                "-n",
                "1",
                "-k",
                str(candidates),
                "-j",
                str(jobs),
                "--json",
            ],
            cwd=repo,
            env=ENV,
            capture_output=True,
            text=True,
            check=True,
        )
        total = time.perf_counter() - t0
        rows = run_rows(repo, "b")
        agent_sum = sum(r["agent"]["seconds"] for r in rows if r.get("agent"))
        assert any(json.loads(x).get("event") == "round" for x in res.stdout.splitlines())
        # the agent phase: from the first start to the last agent end
        from datetime import datetime

        def ts(s: str) -> float:
            return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()

        cands = [r for r in rows if r.get("agent")]
        span = max(ts(r["started"]) + r["agent"]["seconds"] for r in cands) - min(
            ts(r["started"]) for r in cands
        )
        return total, agent_sum, span
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--candidates", type=int, default=4)
    a = ap.parse_args()
    py = sys.executable
    print(f"{a.candidates} candidates, agents of {a.seconds:g} s each")
    for jobs in (2, 1):
        total, agent_sum, span = one_round(py, a.candidates, jobs, a.seconds)
        print(
            f"--jobs {jobs}: agent phase {span:.2f} s wall for {agent_sum:.2f} s of agent time; whole run {total:.2f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
