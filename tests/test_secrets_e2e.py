"""Must hold: a corpus of fake secrets sent through every way text enters a record (a tool
failure hook, a mined transcript, `signal add`, an agent's description and hypothesis, failing
guard / metric / agent output), after which no git object of the repository holds any piece
of any of them (`git cat-file --batch-all-objects`), nor do the loop's workspace clones. The
same for gitleaks' own samples and their secrets written in other syntaxes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import PY, TmpRepo
from tests.loop_helpers import AGENT
from tests.secret_corpus import Fake, corpus
from tests.secret_corpus_gitleaks import gitleaks_fakes
from tests.test_secrets_writers import all_objects, left_in

FAKES = corpus(seed=2026)
# the generated corpus, and gitleaks' own samples with their secrets in other syntaxes
SETS = {"corpus": lambda: FAKES, "gitleaks": gitleaks_fakes}
SESSION = "5a7c2e10-3b4d-4f6a-9c8e-1d2f3a4b5c6d"


def chunks(fakes: list[Fake], limit: int) -> list[list[Fake]]:
    """The fakes in groups whose texts fit in `limit` characters."""
    out: list[list[Fake]] = [[]]
    for f in fakes:
        if out[-1] and sum(len(x.text) + 1 for x in out[-1]) + len(f.text) > limit:
            out.append([])
        out[-1].append(f)
    return out


def fire(repo: TmpRepo, event: str, **fields: object) -> None:
    payload = {"session_id": SESSION, "cwd": str(repo.path), "hook_event_name": event, **fields}
    res = repo.cli("hook", event, input=json.dumps(payload))
    assert (res.returncode, res.stdout) == (0, ""), res.stderr
    assert (
        "internal error"
        not in (repo.path / ".git" / "improve" / "hooks.log").read_text(encoding="utf-8")
        if (repo.path / ".git" / "improve" / "hooks.log").exists()
        else True
    )


def transcript(path: Path, fakes: list[Fake]) -> None:
    """A Claude Code transcript (the shapes of tests/fixtures/claude-transcripts) in which
    the user, the tools and the agent all quote secrets."""
    lines: list[dict[str, object]] = []

    def user(content: object) -> None:
        lines.append(
            {"type": "user", "sessionId": SESSION, "message": {"role": "user", "content": content}}
        )

    def assistant(blocks: list[dict[str, object]]) -> None:
        lines.append(
            {
                "type": "assistant",
                "sessionId": SESSION,
                "message": {"role": "assistant", "content": blocks},
            }
        )

    for n, f in enumerate(fakes):
        user(f"No, that's wrong. Actually use this instead: {f.text}")
        if n % 3 == 0:  # the same tool failing twice in a row is a failure signal
            for k in range(2):
                tid = f"toolu_{n}_{k}"
                assistant(
                    [{"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": f.text}}]
                )
                user(
                    [
                        {
                            "type": "tool_result",
                            "tool_use_id": tid,
                            "is_error": True,
                            "content": f"Exit code 1\n{f.text}",
                        }
                    ]
                )
        elif n % 3 == 1:  # a rejection, with the user's reason
            tid = f"toolu_{n}"
            assistant(
                [{"type": "tool_use", "id": tid, "name": "Edit", "input": {"file_path": "a.py"}}]
            )
            reason = f"The user doesn't want to proceed with this tool use. the user said: put {f.text} in the vault"
            user([{"type": "tool_result", "tool_use_id": tid, "is_error": True, "content": reason}])
        else:  # the agent had to ask
            assistant(
                [
                    {
                        "type": "text",
                        "text": f"I found {f.text}. Which command should I run to rotate it?",
                    }
                ]
            )
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("fakes_set", list(SETS))
def test_hooks_transcripts_and_signal_add_store_no_secret(
    tmp_repo: TmpRepo, tmp_path: Path, fakes_set: str
) -> None:
    fakes = SETS[fakes_set]()
    repo = tmp_repo
    repo.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n', "a.txt": "a"})
    # tool failures: the error (cut at 500 characters: one secret straddles the cut), the
    # command (cut at 300), and a tool_response with no error string
    for n, group in enumerate(chunks(fakes, 480)):
        error = "\n".join(f.text for f in group)
        straddler = fakes[(n * 7) % len(fakes)]
        at = straddler.text.index(straddler.secret) + len(straddler.secret) // 2
        padded = "x" * max(0, 500 - len(error) - 1 - at) + "\n" + straddler.text
        fire(
            repo,
            "PostToolUseFailure",
            tool_name="Bash",
            tool_input={"command": group[0].text + " " + "y" * (300 - len(group[0].text) // 2)},
            tool_use_id=f"toolu_{n}",
            error=error + "\n" + padded,
        )
    fire(
        repo,
        "PostToolUseFailure",
        tool_name="WebFetch",
        tool_input={"url": "https://api.internal/v1"},
        tool_response={"status": 401, "body": "\n".join(f.text for f in fakes[:6])},
    )
    # a mined transcript (Stop mines the part not mined yet)
    path = tmp_path / "session.jsonl"
    transcript(path, fakes)
    fire(
        repo,
        "Stop",
        transcript_path=str(path),
        stop_hook_active=False,
        last_assistant_message="Done.",
    )
    # signal add, through the CLI
    for n in range(3):
        group = fakes[n::29]
        content, context = (
            "; ".join(f.text for f in group[:2]),
            "; ".join(f.text for f in group[2:]),
        )
        res = repo.cli(
            "signal", "add", "--type", "gotcha", "--content", content, "--context", context
        )
        assert res.returncode == 0, res.stderr
    res = repo.cli("signal", "list")  # flushes the spool onto the memory branch
    assert res.returncode == 0, res.stderr
    assert not list((repo.path / ".git" / "improve" / "spool").glob("*"))
    stored = len(res.stdout.splitlines())
    assert stored > len(fakes)  # every prompt, failure, rejection and question was captured
    dump = all_objects(repo.path)
    assert dump.count("[REDACTED:") > len(fakes)
    assert not left_in(dump, fakes), left_in(dump, fakes)


BENCH = """import os, pathlib, sys
fail = pathlib.Path("src/metric-fail")
if fail.exists():
    print("METRIC score=1")
    print(pathlib.Path(os.environ["LEAK_DIR"], fail.read_text().strip() + ".txt").read_text())
    sys.exit(1)
