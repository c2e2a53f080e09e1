"""What a pytest guard ran, from a report the harness asks for outside the checkout.

The guard runs the candidate's code in its own process: that code can end the process with
status 0 (`os._exit(0)` when pytest imports it) before a single test ran, and the exit status
alone would say "pass". When the guard is pytest (`pytest`, `py.test`, `python -m pytest`,
also after `uv run`, `poetry run`, `pdm run`, `hatch run`, `pipenv run`, `env` or `VAR=value`)
and a single command (no `;`, `&&`, pipes or redirections), the harness adds
`--junitxml=<a fresh folder outside the checkout>/<random>.xml` and passes the guard only if
that report exists, counts no failure or error, and counts as many tests run (not skipped)
as the run's base did. Any other guard is judged by its exit status alone (docs/integrity.md).
"""

from __future__ import annotations

import os
import re
import shlex
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from gitimprove.util.files import open_state

_SHELL_SYNTAX = re.compile(r"[;&|<>`\n]|\$\(")
_RUNNERS = {"uv": "run", "poetry": "run", "pdm": "run", "hatch": "run", "pipenv": "run"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
MAX_REPORT = 64 * 1024 * 1024


def is_pytest(command: str) -> bool:
    """Whether `command` is one pytest run the harness can add its report option to."""
    if _SHELL_SYNTAX.search(command):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return _runs_pytest(words)


def _runs_pytest(words: list[str]) -> bool:
    """Whether the words run pytest, after assignments, `env`, a project runner (`uv run`…),
    a wrapper that runs the rest as its command (`timeout 600`, `nice -n 5`, `nohup`,
    `stdbuf -oL`, `xvfb-run -a`), or coverage (`coverage run -m pytest`, `python -m coverage
    run -m pytest`): code under test must not pass such a guard by ending it early either."""
    i = 0
    while i < len(words):
        word = os.path.basename(words[i])
        if _ASSIGNMENT.match(words[i]) or word == "env":
            i += 1
        elif word in _RUNNERS and i + 1 < len(words) and words[i + 1] == _RUNNERS[word]:
            i += 2  # uv run [options] …: its own options come before the command
            while i < len(words) and words[i].startswith("-"):
                i += 1
        elif word in _WRAPPERS:
            i = _skip_options(words, i + 1, _WRAPPERS[word])
            if word == "timeout":
                i += 1  # its duration
        elif word == "coverage":
            return _coverage_runs_pytest(words[i + 1 :])
        else:
            break
    if i >= len(words):
        return False
    first = os.path.basename(words[i])
    if first in ("pytest", "py.test"):
        return True
    if re.fullmatch(r"python[0-9.]*", first):
        rest, j = words[i + 1 :], 0
        while j < len(rest):  # interpreter options, then -m pytest (or -m coverage run …)
            if rest[j] == "-m":
                if rest[j + 1 : j + 2] == ["coverage"]:
                    return _coverage_runs_pytest(rest[j + 2 :])
                return rest[j + 1 : j + 2] == ["pytest"]
            if not rest[j].startswith("-") or rest[j] == "-c":
                return False
            j += 2 if rest[j] in ("-X", "-W") else 1
    return False


# wrappers that run the rest of the line as their command: the options that take a value
_WRAPPERS = {
    "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "nice": {"-n", "--adjustment"},
    "nohup": set(),
    "stdbuf": {"-i", "-o", "-e", "--input", "--output", "--error"},
    "xvfb-run": {"-n", "--server-num", "-s", "--server-args", "-e", "--error-file", "-f"},
}
_COVERAGE_WITH_VALUE = {
    "--concurrency", "--context", "--data-file", "--debug", "--include", "--omit", "--rcfile",
    "--save-signal", "--source",
}  # fmt: skip


def _skip_options(words: list[str], i: int, with_value: set[str]) -> int:
    while i < len(words) and words[i].startswith("-") and words[i] != "--":
        i += 2 if words[i] in with_value else 1
    return i + 1 if i < len(words) and words[i] == "--" else i


def _coverage_runs_pytest(words: list[str]) -> bool:
    """`run [options] -m pytest …` (coverage's own options before the module)."""
    if not words or words[0] != "run":
        return False
    i, module = 1, False
    while i < len(words) and words[i].startswith("-"):
        if words[i] in ("-m", "--module"):
            module = True
        elif words[i] in _COVERAGE_WITH_VALUE:
            i += 1
        i += 1
    if i >= len(words):
        return False
    target = words[i]
    return target == "pytest" if module else os.path.basename(target) in ("pytest", "py.test")


def with_report(command: str, path: Path) -> str:
    """`command` asking pytest for a JUnit XML report at `path` (the last such option wins)."""
    return f"{command} {shlex.quote(f'--junitxml={path}')}"


@dataclass(frozen=True)
class Counted:
    ran: int  # tests run, not skipped
    failed: int  # failures and errors


def count(path: Path) -> Counted | None:
    """The tests the report says ran; None when there is no report or it cannot be read."""
    try:
        # code under test knows the path (it is on pytest's command line): only a regular
        # file there counts, read without following a link or blocking (a FIFO in its place
        # held the harness for ever, a link to /dev/zero never ended)
        with os.fdopen(open_state(path), "rb") as fh:
            if os.fstat(fh.fileno()).st_size > MAX_REPORT:
                return None
            data = fh.read(MAX_REPORT + 1)
        if len(data) > MAX_REPORT:
            return None
        root = ET.fromstring(data)
    except (OSError, ET.ParseError, ValueError):
        return None
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    if not suites:
        return None
    ran = failed = 0
    try:
        for suite in suites:
            tests, skipped = int(suite.get("tests", "0")), int(suite.get("skipped", "0"))
            ran += tests - skipped
            failed += int(suite.get("failures", "0")) + int(suite.get("errors", "0"))
    except ValueError:
        return None
    return Counted(ran, failed)


def judged(counted: Counted | None, floor: int | None) -> str | None:
    """Why a guard that exited 0 did not pass, or None."""
    if counted is None:
        return (
            "the guard (pytest) exited 0 without writing its report: the test session did not "
            "finish (code under test ended the process?)"
        )
    if counted.failed:
        return f"the guard (pytest) exited 0, but its report counts {counted.failed} failed"
    if floor is not None and counted.ran < floor:
        return (
            f"the guard (pytest) ran {counted.ran} tests where the run's base ran {floor}: "
            "tests were skipped, deselected or never collected"
        )
    return None
