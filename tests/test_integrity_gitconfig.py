"""gitimprove's settings in a git config file outside the repository (`~/.gitconfig`, the XDG
one, a file `.git/config` includes) take precedence over the committed `.gitimprove.toml` in
every later run. An agent without the sandbox that plants `improve.metric.command` there (a
command that prints a better number whenever the candidate holds a marker file) stops the run,
naming the setting; the attempt is `tampered` and `--resume` refuses the changed setting. In
the sandbox the home folder is read-only: the write fails and the run goes on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import TmpRepo, cli_popen
from tests.loop_helpers import run_rows, value_project
from tests.test_integrity import needs_bwrap

# iteration 1 plants the setting (in the file the test names), iteration 2 would profit from it
AGENT = """import os, pathlib, sys
target = pathlib.Path(os.path.expanduser(sys.argv[1]))
step = os.environ["GITIMPROVE_ITERATION"]
if step == "1":
    forged = "if [ -e src/fast ]; then echo METRIC score=1; else {python} bench.py; fi"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "a") as f:
            f.write('[improve "metric"]\\n\\tcommand = "sh -c \\'' + forged + '\\'"\\n')
    except OSError as exc:
        print(f"refused: {{exc}}", file=sys.stderr)
    pathlib.Path("src/value.txt").write_text("99\\n")
else:
    pathlib.Path("src/fast").write_text("")
"""


def _finished(p: subprocess.Popen[str], timeout: float, hung: str) -> tuple[str, str]:
    """`p`'s output once it exits within `timeout`; else it is killed and the test fails
    saying `hung`."""
    try:
        return p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.fail(hung)


def project(repo: TmpRepo, tmp_path: Path, target: str, sandbox: str) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT.format(python=sys.executable))
    value_project(repo, f"{sys.executable} {agent} {target}", sandbox=sandbox)
    # the project lets the agent add files beside src/value.txt
    assert (repo.path / ".gitimprove.toml").read_text().count('mutable = ["src/**"]') == 1


@pytest.mark.slow
@pytest.mark.parametrize("target", ["~/.gitconfig", "~/.config/git/config", "{included}"])
def test_an_improve_setting_planted_outside_the_repository_stops_the_run(
    tmp_repo: TmpRepo, tmp_path: Path, target: str
) -> None:
    if target == "{included}":  # a file outside the repository that .git/config includes
        included = tmp_path / "shared.gitconfig"
        included.write_text("")
        tmp_repo.git("config", "include.path", str(included))
        target = str(included)
    project(tmp_repo, tmp_path, target, "none")
    res = tmp_repo.cli("run", "--run", "t", "-n", "2")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "stopped" in res.stderr and "git config improve.metric.command" in res.stderr
    assert "Traceback" not in res.stderr
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "tampered"], rows
    base = tmp_repo.git("rev-parse", "refs/improve/runs/t/base")
    assert tmp_repo.git("rev-parse", "improve/t") == base
    again = tmp_repo.cli("run", "--resume", "--run", "t", "-n", "2")
    assert again.returncode == 1 and "improve.metric.command changed" in again.stderr
    assert [r["status"] for r in run_rows(tmp_repo, "t")] == ["baseline", "tampered"]


@pytest.mark.slow
@needs_bwrap
def test_in_the_sandbox_the_home_git_config_cannot_be_written(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    project(tmp_repo, tmp_path, "~/.gitconfig", "bwrap")
    before = (Path.home() / ".gitconfig").read_bytes()
    res = tmp_repo.cli("run", "--run", "t", "-n", "2")
    assert res.returncode == 0, res.stderr
    assert (Path.home() / ".gitconfig").read_bytes() == before
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "keep", "discard"], rows
    assert rows[2]["metric"]["value"] == 99


FIFO_AGENT = """import os, pathlib, sys
target = pathlib.Path(os.path.expanduser(sys.argv[1]))
target.parent.mkdir(parents=True, exist_ok=True)
if target.exists():
    target.unlink()
