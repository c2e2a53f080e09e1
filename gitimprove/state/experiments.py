"""The single writer and reader of experiment records (notes on refs/notes/improve).

Reading gives `Experiment`, the typed record (`state/record.py`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gitimprove.git import notes
from gitimprove.git.repo import Repo
from gitimprove.state.record import CRASHES, KEEPS, Experiment
from gitimprove.state.records import fold, make_line, parse_note

__all__ = [
    "CRASHES",
    "KEEPS",
    "Experiment",
    "all_experiments",
    "from_note",
    "get",
    "record",
    "record_many",
    "run_experiments",
]


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
    return Experiment.parse(commit, fold(parsed.lines), parsed.raw)


def get(repo: Repo, commit: str) -> Experiment | None:
    data = notes.read_note(repo, commit)
    if not data:
        return None
    return from_note(commit, data)


def all_experiments(repo: Repo, tip: str | None = None) -> list[Experiment]:
    return [from_note(commit, data) for commit, data in notes.iter_notes(repo, tip)]


def run_experiments(repo: Repo, run: str) -> list[Experiment]:
    """One run's experiments in (iteration, candidate) order; the baseline first."""
    out = [e for e in all_experiments(repo) if e.run == run]
    out.sort(key=lambda e: (e.iteration if e.iteration is not None else -1, e.candidate))
    return out