print("METRIC score=" + pathlib.Path("src/value.txt").read_text().strip())
"""
GUARD = """import os, pathlib, sys
fail = pathlib.Path("src/guard-fail")
if fail.exists():
    print(pathlib.Path(os.environ["LEAK_DIR"], fail.read_text().strip() + ".txt").read_text())
    sys.exit(1)
"""


@pytest.mark.slow
@pytest.mark.parametrize("fakes_set", list(SETS))
def test_a_loop_run_stores_no_secret(tmp_repo: TmpRepo, tmp_path: Path, fakes_set: str) -> None:
    """A real `git improve run` whose agent reports secrets in its description and
    hypothesis, crashes printing secrets, and whose guard and metric fail printing secrets."""
    fakes = SETS[fakes_set]()
    leak_dir = tmp_path / "leaks"
    leak_dir.mkdir()
    groups = chunks(fakes, 1300)  # each fits in the 1,500-character tails stored in notes
    modes = ["crash", "guard", "metric"]
    plan: dict[str, object] = {"leak_dir": str(leak_dir), "reports": {}}
    reports: dict[str, dict[str, str]] = {}
    iterations = 0
    for mode in modes:
        for group in groups:
            iterations += 1
            (leak_dir / f"{iterations}.txt").write_text("\n".join(f.text for f in group))
            plan[str(iterations)] = f"leak:{mode}"
    one_line = [f for f in fakes if "\n" not in f.text]
    for i in range(1, iterations + 1):
        a, b, c = (one_line[(3 * i + k) % len(one_line)] for k in range(3))
        reports[str(i)] = {
            "description": f"{a.text} and more",
            "hypothesis": f"{b.text}; then {c.text}",
        }
    plan["reports"] = reports
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan))
    config = f"""[metric]
command = "{sys.executable} bench.py"
timeout = "20s"
[guard]
command = "{sys.executable} guard.py"
rework = 0
[scope]
mutable = ["src/**"]
sealed = ["bench.py", "guard.py"]
[loop]
iterations = {iterations}
plateau_patience = 500
stuck_after = 500
circuit_breaker = 500
[agent]
name = "command"
command = "{PY} {AGENT} {plan_file}"
timeout = "20s"
"""
    tmp_repo.commit(
        "project",
        {
            "bench.py": BENCH,
            "guard.py": GUARD,
            "src/value.txt": "100\n",
            ".gitimprove.toml": config,
        },
    )
    res = tmp_repo.cli(
        "run", "--run", "leaky", "-n", str(iterations), env={"LEAK_DIR": str(leak_dir)}
    )
    assert res.returncode == 0, res.stderr
    log = tmp_repo.cli("log", "--format", "jsonl")
    rows = [json.loads(x) for x in log.stdout.splitlines()]
    statuses = {r.get("status") for r in rows if r.get("run") == "leaky"}
    assert {"crash", "guard-fail"} <= statuses and ({"crash", "metric-error"} & statuses)
    used = {f.family for g in groups for f in g}
    assert used == {f.family for f in fakes}
    dump = all_objects(tmp_repo.path)
    assert "[REDACTED:" in dump
    assert not left_in(dump, fakes), left_in(dump, fakes)
    work = tmp_repo.path / ".git" / "improve" / "work"
    leftovers = [p for p in work.iterdir() if p.is_dir()] if work.exists() else []
    for clone in leftovers:  # a workspace clone left behind must not hold them either
        assert not left_in(all_objects(clone), fakes)
