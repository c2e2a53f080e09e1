"""Reading results files: Karpathy's results.tsv and its forks, every era of the autoresearch
plugin's TSV, and pi-autoresearch's JSONL. Pure parsing, no git.

Columns are found by name (with the aliases real files use: `result` or `decision` for
`status`, `notes` for `description`, …); a file with no header row is read by the plugin's
layout for its column count. Everything a row says is kept: the status verbatim beside the
mapped one, the commit cell verbatim when it names no commit (`-`, empty, `baseline`,
`pending`, `nocommit`), extra columns as secondary metrics (numeric) or `extra` (text).
A row that cannot be read (too few cells, a metric that is not a number and names no
failure) is an error naming its line, and the whole file is refused.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import math
import re
from dataclasses import dataclass, field
from typing import Any

from gitimprove.errors import ImportFormatError

NOTHING_IMPORTED = "fix or remove that row; nothing was imported"

# Exact status words of every era (Karpathy, the plugin, pi), and what gitimprove calls them.
_STATUS_EXACT = {
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
    "noop": "no-op",
    "metric-error": "metric-error",
    "checks_failed": "guard-fail",
    "guard-fail": "guard-fail",
    "timeout": "timeout",
    "pending": "pending",
}
# The first word of a longer status (`reverted_worse`, `KEPT`, `crash (oom)`).
_STATUS_WORD = {
    **{w: "keep" for w in ("keep", "kept")},
    **{w: "discard" for w in ("discard", "discarded", "revert", "reverted", "rejected")},
    **{w: "crash" for w in ("crash", "crashed")},
    "baseline": "baseline",
    "timeout": "timeout",
}
FINE = (
    "guard-fail",
    "timeout",
    "sealed",
    "out-of-scope",
    "duplicate",
    "tampered",
    "no-op",
    "metric-error",
    "pending",
    "crash",
    "discard",
)
# Cells that say "there is no number here" rather than being garbage.
_NO_VALUE = {"", "-", "nan", "n/a", "na", "none", "null", "failed", "fail", "crash", "oom"}
_NO_VALUE |= {"error", "timeout", "inf", "-inf", "+inf", "infinity", "?"}
# Commit cells that name no commit.
_NO_COMMIT = {"", "-", "--", "n/a", "na", "none", "null"}
_HEX = re.compile(r"^[0-9a-fA-F]{4,40}$")

# Column aliases seen in real files: canonical name -> accepted header names, in preference.
_ALIASES = {
    "status": ("status", "result", "decision", "outcome", "verdict"),
    "commit": ("commit", "sha", "commit_sha", "git_commit", "hash"),
    "description": ("description", "desc", "notes", "note", "idea", "summary", "change"),
    "iteration": ("iteration", "iter", "#"),
    "label": ("experiment", "id", "run_id", "name", "label", "run"),
}
_KNOWN = {"delta", "guard", "guard-metric", "guard_metric", "timestamp", "memory_gb"}
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


@dataclass
class ImportRow:
    line: int
    commit: str  # "" when the row names no commit; else the (short) id as written
    fields: dict[str, Any] = field(default_factory=dict)
    segment: int = 0


@dataclass
class Parsed:
    fmt: str
    key: str  # identifies the file across snapshots: name, header and first row
    rows: list[ImportRow]
    direction: str | None = None
    metric_name: str | None = None
    skipped: int = 0  # lines that are not results (pi hook lines, comments)


def map_status(text: str) -> str:
    """gitimprove's status for a status word of any era; unknown words come back verbatim."""
    t = " ".join(text.strip().split())
    low = t.lower()
    if low in _STATUS_EXACT:
        return _STATUS_EXACT[low]
    first = re.split(r"[\s_(:/,;.-]+", low, maxsplit=1)[0]
    return _STATUS_WORD.get(first, t)


def finer(status: str, description: str) -> tuple[str, str]:
    """Recover our finer status from `[guard-fail] …` written by `log --format tsv`."""
    if description.startswith("["):
        tag, sep, rest = description[1:].partition("]")
        if sep and tag in FINE:
            return tag, rest.strip()
    return status, description


def number(text: str) -> int | float | None:
    """A cell as a number (ints stay ints); None for a cell naming no value; raises ValueError."""
    t = text.strip()
    if t.lower() in _NO_VALUE:
        return None
    if re.fullmatch(r"[+-]?\d+", t):
        return int(t)
    value = float(t)
    return value if math.isfinite(value) else None


def _is_number_cell(text: str) -> bool:
    try:
        number(text)
    except ValueError:
        return False
    return True


def commit_cell(text: str, lineno: int, path: str) -> tuple[str, str | None]:
    """(commit id or "", the verbatim cell when it names no commit)."""
    t = text.strip()
    if any(c.isspace() for c in t):
        raise ImportFormatError(f"{path}:{lineno}: {t!r} is not a commit id", hint=NOTHING_IMPORTED)
    if _HEX.match(t):
        return t.lower(), None
    if t.lower() in _NO_COMMIT:
        return "", (t or None) if t != "-" else None
    return "", t


