"""A metric whose values reach or cross 0: a percent of such a level means nothing (-0.1 to
0.2 is not "+300% better"), so the reason, the note, the run's last lines and `status` state
the change in the metric's unit alone, and say why; a change whose levels stay on one side of
0 keeps its percent. Real loop, real git, an agent with known effects."""

from __future__ import annotations

import json
import re
import sys

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows

AGENT = """import json, os, pathlib, sys
plan = json.loads(pathlib.Path(sys.argv[1]).read_text())
step = plan[os.environ["GITIMPROVE_ITERATION"]]
p = pathlib.Path("src/value.txt")
p.write_text(repr(float(p.read_text()) + step) + "\\n")
"""
NOISY = """import pathlib, random
c = pathlib.Path({counter!r})
n = int(c.read_text()) if c.exists() else 0
c.write_text(str(n + 1))
v = float(pathlib.Path("src/value.txt").read_text())
print(v + {sigma!r} * random.Random(n).gauss(0, 1))
"""


def project(repo: TmpRepo, start: float, steps: list[float], direction: str, sigma: float) -> None:
    here = repo.path.parent
    (here / "agent.py").write_text(AGENT)
    plan = here / "plan.json"
    plan.write_text(json.dumps({str(i): s for i, s in enumerate(steps, 1)}))
    bench = NOISY.format(counter=str(here / "counter"), sigma=sigma)
    repo.commit(
        "project",
        {
            "bench.py": bench,
            "src/value.txt": f"{start!r}\n",
            ".gitimprove.toml": f"""[metric]
command = "{sys.executable} bench.py"
direction = "{direction}"

[scope]
mutable = ["src/**"]
sealed = ["bench.py"]

[loop]
plateau_patience = 50

[agent]
name = "command"
command = "{sys.executable} {here / "agent.py"} {plan}"
sandbox = "none"
""",
        },
    )


def straddles(*levels: float) -> bool:
    return not (all(x > 0 for x in levels) or all(x < 0 for x in levels))


def check_run(repo: TmpRepo, n: int) -> tuple[list[dict], str]:
    res = repo.cli("run", "--run", "z", "-n", str(n))
    assert res.returncode == 0, res.stderr
    rows = [r for r in run_rows(repo, "z") if r["status"] in ("keep", "discard")]
    assert len(rows) == n, rows
    log = repo.cli("log", "--run", "z", "--format", "tsv").stdout
    for row in rows:
        m = row["metric"]
        levels = [m["value"], m["incumbent"]]
        levels += [m["incumbent"] + x for x in m.get("interval") or []]
        line = next(x for x in res.stdout.splitlines() if row["commit"][:10] in x)
        assert row["reason"] in line  # the run prints the note's reason
        tsv = next(x for x in log.splitlines() if f"\t{row['commit'][:7]}\t" in x)
        assert float(tsv.split("\t")[4]) == pytest.approx(m["delta"], rel=1e-9, abs=1e-12)
        unit = re.search(r"by ([0-9.e+-]+) \((lower|higher)", row["reason"]) or re.search(
            r"\(([0-9.e+-]+) (lower|higher)\)", row["reason"]
        )
        assert unit, row["reason"]
        assert float(unit[1]) == pytest.approx(abs(m["delta"]), rel=1e-3)
        if straddles(m["value"], m["incumbent"]):
            assert m["delta_pct"] is None and not m.get("interval_pct"), m
            assert "%" not in row["reason"] and "levels reach 0" in row["reason"], row["reason"]
        elif straddles(*levels):  # only the interval reaches 0: the change keeps its percent
            assert m["delta_pct"] == pytest.approx(m["delta"] / abs(m["incumbent"]) * 100)
            assert not m.get("interval_pct"), m
            assert re.search(r"interval [0-9.e+-]+ to [0-9.e+-]+ ", row["reason"]), row["reason"]
        else:
            assert m["delta_pct"] == pytest.approx(m["delta"] / abs(m["incumbent"]) * 100)
            assert "%" in row["reason"], row["reason"]
    return rows, res.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("start", "steps", "direction", "sigma"),
    [
        # deterministic, higher is better: -0.1 -> 0.2 crosses 0; then one-sided changes
        (-0.1, [0.3, 0.05, -0.01, -0.5], "higher", 0.0),
        # deterministic, lower is better: 0.05 -> -0.05 crosses 0; then a change past it
        (0.05, [-0.1, -0.02, 0.2, -1.0], "lower", 0.0),
        # noisy, near 0: an interval reaching past 0 is stated in the unit too
        (-0.1, [0.12, -0.03, 0.05, -0.2, 0.1], "higher", 0.01),
    ],
)
def test_levels_across_zero_have_no_percent(
    tmp_repo: TmpRepo, start: float, steps: list[float], direction: str, sigma: float
) -> None:
    project(tmp_repo, start, steps, direction, sigma)
    rows, out = check_run(tmp_repo, len(steps))
    assert any(straddles(r["metric"]["value"], r["metric"]["incumbent"]) for r in rows)
    if sigma == 0 and direction == "higher":
        assert rows[0]["reason"] == (
            "kept: better by 0.3 (higher; no percent: the levels reach 0), deterministic "
            "metric, 1 run"
        )
    last = next(x for x in out.splitlines() if x.startswith("best "))
    status = tmp_repo.cli("status").stdout
    best = next(x for x in status.splitlines() if x.startswith("best "))
    keeps = [r["metric"] for r in rows if r["status"] == "keep"]
    for line in (last, best):  # the keeps together, as their notes measured them
        if any(k["delta_pct"] is None for k in keeps):
            total = sum(k["delta"] for k in keeps)
            assert "%" not in line and "levels reach 0" in line, line
            assert re.search(r"measured ([+-][0-9.e+-]+)", line)[1] == f"{total:+.4g}", line  # type: ignore[index]
        else:
            assert re.search(r"measured [+-][0-9.]+%", line), line


