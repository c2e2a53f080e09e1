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
            "metric.max_runs = '16': use \"auto\" or a whole number",
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
        (
            '[metric]\ncommand = "x"\n[loop]\nconfirm_deterministic = -1\n',
            "loop.confirm_deterministic = -1 is out of range",
        ),
        (
            '[metric]\ncommand = "x"\n[loop]\nconfirm_deterministic = "yes"\n',
            "loop.confirm_deterministic = 'yes' must be a whole number",
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


def test_git_config_key_spellings_all_name_the_toml_key(tmp_path: Path) -> None:
    base = '[metric]\ncommand = "x"\n'
    for name in (
        "improve.loop.plateau-patience",
        "improve.loop.plateaupatience",  # git's lower-cased form of plateauPatience
        "improve.loop.plateau_patience",  # only a programmatic caller could pass this
        "Improve.Loop.Plateau-Patience",
    ):
        cfg = load(tmp_path, base, {name: "7"})
        assert cfg.get("loop", "plateau_patience") == 7, name
    assert load(tmp_path, base, {"improve.metric.max-runs": "32"}).get("metric", "max_runs") == 32
    assert (
        load(tmp_path, base, {"improve.metric.max-runs": "auto"}).get("metric", "max_runs") is None
    )
    with pytest.raises(ConfigError, match="plateau-patience"):
        load(tmp_path, base, {"improve.loop.plateau-patiense": "7"})


def test_stall_defaults_reach_the_ladder_top_first_and_init_writes_them(tmp_path: Path) -> None:
    cfg = load(tmp_path, '[metric]\ncommand = "x"\n')
    stuck, plateau = cfg.get("loop", "stuck_after"), cfg.get("loop", "plateau_patience")
    assert 5 * stuck < plateau  # level 5 (stop with a diagnosis) can fire before the plateau
    text = config.render_new(metric="python bench.py")
    assert f"stuck_after = {stuck}" in text and f"plateau_patience = {plateau}" in text
    assert 'max_runs = "auto"' in text
    assert config.load_text(text).get("loop", "plateau_patience") == plateau
    assert "confirm_deterministic = 0" in text  # one run per deterministic decision
    assert config.load_text(text).get("loop", "confirm_deterministic") == 0


def test_every_key_is_documented_with_its_default() -> None:
    doc = (Path(__file__).parents[1] / "docs" / "config.md").read_text()
    for section, keys in config.SCHEMA.items():
        for key in keys:
            row = next(
                (
                    ln
                    for ln in doc.splitlines()
                    if ln.startswith((f"| `{key}` |", f"| `{section}.{key}` |"))
                ),
                None,
            )
            assert row is not None, f"{section}.{key} is not in docs/config.md"
    for key, default in (
        ("stuck_after", config.STUCK_AFTER),
        ("plateau_patience", config.PLATEAU_PATIENCE),
    ):
        assert f"| `{key}` | `{default}` |" in doc
