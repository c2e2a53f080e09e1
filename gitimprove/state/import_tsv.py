"""Karpathy's results.tsv, its forks, and every era of the autoresearch plugin's TSV.

Columns are found by name (with the aliases real files use: `result` or `decision` for
`status`, `notes` for `description`, …); a file with no header row is read by the plugin's
layout for its column count, and a header row met again later (two logs concatenated) is
skipped. The metric is the column named `metric`, else Karpathy's column right after `commit`,
else the one column that holds numbers (not a delta, not a before/after comparison) — always a
column that does hold numbers; when several could be it, the file is refused with the list of
numeric columns and `--metric-column`. A file that states no direction gets the one its kept
rows show, or none (`import_infer`); the file's own `delta` cell is kept verbatim. A row that
cannot be read (too few cells, a metric that is not a number and names no failure) is an
error naming its line, and the whole file is refused.
"""

from __future__ import annotations

import re
from typing import Any

from gitimprove.errors import ImportFormatError
from gitimprove.state.import_formats import (
    NOTHING_IMPORTED,
    ImportRow,
    Parsed,
    checked_number,
    commit_cell,
    drop_unmeasured_zeros,
    file_key,
    finer,
    map_status,
    number,
    row_id,
)
from gitimprove.state.import_infer import NOT_MEASURED_STATUS, Evidence, infer_direction
from gitimprove.util.lines import raw_lines

# Column aliases seen in real files: canonical name -> accepted header names, in preference.
_ALIASES = {
    "status": ("status", "result", "decision", "outcome", "verdict"),
    "commit": ("commit", "sha", "commit_sha", "git_commit", "hash"),
    "description": ("description", "desc", "notes", "note", "idea", "summary", "change"),
    "iteration": ("iteration", "iter", "#"),
    "label": ("experiment", "id", "run_id", "name", "label", "run"),
}
_KNOWN = {"guard", "guard-metric", "guard_metric", "timestamp", "memory_gb"}
# Names of columns that compare the metric with something (never the metric itself).
_COMPARISON = {"delta", "diff", "before", "prev", "previous", "old", "best", "baseline", "vs"}
_COMPARISON |= {"improvement", "gain", "change", "pct", "percent", "relative"}
# The plugin's layouts by column count, for files written without a header row.
LAYOUTS = {
    n: tuple(cols.split())
    for n, cols in (
        (5, "commit metric memory_gb status description"),
        (6, "iteration commit metric delta status description"),
        (7, "iteration commit metric delta guard status description"),
        (8, "iteration commit metric delta guard guard-metric status description"),
        (9, "iteration timestamp commit metric delta guard guard-metric status description"),
    )
}


def _words(name: str) -> set[str]:
    return set(re.split(r"[\s_\-.:/]+", name.lower()))


def _is_delta(name: str) -> bool:
    return bool(_words(name) & {"delta", "diff"})


def _canonical(header: list[str]) -> dict[str, str]:
    """canonical role -> the header's column for it."""
    low = {h.lower(): h for h in header}
    roles: dict[str, str] = {}
    for role, names in _ALIASES.items():
        for n in names:
            if n in low and low[n] not in roles.values():
                roles[role] = low[n]
                break
    return roles


def _cells(body: list[tuple[int, list[str]]], i: int) -> list[tuple[int, str]]:
    return [(lineno, c[i]) for lineno, c in body if i < len(c)]


def _first_text(body: list[tuple[int, list[str]]], i: int) -> tuple[int, str] | None:
    """The first cell of column i that is no number (nor a cell naming no value)."""
    for lineno, cell in _cells(body, i):
        try:
            number(cell)
        except ValueError:
            return lineno, cell.strip()
    return None


def _is_numeric(body: list[tuple[int, list[str]]], i: int) -> bool:
    """The column's values are numbers at least as often as words (a stray word is a bad
    row, named later)."""
    numbers = texts = 0
    for _, cell in _cells(body, i):
        try:
            numbers += number(cell) is not None
        except ValueError:
            texts += 1
    return numbers > 0 and numbers >= texts


