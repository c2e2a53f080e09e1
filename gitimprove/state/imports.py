"""`git improve import FILE`: Karpathy's results.tsv, autoresearch's TSV (every era: columns
found by header name, the `# metric_direction` line) and pi-autoresearch's JSONL.

The file is parsed and validated whole before anything is written: a missing column or a
garbage row is an error naming the line, and nothing is imported. Rows whose commit exists
become notes on it; rows whose commit is gone are kept on the memory branch under
`imports/<source-hash>.jsonl`. Every row carries an `import_id` (a hash of its format and
content), so importing the same rows again adds nothing.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitimprove.errors import ImportFormatError
from gitimprove.util.clock import utc_now

_STATUS_IN = {
    "keep": "keep",
    "kept": "keep",
    "keep (reworked)": "keep-reworked",
    "keep-reworked": "keep-reworked",
    "discard": "discard",
    "discarded": "discard",
    "crash": "crash",
    "crashed": "crash",
    "baseline": "baseline",
    "no-op": "no-op",
    "metric-error": "metric-error",
    "checks_failed": "guard-fail",
    "guard-fail": "guard-fail",
    "timeout": "timeout",
    "pending": "pending",
}
_FINE = (
    "guard-fail",
    "timeout",
    "sealed",
    "out-of-scope",
    "duplicate",
    "no-op",
    "metric-error",
    "pending",
    "crash",
    "discard",
)
_NOT_METRIC = {
    "iteration",
    "commit",
    "delta",
    "guard",
    "status",
    "description",
    "memory_gb",
    "run",
    "timestamp",
}


@dataclass
class ImportRow:
    line: int
    commit: str
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass
class Parsed:
    fmt: str
    source_hash: str
    rows: list[ImportRow]
    direction: str | None = None
    metric_name: str | None = None


def _number(text: str, lineno: int, column: str, path: str) -> float | None:
    t = text.strip()
    if t in ("", "-", "nan", "NaN", "n/a", "NA"):
        return None
    try:
        value = float(t)
    except ValueError:
        raise ImportFormatError(
            f"{path}:{lineno}: column {column!r} holds {text!r}, not a number",
            hint="fix or remove that row; nothing was imported",
        ) from None
    return value if math.isfinite(value) else None


def _status(text: str, lineno: int, path: str) -> str:
    s = _STATUS_IN.get(text.strip().lower())
    if s is None:
        raise ImportFormatError(
            f"{path}:{lineno}: unknown status {text!r}; expected one of keep, discard, crash, "
            "baseline, keep (reworked), no-op, metric-error, checks_failed",
            hint="fix or remove that row; nothing was imported",
        )
    return s


def _finer(status: str, description: str) -> tuple[str, str]:
    """Recover our finer status from `[guard-fail] …` written by `log --format tsv`."""
    if description.startswith("["):
        tag, sep, rest = description[1:].partition("]")
        if sep and tag in _FINE:
            return tag, rest.strip()
    return status, description


def _row_id(fmt: str, parts: list[str] | dict[str, Any]) -> str:
    blob = json.dumps([fmt, parts], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def parse_file(path: Path) -> Parsed:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImportFormatError(f"cannot read {path}: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ImportFormatError(f"{path} is not UTF-8 text") from None
    source_hash = hashlib.sha256(data).hexdigest()[:16]
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    if first.lstrip().startswith("{"):
        return _parse_jsonl(text, str(path), source_hash)
    return _parse_tsv(text, str(path), source_hash)


def _parse_tsv(text: str, path: str, source_hash: str) -> Parsed:
    direction = None
    header: list[str] | None = None
    rows: list[ImportRow] = []
    fmt = "tsv"
    metric_col = None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            key, _, rest = line[1:].partition(":")
            if key.strip() == "metric_direction":
                v = rest.strip()
                if v not in ("lower_is_better", "higher_is_better"):
                    raise ImportFormatError(
                        f"{path}:{lineno}: metric_direction {v!r} is not lower_is_better or higher_is_better"
                    )
                direction = "lower" if v.startswith("lower") else "higher"
            continue
        cells = line.split("\t")
        if header is None:
            header = [c.strip() for c in cells]
            missing = [c for c in ("commit", "status") if c not in header]
            candidates = [c for c in header if c not in _NOT_METRIC]
            if "metric" in header:
                metric_col = "metric"
            elif len(candidates) == 1:
                metric_col = candidates[0]
            if missing or metric_col is None:
                need = ", ".join(missing + ([] if metric_col else ["a metric column"]))
                raise ImportFormatError(
                    f"{path}:{lineno}: the header lacks {need}; found columns: {', '.join(header)}",
                    hint="a results TSV has a header row like `commit<TAB>val_bpb<TAB>memory_gb<TAB>status<TAB>description`",
                )
            fmt = (
                "autoresearch-tsv"
                if "iteration" in header or metric_col == "metric"
                else "karpathy-tsv"
            )
            continue
        if len(cells) != len(header):
            # A description may itself contain tabs: join the overflow into the last column.
            if len(cells) > len(header) and header[-1] == "description":
                cells = [*cells[: len(header) - 1], " ".join(cells[len(header) - 1 :])]
            else:
                raise ImportFormatError(
                    f"{path}:{lineno}: {len(cells)} columns where the header has {len(header)}",
                    hint="fix or remove that row; nothing was imported",
                )
        rec = dict(zip(header, cells, strict=True))
        commit = rec["commit"].strip()
        if not commit or not all(c in "0123456789abcdefABCDEF" for c in commit) or len(commit) < 4:
            raise ImportFormatError(
                f"{path}:{lineno}: {commit!r} is not a commit id",
                hint="fix or remove that row; nothing was imported",
            )
        assert metric_col is not None
        value = _number(rec[metric_col], lineno, metric_col, path)
        status = _status(rec["status"], lineno, path)
        description = rec.get("description", "").strip()
        status, description = _finer(status, description)
        if status == "crash" and value == 0.0:
            value = None  # Karpathy logs crashes as 0.000000
        fields: dict[str, Any] = {"status": status, "description": description}
        metric: dict[str, Any] = {
            "name": metric_col if metric_col != "metric" else None,
            "value": value,
            "samples": [value] if value is not None else [],
        }
        if direction:
            metric["direction"] = direction
        fields["metric"] = {k: v for k, v in metric.items() if v is not None or k == "value"}
        if "iteration" in rec:
            it = rec["iteration"].strip()
            if it.isdigit():
                fields["iteration"] = int(it)
        else:
            fields["iteration"] = len(rows)
        if "memory_gb" in rec:
            mem = _number(rec["memory_gb"], lineno, "memory_gb", path)
            if mem is not None:
                fields["metrics"] = {"memory_gb": mem}
        if rec.get("guard", "").strip() in ("pass", "fail"):
            fields["guard"] = {"status": rec["guard"].strip()}
        rows.append(ImportRow(lineno, commit.lower(), fields))
    if header is None:
        raise ImportFormatError(
            f"{path}: no header row and no results", hint="is this a results TSV?"
        )
    return Parsed(fmt, source_hash, _with_ids(fmt, rows), direction, metric_col)


def _parse_jsonl(text: str, path: str, source_hash: str) -> Parsed:
    direction = None
    name = None
    rows: list[ImportRow] = []
    segment = -1
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            raise ImportFormatError(
                f"{path}:{lineno}: not a JSON object",
                hint="fix or remove that line; nothing was imported",
            ) from None
        if not isinstance(obj, dict):
            raise ImportFormatError(
                f"{path}:{lineno}: not a JSON object",
                hint="fix or remove that line; nothing was imported",
            )
        if obj.get("type") == "config":
            segment += 1
            d = obj.get("bestDirection") or obj.get("direction")
            if d not in (None, "lower", "higher"):
                raise ImportFormatError(f"{path}:{lineno}: direction {d!r} is not lower or higher")
            direction = d or direction
            name = obj.get("metricName") or obj.get("metric_name") or name
            continue
        commit = obj.get("commit")
        if (
            not isinstance(commit, str)
            or not commit.strip()
            or not all(c in "0123456789abcdefABCDEF" for c in commit.strip())
        ):
            raise ImportFormatError(
                f"{path}:{lineno}: {commit!r} is not a commit id",
                hint="fix or remove that line; nothing was imported",
            )
        raw_status = obj.get("status")
        if not isinstance(raw_status, str):
            raise ImportFormatError(
                f"{path}:{lineno}: no status", hint="fix or remove that line; nothing was imported"
            )
        status = _status(raw_status, lineno, path)
        value_raw = obj.get("metric")
        if value_raw is not None and (
            isinstance(value_raw, bool) or not isinstance(value_raw, int | float)
        ):
            raise ImportFormatError(
                f"{path}:{lineno}: metric {value_raw!r} is not a number",
                hint="fix or remove that line; nothing was imported",
            )
        value = float(value_raw) if value_raw is not None and math.isfinite(value_raw) else None
        description, status_desc = _finer(status, str(obj.get("description") or ""))[::-1]
        fields: dict[str, Any] = {
            "status": status_desc,
            "description": description,
            "iteration": obj["run"] if isinstance(obj.get("run"), int) else len(rows),
            "metric": {
                "name": name,
                "value": value,
                "samples": [value] if value is not None else [],
            },
        }
        if direction:
            fields["metric"]["direction"] = direction
        if isinstance(obj.get("metrics"), dict):
            fields["metrics"] = {
                k: v
                for k, v in obj["metrics"].items()
                if isinstance(v, int | float) and not isinstance(v, bool)
            }
        if segment > 0:
            fields["segment"] = segment
        ts = obj.get("timestamp")
        if isinstance(ts, int | float) and not isinstance(ts, bool):
            seconds = ts / 1000.0 if ts > 1e11 else float(ts)
            import datetime as _dt

            fields["started"] = _dt.datetime.fromtimestamp(seconds, _dt.UTC).strftime(
                "%Y-%m-%dT%H:%M:%S.%fZ"
            )
        rows.append(ImportRow(lineno, commit.strip().lower(), fields))
    return Parsed("pi-jsonl", source_hash, _with_ids("pi-jsonl", rows), direction, name)


def _with_ids(fmt: str, rows: list[ImportRow]) -> list[ImportRow]:
    for row in rows:
        row.fields["import_id"] = _row_id(fmt, {"commit": row.commit, **row.fields})
    return rows


# --- writing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportReport:
    rows: int
    as_notes: int
    kept_aside: int
    already: int
    source_hash: str
    fmt: str


def import_file(repo: Any, path: Path) -> ImportReport:
    """Parse `path` whole, then write notes and the imports/ entry. Idempotent."""
    from gitimprove.git import memory
    from gitimprove.state import experiments

    parsed = parse_file(path)
    run = f"import-{parsed.source_hash[:8]}"
    seen: set[str] = set()
    for exp in experiments.all_experiments(repo):
        iid = exp.import_id
        if isinstance(iid, str):
            seen.add(iid)
    for old in imported_rows(repo):
        seen.add(str(old.get("import_id")))
    to_notes: list[tuple[str, str, dict[str, Any]]] = []
    aside: list[dict[str, Any]] = []
    already = 0
    now = utc_now()
    for row in parsed.rows:
        if row.fields["import_id"] in seen:
            already += 1
            continue
        seen.add(row.fields["import_id"])
        fields = {
            **row.fields,
            "run": run,
            "source": {
                "format": parsed.fmt,
                "file": path.name,
                "line": row.line,
                "hash": parsed.source_hash,
            },
        }
        full = _resolve(repo, row.commit)
        if full:
            to_notes.append((full, "create", fields))
        else:
            aside.append({"v": 1, "commit": row.commit, "ts": now, **fields})
    if to_notes:
        experiments.record_many(repo, to_notes)
    if aside:
        body = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in aside)
        name = f"imports/{parsed.source_hash}.jsonl"
        if memory.read_entry(repo, name) is not None:
            name = f"imports/{parsed.source_hash}-{hashlib.sha256(body.encode()).hexdigest()[:8]}.jsonl"
        memory.add_entries(repo, {name: body}, message=f"gitimprove: import {path.name}")
    return ImportReport(
        len(parsed.rows), len(to_notes), len(aside), already, parsed.source_hash, parsed.fmt
    )


def _resolve(repo: Any, short: str) -> str | None:
    try:
        commit = repo.commit(short)
    except Exception:
        return None
    full = str(commit.id)
    return full if full.startswith(short) else None


def imported_rows(repo: Any, tip: str | None = None) -> Iterator[dict[str, Any]]:
    """Rows kept under imports/ on the memory branch (their commits no longer exist)."""
    from gitimprove.git import memory

    for _, data in memory.iter_entries(repo, "imports/", tip=tip):
        for line in data.decode("utf-8", errors="replace").splitlines():
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and obj.get("v", 1) <= 1:
                obj.pop("v", None)
                obj["gone"] = True
                yield obj
