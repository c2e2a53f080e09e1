"""Claude Code hook budgets (DESIGN §13), in one run:

- `hook PostToolUseFailure` against `python -c pass` (budget 3x);
- `hook SessionStart` with a 200-line memory and 10,000 experiments, against
  `git log -20` + `python -c "import pygit2"` (budget 2x); also with 50 signals waiting in
  the spool, which it flushes (the hot hooks do not mask: this flush does).

Usage: python bench/hooks_bench.py [--experiments 10000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import log_bench  # builds the 10,000-experiment repository
from common import ENV, ROOT, report, run_compiled, timed

# what pip writes for the `git-improve` console script
CONSOLE_SCRIPT = """#!{python}
import sys
from gitimprove.cli import main
if __name__ == "__main__":
    sys.exit(main())
"""

KEYWORD_HEAVY = "\n".join(
    [
        "Exit code 1",
        "Error: authentication failed for https://api.internal/v1/deploy?token=&page_token=",
        "  password: ******** (from env DB_PASSWORD, secret_key, api_key, access_key, auth)",
        "  Authorization: Bearer <redacted>; credentials: none; private_key: missing",
        "  -----BEGIN PRIVATE KEY----- expected in key.pem; ssh key fingerprint mismatch",
        "  aws_access_key_id / aws_secret_access_key / AWS_SESSION_TOKEN not set",
        "  GITHUB_TOKEN, GITLAB_TOKEN, SLACK_TOKEN, NPM_TOKEN, PYPI_TOKEN, HF_TOKEN unset",
        "  heroku, stripe, twilio, sendgrid, mailgun, mailchimp, okta, azure, gcp, vault",
        "  jdbc:mysql://db:3306/app?user=app&password= ; redis://:@cache:6379",
        "  mysql -u root -p; docker login -u ci --password-stdin; curl -u admin: https://x",
        "  token expired; secret rotated; key revoked; passphrase required; pin locked",
        "  DB_PASSWORD=Hunter2xyz! api_key=q8Wv2Lk9Zr4Tm1Xs9fQ2 ghp_k3Jd9QmZ2xW7pL4vB8nR1tY6cF5hG0sA2eU4",
    ]
    * 4
)


def _pem_like() -> str:
    """~200 KB: a private key's BEGIN line and base64 lines (generated, not a key)."""
    import base64
    import random

    rng = random.Random(14)
    lines = [base64.b64encode(rng.randbytes(48)).decode() for _ in range(3000)]
    return "Exit code 1\n-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines)


def _token_heavy() -> str:
    """~200 KB: a log in which every line holds a few tokens and passwords (generated)."""
    import random
    import string

    rng = random.Random(14)
    alnum = string.ascii_letters + string.digits

    def s(n: int) -> str:
        return "".join(rng.choice(alnum) for _ in range(n))

    lines = [
        f"retry {i}: token={s(40)} ghp_{s(36)} password=Hx{i}!{s(8)} api_key={s(32)}"
        for i in range(1500)
    ]
    return "Exit code 1\n" + "\n".join(lines)


def _spooler(repo: Path, payloads: list[str], big: dict[str, str]) -> Callable[[], None]:
    """Before each run: the memory branch as it is now (the flushes of earlier runs undone,
    so that runs differ only by the spool) and 50 new signals in the spool, as the
    PostToolUseFailure hook leaves them (text unmasked, for the flush to mask)."""
    from gitimprove.hooks import claude
    from gitimprove.util import gitdir

    every = payloads + [p for p in big.values() for _ in range(5)]
    _drained(repo)
    ref = "refs/heads/improve/memory"
    tip = subprocess.run(
        ["git", "rev-parse", ref], cwd=repo, env=ENV, capture_output=True, text=True, check=True
    ).stdout.strip()

    def fill() -> None:
        _drained(repo)
        subprocess.run(["git", "update-ref", ref, tip], cwd=repo, env=ENV, check=True)
        loc = gitdir.discover(str(repo))
        assert loc is not None
        for p in every:
            claude.post_tool_use_failure(loc, json.loads(p))

    return fill


