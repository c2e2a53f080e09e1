"""Hostile configuration through the CLI: every value goes through one validator, and a bad
one is exit 1 with a message naming the key (and where it was set), never a traceback."""

from __future__ import annotations

import pytest

from gitimprove import config
from gitimprove.errors import ConfigError
from tests.conftest import PY, TmpRepo, main_in_process

BASE = f'[metric]\ncommand = "{PY} bench.py"\n'
DEEP = "[" * 3000 + "]" * 3000

FILE_CASES = [
    (BASE + "timeout = nan\n", "metric.timeout"),
    (BASE + "timeout = inf\n", "metric.timeout"),
    (BASE + "timeout = -inf\n", "metric.timeout"),
    (BASE + "timeout = 1e400\n", "metric.timeout"),
    (BASE + 'timeout = "' + "9" * 400 + 'h"\n', "metric.timeout"),
    (BASE + 'timeout = "0.0000001s"\n', "metric.timeout"),
    (BASE + "max_runs = " + "9" * 400 + "\n", "metric.max_runs"),
    (BASE + "max_runs = " + "9" * 5000 + "\n", "max_runs"),
    (BASE + 'min_delta = "500%"\n', "metric.min_delta"),
    (BASE + 'min_delta = "100%"\n', "metric.min_delta"),
    (BASE + 'min_delta = "1e999"\n', "metric.min_delta"),
    (BASE + "min_delta = 1e400\n", "metric.min_delta"),
    (BASE + "confidence = nan\n", "metric.confidence"),
    (BASE + "[loop]\ntarget = 1e400\n", "loop.target"),
    (BASE + "[loop]\niterations = 99999999999999999999\n", "loop.iterations"),
    (BASE + "[loop]\nmax_cost_usd = -inf\n", "loop.max_cost_usd"),
    (BASE + "[loop]\nmax_time = nan\n", "loop.max_time"),
    (BASE + "[memory]\nsignal_ttl_days = 1000000000000\n", "memory.signal_ttl_days"),
    (BASE + "[scope]\nmutable = " + DEEP + "\n", "mutable"),
    (BASE + '[scope]\nsealed = [[[[["a"]]]]]\n', "scope.sealed"),
    (BASE + '[agent]\ncommand = "a\\u0000b"\n', "agent.command"),
    (BASE + 'name = "' + "n" * 200_000 + '"\n', "metric.name"),
    (BASE + "[gate]\ntimeout = [1, 2]\n", "gate.timeout"),
    # digits of other scripts, doubled percent signs, a number that underflows to zero
    (BASE + 'timeout = "\u0663s"\n', "metric.timeout"),
    (BASE + 'timeout = "\uff11\uff12"\n', "metric.timeout"),
    (BASE + 'min_delta = "\u0665%"\n', "metric.min_delta"),
    (BASE + 'min_delta = "5%%"\n', "metric.min_delta"),
    (BASE + 'min_delta = "1e-400"\n', "metric.min_delta"),
    (BASE + "[scope]\nmutable = []\n", "scope.mutable"),
    (BASE + '[scope]\nmax_file_size = "\uff15MB"\n', "scope.max_file_size"),
    ('[metric]\ncommand = "x"\n[loop]\ntarget = ' + "{a = " * 40 + "1" + "}" * 40 + "\n", "target"),
]


@pytest.mark.parametrize(("text", "key"), FILE_CASES, ids=range(len(FILE_CASES)))
def test_every_bad_value_names_its_key(text: str, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        config.load_text(text)
    assert key in str(info.value)


def cli_fails_naming(repo: TmpRepo, *args: str, needles: tuple[str, ...]) -> None:
    res = repo.cli(*args)
    assert res.returncode == 1, (res.returncode, res.stderr)
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr, res.stderr
    for needle in needles:
        assert needle in res.stderr, (needle, res.stderr[-1500:])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "key"),
    [
        (BASE + "timeout = nan\n", "metric.timeout"),
        (BASE + 'min_delta = "500%"\n', "metric.min_delta"),
        (BASE + "max_runs = " + "9" * 5000 + "\n", "max_runs"),
        (BASE + "[scope]\nmutable = " + DEEP + "\n", "mutable"),
    ],
)
def test_measure_and_doctor_name_the_key(tmp_repo: TmpRepo, text: str, key: str) -> None:
    tmp_repo.commit("project", {"bench.py": "print(1)\n", ".gitimprove.toml": text})
    cli_fails_naming(tmp_repo, "measure", needles=(".gitimprove.toml", key))
    doctor = tmp_repo.cli("doctor")
    assert doctor.returncode == 1 and key in doctor.stdout and "Traceback" not in doctor.stderr


@pytest.mark.slow
def test_a_config_that_is_not_utf8(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("project", {"bench.py": "print(1)\n"})
    (tmp_repo.path / ".gitimprove.toml").write_bytes(BASE.encode() + b'name = "\xff\xfe"\n')
    tmp_repo.git("add", "-A")
    tmp_repo.git("commit", "-qm", "config")
    needles = ("not UTF-8 text", "line 3")
    cli_fails_naming(tmp_repo, "measure", needles=needles)
    cli_fails_naming(tmp_repo, "init", needles=needles)
    cli_fails_naming(tmp_repo, "run", "-n", "1", "--agent", "scripted", needles=needles)
    assert tmp_repo.git("for-each-ref", "refs/notes/") == ""


GIT_CONFIG_CASES = [
    ("improve.metric.timeout", "nan", "not a finite number"),
    ("improve.metric.timeout", "-inf", "not a finite number"),
    ("improve.loop.iterations", "9" * 30, "too large"),
    ("improve.loop.iterations", "9" * 5000, "not a finite number"),
    ("improve.metric.min-delta", "500%", "below 100%"),
    ("improve.loop.target", "1e999", "not a finite number"),
    ("improve.agent.timeout", "0", "longer than zero"),
    ("improve.loop.iterations", "\uff11\uff12", "must be a whole number"),
    ("improve.metric.timeout", "\u0663", "is not a duration"),
]


@pytest.mark.slow
def test_git_config_values_name_the_setting(
    tmp_repo: TmpRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp_repo.commit("project", {"bench.py": "print(1)\n", ".gitimprove.toml": BASE})
    for i, (name, value, needle) in enumerate(GIT_CONFIG_CASES):
        tmp_repo.git("config", name, value)
        code, _, err = main_in_process(tmp_repo.path, ["measure"], capsys, monkeypatch)
        assert code == 1 and f"git config {name}" in err and needle in err, err
        if i == 0:  # and once through the real command
            cli_fails_naming(tmp_repo, "measure", needles=(f"git config {name}", needle))
        tmp_repo.git("config", "--unset", name)


@pytest.mark.slow
def test_git_config_bytes_that_are_not_utf8(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("project", {"bench.py": "print(1)\n", ".gitimprove.toml": BASE})
    with open(tmp_repo.path / ".git" / "config", "ab") as fh:
        fh.write(b'[improve "agent"]\n\tcommand = run-\xff\xfe\n')
    cli_fails_naming(
        tmp_repo, "measure", needles=("git config improve.agent.command", "not valid UTF-8")
    )
    doctor = tmp_repo.cli("doctor")
    assert doctor.returncode == 1 and "improve.agent.command" in doctor.stdout
