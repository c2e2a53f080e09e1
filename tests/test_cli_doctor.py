from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitimprove import docgen
from gitimprove.cli import COMMANDS, HIDDEN, _build_group
from tests.conftest import ROOT, TmpRepo, cli
from tests.test_flocks import held_elsewhere


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_help(name: str) -> None:
    result = CliRunner().invoke(_build_group(), [name, "--help"], prog_name="git improve")
    assert result.exit_code == 0, result.output
    assert f"git improve {name}" in result.output
    assert len(result.output.splitlines()) > 3


def test_hidden_commands_stay_out_of_the_listing() -> None:
    result = CliRunner().invoke(_build_group(), ["--help"])
    for name in COMMANDS:
        assert (f"  {name} " in result.output) == (name not in HIDDEN)


def test_exit_codes(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    assert tmp_repo.cli("--version").returncode == 0
    assert tmp_repo.cli("no-such-command").returncode == 2
    assert tmp_repo.cli("log", "--format", "xml").returncode == 2
    res = tmp_repo.cli("show", "nonexistent-rev")
    assert res.returncode == 1 and "does not name a commit" in res.stderr and "hint:" in res.stderr
    tmp_repo.commit("one")
    (tmp_repo.path / ".gitimprove.toml").write_text(
        '[metric]\ncommand = "x"\ndirection = "sideways"\n'
    )
    res = tmp_repo.cli("measure")
    assert res.returncode == 1 and "metric.direction = 'sideways'" in res.stderr


@pytest.mark.slow
def test_internal_crash_exits_3_and_logs_traceback(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("one")
    probe = (
        "import sys\n"
        "import gitimprove.state.noterows as v\n"
        "def boom(*a, **k):\n    raise RuntimeError('kaboom')\n"
        "v.view_rows = boom\n"
        "from gitimprove.cli import main\n"
        "sys.exit(main(['log']))\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_repo.path, capture_output=True, text=True
    )
    assert res.returncode == 3
    assert "unexpected internal error: RuntimeError: kaboom" in res.stderr
    log = (tmp_repo.path / ".git" / "improve" / "last-error.log").read_text()
    assert "Traceback" in log and "kaboom" in log


HOOK_PROBE = """
import sys
from gitimprove.cli import main
code = main(["hook", "post-commit"])
heavy = sorted(m for m in ("click", "pygit2", "tomllib", "tomlkit", "subprocess", "gitimprove.loop.measure") if m in sys.modules)
print(",".join(heavy))
sys.exit(code)
"""


def test_hook_path_imports_nothing_heavy_on_an_ordinary_commit(project: TmpRepo) -> None:
    project.commit("ordinary", {"x": "1"})
    res = subprocess.run(
        [sys.executable, "-c", HOOK_PROBE], cwd=project.path, capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == ""
    importtime = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gitimprove", "hook", "post-commit"],
        cwd=project.path,
        capture_output=True,
        text=True,
    )
    modules = {
        line.split("|")[-1].strip() for line in importtime.stderr.splitlines() if "|" in line
    }
    assert not modules & {"pygit2", "click", "tomllib", "tomlkit", "gitimprove.loop.measure"}


@pytest.mark.slow
def test_docs_and_man_page_are_current() -> None:
    assert docgen.main(["--check"]) == 0, "run: python -m gitimprove.docgen"


def test_git_improve_help_opens_the_man_page(tmp_repo: TmpRepo) -> None:
    scripts = Path(sysconfig.get_path("scripts"))
    page = Path(sysconfig.get_path("data")) / "share" / "man" / "man1" / "git-improve.1"
    if not page.exists() or not (scripts / "git-improve").exists() or shutil.which("man") is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI installs gitimprove without -e, so {page} and man must exist")
        pytest.skip("needs a non-editable install (pip install .) and man")
    env = {
        **os.environ,
        "PATH": f"{scripts}{os.pathsep}{os.environ['PATH']}",
        "MANPAGER": "cat",
        "PAGER": "cat",
        "MANPATH": f"{page.parents[1]}:",
    }
    res = subprocess.run(
        ["git", "improve", "--help"], cwd=tmp_repo.path, capture_output=True, text=True, env=env
    )
    assert res.returncode == 0, res.stderr
    assert "GIT-IMPROVE(1)" in res.stdout and "git improve measure" in res.stdout
    assert page.read_text() == (ROOT / "gitimprove" / "resources" / "git-improve.1").read_text()


@pytest.mark.slow
def test_doctor_names_problems_and_repairs(project: TmpRepo) -> None:
    res = project.cli("doctor")
    assert res.returncode == 0, res.stdout
    assert "[ok ] notes.rewriteRef" in res.stdout
    project.git("config", "--unset-all", "notes.rewriteRef")
    work = project.path / ".git" / "improve" / "work"
    (work / "measure-dead").mkdir(parents=True)
    (work / "measure-dead.pid").write_text("999999999\n")
    project.git("notes", "--ref=improve", "append", "-m", "garbage line", "HEAD~1")
    res = project.cli("doctor")
    assert res.returncode == 1
    assert "fix: git config --add notes.rewriteRef refs/notes/improve" in res.stdout
    assert "measure-dead" in res.stdout and "fix: git improve doctor --repair" in res.stdout
    assert "1 unreadable line(s)" in res.stdout
    res = project.cli("doctor", "--repair")
    assert "[fixed] notes.rewriteRef" in res.stdout and "[fixed] workspaces" in res.stdout
    assert not (work / "measure-dead").exists()
    assert project.git("config", "notes.rewriteRef") == "refs/notes/improve"
    (project.path / ".gitimprove.toml").write_text('[metric]\ncommand = "x"\nbogus = 1\n')
    res = project.cli("doctor")
    assert "[FAIL] config: .gitimprove.toml: unknown key metric.bogus" in res.stdout


@pytest.mark.slow
def test_commands_outside_a_repository(tmp_path: Path) -> None:
    for args in (["log"], ["measure"], ["show"], ["doctor"]):
        res = cli(tmp_path, *args)
        assert res.returncode == 1, args
        assert "not inside a git repository" in res.stderr


@pytest.mark.slow
def test_doctor_flushes_the_spool_and_reinstalls_broken_shims(
    project: TmpRepo, tmp_path: Path
) -> None:
    import json as _json

    from gitimprove.hooks import install

    payload = {"session_id": "s", "cwd": str(project.path), "tool_name": "Bash", "error": "boom"}
    assert project.cli("hook", "PostToolUseFailure", input=_json.dumps(payload)).returncode == 0
    install.install_git(project.path, python=str(tmp_path / "gone" / "python"))
    res = project.cli("doctor")
    assert res.returncode == 1
    assert (
        "1 captured entries wait in the spool" in res.stdout
        and "interpreter that is gone" in res.stdout
    )
    res = project.cli("doctor", "--repair")
    assert "[fixed] spool" in res.stdout and "[fixed] git hooks" in res.stdout
    assert project.cli("doctor").returncode == 0
    assert "Bash failed: boom" in project.cli("signal", "list").stdout


def test_doctor_names_a_held_lock_and_repair_leaves_lock_files(tmp_repo: TmpRepo) -> None:
    """A lock is asked after, never taken, and a free lock file stays: one removed just as
    another process opened it would let two processes hold the lock at once."""
    tmp_repo.commit("c", {"f.txt": "x\n"})
    locks = tmp_repo.path / ".git" / "improve" / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    (locks / "memory.lock").touch()
    (locks / "run-p.lock").touch()
    with held_elsewhere(locks / "run-p.lock"):
        res = tmp_repo.cli("doctor")
        assert "run-p.lock is held by a running process" in res.stdout
        assert "memory.lock is held" not in res.stdout
        tmp_repo.cli("doctor", "--repair")
    assert sorted(p.name for p in locks.iterdir()) == ["memory.lock", "run-p.lock"]
    assert "is held by a running process" not in tmp_repo.cli("doctor").stdout