def _drained(repo: Path) -> None:
    """The spool flushed (after the flush an earlier SessionStart left running, which holds
    the spool's lock): no run times another's work."""
    subprocess.run([sys.executable, "-m", "gitimprove", "hook", "flush"], cwd=repo, env=ENV)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--experiments", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gitimprove-hooks-bench-"))
    try:
        # the shell form finds `git-improve` on PATH: this checkout's, as pip would install
        # it for this interpreter; the hooks' caches go to a folder of this run
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        script = bin_dir / "git-improve"
        script.write_text(CONSOLE_SCRIPT.format(python=sys.executable))
        script.chmod(0o755)
        ENV["PATH"] = os.pathsep.join([str(bin_dir), ENV["PATH"]])
        ENV["XDG_CACHE_HOME"] = str(tmp / "cache")
        run_compiled(tmp)
        repo = tmp / "repo"
        repo.mkdir()
        log_bench.build(repo, a.experiments)
        sys.path.insert(0, str(ROOT))
        from gitimprove.git import memory
        from gitimprove.git.repo import open_repo

        entries = {
            f"learnings/2026/11/{i:04d}.md": f'+++\ncreated = "2026-11-01T00:00:{i % 60:02d}Z"\ncategory = "command"\n+++\nlearning number {i}: run the tests with make check\n'
            for i in range(250)
        }
        memory.add_entries(open_repo(repo), entries)
        py = sys.executable
        subprocess.run(
            [py, "-m", "gitimprove", "log", "--format", "tsv"],
            cwd=repo,
            env=ENV,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        start_payload = json.dumps(
            {
                "session_id": "bench",
                "cwd": str(repo),
                "hook_event_name": "SessionStart",
                "source": "startup",
            }
        )
        out = subprocess.run(
            [py, "-m", "gitimprove", "hook", "SessionStart"],
            cwd=repo,
            env=ENV,
            input=start_payload,
            text=True,
            capture_output=True,
            check=True,
        ).stdout
        ctx = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        fail_payload = json.dumps(
            {
                "session_id": "bench",
                "cwd": str(repo),
                "hook_event_name": "PostToolUseFailure",
                "tool_name": "Bash",
                "tool_input": {"command": "make check"},
                "error": "Exit code 2\nmake: *** [check] Error 2",
            }
        )

        # an error in which nearly every rule's keyword occurs (and a few secrets): the
        # keyword prefilter passes most rules, so this is the masking's worst ordinary case
        heavy_payload = json.dumps(
            {
                "session_id": "bench",
                "cwd": str(repo),
                "hook_event_name": "PostToolUseFailure",
                "tool_name": "Bash",
                "tool_input": {"command": "deploy --token $DEPLOY_TOKEN --password-file pw.txt"},
                "error": KEYWORD_HEAVY,
            }
        )

        # 200 KB errors: a key printed whole, and a log full of tokens; only the part a
        # record keeps (plus a margin) is masked, so the time does not grow with the size
        big_payloads = {
            name: json.dumps(
                {
                    "session_id": "bench",
                    "cwd": str(repo),
                    "hook_event_name": "PostToolUseFailure",
                    "tool_name": "Bash",
                    "tool_input": {"command": "cat deploy.pem"},
                    "error": error,
                }
            )
            for name, error in (("PEM-like", _pem_like()), ("token-heavy", _token_heavy()))
        }

        from gitimprove.hooks.install import command_for, shell_command_for

        # exactly the commands `hooks install --claude` writes: the shell form of the
        # project's settings.json (git-improve found on PATH at run time) and the exec form
        # of settings.local.json / user scope (this machine's interpreter)
        failure_cmd = ["/bin/sh", "-c", command_for("PostToolUseFailure", py)]
        failure = timed(failure_cmd, repo, a.repeat * 3, stdin=fail_payload)
        shell_cmd = ["/bin/sh", "-c", shell_command_for("PostToolUseFailure")]
        spool = repo / ".git" / "improve" / "spool"
        before = len(list(spool.iterdir())) if spool.is_dir() else 0
        timed(shell_cmd, repo, 1, stdin=fail_payload)
        if len(list(spool.iterdir())) <= before:  # the row must time a hook that ran
            raise SystemExit("the shell-form hook recorded nothing: is git-improve on PATH?")
        failure_shell = timed(shell_cmd, repo, a.repeat * 3, stdin=fail_payload)
        heavy = timed(failure_cmd, repo, a.repeat * 3, stdin=heavy_payload)
        big = {n: timed(failure_cmd, repo, a.repeat * 3, stdin=p) for n, p in big_payloads.items()}
        py_pass = timed(["/bin/sh", "-c", f"{py} -c pass"], repo, a.repeat * 3)
        git_log = timed(["git", "log", "-20"], repo, a.repeat)
        pygit2 = timed([py, "-c", "import pygit2"], repo, a.repeat)
        start = timed(
            ["/bin/sh", "-c", command_for("SessionStart", py)],
            repo,
            a.repeat,
            stdin=start_payload,
            before=lambda: _drained(repo),
        )
        spooled = _spooler(repo, [fail_payload] * 30 + [heavy_payload] * 10, big_payloads)
        start_spooled = timed(
            ["/bin/sh", "-c", command_for("SessionStart", py)],
            repo,
            a.repeat,
            stdin=start_payload,
            before=spooled,
        )
        # the flush SessionStart hands the spool to (detached, not waited for): no budget
        flush = timed([py, "-m", "gitimprove", "hook", "flush"], repo, a.repeat, before=spooled)
        rows = [
            (
                "hook PostToolUseFailure (exec form, via sh)",
                failure,
                py_pass,
                3.0,
                "python -c pass (via sh)",
            ),
            (
                "hook PostToolUseFailure (shell form: git improve)",
                failure_shell,
                py_pass,
                3.0,
                "python -c pass (via sh)",
            ),
            (
                "hook PostToolUseFailure (keyword-heavy error)",
                heavy,
                py_pass,
                3.0,
                "python -c pass (via sh)",
            ),
            *(
                (
                    f"hook PostToolUseFailure (200 KB {n} error)",
                    t,
                    py_pass,
                    3.0,
                    "python -c pass (via sh)",
                )
                for n, t in big.items()
            ),
            (
                "hook SessionStart (10k experiments, 250 learnings)",
                start,
                git_log + pygit2,
                2.0,
                "git log -20 + import pygit2",
            ),
            (
                "hook SessionStart (the same, 50 spooled signals)",
                start_spooled,
                git_log + pygit2,
                2.0,
                "git log -20 + import pygit2",
            ),
        ]
        print(f"SessionStart context: {len(ctx)} characters (limit 10,000)")
        print(f"the detached flush of 50 spooled signals: {flush * 1000:.1f} ms (no budget)")
        failed = report(rows, 52)
        return 1 if failed else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