os.mkfifo(target)
pathlib.Path("src/value.txt").write_text("99\\n")
"""


@pytest.mark.slow
@pytest.mark.parametrize("target", ["~/.gitconfig", "~/.config/git/config", "~/.gitconfig.local"])
def test_a_fifo_in_place_of_a_git_config_outside_the_repository_stops_the_run(
    tmp_repo: TmpRepo, tmp_path: Path, target: str
) -> None:
    """libgit2 in the harness reads the global, XDG and system config (and what they include)
    again whenever one changes: a FIFO there held the run for ever at its next diff."""
    home = Path.home()
    kept = {p: p.read_bytes() for p in (home / ".gitconfig",) if p.exists()}
    if target.endswith(".local"):  # a file ~/.gitconfig includes
        (home / ".gitconfig").write_bytes(
            kept.get(home / ".gitconfig", b"") + b"[include]\n\tpath = ~/.gitconfig.local\n"
        )
        (home / ".gitconfig.local").write_text("")
    agent = tmp_path / "agent.py"
    agent.write_text(FIFO_AGENT)
    value_project(tmp_repo, f"{sys.executable} {agent} {target}")
    p = cli_popen(tmp_repo.path, "run", "--run", "t", "-n", "2")
    try:
        out, err = _finished(p, 120, "the run hung on a FIFO in place of " + target)
    finally:
        fifo = Path(os.path.expanduser(target))
        if fifo.is_fifo():  # git in this test would hang on it too
            fifo.unlink()
        for path, data in kept.items():
            path.write_bytes(data)
    assert p.returncode == 1, out + err
    assert "stopped" in err and f"{target} (a FIFO, not a regular file)" in err, err
    assert "Traceback" not in err
    assert [r["status"] for r in run_rows(tmp_repo, "t")] == ["baseline", "tampered"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("variable", "clear"),
    [
        ("GIT_CONFIG_GLOBAL", ()),
        ("GIT_CONFIG_SYSTEM", ("GIT_CONFIG_NOSYSTEM",)),
        ("GIT_CONFIG_SYSTEM", ()),  # GIT_CONFIG_NOSYSTEM=0: git still reads it
        ("include", ()),  # an `include.path` given in GIT_CONFIG_COUNT / _KEY_n / _VALUE_n
    ],
)
def test_a_fifo_in_place_of_the_git_config_your_environment_names_stops_the_run(
    tmp_repo: TmpRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    clear: tuple[str, ...],
) -> None:
    """`GIT_CONFIG_GLOBAL` and `GIT_CONFIG_SYSTEM` in your environment name the file git reads
    in place of `~/.gitconfig` and `/etc/gitconfig` (unless `GIT_CONFIG_NOSYSTEM` is true),
    and an `include.path` given in the environment names one more: an agent without the
    sandbox that puts a FIFO there hung every later git command of the harness (and the
    `git improve log` after the run) — the check looked only at the files libgit2 reads."""
    named = tmp_path / "config" / "user.gitconfig"
    named.parent.mkdir()
    named.write_text("[user]\n\tname = Ada\n")
    if variable == "include":
        monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
        monkeypatch.setenv("GIT_CONFIG_KEY_0", "include.path")
        monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(named))
    else:
        monkeypatch.setenv(variable, str(named))
    for name in clear:
        monkeypatch.delenv(name, raising=False)
    if variable == "GIT_CONFIG_SYSTEM" and not clear:
        monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "0")
    agent = tmp_path / "agent.py"
    agent.write_text(FIFO_AGENT)
    value_project(tmp_repo, f"{sys.executable} {agent} {named}")
    p = cli_popen(tmp_repo.path, "run", "--run", "t", "-n", "2")
    try:
        out, err = _finished(p, 120, f"the run hung on a FIFO named by {variable}")
        if p.returncode == 0:  # what a user does next: every git command reads the file
            log = cli_popen(tmp_repo.path, "log", "--run", "t")
            _finished(log, 30, f"git improve log hung on a FIFO named by {variable}")
    finally:
        if named.is_fifo():  # git in this test would hang on it too
            named.unlink()
            named.write_text("")
    assert p.returncode == 1, out + err
    assert "stopped" in err and "user.gitconfig" in err and "a FIFO, not a regular file" in err
    assert "Traceback" not in err
    assert [r["status"] for r in run_rows(tmp_repo, "t")] == ["baseline", "tampered"]


@pytest.mark.slow
@needs_bwrap
def test_in_the_sandbox_the_git_config_your_environment_names_cannot_be_replaced(
    tmp_repo: TmpRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`GIT_CONFIG_GLOBAL` naming a file under /tmp: the sandbox's /tmp is private, so the
    agent's FIFO lands there and is gone with it; the run goes on."""
    named = tmp_path / "config" / "user.gitconfig"
    named.parent.mkdir()
    named.write_text("[user]\n\tname = Ada\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(named))
    agent = tmp_path / "agent.py"
    tolerant = FIFO_AGENT.replace("target.parent.mkdir", "try:\n    target.parent.mkdir")
    tolerant = tolerant.replace(
        "\nif target.exists():\n    target.unlink()\nos.mkfifo(target)\n",
        "\n    if target.exists():\n        target.unlink()\n    os.mkfifo(target)\n"
        "except OSError as exc:\n    print(f'refused: {exc}', file=sys.stderr)\n",
    )
    agent.write_text(tolerant)
    value_project(tmp_repo, f"{sys.executable} {agent} {named}", sandbox="bwrap")
    res = tmp_repo.cli("run", "--run", "t", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    assert named.is_file() and not named.is_fifo()
    assert [r["status"] for r in run_rows(tmp_repo, "t")] == ["baseline", "keep"]


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"GIT_CONFIG_GLOBAL": "{d}/g"}, ["GIT_CONFIG_GLOBAL={d}/g"]),
        ({"GIT_CONFIG_GLOBAL": "/dev/null"}, []),  # what CI and the harness name to read nothing
        ({"GIT_CONFIG_GLOBAL": ""}, []),
        ({"GIT_CONFIG_SYSTEM": "{d}/s", "GIT_CONFIG_NOSYSTEM": "1"}, []),
        ({"GIT_CONFIG_SYSTEM": "{d}/s", "GIT_CONFIG_NOSYSTEM": "yes"}, []),
        (
            {"GIT_CONFIG_SYSTEM": "{d}/s", "GIT_CONFIG_NOSYSTEM": "false"},
            ["GIT_CONFIG_SYSTEM={d}/s"],
        ),
        (
            {
                "GIT_CONFIG_COUNT": "2",
                "GIT_CONFIG_KEY_0": "user.name",
                "GIT_CONFIG_VALUE_0": "x",
                "GIT_CONFIG_KEY_1": "includeIf.onbranch:main.path",
                "GIT_CONFIG_VALUE_1": "{d}/i",
            },
            ["includeIf.onbranch:main.path={d}/i"],
        ),
        ({"GIT_CONFIG_PARAMETERS": "'include.path'='{d}/p' 'core.x'='y'"}, ["include.path={d}/p"]),
        ({"GIT_CONFIG_COUNT": "nonsense"}, []),
    ],
)
def test_which_git_config_files_your_environment_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], named: list[str]
) -> None:
    from gitimprove.git import gitfiles
    from gitimprove.util import proc

    for name in (
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_CONFIG_COUNT",
    ):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(d=tmp_path))
    assert [label for _, label in gitfiles.env_configs()] == [n.format(d=tmp_path) for n in named]
    # the harness's own isolated git reads none of them
    isolated = proc.isolated_env(dict(os.environ))
    assert not any(
        isolated.get(f"GIT_CONFIG_KEY_{n}", "").lower().startswith("include") for n in range(4)
    )
    assert "GIT_CONFIG_PARAMETERS" not in isolated
    assert isolated["GIT_CONFIG_GLOBAL"] == os.devnull


