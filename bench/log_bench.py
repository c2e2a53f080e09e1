"""Benchmark the read paths against git itself (DESIGN §13), in one run.

Builds a repository with N experiment commits, each with a note written the way gitimprove
writes them, then times:
  - `git improve log --format tsv`, warm (cache valid) and cold (cache removed), against
    `git log --notes=improve --format=%H%x09%N`, first on loose objects, then again after
    `git gc` on a packed repository (what real repositories are; git is faster there);
  - on the packed repository, the first `log` after one new experiment: the rendered output
    is stale (every row is ordered and rendered again); not a cold figure, the common one;
  - a cold `log` of notes that carry no stored digests (state/noteindex.py: written by `git
    notes` or an older gitimprove), for information;
  - `git improve hook post-commit` on an ordinary commit, against `python -c pass`.

gitimprove runs from its compiled bytecode, as an installed package does (pip compiles it);
a PYTHONDONTWRITEBYTECODE in the environment would make each run compile every module again.

Usage: python bench/log_bench.py [--experiments 10000] [--repeat 7] [--minimal]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ENV, ROOT, report, run_compiled, timed


def build(path: Path, n: int, minimal: bool = False) -> None:
    def git(*args: str, **kw) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
        return subprocess.run(
            ["git", *args], cwd=path, env=ENV, check=True, text=True, capture_output=True, **kw
        )

    git("init", "-q", "-b", "main")
    git("config", "user.name", "Bench")
    git("config", "user.email", "bench@example.com")
    (path / ".gitimprove.toml").write_text('[metric]\ncommand = "echo 1"\n')
    stream = []
    for i in range(n):
        msg = f"experiment(perf): attempt {i}"
        stream += [
            "commit refs/heads/main",
            f"mark :{i + 1}",
            f"committer Bench <bench@example.com> {1767323045 + i} +0000",
            f"data {len(msg)}",
            msg,
        ]
        if i:
            stream.append(f"from :{i}")
        stream.append(f"M 644 inline f.txt\ndata {len(str(i))}\n{i}")
        stream.append("")
    git("fast-import", "--quiet", input="\n".join(stream) + "\n")
    git("checkout", "-q", "main")
    commits = git("rev-list", "--reverse", "main").stdout.split()
    sys.path.insert(0, str(ROOT))
    from gitimprove.git import notes
    from gitimprove.git.repo import open_repo
    from gitimprove.state.records import make_line

    repo = open_repo(path)
    batch = {}
    for i, c in enumerate(commits):
        status = "baseline" if i == 0 else ("keep" if i % 7 == 0 else "discard")
        fields = note_fields(i, status, 100.0 - i * 0.001, minimal)
        batch[c] = [make_line("create", fields)]
    notes.append_lines(repo, batch)


def note_fields(i: int, status: str, value: float, minimal: bool) -> dict[str, object]:
    """A note as the loop writes one (the agent, the decision and its interval, the harness,
    the reason: about 1.4 KB), or with `minimal` only what the TSV shows (about 250 bytes)."""
    fields: dict[str, object] = {
        "run": "bench",
        "iteration": i,
        "status": status,
        "description": f"attempt {i}",
        "metric": {"name": "ms", "direction": "lower", "value": value, "samples": [value] * 3},
        "guard": {"status": "pass"},
    }
    if minimal or status == "baseline":
        return fields
    samples = [round(value + (k - 2) * 0.01, 3) for k in range(5)]
    incumbent = round(value + 0.004, 3)
    delta = round(value - incumbent, 6)
    fields["metric"] = {
        "name": "ms",
        "direction": "lower",
        "value": value,
        "samples": samples,
        "incumbent": incumbent,
        "incumbent_samples": [incumbent, incumbent + 0.01],
        "delta": delta,
        "delta_pct": delta / incumbent * 100,
        "interval": [delta - 0.02, delta + 0.02],
        "interval_pct": [(delta - 0.02) / incumbent * 100, (delta + 0.02) / incumbent * 100],
        "confidence": 0.95,
    }
    fields["decision"] = {
        "bound": 1.98,
        "gain": -delta,
        "half": 0.02,
        "keep": status == "keep",
        "mode": "paired",
        "n_cand": 5,
        "n_ref": 2,
        "rework": 0,
        "rule": "confirmed" if status == "keep" else "futile",
        "runs": 7,
        "sequence": "BABBAAB",
        "sigma": 0.0123,
        "window_reset": False,
        "window_used": 4,
    }
    fields["agent"] = {"exit_code": 0, "name": "claude", "rework": 0, "seconds": 41.7}
    fields["harness"] = {
        "guard_command": "pytest -q",
        "metric_command": "python bench.py",
        "platform": "linux",
        "python": "3.11.7",
        "sealed_tree": "94db1986da42c535aa1b078028384159d8332216",
    }
    fields["candidate"] = 0
    fields["escalation"] = 0
    fields["scope"] = "src"
    fields["parent"] = "478830f8e4f0769331ff4943d4ca094721dcc825"
    fields["tree"] = "0e779a0566cb3bc4387ce1a1f1d192fcc61cc058"
    fields["started"] = "2026-11-23T04:18:24.922041Z"
    fields["finished"] = "2026-11-23T04:19:03.675149Z"
    fields["integrity"] = "16dcb7f658f9:b40f0f2c1655297a109958bdc0af8d0b"
    fields["reason"] = (
        f"{'kept' if status == 'keep' else 'discarded'} after 7 runs: 0.004 lower (0.0%), "
        "interval 0.016 to 0.024 lower, 5 candidate and 2 incumbent runs"
    )
    return fields


def add_experiment(path: Path, i: int, minimal: bool = False) -> None:
    """One more experiment commit with its note, as the loop records one."""
    subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", f"experiment(perf): attempt {i}"],
        cwd=path,
        env=ENV,
        check=True,
    )
    from gitimprove.git import notes
    from gitimprove.git.repo import open_repo
    from gitimprove.state.records import make_line

    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=path, env=ENV, check=True, text=True, capture_output=True
    ).stdout.strip()
    fields = note_fields(i, "discard", 90.5, minimal)
    notes.append_lines(open_repo(path), {commit: [make_line("create", fields)]})


def strip_digests(path: Path) -> None:
    """The notes tree without the digests gitimprove stores beside the notes."""

    def git(*args: str, **kw) -> str:  # type: ignore[no-untyped-def]
        return subprocess.run(
            ["git", *args], cwd=path, env=ENV, check=True, text=True, capture_output=True, **kw
        ).stdout

    kept = "".join(
        line + "\n"
        for line in git("ls-tree", "refs/notes/improve").splitlines()
        if not line.endswith("\tgitimprove-digests")
    )
    tree = git("mktree", input=kept).strip()
    commit = git("commit-tree", tree, "-p", "refs/notes/improve", "-m", "no digests").strip()
    git("update-ref", "refs/notes/improve", commit)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--experiments", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument(
        "--minimal",
        action="store_true",
        help="notes holding only what the TSV shows (~250 bytes), not the loop's (~1.4 KB)",
    )
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gitimprove-bench-"))
    try:
        repo = tmp / "repo"
        repo.mkdir()
        t0 = time.perf_counter()
        build(repo, args.experiments, args.minimal)
        kind = "minimal notes" if args.minimal else "notes as the loop writes them"
        print(f"built {args.experiments} experiments ({kind}) in {time.perf_counter() - t0:.1f}s")
        py = sys.executable
        cache = repo / ".git" / "improve" / "cache"
        run_compiled(tmp)

        def drop_cache() -> None:
            shutil.rmtree(cache, ignore_errors=True)

        argv = [py, "-m", "gitimprove", "log", "--format", "tsv"]

        def measure(label: str) -> list[tuple[str, float, float, float, str]]:
            git_log = timed(
                ["git", "log", "--notes=improve", "--format=%H%x09%N"], repo, args.repeat
            )
            subprocess.run(argv, cwd=repo, env=ENV, check=True, stdout=subprocess.DEVNULL)
            warm = timed(argv, repo, args.repeat)
            cold = timed(argv, repo, args.repeat, before=drop_cache)
            out = subprocess.run(
                argv, cwd=repo, env=ENV, capture_output=True, text=True, check=True
            ).stdout
            assert len(out.splitlines()) == args.experiments + 2, "log lost rows"
            ref = f"git log --notes=improve ({label})"
            return [
                (f"log --format tsv, warm, {label}", warm, git_log, 1.0, ref),
                (f"log --format tsv, cold, {label}", cold, git_log, 4.0, ref),
            ]

        # Loose objects flatter git itself; a real repository is packed (`git gc`), so the
        # budget is checked on both.
        loose = measure("loose")
        subprocess.run(["git", "gc", "-q"], cwd=repo, env=ENV, check=True)
        packed = measure("packed")

        # One more experiment, as the loop records one (its notes commit stores the digests
        # of the folder it changed): the rendered view is stale, everything else as the last
        # `log` left it.
        subprocess.run(argv, cwd=repo, env=ENV, check=True, stdout=subprocess.DEVNULL)
        add_experiment(repo, args.experiments, args.minimal)

        def drop_views() -> None:
            for f in cache.glob("view-*"):
                f.unlink()

        git_log = timed(["git", "log", "--notes=improve", "--format=%H%x09%N"], repo, args.repeat)
        after_one = timed(argv, repo, args.repeat, before=drop_views)
        out = subprocess.run(argv, cwd=repo, env=ENV, capture_output=True, text=True).stdout
        assert len(out.splitlines()) == args.experiments + 3, "log lost rows"
        ref = "git log --notes=improve (packed)"
        packed.append(("log --format tsv, one new note, packed", after_one, git_log, 4.0, ref))

        # Notes that another writer left without digests (`git notes`, an older gitimprove):
        # a cold log reads and parses them all. Not the budget's case, shown for information.
        strip_digests(repo)
        bare = timed(argv, repo, args.repeat, before=drop_cache)
        packed.append(
            ("log --format tsv, cold, no stored digests", bare, git_log, float("inf"), ref)
        )

        subprocess.run(
            ["git", "commit", "-q", "--allow-empty", "-m", "ordinary commit"],
            cwd=repo,
            env=ENV,
            check=True,
        )
        py_pass = timed([py, "-c", "pass"], repo, args.repeat * 3)
        hook = timed([py, "-m", "gitimprove", "hook", "post-commit"], repo, args.repeat * 3)

        rows = [
            *packed,
            *loose,
            ("hook post-commit (ordinary commit)", hook, py_pass, 3.0, "python -c pass"),
        ]
        failed = report(rows)
        return 1 if failed else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
