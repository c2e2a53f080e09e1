"""The TSV formats' own read path: each row reduced to a digest of what `log --format tsv`
needs (its cells, and how it is selected, ordered and checked), kept by note blob in a cache
of its own (`note-digests`), so a `log` after one new experiment loads ten thousand small
tuples rather than the rows, and a cold one parses the notes on every core and sends back
digests only (DESIGN §13). The rows path (`noterows`) stays the reference: what it gives,
rendered by `tsv_export.render`, is what this gives, byte for byte (the tests compare both).
"""

from __future__ import annotations

from gitimprove.state import notecache, noteentries, noterows, tsv_export
from gitimprove.util import gitdir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from gitimprove.state.tsv_export import Piece

    Row = dict[str, Any]
    # run as `--run` selects it ("" for none), iteration (for `--round`), the direction and
    # the metric name the row states, its warnings (unreadable lines), its place in the
    # order (within its run, and its time: a run starts at its earliest row), for an imported
    # row (run, its row in the file) (only the latest version of one is shown), its piece
    Digest = tuple[
        str,
        int | None,
        str | None,
        str | None,
        tuple[str, ...],
        tuple[int, int, int, str],
        str,
        tuple[str, int] | None,
        Piece | None,
    ]
    Entry = tuple[Digest | None, list[Digest]]

NAME = "note-digests"


def digest(row: Row) -> Digest:
    """What the TSV view needs of `row` (see `Digest`)."""
    it = row.get("iteration")
    metric = row.get("metric")
    said = name = None
    if type(metric) is dict:
        said = metric.get("direction")
        said = said if said == "lower" or said == "higher" else None
        name = metric.get("name")
        name = name if type(name) is str and name else None
    raw = row.get("raw")
    warnings: tuple[str, ...] = ()
    if type(raw) is list or type(raw) is tuple:
        commit = str(row.get("commit") or "")[:10]
        warnings = tuple(
            f"warning: unreadable line in the note on {commit}, skipped (kept as is): {line}\n"
            for line in raw
        )
    run, key, ts = noterows.place(row)
    latest, _ = noterows._version_of(row)
    iteration = it if type(it) is int else None
    return (run, iteration, said, name, warnings, key, ts, latest, tsv_export.piece(row))


def entries_of(note_blobs: Iterable[tuple[str, bytes]]) -> list[Entry]:
    """Each note's (own digest or None, imported digests), from (commit, content) pairs."""
    return [
        (None if own is None else digest(own), [digest(r) for r in imported])
        for own, imported in noterows._entries(note_blobs)
    ]


DIGESTS = noteentries.Kind(
    NAME, entries_of, lambda entry, blob: notecache.usable(entry, blob, tuple), stored=True
)


def digests(loc: gitdir.Location, use_cache: bool = True) -> list[Digest] | None:
    """Every experiment's digest (notes, then imports), in display order; None when git
    cannot answer (the caller reads the rows)."""
    from gitimprove.git import catfile, refs

    notes_tip = gitdir.read_ref(loc, refs.NOTES)
    memory_tip = gitdir.read_ref(loc, refs.MEMORY)
    imported = noterows._imports_by_git(loc, memory_tip) if memory_tip else []
    if imported is None:
        return None
    try:
        found = noteentries.entries(loc, notes_tip, use_cache, DIGESTS) if notes_tip else []
    except catfile.Unanswered:
        return None
    return noterows.assemble(found, imported, digest, _version_of, _order)


def _version_of(d: Digest) -> tuple[tuple[str, int] | None, str]:
    return d[7], d[6]


def _order(found: list[Digest]) -> list[Digest]:
    """`noterows.order` over digests (a stored one holds its key as a list)."""
    return noterows.in_order(found, [(d[0], (*d[5],), d[6]) for d in found])


def render(
    found: list[Digest], fmt: str, run: str | None, round_: int | None
) -> tuple[str, str] | None:
    """(stdout, stderr) of `log --format FMT [--run RUN] [--round N]`; None when the selected
    runs disagree on direction or metric (the rows path refuses them, naming the runs)."""
    if run is not None:
        found = [d for d in found if d[0] == run]
    if round_ is not None:
        found = [d for d in found if d[1] == round_]
    runs: dict[str, tuple[str | None, str | None]] = {}
    direction: str | None = None
    for d in found:
        group, said, name = d[0], d[2], d[3]
        known = runs.get(group, (None, None))
        runs[group] = (known[0] or said, known[1] or name)
        direction = said or direction
    if len({x for x, _ in runs.values() if x}) > 1 or len({m for _, m in runs.values() if m}) > 1:
        return None
    err = "".join(w for d in found for w in d[4])
    return tsv_export.render_pieces([d[8] for d in found], direction, fmt), err