def _choose_metric(
    header: list[str],
    roles: dict[str, str],
    body: list[tuple[int, list[str]]],
    metric_column: str | None,
    path: str,
    lineno: int,
) -> str:
    index = {h: i for i, h in enumerate(header)}
    if metric_column is not None:
        if metric_column not in index:
            raise ImportFormatError(
                f"{path}: no column named {metric_column!r}; columns: {', '.join(header)}"
            )
        text = _first_text(body, index[metric_column])
        if text is not None:
            raise ImportFormatError(
                f"{path}:{text[0]}: column {metric_column!r} holds {text[1]!r}, not a number",
                hint=NOTHING_IMPORTED,
            )
        return metric_column
    taken = set(roles.values()) | {h for h in header if h.lower() in _KNOWN or _is_delta(h)}
    numeric = [h for h in header if h not in taken and _is_numeric(body, index[h])]
    plain = [h for h in numeric if not _words(h) & _COMPARISON]
    named = next((h for h in header if h.lower() == "metric"), None)
    if named is not None and named in numeric:
        return named
    # Karpathy's layout: the metric is the column right after `commit`, if it holds numbers.
    if header[0].lower() == "commit" and len(header) > 1 and header[1] in numeric:
        return header[1]
    if len(plain) == 1:
        return plain[0]
    if not plain and len(numeric) == 1:
        return numeric[0]
    if not numeric:
        raise ImportFormatError(
            f"{path}:{lineno}: the header lacks a metric column (no column holds numbers); "
            f"found columns: {', '.join(header)}",
            hint="name it with --metric-column NAME",
        )
    candidates = plain or numeric
    raise ImportFormatError(
        f"{path}:{lineno}: more than one column of numbers could be the metric: "
        f"{', '.join(candidates)}",
        hint="name the one to import with --metric-column NAME "
        f"(e.g. --metric-column {candidates[0]})",
    )


def _scan(
    text: str, path: str
) -> tuple[str | None, list[str] | None, int, list[tuple[int, list[str]]], int]:
    """(stated direction, header, its line, body rows, skipped lines)."""
    direction = None
    header: list[str] | None = None
    header_line = 0
    body: list[tuple[int, list[str]]] = []
    skipped = 0
    for lineno, line in enumerate(raw_lines(text), 1):
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
            else:
                skipped += 1
            continue
        cells = line.rstrip("\r").split("\t")
        names = [c.strip() for c in cells]
        if header is not None and [n.lower() for n in names] == [h.lower() for h in header]:
            skipped += 1  # the header again: two logs concatenated, or a header written late
            continue
        if header is None:
            if "status" in [n.lower() for n in names] or _canonical(names).get("status"):
                header, header_line = names, lineno
                continue
            if len(cells) not in LAYOUTS:
                raise ImportFormatError(
                    f"{path}:{lineno}: no header row with a status column, and {len(cells)} "
                    "columns match no autoresearch layout",
                    hint="a results TSV starts with a header row like "
                    "`commit<TAB>val_bpb<TAB>memory_gb<TAB>status<TAB>description`",
                )
            header = list(LAYOUTS[len(cells)])
        body.append((lineno, cells))
    return direction, header, header_line, body, skipped


def parse_tsv(text: str, path: str, name: str, metric_column: str | None) -> Parsed:
    direction, header, header_line, body, skipped = _scan(text, path)
    if header is None:
        raise ImportFormatError(
            f"{path}: no header row and no results", hint="is this a results TSV?"
        )
    roles = _canonical(header)
    if "status" not in roles:
        raise ImportFormatError(
            f"{path}:{header_line}: the header lacks status; found columns: {', '.join(header)}",
            hint="a results TSV has a status column (keep, discard, crash, …)",
        )
    fmt = "karpathy-tsv" if header[0].lower() == "commit" else "autoresearch-tsv"
    first_data = "\t".join(body[0][1]) if body else ""
    key = file_key(name, "\t".join(header), first_data)
    if not body and (metric_column or len(header) > len(roles)):
        # no rows yet: nothing to import, and no numbers to tell the metric column by
        return Parsed(fmt, key, [], direction, None, skipped, "file" if direction else "")
    metric_col = _choose_metric(header, roles, body, metric_column, path, header_line or 1)
    delta_col = next((h for h in header if _is_delta(h) and h not in roles.values()), None)
    rows = [
        _tsv_row(header, roles, metric_col, delta_col, cells, lineno, index, path, key)
        for index, (lineno, cells) in enumerate(body)
    ]
    drop_unmeasured_zeros(rows)
    direction_from = "file" if direction else ""
    if direction is None:
        direction = infer_direction([_evidence(r) for r in rows])
        direction_from = "inferred" if direction else ""
    for row in rows:
        if direction:
            row.fields["metric"]["direction"] = direction
        if direction_from == "inferred":
            row.fields["source"]["direction"] = "inferred"
    metric_name = None if metric_col == "metric" else metric_col
    return Parsed(fmt, key, rows, direction, metric_name, skipped, direction_from)


def _evidence(row: ImportRow) -> Evidence:
    delta = row.fields["source"].get("delta")
    try:
        d = number(delta) if isinstance(delta, str) else None
    except ValueError:
        d = None
    return Evidence(row.fields["status"], row.fields["metric"]["value"], d)


