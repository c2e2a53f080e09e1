"""pi-autoresearch's `autoresearch.jsonl` (`.auto/log.jsonl`), read as pi itself reads it.

A `config` line starts a new segment once the current one has results (pi's own
`reconstructJsonlState`), and each segment becomes a run of its own; lines that are no
result (`{"type":"hook",…}` written by pi's before/after hooks) are skipped; a metric of 0
is pi's "no measurement" and is dropped; `asi` is kept whole.
"""

from __future__ import annotations

import json
import math
from typing import Any

from gitimprove.errors import ImportFormatError
from gitimprove.state.import_formats import (
    ImportRow,
    Parsed,
    commit_cell,
    file_key,
    finer,
    iso_time,
    map_status,
    row_id,
)

# --- pi-autoresearch JSONL --------------------------------------------------------------------

_PI_KNOWN = {"run", "commit", "metric", "metrics", "status", "description", "timestamp"}
_PI_KNOWN |= {"segment", "confidence", "asi", "type"}


def parse_jsonl(text: str, path: str, name: str) -> Parsed:
    direction: str | None = None
    metric_name: str | None = None
    rows: list[ImportRow] = []
    segment = 0
    seg_rows = 0
    skipped = 0
    first_config = ""
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            obj = None
        if not isinstance(obj, dict):
            raise ImportFormatError(
                f"{path}:{lineno}: not a JSON object",
                hint="fix or remove that line; nothing was imported",
            )
        if obj.get("type") == "config":
            first_config = first_config or line.strip()
            if seg_rows:  # pi starts a new segment only once the current one has results
                segment += 1
                seg_rows = 0
            d = obj.get("bestDirection") or obj.get("direction")
            if d not in (None, "lower", "higher"):
                raise ImportFormatError(f"{path}:{lineno}: direction {d!r} is not lower or higher")
            direction = d or "lower"
            name_ = obj.get("metricName") or obj.get("metric_name")
            metric_name = name_ if isinstance(name_, str) else metric_name
            continue
        if "type" in obj or not ({"run", "metric", "status"} & obj.keys()):
            skipped += 1  # hook lines ({"type":"hook",…}) and anything else that is no result
            continue
        rows.append(_pi_row(obj, lineno, len(rows), segment, direction, metric_name, path, line))
        seg_rows += 1
    key = file_key(name, first_config, next((json.dumps(r.fields.get("source")) for r in rows), ""))
    for row in rows:
        row.fields["import_id"] = row_id(key, row.fields["source"]["row"], row.fields.pop("_text"))
    return Parsed("pi-jsonl", key, rows, direction, metric_name, skipped)


def _pi_row(
    obj: dict[str, Any],
    lineno: int,
    index: int,
    segment: int,
    direction: str | None,
    metric_name: str | None,
    path: str,
    line: str,
) -> ImportRow:
    raw_commit = obj.get("commit")
    commit, commit_text = commit_cell(str(raw_commit or ""), lineno, path)
    raw_status = obj.get("status")
    status_text = raw_status.strip() if isinstance(raw_status, str) else "keep"
    status = map_status(status_text)
    value_raw = obj.get("metric")
    if value_raw is not None and (
        isinstance(value_raw, bool) or not isinstance(value_raw, int | float)
    ):
        raise ImportFormatError(
            f"{path}:{lineno}: metric {value_raw!r} is not a number",
            hint="fix or remove that line; nothing was imported",
        )
    value: int | float | None = value_raw
    if value is not None and (not math.isfinite(value) or value == 0):
        value = None  # pi logs 0 when there was no measurement ("0 for crashes")
    description, status = finer(status, " ".join(str(obj.get("description") or "").split()))[::-1]
    metric: dict[str, Any] = {"value": value, "samples": [] if value is None else [value]}
    if metric_name:
        metric["name"] = metric_name
    metric["direction"] = direction or "lower"
    fields: dict[str, Any] = {"status": status, "description": description, "metric": metric}
    run = obj.get("run")
    if isinstance(run, int) and not isinstance(run, bool):
        fields["iteration"] = run
    metrics = obj.get("metrics")
    if isinstance(metrics, dict) and value is not None:
        kept = {
            k: v
            for k, v in metrics.items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        }
        if kept:
            fields["metrics"] = kept
    ts = obj.get("timestamp")
    if isinstance(ts, int | float) and not isinstance(ts, bool) and ts > 0:
        fields["started"] = iso_time(ts / 1000.0 if ts > 1e11 else float(ts))
    if isinstance(obj.get("confidence"), int | float):
        fields["confidence"] = obj["confidence"]
    asi = obj.get("asi")
    if isinstance(asi, dict):
        fields["asi"] = asi
        if isinstance(asi.get("hypothesis"), str):
            fields["hypothesis"] = asi["hypothesis"]
    extra = {k: v for k, v in obj.items() if k not in _PI_KNOWN}
    if extra:
        fields["extra"] = extra
    source: dict[str, Any] = {"line": lineno, "row": index, "status": status_text}
    if commit_text is not None:
        source["commit"] = commit_text
    if segment:
        fields["segment"] = segment
    fields["source"] = source
    fields["_text"] = line.strip()
    return ImportRow(lineno, commit, fields, segment)
