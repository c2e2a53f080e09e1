"""The single writer and reader of experiment records (notes on refs/notes/improve).

Reading gives `Experiment`, the typed record (`state/record.py`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gitimprove.git import notes, refs
from gitimprove.git.repo import Repo
from gitimprove.state import signing
from gitimprove.state.record import CRASHES, KEEPS, Experiment
from gitimprove.state.records import fold, make_line, split_note, split_notes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitimprove.state.records import Split

__all__ = [
    "CRASHES",
    "KEEPS",
    "Experiment",
    "all_experiments",
    "all_import_records",
    "from_note",
    "get",
    "imported_on",
    "record",
    "record_many",
    "records_of_note",
    "run_experiments",
]


def record(
    repo: Repo, commit: str, fields: Mapping[str, Any], *, op: str = "create", sign: bool = False
) -> None:
    """Append one record; `sign` for the harness's own (state/signing.py)."""
    key = signing.load_key(repo.improve_dir) if sign else None
    notes.append_lines(
        repo, {commit: [make_line(op, fields, key=key)]}, message=f"gitimprove: {op} {commit[:10]}"
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


def _split(data: bytes) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]], list[str]]:
    """A note's lines: own, imported by `import_id`, unreadable (records.split_note)."""
    return split_note(data)


def from_note(commit: str, data: bytes) -> Experiment:
    own, _, raw = _split(data)
    return Experiment.parse(commit, fold(own), raw)


def records_of_note(commit: str, data: bytes) -> tuple[Experiment | None, list[Experiment]]:
    """The loop's record on `commit` (None when the note holds only imported rows) and every
    imported row on it, each folded on its own."""
    own, imported, raw = _split(data)
    exp = Experiment.parse(commit, fold(own), raw) if own or raw else None
    return exp, [Experiment.parse(commit, fold(lines)) for lines in imported.values()]


def get(repo: Repo, commit: str) -> Experiment | None:
    data = notes.read_note(repo, commit)
    if not data:
        return None
    exp, _ = records_of_note(commit, data)
    return exp


# The notes at one tip never change: `status` asks for them four times, read them once.
_last_read: tuple[tuple[str, str], list[Split]] | None = None


def _all_notes(repo: Repo, tip: str | None) -> list[Split]:
    global _last_read
    tip = tip or repo.ref_target(refs.NOTES)
    if tip is None:
        return []
    key = (str(repo.common_dir), tip)
    last = _last_read
    if last is not None and last[0] == key:
        return last[1]
    found = _split_by_git(repo, tip)
    if found is None:
        found = split_notes(notes.iter_notes(repo, tip))
    _last_read = (key, found)
    return found


def _split_by_git(repo: Repo, tip: str) -> list[Split] | None:
    """The notes read by one git pipeline while they are parsed (faster than walking ten
    thousand blobs through pygit2); None when git cannot answer."""
    from gitimprove.git import catfile
    from gitimprove.util import gitdir

    work_tree = str(repo.work_tree) if repo.work_tree else None
    loc = gitdir.Location(str(repo.git_dir), str(repo.common_dir), work_tree)
    from gitimprove.state.noteentries import commit_of

    listed = catfile.tree_blobs(loc, tip)
    if listed is None:
        return None
    named = [(commit, blob) for path, blob in listed if (commit := commit_of(path))]
    try:  # only the notes: not the digests stored beside them (state/noteindex.py)
        return split_notes(
            zip(
                [c for c, _ in named],
                catfile.stream_blobs(loc, [b for _, b in named]),
                strict=True,
            )
        )
    except catfile.Unanswered:
        return None


def all_experiments(repo: Repo, tip: str | None = None) -> list[Experiment]:
    """The loop's records (imported rows are not experiments of any run of ours)."""
    return [
        Experiment.parse(commit, fold(own), raw)
        for commit, own, _, raw in _all_notes(repo, tip)
        if own or raw
    ]


def imported_on(repo: Repo, commit: str) -> list[Experiment]:
    """The rows imported onto `commit` (results files name it), each a record of its own."""
    data = notes.read_note(repo, commit)
    return records_of_note(commit, data)[1] if data else []


def all_import_records(repo: Repo, tip: str | None = None) -> list[Experiment]:
    return [
        Experiment.parse(commit, fold(lines))
        for commit, _, imported, _ in _all_notes(repo, tip)
        for lines in imported.values()
    ]


def run_experiments(
    repo: Repo, run: str | None, every: list[Experiment] | None = None
) -> list[Experiment]:
    """One run's experiments in (iteration, candidate) order; the baseline first. `None`:
    the commits measured outside any loop (`init`'s baseline, `git improve measure`).
    `every`: the records already read (`all_experiments`), not read again."""
    records = all_experiments(repo) if every is None else every
    out = [e for e in records if (e.run or None) == run]
    out.sort(key=lambda e: (e.iteration if e.iteration is not None else -1, e.candidate))
    return out