def _guard_word(text: str) -> str | None:
    """pass/fail from a guard cell: `pass`, `FAIL`, `93 passed`, `2 failed, 40 passed`."""
    low = text.lower()
    if re.search(r"\bfail", low) and not re.search(r"\b0 fail", low):
        return "fail"
    if low.startswith("pass") or re.search(r"\bpass(?:ed|es)?\b", low):
        return "pass"
    return None


def _tsv_row(
    header: list[str],
    roles: dict[str, str],
    metric_col: str,
    delta_col: str | None,
    cells: list[str],
    lineno: int,
    index: int,
    path: str,
    key: str,
) -> ImportRow:
    while len(cells) > len(header) and not cells[-1].strip():
        cells = cells[:-1]
    desc_col = roles.get("description")
    if len(cells) > len(header) and desc_col == header[-1]:
        # A description may itself hold tabs: join the overflow into the last column.
        cells = [*cells[: len(header) - 1], " ".join(cells[len(header) - 1 :])]
    if len(cells) != len(header):
        raise ImportFormatError(
            f"{path}:{lineno}: {len(cells)} columns where the header has {len(header)}",
            hint=NOTHING_IMPORTED,
        )
    rec = dict(zip(header, cells, strict=True))
    commit, commit_text = ("", None)
    if "commit" in roles:
        commit, commit_text = commit_cell(rec[roles["commit"]], lineno, path)
    try:
        value = checked_number(rec[metric_col], lineno, metric_col, path)
    except ImportFormatError:
        raise
    except ValueError:
        raise ImportFormatError(
            f"{path}:{lineno}: column {metric_col!r} holds {rec[metric_col]!r}, not a number",
            hint=NOTHING_IMPORTED,
        ) from None
    status_text = rec[roles["status"]].strip()
    status = map_status(status_text)
    description = " ".join(rec[desc_col].split()) if desc_col else ""
    status, description = finer(status, description)
    metric: dict[str, Any] = {"value": value, "samples": [] if value is None else [value]}
    if metric_col != "metric":
        metric["name"] = metric_col
    source: dict[str, Any] = {"line": lineno, "row": index, "status": status_text}
    if commit_text is not None:
        source["commit"] = commit_text
    if delta_col is not None and rec[delta_col].strip():
        source["delta"] = rec[delta_col].strip()  # verbatim: `-` is "compared with nothing"
    fields: dict[str, Any] = {"status": status, "description": description, "metric": metric}
    it_col = roles.get("iteration")
    label = rec[roles["label"]].strip() if "label" in roles else ""
    if it_col is not None:
        it = rec[it_col].strip()
        if re.fullmatch(r"[0-9]{1,9}", it):
            fields["iteration"] = int(it)
        elif any(c.isdigit() and not c.isascii() for c in it):
            raise ImportFormatError(
                f"{path}:{lineno}: iteration {it[:40]!r} is not written in ASCII digits",
                hint=NOTHING_IMPORTED,
            )
        elif it:
            label = it
    else:
        fields["iteration"] = index
    if label:
        fields["label"] = label
    metrics: dict[str, Any] = {}
    extra: dict[str, str] = {}
    texts = [description] if description else []
    used = set(roles.values()) | {metric_col, "guard", "guard-metric", "timestamp"}
    used |= {delta_col} if delta_col else set()
    for col in header:
        if col in used:
            continue
        try:
            v = checked_number(rec[col], lineno, col, path)
        except ImportFormatError:
            raise
        except ValueError:
            v = None
            if rec[col].strip():
                extra[col] = rec[col].strip()
                texts.append(extra[col])
        else:
            if v is not None and not (status in NOT_MEASURED_STATUS and v == 0):
                metrics[col] = v
    if metrics:
        fields["metrics"] = metrics
    if extra:
        fields["extra"] = extra
    guard_text = rec.get("guard", "").strip()
    guard: dict[str, Any] = {}
    word = _guard_word(guard_text)
    if word:
        guard["status"] = word
    if guard_text not in ("", "-", guard.get("status")):
        source["guard"] = guard_text
    for col in ("guard-metric", "guard_metric"):
        if col in rec:
            try:
                gm = checked_number(rec[col], lineno, col, path)
            except ImportFormatError:
                raise
            except ValueError:
                gm = None
            if gm is not None:
                guard["metric"] = gm
    if guard:
        fields["guard"] = guard
    ts = rec.get("timestamp", "").strip()
    if ts and ts != "-":
        fields["timestamp"] = ts
    fields["source"] = source
    fields["import_id"] = row_id(key, index, "\t".join(cells))
    zero = value == 0 and bool(metrics) and all(v == 0 for v in metrics.values())
    return ImportRow(lineno, commit, fields, texts=tuple(texts), all_zero=zero)
