from __future__ import annotations

from pathlib import Path

import pytest

from gitimprove import config
from gitimprove.errors import ConfigError


def load(tmp_path: Path, text: str, overrides: dict[str, str] | None = None) -> config.Config:
    (tmp_path / ".gitimprove.toml").write_text(text)
    return config.load(tmp_path, overrides)


def test_defaults_and_conversions(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        '[metric]\ncommand = "python b.py"\ntimeout = "90s"\nmin_delta = "1%"\n[loop]\nmax_time = "8h"\n',
    )
    assert cfg.metric_command == "python b.py"
    assert cfg.get("metric", "timeout") == 90.0
    assert cfg.get("metric", "min_delta") == config.MinDelta(0.01, True)
    assert cfg.get("loop", "max_time") == 8 * 3600
    assert cfg.get("loop", "iterations") == 20
    assert cfg.direction == "lower"
    assert cfg.get("scope", "mutable") == ["**"]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[metric\ncommand = "x"', "not valid TOML"),
        (
            '[metric]\ncommand = "x"\ncomand2 = 1\n',
            "unknown key metric.comand2; allowed keys in [metric]: command",
        ),
        ('[metrics]\ncommand = "x"\n', "unknown section [metrics]"),
        (
            '[metric]\ncommand = "x"\ndirection = "down"\n',
            "metric.direction = 'down' is not allowed; use one of: lower, higher",
        ),
        (
            '[metric]\ncommand = "x"\ntimeout = "ten minutes"\n',
            "metric.timeout = 'ten minutes' is not a duration",
        ),
        (
            '[metric]\ncommand = "x"\nmax_runs = "16"\n',
            "metric.max_runs = '16' must be a whole number",
        ),
        ('[metric]\ncommand = "x"\nconfidence = 2\n', "metric.confidence = 2 is out of range"),
        (
            '[metric]\ncommand = "x"\nextract = "xpath:/a"\n',
            "metric.extract = 'xpath:/a' is not allowed",
        ),
        ('[metric]\ncommand = "x"\nextract = "regex:("\n', "does not compile"),
        (
            '[metric]\ncommand = "x"\n[scope]\nsealed = "bench.py"\nmutable = 3\n',
            "scope.mutable = 3 must be a list",
        ),
        ('[guard]\ncommand = "pytest"\n', "metric.command is required"),
        ('[metric]\ncommand = "x"\nmin_delta = "lots"\n', "metric.min_delta = 'lots'"),
        (
            '[metric]\ncommand = "x"\n[capture]\nmeasure_on_commit = "yes"\n',
            "must be true or false",
        ),
    ],
)
def test_bad_config_names_key_and_allowed(tmp_path: Path, text: str, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, text)
    assert needle in str(info.value)


def test_missing_file_says_how_to_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="git improve init"):
        config.load(tmp_path)


def test_git_config_overrides_file(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        '[metric]\ncommand = "x"\n[agent]\nname = "claude"\n',
        {
            "improve.agent.name": "codex",
            "improve.loop.max-cost-usd": "5.5",
            "improve.loop.iterations": "3",
        },
    )
    assert cfg.get("agent", "name") == "codex"
    assert cfg.get("loop", "max_cost_usd") == 5.5
    assert cfg.get("loop", "iterations") == 3
    with pytest.raises(ConfigError, match=r"improve\.agent\.nmae"):
        load(tmp_path, '[metric]\ncommand = "x"\n', {"improve.agent.nmae": "codex"})
    with pytest.raises(ConfigError, match=r"agent\.name = 'gpt'"):
        load(tmp_path, '[metric]\ncommand = "x"\n', {"improve.agent.name": "gpt"})


def test_rendered_config_loads_and_keeps_comments(tmp_path: Path) -> None:
    text = config.render_new(
        metric="python bench.py", direction="higher", guard="pytest -q", sealed=["bench.py"]
    )
    assert "# lower | higher" in text
    cfg = config.load_text(text)
    assert cfg.direction == "higher"
    assert cfg.guard_command == "pytest -q"
    assert cfg.get("scope", "sealed") == ["bench.py"]


def test_durations() -> None:
    assert config.parse_duration("10m") == 600
    assert config.parse_duration("1.5h") == 5400
    assert config.parse_duration(30) == 30
    for bad in ("0s", "-1m", "10 minutes", True):
        with pytest.raises(ConfigError):
            config.parse_duration(bad)
