"""pi-autoresearch's `autoresearch.jsonl` (`.auto/log.jsonl`), read as pi itself reads it.

Segments follow pi's `reconstructJsonlState`: a `config` line starts a new segment once the
file has any result, and it names the segment's metric and direction. Each row carries the
segment pi was in when it wrote it (`segment`), and that is the row's segment: two sessions
writing one file at once interleave their rows, each still naming its own. A row without the
field is in the segment the lines before it reach. Each segment becomes a run of its own, named
by its number, with the metric name and direction of the config that started it. Lines that
are no result (`{"type":"hook",…}` written by pi's before/after hooks) are skipped; pi logs
"0 for crashes", so a 0 on a row not kept is no measurement (`drop_unmeasured_zeros`), while a
kept 0 is a value (a rate brought down to 0), as pi's own best-of-segment reads it; `asi` is
kept whole. With no config line at all, the
direction is what the kept rows show, or unknown.
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
    drop_unmeasured_zeros,
    file_key,
    finer,
    iso_time,
    map_status,
    row_id,
)
from gitimprove.state.import_infer import Evidence, infer_direction
from gitimprove.util import reader
from gitimprove.util.lines import raw_lines

_PI_KNOWN = {"run", "commit", "metric", "metrics", "status", "description", "timestamp"}
_PI_KNOWN |= {"segment", "confidence", "asi", "type"}


def parse_jsonl(text: str, path: str, name: str) -> Parsed:
    # segment -> (metric name, direction) of the config line that started it
    configs: dict[int, tuple[str | None, str]] = {}
    rows: list[ImportRow] = []
    segment = 0
    skipped = 0
    first_config = ""
    for lineno, line in enumerate(raw_lines(text), 1):
        if not line.strip():
            continue
        obj = reader.load_object(line, version=None)  # the tolerant reader's limits
        if isinstance(obj, reader.Unreadable):
            raise ImportFormatError(
                f"{path}:{lineno}: not a JSON object that can be read ({obj.reason})",
                hint="fix or remove that line; nothing was imported",
            )
        if obj.get("type") == "config":
            first_config = first_config or line.strip()
            if rows:  # pi: a new segment once the file has any result
                segment += 1
            d = obj.get("bestDirection") or obj.get("direction")
            if d not in (None, "lower", "higher"):
                raise ImportFormatError(f"{path}:{lineno}: direction {d!r} is not lower or higher")
            name_ = obj.get("metricName") or obj.get("metric_name")
            configs[segment] = (name_ if isinstance(name_, str) else None, d or "lower")
            continue
        if "type" in obj or not ({"run", "metric", "status"} & obj.keys()):
            skipped += 1  # hook lines ({"type":"hook",…}) and anything else that is no result
            continue
        own = obj.get("segment")
        seg = own if isinstance(own, int) and not isinstance(own, bool) and own >= 0 else segment
        rows.append(_pi_row(obj, lineno, len(rows), seg, path, line))
    drop_unmeasured_zeros(rows)  # pi logs 0 for a crash
    direction, direction_from = None, ""
    for row in rows:
        known = configs.get(row.segment) or _latest(configs, row.segment)
        if known is not None:
            metric_name, direction = known
            direction_from = "file"
            row.fields["metric"]["direction"] = direction
            if metric_name:
                row.fields["metric"] = {"name": metric_name, **row.fields["metric"]}
    if not configs:
        direction = infer_direction(
            [Evidence(r.fields["status"], r.fields["metric"]["value"]) for r in rows]
        )
        direction_from = "inferred" if direction else ""
        for row in rows:
            if direction:
                row.fields["metric"]["direction"] = direction
                row.fields["source"]["direction"] = "inferred"
    key = file_key(name, first_config, next((json.dumps(r.fields.get("source")) for r in rows), ""))
    for row in rows:
        row.fields["import_id"] = row_id(key, row.fields["source"]["row"], row.fields.pop("_text"))
    names = {r.fields["metric"].get("name") for r in rows}
    metric_name = names.pop() if len(names) == 1 else None
    return Parsed("pi-jsonl", key, rows, direction, metric_name, skipped, direction_from)


def _latest(
    configs: dict[int, tuple[str | None, str]], segment: int
) -> tuple[str | None, str] | None:
    """The config of the nearest segment before `segment` (a row naming a segment whose
    config line is not in the file)."""
    earlier = [s for s in configs if s <= segment]
    return configs[max(earlier)] if earlier else None


def _pi_row(
    obj: dict[str, Any], lineno: int, index: int, segment: int, path: str, line: str
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
    if value is not None and not math.isfinite(value):
        value = None  # a 0 that means "no measurement" goes in drop_unmeasured_zeros
    description, status = finer(status, " ".join(str(obj.get("description") or "").split()))[::-1]
    metric: dict[str, Any] = {"value": value, "samples": [] if value is None else [value]}
    fields: dict[str, Any] = {"status": status, "description": description, "metric": metric}
    run = obj.get("run")
    if isinstance(run, int) and not isinstance(run, bool):
        if not 0 <= run <= 1_000_000_000:
            raise ImportFormatError(
                f"{path}:{lineno}: run {run} is not an iteration number (0 or more)",
                hint="fix or remove that line; nothing was imported",
            )
        fields["iteration"] = run
    metrics = obj.get("metrics")
    if isinstance(metrics, dict):
        kept = {
            k: v
            for k, v in metrics.items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        }
        if kept:
            fields["metrics"] = kept
    ts = obj.get("timestamp")
    if isinstance(ts, int | float) and not isinstance(ts, bool) and ts > 0:
        try:
            fields["started"] = iso_time(ts / 1000.0 if ts > 1e11 else float(ts))
        except (OverflowError, ValueError, OSError):
            raise ImportFormatError(
                f"{path}:{lineno}: timestamp {str(ts)[:40]} is not a time",
                hint="fix or remove that line; nothing was imported",
            ) from None
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
    numbers = list(fields.get("metrics", {}).values())
    zero = value == 0 and bool(numbers) and all(v == 0 for v in numbers)
    return ImportRow(lineno, commit, fields, segment, (description,), zero)