def test_a_one_sided_metric_keeps_its_percent(tmp_repo: TmpRepo) -> None:
    project(tmp_repo, 100.0, [-10.0, 5.0], "lower", 0.0)
    rows, out = check_run(tmp_repo, 2)
    assert rows[0]["reason"].startswith("kept: 10.0% better (10 lower)"), rows[0]["reason"]
    assert "best 90, baseline 100; its keep measured -10.0%; 1 of 2 attempts kept" in out
    status = tmp_repo.cli("status").stdout
    assert "baseline 100, lower is better; its keep measured -10.0%" in status, status


@pytest.mark.slow
def test_noise_of_a_level_near_zero_is_stated_in_the_unit(tmp_repo: TmpRepo) -> None:
    # the runs of a level of 0.004 with a noise of 0.01 scatter across 0: "noise ≈ 250%"
    # (or "gains of about 190%") would say nothing; the unit alone does
    project(tmp_repo, 0.004, [0.1, -0.05], "higher", 0.01)
    res = tmp_repo.cli("run", "--run", "z", "-n", "2")
    assert res.returncode == 0, res.stderr
    start = next(x for x in res.stdout.splitlines() if "noise ≈" in x)
    assert "%" not in start and re.search(r"noise ≈ 0\.0\d+ per run", start), start
    init = tmp_repo.cli("init", "--force", "--yes", "--metric", f"{sys.executable} bench.py")
    assert init.returncode == 0, init.stderr
    said = next(x for x in init.stdout.splitlines() if "noise ≈" in x)
    assert "%" not in said, said


def test_noise_of_a_level_far_from_zero_keeps_its_percent(tmp_repo: TmpRepo) -> None:
    project(tmp_repo, 100.0, [-10.0], "lower", 1.0)
    res = tmp_repo.cli("run", "--run", "z", "-n", "1")
    assert res.returncode == 0, res.stderr
    start = next(x for x in res.stdout.splitlines() if "noise ≈" in x)
    assert re.search(r"noise ≈ [0-9.]+ \([0-9.]+%\) per run", start), start
