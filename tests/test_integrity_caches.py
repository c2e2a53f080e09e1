"""The view caches cannot forge history (docs/integrity.md): without the sandbox an agent, or
the code the metric runs, can write `<git dir>/improve/cache`; whatever changed there during an
agent call or a measurement is dropped, and `doctor` drops the caches, so `log` always shows
what the notes say."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gitimprove.git import caches
from tests.conftest import TmpRepo
from tests.loop_helpers import value_project

AGENT = Path(__file__).parent / "agents" / "cache_agent.py"
BENCH = """import subprocess, sys
subprocess.run([sys.executable, "src/prog.py"], check=True)
print(f"METRIC score={float(open('src/value.txt').read()):g}")
"""


def project(repo: TmpRepo) -> None:
    value_project(
        repo, f"{sys.executable} {AGENT} worse", BENCH, {"src/prog.py": "print('working')\n"}
    )


def rows_shown(repo: TmpRepo, *extra: str) -> list[dict[str, object]]:
    res = repo.cli("log", "--format", "jsonl", *extra)
    assert res.returncode == 0, res.stderr
    return [json.loads(line) for line in res.stdout.splitlines() if line.strip()]


def fill_caches(repo: TmpRepo) -> None:
    for args in (("log",), ("log", "--format", "jsonl"), ("status",)):
        assert repo.cli(*args).returncode in (0, 1)
    assert len(list((repo.path / ".git" / "improve" / "cache").iterdir())) >= 2


@pytest.mark.parametrize(
    "attack", ["agent", *(pytest.param(a, marks=pytest.mark.slow) for a in ("measured", "link"))]
)
@pytest.mark.slow
def test_a_poisoned_cache_never_shows(tmp_repo: TmpRepo, attack: str) -> None:
    project(tmp_repo)
    assert tmp_repo.cli("run", "--run", "a", "-n", "1").returncode == 0
    truth = rows_shown(tmp_repo, "--no-cache")
    assert [r["status"] for r in truth if r.get("run") == "a"] == ["baseline", "discard"]
    fill_caches(tmp_repo)
    config = tmp_repo.path / ".gitimprove.toml"
    config.write_text(config.read_text().replace(' worse"', f' {attack}"'))
    tmp_repo.commit("attack")
    res = tmp_repo.cli("run", "--run", "b", "-n", "1")
    assert res.returncode == 0, res.stderr
    shown = rows_shown(tmp_repo)
    assert [r["status"] for r in shown if r.get("run") == "a"] == ["baseline", "discard"], shown
    assert "forged" not in json.dumps(shown).lower()
    table = tmp_repo.cli("log", "--run", "a")
    assert "forged" not in table.stdout.lower() and "keep" not in table.stdout, table.stdout


@pytest.mark.slow
def test_doctor_drops_what_was_written_outside_a_run(tmp_repo: TmpRepo) -> None:
    project(tmp_repo)
    assert tmp_repo.cli("run", "--run", "a", "-n", "1").returncode == 0
    fill_caches(tmp_repo)
    cache = tmp_repo.path / ".git" / "improve" / "cache"
    subprocess.run([sys.executable, str(AGENT), "forge-at", str(cache)], check=True)
    forged = rows_shown(tmp_repo)  # the cache is what log reads
    assert [r["status"] for r in forged] == ["baseline", "keep"], forged
    assert "forged" in tmp_repo.cli("log").stdout.lower()
    doctor = tmp_repo.cli("doctor")
    assert "caches dropped" in doctor.stdout, doctor.stdout
    shown = rows_shown(tmp_repo)
    assert [r["status"] for r in shown] == ["baseline", "discard"], shown
    assert "forged" not in (json.dumps(shown) + tmp_repo.cli("log").stdout).lower()


def test_the_watch_drops_only_what_changed(tmp_path: Path) -> None:
    improve = tmp_path / "improve"
    (improve / "cache").mkdir(parents=True)
    (improve / "cache" / "kept").write_text("a")
    (improve / "cache" / "changed").write_text("a")
    with caches.watched(improve) as dropped:
        (improve / "cache" / "changed").write_text("b")
        (improve / "cache" / "new").write_text("c")
    assert sorted(dropped) == ["cache/changed", "cache/new"]
    assert sorted(p.name for p in (improve / "cache").iterdir()) == ["kept"]
    with caches.watched(improve) as dropped:
        (improve / "cache" / "kept").unlink()
        (improve / "cache").rmdir()
        (improve / "cache").symlink_to(tmp_path)
    assert dropped == ["cache"] and not (improve / "cache").exists()
    (improve / "cache" / "shards").mkdir(parents=True)
    (improve / "cache" / "shards" / "0").write_text("a")
    (improve / "cache" / "shards" / "1").write_text("a")
    with caches.watched(improve) as dropped, open(improve / "cache" / "shards" / "1", "a") as f:
        f.write("forged")  # in place: the folder's own lstat does not change
    assert dropped == ["cache/shards/1"]
    assert sorted(p.name for p in (improve / "cache" / "shards").iterdir()) == ["0"]
