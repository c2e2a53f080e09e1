"""A hot hook spools text unmasked (the flush masks it): the spool is the user's alone and
stays in `.git/improve/spool`, and nothing that shows a spooled entry (SessionStart's
context, MEMORY.md, the signal readers and their grouping keys) shows a secret."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from gitimprove import redaction
from gitimprove.git import memory
from gitimprove.hooks import claude
from gitimprove.memory import capture, render, signals
from gitimprove.redaction import engine
from gitimprove.util import gitdir
from tests.conftest import PY, TmpRepo
from tests.secret_corpus import Fake, corpus
from tests.test_secrets_writers import all_objects, left_in

FAKES = corpus(seed=4141)[::4]
SESSION = "9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f"


@pytest.fixture
def configured(tmp_repo: TmpRepo) -> TmpRepo:
    tmp_repo.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n', "a.txt": "a"})
    return tmp_repo


def fire(repo: TmpRepo, event: str, umask: int | None = None, **fields: object) -> str:
    """A real hook process (with `umask` set in it); returns its stdout."""
    payload = {"session_id": SESSION, "cwd": str(repo.path), "hook_event_name": event, **fields}
    env = {**os.environ, "GITIMPROVE_DISABLE": "", "GITIMPROVE_CHILD": ""}
    res = subprocess.run(
        [PY, "-m", "gitimprove", "hook", event],
        cwd=repo.path,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=(lambda: os.umask(umask)) if umask is not None else None,
        check=False,
    )
    assert res.returncode == 0 and res.stderr == "", res.stderr
    log = repo.path / ".git" / "improve" / "hooks.log"
    assert not log.exists() or "internal error" not in log.read_text(), log.read_text()
    return res.stdout


def spool_failures(repo: TmpRepo, fakes: list[Fake], umask: int | None = None) -> None:
    for n in range(0, len(fakes), 4):
        group = fakes[n : n + 4]
        fire(
            repo,
            "PostToolUseFailure",
            umask=umask,
            tool_name="Bash",
            # a path is kept as it is (`source.file`): masked too, whole, when shown
            tool_input={"command": f"deploy {group[0].text}", "file_path": group[-1].text},
            error="Exit code 1\n" + "\n".join(f.text for f in group),
        )


def spool_dir(repo: TmpRepo) -> Path:
    return repo.path / ".git" / "improve" / "spool"


def shown(text: str) -> list[str]:
    """Families with a piece of their secret in `text`."""
    return left_in(text, FAKES)


@pytest.mark.slow
def test_the_spool_is_readable_by_the_user_alone(configured: TmpRepo) -> None:
    """Even under a umask of 0, the folder is 0700 and every entry 0600; the unmasked text is
    nowhere else: not in any other file of the git directory, not in any git object."""
    spool_failures(configured, FAKES, umask=0)
    folder = spool_dir(configured)
    files = sorted(folder.iterdir())
    assert len(files) == (len(FAKES) + 3) // 4
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for f in files:
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    assert shown("".join(f.read_text() for f in files))  # the hook did not mask: the flush will
    git_dir = configured.path / ".git"
    elsewhere = [
        p
        for p in git_dir.rglob("*")
        if p.is_file() and folder not in p.parents and not p.name.endswith((".pack", ".idx"))
    ]
    for p in elsewhere:
        assert not shown(p.read_bytes().decode("utf-8", "replace")), p
    assert not shown(all_objects(configured.path))


@pytest.mark.slow
def test_readers_of_the_spool_see_it_masked(configured: TmpRepo) -> None:
    """Before any flush: the signal readers, their grouping keys, MEMORY.md and the context
    SessionStart would inject all show the spooled failures masked."""
    spool_failures(configured, FAKES)
    spool_failures(configured, FAKES[:4])  # the same failure again: one group
    repo = configured.open()
    sigs = signals.all_signals(repo)
    assert len(sigs) == (len(FAKES) + 3) // 4 + 1
    assert not shown(json.dumps(sigs, ensure_ascii=False))
    assert all("[REDACTED:" in str(s["content"]) for s in sigs)
    keys = [signals.subject(s) for s in sigs]
    assert not shown(repr(keys))
    assert keys[0] == keys[-1] and len(signals.groups(sigs)) == len(sigs) - 1
    assert not shown(render.render(repo, max_lines=200))
    loc = gitdir.discover(str(configured.path))
    assert loc is not None
    text = claude.context(loc, repo, {"session_id": SESSION, "source": "compact"})
    assert "Signals captured earlier in this session" in text and "[REDACTED:" in text
    assert not shown(text)
    assert len(list(spool_dir(configured).iterdir())) == len(sigs)  # nothing was flushed


def flushed(repo: TmpRepo) -> None:
    """Wait for the flush SessionStart left running."""
    folder = spool_dir(repo)
    for _ in range(600):
        if not [p for p in folder.iterdir() if not p.name.startswith(".")]:
            return
        time.sleep(0.05)
    raise AssertionError("the spool was not flushed")


@pytest.mark.slow
def test_session_start_never_shows_a_spooled_secret(configured: TmpRepo) -> None:
    """SessionStart hands the spool to a detached flush and reads, of the spool, only this
    session's signals after a compaction: masked, in Claude's context (the hook's stdout) as
    in every git object once flushed."""
    spool_failures(configured, FAKES)
    out = fire(configured, "SessionStart", source="compact")
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "Signals captured earlier in this session" in context and "[REDACTED:" in context
    assert not shown(out)
    flushed(configured)
    dump = all_objects(configured.path)
    assert dump.count("[REDACTED:") >= len(FAKES)
    assert not shown(dump)
    assert len(signals.all_signals(configured.open(), include_spool=False)) == len(
        range(0, len(FAKES), 4)
    )
    # a new session: its context lists the (now flushed) signals in MEMORY.md, masked
    spool_failures(configured, FAKES[4:])
    out = fire(configured, "SessionStart", source="startup", session_id="another")
    assert "Captured, not yet reviewed" in out and "[REDACTED:" in out
    assert not shown(out)
    flushed(configured)
    assert not shown(all_objects(configured.path))


def test_a_flush_loads_the_rules_once(configured: TmpRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """50 spooled signals are masked at the flush with the rules loaded once, not 50 times."""
    improve = str(configured.path / ".git" / "improve")
    for n in range(50):
        fake = FAKES[n % len(FAKES)]
        sig = capture.make_signal(
            type_="failure",
            content=["Bash failed: ", capture.deferred.cut(fake.text, 500)],
            context=[capture.deferred.cut(f"run {fake.text}", 300)],
            session=SESSION,
            hook="PostToolUseFailure",
            defer=True,
        )
        capture.spool_signals(improve, [sig])
    loads = []
    real = engine.load_gitleaks

    def counted() -> list[engine.Rule]:
        loads.append(1)
        return real()

    monkeypatch.setattr(engine, "load_gitleaks", counted)
    monkeypatch.setattr(redaction, "_rules", None)
    repo = configured.open()
    assert signals.flush(repo) == 50
    assert len(loads) == 1
    bad: list[Any] = []
    stored = signals.all_signals(repo, include_spool=False, bad=bad)
    paths = [p for p, _ in memory.iter_entries(repo, "signals/")]
    ids = sorted(str(s["id"]) for s in stored)
    assert len(stored) == 50, (len(paths), bad, ids)  # every entry stored is read back
    assert all("[REDACTED:" in str(s["content"]) for s in stored)
    assert not shown(all_objects(configured.path))


WORKER = """
import json, subprocess, sys
cwd, n, secrets = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
for i, secret in enumerate(secrets):
    payload = {"session_id": f"w{n}", "cwd": cwd, "hook_event_name": "PostToolUseFailure",
               "tool_name": "Bash", "tool_input": {"command": f"job {n}-{i}"},
               "error": f"Exit code 1\\n{secret}"}
    subprocess.run([sys.executable, "-m", "gitimprove", "hook", "PostToolUseFailure"],
                   cwd=cwd, input=json.dumps(payload), text=True, check=True)
    event = "SessionStart" if i % 2 else "flush"  # a detached flush, or one of its own
    subprocess.run([sys.executable, "-m", "gitimprove", "hook", event], cwd=cwd,
                   input=json.dumps({**payload, "hook_event_name": event, "source": "startup"}),
                   text=True, check=True, stdout=subprocess.DEVNULL)
"""


@pytest.mark.slow
def test_hooks_and_flushes_at_once_lose_nothing_and_leak_nothing(configured: TmpRepo) -> None:
    """Four processes capture failures and flush (themselves, or detached by SessionStart)
    all at once: every signal lands on the memory branch exactly once, masked."""
    env = {**os.environ, "GITIMPROVE_DISABLE": "", "GITIMPROVE_CHILD": ""}
    workers = [
        subprocess.Popen(
            [PY, "-c", WORKER, str(configured.path), str(n), json.dumps([f.text for f in part])],
            env=env,
        )
        for n, part in enumerate([FAKES[i::4][:5] for i in range(4)])
    ]
    assert [w.wait(timeout=300) for w in workers] == [0, 0, 0, 0]
    res = configured.cli("signal", "list", "--json")  # flushes what is left, after the others
    assert res.returncode == 0, res.stderr
    flushed(configured)
    stored = signals.all_signals(configured.open(), include_spool=False)
    failures = [s for s in stored if s.get("type") == "failure"]
    assert sorted(str(s["context"]) for s in failures) == sorted(
        f"job {n}-{i}" for n in range(4) for i in range(5)
    )
    assert len({s["id"] for s in failures}) == 20
    assert not shown(all_objects(configured.path)) and not shown(res.stdout)