def iso_time(seconds: float) -> str:
    return _dt.datetime.fromtimestamp(seconds, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def file_key(name: str, *parts: str) -> str:
    return hashlib.sha256("\n".join((name, *parts)).encode("utf-8")).hexdigest()[:12]


def row_id(key: str, index: int, content: str) -> str:
    """Idempotency key of one row: the file, its place in the file and its content."""
    return hashlib.sha256(f"{key}\n{index}\n{content}".encode()).hexdigest()[:16]


def parse_text(text: str, path: str, *, name: str, metric_column: str | None = None) -> Parsed:
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    if first.lstrip().startswith("{"):
        from gitimprove.state.import_pi import parse_jsonl

        return parse_jsonl(text, path, name)
    return _parse_tsv(text, path, name, metric_column)


# --- TSV ---------------------------------------------------------------------------------------


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


def _choose_metric(
    header: list[str],
    roles: dict[str, str],
    body: list[tuple[int, list[str]]],
    metric_column: str | None,
    path: str,
    lineno: int,
) -> str:
    taken = set(roles.values()) | {h for h in header if h.lower() in _KNOWN}
    if metric_column is not None:
        if metric_column not in header:
            raise ImportFormatError(
                f"{path}: no column named {metric_column!r}; columns: {', '.join(header)}"
            )
        return metric_column
    if "metric" in header:
        return "metric"
    numeric = [
        h
        for i, h in enumerate(header)
        if h not in taken
        and any(i < len(c) and c[i].strip() for _, c in body)
        and all(i >= len(c) or _is_number_cell(c[i]) for _, c in body)
        and any(i < len(c) and number(c[i]) is not None for _, c in body)
    ]
    # Karpathy's layout: the metric is the column right after `commit`.
    if header[0].lower() == "commit" and len(header) > 1 and header[1] not in taken:
        return header[1]
    if len(numeric) == 1:
        return numeric[0]
    if not numeric:
        raise ImportFormatError(
            f"{path}:{lineno}: the header lacks a metric column; found columns: {', '.join(header)}",
            hint="name it with --metric-column NAME",
        )
    raise ImportFormatError(
        f"{path}:{lineno}: more than one numeric column could be the metric: {', '.join(numeric)}",
        hint=f"name the one to import with --metric-column NAME (e.g. --metric-column {numeric[0]})",
    )


def _parse_tsv(text: str, path: str, name: str, metric_column: str | None) -> Parsed:
    direction = None
    header: list[str] | None = None
    header_line = 0
    body: list[tuple[int, list[str]]] = []
    skipped = 0
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
            else:
                skipped += 1
            continue
        cells = line.rstrip("\r").split("\t")
        if header is None:
            names = [c.strip() for c in cells]
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
    metric_col = _choose_metric(header, roles, body, metric_column, path, header_line or 1)
    fmt = "karpathy-tsv" if header[0].lower() == "commit" else "autoresearch-tsv"
    first_data = "\t".join(body[0][1]) if body else ""
    key = file_key(name, "\t".join(header), first_data)
    rows = [
        _tsv_row(header, roles, metric_col, direction, cells, lineno, index, path, key)
        for index, (lineno, cells) in enumerate(body)
    ]
    return Parsed(
        fmt, key, rows, direction, None if metric_col == "metric" else metric_col, skipped
    )


def _tsv_row(
    header: list[str],
    roles: dict[str, str],
    metric_col: str,
    direction: str | None,
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
        value = number(rec[metric_col])
    except ValueError:
        raise ImportFormatError(
            f"{path}:{lineno}: column {metric_col!r} holds {rec[metric_col]!r}, not a number",
            hint=NOTHING_IMPORTED,
        ) from None
    status_text = rec[roles["status"]].strip()
    status = map_status(status_text)
    description = " ".join(rec[desc_col].split()) if desc_col else ""
    status, description = finer(status, description)
    if status in ("crash", "timeout", "metric-error") and value == 0:
        value = None  # Karpathy and the plugin log a crash as 0.0
    metric: dict[str, Any] = {"value": value, "samples": [] if value is None else [value]}
    if metric_col != "metric":
        metric["name"] = metric_col
    if direction:
        metric["direction"] = direction
    source: dict[str, Any] = {"line": lineno, "row": index, "status": status_text}
    if commit_text is not None:
        source["commit"] = commit_text
    fields: dict[str, Any] = {"status": status, "description": description, "metric": metric}
    it_col = roles.get("iteration")
    label = rec[roles["label"]].strip() if "label" in roles else ""
    if it_col is not None:
        it = rec[it_col].strip()
        if re.fullmatch(r"\d+", it):
            fields["iteration"] = int(it)
        elif it:
            label = it
    else:
        fields["iteration"] = index
    if label:
        fields["label"] = label
    metrics: dict[str, Any] = {}
    extra: dict[str, str] = {}
    used = set(roles.values()) | {metric_col, "delta", "guard", "guard-metric", "timestamp"}
    for col in header:
        if col in used:
            continue
        try:
            v = number(rec[col])
        except ValueError:
            v = None
            if rec[col].strip():
                extra[col] = rec[col].strip()
        else:
            if v is not None and not (status == "crash" and v == 0):
                metrics[col] = v
    if metrics:
        fields["metrics"] = metrics
    if extra:
        fields["extra"] = extra
    guard_text = rec.get("guard", "").strip()
    guard: dict[str, Any] = {}
    if guard_text.lower().startswith(("pass", "fail")):
        guard["status"] = guard_text[:4].lower()
    if guard_text not in ("", "-", guard.get("status")):
        source["guard"] = guard_text
    for col in ("guard-metric", "guard_metric"):
        if col in rec:
            try:
                gm = number(rec[col])
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
    return ImportRow(lineno, commit, fields)
