"""A run keeps the configuration it started with (docs/integrity.md, 4): a gitimprove setting
planted where git sees it but the harness does not (`GIT_CONFIG_GLOBAL`, `git -c`), spelled
with another case or without dashes, or a `.gitimprove.toml` edited between the run and its
`--resume` (committed or not) makes the resume refuse, naming the setting; nothing is
recorded by the refused resume."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project

AGENT = Path(__file__).parent / "agents" / "config_planter.py"


def project(repo: TmpRepo, how: str) -> None:
    value_project(repo, f"{sys.executable} {AGENT} {how}")


def refused(repo: TmpRepo, rows: int, env: dict[str, str] | None = None) -> str:
    res = repo.cli("run", "--resume", "--run", "p", "-n", "1", env=env)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    assert len(run_rows(repo, "p")) == rows
    return res.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("how", "named"),
    [
        ("global-env", "git config improve.metric.command is set to 'echo METRIC score=1' in "),
        ("subsection-case", "improve.Metric.command changed since run p started"),
        ("dashes", "improve.loop.plateaupatience changed since run p started"),
    ],
)
def test_a_setting_the_agent_planted_is_refused_on_resume(
    tmp_repo: TmpRepo, tmp_path: Path, how: str, named: str
) -> None:
    env = {}
    if how == "global-env":
        (tmp_path / "global").write_text("")
        env = {"GIT_CONFIG_GLOBAL": str(tmp_path / "global")}
    home = Path.home() / ".gitconfig"
    kept = home.read_bytes() if home.exists() else None
    try:
        project(tmp_repo, how)
        res = tmp_repo.cli("run", "--run", "p", "-n", "1", env=env)
        assert "Traceback" not in res.stderr
        rows = run_rows(tmp_repo, "p")
        assert [r["status"] for r in rows][1:] in (["tampered"], ["discard"]), rows
        assert tmp_repo.git("rev-parse", "improve/p") == tmp_repo.git(
            "rev-parse", "refs/improve/runs/p/base"
        )
        err = refused(tmp_repo, len(rows), env)
        assert named in err, err
    finally:
        if kept is None:
            home.unlink(missing_ok=True)
        else:
            home.write_bytes(kept)


def test_a_setting_given_through_the_environment_is_refused(tmp_repo: TmpRepo) -> None:
    """`git -c improve.metric.command=…` (GIT_CONFIG_PARAMETERS) and GIT_CONFIG_COUNT: git
    shows the setting, the harness (libgit2) would not use it; any run refuses, naming it."""
    project(tmp_repo, "none")
    for env in (
        {"GIT_CONFIG_PARAMETERS": "'improve.metric.command'='echo METRIC score=1'"},
        {
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "improve.metric.command",
            "GIT_CONFIG_VALUE_0": "echo METRIC score=1",
        },
    ):
        res = tmp_repo.cli("run", "--run", "p", "-n", "1", env=env)
        assert res.returncode == 1, res.stdout + res.stderr
        assert "git config improve.metric.command is set to 'echo METRIC score=1' in " in (
            res.stderr
        )
        assert "GIT_CONFIG_PARAMETERS or GIT_CONFIG_COUNT" in res.stderr
        assert run_rows(tmp_repo, "p") == []


@pytest.mark.slow
@pytest.mark.parametrize("commit", [False, True])
def test_a_config_file_edited_between_runs_is_refused_on_resume(
    tmp_repo: TmpRepo, commit: bool
) -> None:
    project(tmp_repo, "none")
    res = tmp_repo.cli("run", "--run", "p", "-n", "1")
    assert res.returncode == 0, res.stderr
    rows = len(run_rows(tmp_repo, "p"))
    toml = tmp_repo.path / ".gitimprove.toml"
    toml.write_text(toml.read_text().replace("[scope]", "[loop]\niterations = 3\n\n[scope]"))
    if commit:
        tmp_repo.git("commit", "-qam", "more rounds")
    err = refused(tmp_repo, rows)
    assert ".gitimprove.toml in your work tree sets loop.iterations otherwise than run p" in err


def test_a_setting_git_does_not_show_is_refused(tmp_repo: TmpRepo) -> None:
    """`improve.*` in `~/.gitconfig` while `GIT_CONFIG_GLOBAL` names another file: libgit2 in
    the harness reads it, `git config` does not show it; the run refuses, naming it."""
    project(tmp_repo, "none")
    (Path.home() / ".gitconfig").write_text('[improve "metric"]\n\ttimeout = 5s\n')
    try:
        res = tmp_repo.cli("run", "--run", "p", "-n", "1", env={"GIT_CONFIG_GLOBAL": "/dev/null"})
    finally:
        (Path.home() / ".gitconfig").unlink()
    assert res.returncode == 1, res.stdout + res.stderr
    assert "gitimprove reads git config improve.metric.timeout = '5s' from ~/.gitconfig" in (
        res.stderr
    )
    assert run_rows(tmp_repo, "p") == []
