"""`git improve init`: configuration, the baseline, and notes.rewriteRef."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitimprove import config
from gitimprove.errors import ConfigError, NotARepositoryError
from gitimprove.git import refs
from gitimprove.git.repo import Repo, open_repo
from gitimprove.loop import inprocess
from gitimprove.loop.measure import (
    Baseline,
    Progress,
    guard_baseline,
    measure_baseline,
    noise_sentence,
    record_baseline,
)
from gitimprove.util.files import atomic_write


@dataclass(frozen=True)
class InitOptions:
    metric: str | None = None
    direction: str | None = None
    name: str | None = None
    extract: str | None = None
    guard: str | None = None
    mutable: list[str] | None = None
    sealed: list[str] | None = None
    agent: str | None = None
    agent_command: str | None = None  # the command of a `command` agent (DESIGN §9)
    runs: int = 3
    force: bool = False


@dataclass(frozen=True)
class InitResult:
    config_path: Path
    created_config: bool
    baseline: Baseline
    metric_name: str
    noise: str
    guard: dict[str, Any]
    sealed: tuple[str, ...] = ()  # `[scope] sealed` as the configuration has it


def needs_questions(opts: InitOptions) -> bool:
    return opts.metric is None


def set_rewrite_ref(repo: Repo) -> None:
    repo.raw.config["notes.rewriteRef"] = refs.NOTES


def init_project(
    opts: InitOptions, *, path: Path | None = None, progress: Progress | None = None
) -> InitResult:
    repo = open_repo(path)
    assert repo.work_tree is not None
    head = repo.head_commit()
    if head is None:
        raise NotARepositoryError(
            "this repository has no commit yet, so there is nothing to measure",
            hint="make a first commit, then run `git improve init` again",
        )
    cfg_path = repo.work_tree / config.CONFIG_FILE
    exists = cfg_path.exists()
    if exists and opts.metric is not None and not opts.force:
        raise ConfigError(
            f"{config.CONFIG_FILE} already exists",
            hint="run `git improve init` without --metric to re-measure with it, or add --force to replace it",
        )
    overrides = repo.config_items("improve.")
    if exists and (opts.metric is None or not opts.force):
        text = config.decode(cfg_path.read_bytes())
        created = False
    else:
        if not opts.metric:
            raise ConfigError(
                "no metric command given",
                hint='pass --metric "<command that prints a number>" (and --yes to ask nothing)',
            )
        if opts.extract:
            config.check_extract(opts.extract, "--extract")
        text = config.render_new(
            metric=opts.metric,
            direction=opts.direction or "lower",
            name=opts.name,
            extract=opts.extract or "auto",
            guard=opts.guard or "",
            mutable=opts.mutable,
            sealed=opts.sealed if opts.sealed is not None else _named(repo, opts),
            agent=opts.agent or "claude",
            agent_command=opts.agent_command,
        )
        created = True
    cfg = config.load_text(text, overrides, path=cfg_path)
    baseline = measure_baseline(repo, cfg, str(head.id), opts.runs, progress)
    guard = guard_baseline(repo, cfg, str(head.id))
    if created and not opts.name and baseline.name and baseline.name != cfg.metric_name:
        # Learn the metric's name from what it printed (a METRIC line or a JSON key).
        text = text.replace("[metric]\n", f"[metric]\nname = {_toml_str(baseline.name)}\n", 1)
        cfg = config.load_text(text, overrides, path=cfg_path)
    if created:
        atomic_write(cfg_path, text)
    set_rewrite_ref(repo)
    record_baseline(repo, cfg, baseline)
    return InitResult(
        cfg_path,
        created,
        baseline,
        cfg.metric_name,
        noise_sentence(baseline.samples),
        guard,
        tuple(str(p) for p in cfg.get("scope", "sealed") or ()),
    )


def _toml_str(value: str) -> str:
    import json

    return json.dumps(value)


def _named(repo: Repo, opts: InitOptions) -> list[str]:
    """What the metric and guard commands name in the work tree (`bench.py`, `tests/**`):
    sealed by default, so that the agent can rewrite neither the benchmark nor the tests."""
    root = repo.work_tree
    assert root is not None

    def kind(path: str) -> str | None:
        found = root / path
        if found.is_symlink() or not found.resolve().is_relative_to(root.resolve()):
            return None
        return "file" if found.is_file() else "folder" if found.is_dir() else None

    def read(path: str) -> bytes | None:
        found = root / path
        if found.is_symlink() or not found.is_file() or found.stat().st_size > 1 << 20:
            return None
        return found.read_bytes()

    return inprocess.measured_paths(opts.metric or "", opts.guard or "", kind, read)
