"""`git improve import FILE`: Karpathy's results.tsv, autoresearch's TSV (every era) and
pi-autoresearch's JSONL (parsing in `import_formats`).

The file is parsed and validated whole before anything is written: a garbage row is an error
naming the line, and nothing is imported. Every row becomes its own record, even when several
rows share one commit (pi logs every discard on the commit it started from): a row whose
commit exists becomes an import record in that commit's note (a note line carrying the row's
`import_id`, folded apart from the loop's own record); a row that names no commit (`-`,
`baseline`, `pending`) or whose commit is gone is kept on the memory branch under
`imports/`. The `import_id` is a hash of the file, the row's place in it and its content, so
importing the same file again adds nothing, and a later snapshot of a growing file adds only
its new rows, to the same run. pi segments (a new `config` line) become runs of their own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitimprove.errors import ImportFormatError
from gitimprove.state.import_formats import ImportRow, Parsed, parse_text
from gitimprove.util.clock import utc_now


def parse_file(path: Path, *, metric_column: str | None = None) -> Parsed:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImportFormatError(f"cannot read {path}: {exc.strerror}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ImportFormatError(f"{path} is not UTF-8 text") from None
    return parse_text(text, str(path), name=path.name, metric_column=metric_column)


@dataclass(frozen=True)
class ImportReport:
    rows: int
    as_notes: int
    kept_aside: int
    already: int
    skipped: int
    runs: tuple[str, ...]
    fmt: str
    direction: str | None = None
    direction_from: str = ""  # "file", "inferred", or "" when the file does not tell


def run_name(parsed: Parsed, row: ImportRow) -> str:
    base = f"import-{parsed.key[:8]}"
    return base if row.segment == 0 else f"{base}-{row.segment + 1}"


_CLIP = 64 * 1024  # characters kept of a text that would make its row unreadable


def fit(fields: dict[str, Any]) -> dict[str, Any]:
    """The row as stored: a text so long the row would pass the reader's limit of one record
    is clipped (saying so), longest first, so every imported row can be read back."""
    from gitimprove.util import reader

    def size(d: dict[str, Any]) -> int:
        return len(json.dumps(d, ensure_ascii=False).encode("utf-8"))

    out = dict(fields)
    budget = reader.MAX_BYTES // 2  # room for the fields a note line adds
    while size(out) > budget:
        texts = [(len(v), k) for k, v in out.items() if isinstance(v, str) and len(v) > _CLIP]
        if not texts:
            break
        _, key = max(texts)
        text = out[key]
        out[key] = text[:_CLIP] + f" …[clipped from {len(text)} characters]"
    return out


def import_file(repo: Any, path: Path, *, metric_column: str | None = None) -> ImportReport:
    """Parse `path` whole, then write notes and the imports/ entry. Idempotent."""
    from gitimprove.git import memory
    from gitimprove.redaction import redact
    from gitimprove.state import experiments

    parsed = parse_file(path, metric_column=metric_column)
    name = redact(path.name)  # a CI artifact's name may carry a token: kept masked
    seen: set[str] = set()
    for rec in experiments.all_import_records(repo):
        seen.add(str(rec.import_id))
    for old in imported_rows(repo):
        seen.add(str(old.get("import_id")))
    to_notes: list[tuple[str, str, dict[str, Any]]] = []
    aside: list[dict[str, Any]] = []
    already = 0
    now = utc_now()
    runs: list[str] = []
    for row in parsed.rows:
        if row.fields["import_id"] in seen:
            already += 1
            continue
        seen.add(row.fields["import_id"])
        run = run_name(parsed, row)
        if run not in runs:
            runs.append(run)
        source = {**row.fields["source"], "format": parsed.fmt, "file": name}
        fields = fit({**row.fields, "run": run, "source": source})
        full = _resolve(repo, row.commit) if row.commit else None
        if full:
            to_notes.append((full, "create", fields))
        else:
            aside.append({"v": 1, "commit": row.commit, "ts": now, **fields})
    if to_notes:
        experiments.record_many(repo, to_notes)
    if aside:
        body = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in aside)
        digest = hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]
        memory.add_entries(
            repo,
            {f"imports/{parsed.key}-{digest}.jsonl": body},
            message=f"gitimprove: import {name}",
        )
    return ImportReport(
        len(parsed.rows),
        len(to_notes),
        len(aside),
        already,
        parsed.skipped,
        tuple(runs),
        parsed.fmt,
        parsed.direction,
        parsed.direction_from,
    )


def _resolve(repo: Any, short: str) -> str | None:
    try:
        commit = repo.commit(short)
    except Exception:
        return None
    full = str(commit.id)
    return full if full.startswith(short) else None


def imported_experiments(repo: Any) -> list[Any]:
    """Every imported row as a record (onto commits, and kept aside), newest version of each
    row: a row still `pending` in one snapshot of a file and measured in a later one is the
    measured one."""
    from gitimprove.state import experiments
    from gitimprove.state.record import Experiment

    found = [*experiments.all_import_records(repo)]
    found += [Experiment.from_row(r) for r in imported_rows(repo)]
    return latest_versions(found)


def latest_versions(records: list[Any]) -> list[Any]:
    """One record per (run, row of the file): the one imported last. Records that are no
    imported row pass through."""
    best: dict[tuple[str, int], Any] = {}
    out: list[Any] = []
    for rec in records:
        source = rec.state.get("source")
        row = source.get("row") if isinstance(source, dict) else None
        if not isinstance(row, int) or not rec.run:
            out.append(rec)
            continue
        key = (rec.run, row)
        if key not in best or rec.ts >= best[key].ts:
            best[key] = rec
    return out + list(best.values())


def imported_rows(repo: Any, tip: str | None = None) -> Iterator[dict[str, Any]]:
    """Rows kept under imports/ on the memory branch (no commit, or their commit is gone),
    read by the tolerant reader: a row that cannot be read is skipped and counted by
    `doctor`."""
    from gitimprove.git import memory
    from gitimprove.state.records import imported_rows_of

    yield from imported_rows_of(data for _, data in memory.iter_entries(repo, "imports/", tip=tip))