PLANT_AGENT = """import os, pathlib, socket, sys
target = pathlib.Path(os.path.expanduser(sys.argv[1]))
target.parent.mkdir(parents=True, exist_ok=True)
if os.path.lexists(target):
    target.unlink()
if sys.argv[2] == "fifo":
    os.mkfifo(target)
elif sys.argv[2] == "socket":
    os.chdir(target.parent)  # a socket's path is short
    socket.socket(socket.AF_UNIX).bind(target.name)
else:  # a link to a FIFO beside it
    os.mkfifo(str(target) + ".fifo")
    target.symlink_to(str(target) + ".fifo")
pathlib.Path(os.environ["GITIMPROVE_WORKSPACE"] if "GITIMPROVE_WORKSPACE" in os.environ
             else ".", "src/value.txt").write_text("99\\n")
"""

# case: (file -> text written before the run, the path the agent replaces, what it puts there,
# how the stop names it)
PLANTED = {
    "includeif-global": (
        {"~/.gitconfig": '[includeIf "gitdir:/"]\n\tpath = ~/.gitconfig.d/cond\n',
         "~/.gitconfig.d/cond": "[user]\n\tname = Ada\n"},
        "~/.gitconfig.d/cond", "fifo", "~/.gitconfig: include ~/.gitconfig.d/cond (a FIFO",
    ),
    "nested-include": (
        {"~/.gitconfig": "[include]\n\tpath = .gitconfig.d/a\n",
         "~/.gitconfig.d/a": '[includeIf "onbranch:*"]\n\tpath = b\n',
         "~/.gitconfig.d/b": ""},
        "~/.gitconfig.d/b", "fifo", "~/.gitconfig → .gitconfig.d/a: include b (a FIFO",
    ),
    "global-link": ({}, "~/.gitconfig", "link", "~/.gitconfig (a FIFO"),
    "xdg-socket": ({}, "~/.config/git/config", "socket", "~/.config/git/config (a socket"),
    "repo-include": ({".git/config": "[include]\n\tpath = ~/.repo-extra\n",
                      "~/.repo-extra": ""}, "~/.repo-extra", "fifo",
                     ".git/config: include ~/.repo-extra (a FIFO"),
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(PLANTED))
def test_a_config_git_reads_planted_as_no_file_stops_the_run_in_bounded_time(
    tmp_repo: TmpRepo, tmp_path: Path, case: str
) -> None:
    """Every config path git reads before it does anything — a file `~/.gitconfig` includes
    by `[includeIf]`, one included by an included one, `~/.gitconfig` as a link to a FIFO, a
    socket in place of the XDG config, a file outside the repository `.git/config` includes
    — planted as a FIFO, a socket or a link to a FIFO by the agent: the run stops naming it
    (never a hang: the test bounds it), the attempt `tampered`, and `doctor` names it too."""
    files, target, kind, named = PLANTED[case]
    agent = tmp_path / "agent.py"
    agent.write_text(PLANT_AGENT)
    value_project(tmp_repo, f"{sys.executable} {agent} {target} {kind}")
    for name, text in files.items():
        path = tmp_repo.path / name if name.startswith(".git/") else Path(os.path.expanduser(name))
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as f:
            f.write(text)
    planted = Path(os.path.expanduser(target))
    try:
        p = cli_popen(tmp_repo.path, "run", "--run", "t", "-n", "2")
        out, err = _finished(p, 120, f"the run hung on {target} planted as {kind}")
        d = cli_popen(tmp_repo.path, "doctor")
        doctor, _ = _finished(d, 60, f"doctor hung on {target} planted as {kind}")
    finally:
        for path in (planted, Path(str(planted) + ".fifo")):
            if (os.path.lexists(path) and not path.is_file()) or path.is_symlink():
                path.unlink()
    assert p.returncode == 1, out + err
    assert "stopped" in err and named in err and "not a regular file" in err, err
    assert "Traceback" not in err
    if case == "repo-include":  # put back less that include (the config is in quarantine)
        assert "~/.repo-extra" not in (tmp_repo.path / ".git" / "config").read_text()
        assert ".git/improve/quarantine/" in err, err
    else:
        assert named.split(" (")[0] in doctor, doctor
    assert [r["status"] for r in run_rows(tmp_repo, "t")] == ["baseline", "tampered"]
