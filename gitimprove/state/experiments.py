"""The single writer and reader of experiment records (notes on refs/notes/improve)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gitimprove.git import notes
from gitimprove.git.repo import Repo
from gitimprove.state.records import fold, make_line, parse_note


@dataclass
class Experiment:
    commit: str
    state: dict[str, Any]
    raw: list[str] = field(default_factory=list)

    @property
    def status(self) -> str | None:
        value = self.state.get("status")
        return str(value) if value is not None else None

    @property
    def value(self) -> float | None:
        metric = self.state.get("metric")
        if isinstance(metric, Mapping):
            v = metric.get("value")
            if isinstance(v, int | float) and not isinstance(v, bool):
                return float(v)
        return None


def record(repo: Repo, commit: str, fields: Mapping[str, Any], *, op: str = "create") -> None:
    notes.append_lines(
        repo, {commit: [make_line(op, fields)]}, message=f"gitimprove: {op} {commit[:10]}"
    )


def record_many(
    repo: Repo, entries: Iterable[tuple[str, str, Mapping[str, Any]]], *, skip_present: bool = False
) -> int:
    """Append (commit, op, fields) records in one notes commit; returns lines written."""
    batch: dict[str, list[str]] = {}
    for commit, op, fields in entries:
        batch.setdefault(commit, []).append(make_line(op, fields))
    return notes.append_lines(
        repo, batch, message="gitimprove: record experiments", skip_present=skip_present
    )


def from_note(commit: str, data: bytes) -> Experiment:
    parsed = parse_note(data.decode("utf-8", errors="replace"))
    return Experiment(commit, fold(parsed.lines), parsed.raw)


def get(repo: Repo, commit: str) -> Experiment | None:
    data = notes.read_note(repo, commit)
    if not data:
        return None
    return from_note(commit, data)


def all_experiments(repo: Repo, tip: str | None = None) -> list[Experiment]:
    return [from_note(commit, data) for commit, data in notes.iter_notes(repo, tip)]
