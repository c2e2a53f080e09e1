"""What a pytest guard ran, from a report the harness asks for outside the checkout.

The guard runs the candidate's code in its own process: that code can end the process with
status 0 (`os._exit(0)` when pytest imports it) before a single test ran, and the exit status
alone would say "pass". When the guard is pytest (`pytest`, `py.test`, `python -m pytest`,
also after `uv run`, `poetry run`, `pdm run`, `hatch run`, `pipenv run`, `env` or `VAR=value`)
and a single command (no `;`, `&&`, pipes or redirections), the harness adds
`--junitxml=<a fresh folder outside the checkout>/<random>.xml` and passes the guard only if
that report exists, counts no failure or error, and counts as many tests run (not skipped)
as the run's base did. pytest is kept to the checkout (`confined`): its configuration, rootdir
and `conftest.py` files never come from a folder above it. Any other guard is judged by its
exit status alone (docs/integrity.md).
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
    return _pytest_args(words) is not None


def _pytest_args(words: list[str]) -> int | None:
    """Where pytest's own arguments start in `words` when the words run pytest (else None),
    after assignments, `env`, a project runner (`uv run`…),
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
            return _coverage_runs_pytest(words, i + 1)
        else:
            break
    if i >= len(words):
        return None
    first = os.path.basename(words[i])
    if first in ("pytest", "py.test"):
        return i + 1
    if re.fullmatch(r"python[0-9.]*", first):
        j = i + 1
        while j < len(words):  # interpreter options, then -m pytest (or -m coverage run …)
            if words[j] == "-m":
                if words[j + 1 : j + 2] == ["coverage"]:
                    return _coverage_runs_pytest(words, j + 2)
                return j + 2 if words[j + 1 : j + 2] == ["pytest"] else None
            if not words[j].startswith("-") or words[j] == "-c":
                return None
            j += 2 if words[j] in ("-X", "-W") else 1
    return None


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


def _coverage_runs_pytest(words: list[str], i: int) -> int | None:
    """`run [options] -m pytest …` from `i` (coverage's own options before the module)."""
    if words[i : i + 1] != ["run"]:
        return None
    i, module = i + 1, False
    while i < len(words) and words[i].startswith("-"):
        if words[i] in ("-m", "--module"):
            module = True
        elif words[i] in _COVERAGE_WITH_VALUE:
            i += 1
        i += 1
    if i >= len(words):
        return None
    target = words[i]
    runs = target == "pytest" if module else os.path.basename(target) in ("pytest", "py.test")
    return i + 1 if runs else None


# pytest's configuration files, in the order it looks for them in each folder, and what makes
# one count as pytest's (None: the file counts whatever it holds)
_CONFIGS: tuple[tuple[str, bytes | None], ...] = (
    ("pytest.toml", None),
    (".pytest.toml", None),
    ("pytest.ini", None),
    (".pytest.ini", None),
    ("pyproject.toml", b"[tool.pytest"),
    ("tox.ini", b"[pytest]"),
    ("setup.cfg", b"[tool:pytest]"),
)
# pytest options whose value is the next word (a value is never a path to test)
_PYTEST_WITH_VALUE = {"-k", "-m", "-p", "-o", "-W", "-n", "--maxfail", "--deselect", "--ignore"}
_CONFIG_OPTIONS = ("-c", "--config-file", "--inifile")


def confined(command: str, checkout: Path, empty: Path) -> str:
    """`command` with pytest kept to the checkout: it takes its configuration, rootdir and
    `conftest.py` files from inside it, never from a folder above (one the agent wrote outside
    the repository: pytest looks for its configuration from the tests' folder upwards and
    loads every `conftest.py` between that configuration's folder and the tests).

    The configuration pytest would find first inside the checkout (from the folder of the
    paths it is given up to the checkout's root) is named with `-c` (its folder is then the
    rootdir and the limit of the `conftest.py` search, as pytest has it); when there is none,
    `-c` names `empty` (a `[pytest]` file the harness wrote outside the checkout) and the
    checkout is `--rootdir` and `--confcutdir` (no `conftest.py` above it loads). Options the
    command already gives are left as they are."""
    words = shlex.split(command)
    start = _pytest_args(words)
    if start is None:
        return command
    args, given, i = [], set(), start
    while i < len(words):
        word = words[i]
        name = word.split("=", 1)[0]
        if name in (*_CONFIG_OPTIONS, "--rootdir", "--confcutdir"):
            given.add("-c" if name in _CONFIG_OPTIONS else name)
        if word in _PYTEST_WITH_VALUE or word in (*_CONFIG_OPTIONS, "--rootdir", "--confcutdir"):
            i += 2
            continue
        if not word.startswith("-"):
            args.append(word.split("::", 1)[0])
        i += 1
    root = Path(os.path.abspath(checkout))
    config = _config_inside(root, _ancestor(root, args))
    extra: list[str] = []
    if "-c" not in given:
        extra += ["-c", str(config or empty)]
    if config is None:  # else pytest's own: the configuration's folder, inside
        extra += [
            f"--{name}={root}" for name in ("rootdir", "confcutdir") if f"--{name}" not in given
        ]
    return " ".join([command, *(shlex.quote(w) for w in extra)])


def _ancestor(root: Path, args: list[str]) -> Path:
    """The folder pytest starts its search from: the common folder of the paths it is given
    that exist (inside the checkout), else the checkout (where it runs)."""
    found: list[Path] = []
    for arg in args:
        path = Path(os.path.normpath(root / arg))
        if path.is_relative_to(root) and os.path.lexists(path):
            found.append(path if path.is_dir() and not path.is_symlink() else path.parent)
    if not found:
        return root
    return Path(os.path.commonpath([str(p) for p in found]))


def _config_inside(root: Path, start: Path) -> Path | None:
    """pytest's configuration file as it would find it from `start` up to `root` (a
    `pyproject.toml` without pytest's table when nothing else is found), or None."""
    fallback = None
    for base in (start, *start.parents):
        for name, marker in _CONFIGS:
            path = base / name
            if not path.is_file() or path.is_symlink():
                continue
            if marker is None:
                return path
            try:
                data = path.read_bytes()[: 4 * 1024 * 1024]
            except OSError:
                continue
            if marker in data:
                return path
            if name == "pyproject.toml" and fallback is None:
                fallback = path
        if base == root:
            break
    return fallback


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
