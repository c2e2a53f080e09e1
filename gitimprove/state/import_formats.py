"""Reading results files: what every format shares (statuses, cells, rows, keys), and the
dispatch to the readers: Karpathy's results.tsv, its forks and every era of the autoresearch
plugin's TSV (`import_tsv`), pi-autoresearch's JSONL (`import_pi`). Pure parsing, no git.

Everything a row says is kept: the status verbatim beside the mapped one, the commit cell
verbatim when it names no commit (`-`, empty, `baseline`, `pending`, `nocommit`), extra
columns as secondary metrics (numeric) or `extra` (text). A row that cannot be read is an
error naming its line, and the whole file is refused.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import math
import re
from dataclasses import dataclass, field
from typing import Any

from gitimprove.errors import ImportFormatError
from gitimprove.state.import_infer import KEPT, NOT_MEASURED_STATUS, says_not_measured
from gitimprove.util.lines import raw_lines

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
    # a row written before its run finished
    **{w: "pending" for w in ("running", "in progress", "in-progress", "wip", "tbd", "todo")},
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
# Cells that say "there is no number here" rather than being garbage: a failure, a dash of
# any width, or a row still in progress (`pending pending pending` while a run measures).
_NO_VALUE = {"", "-", "--", "\u2013", "\u2014", "nan", "n/a", "na", "none", "null", "nil"}
_NO_VALUE |= {"failed", "fail", "crash", "crashed", "oom", "error", "timeout", "skipped", "?"}
_NO_VALUE |= {"inf", "-inf", "+inf", "infinity", "pending", "running", "tbd", "wip", "..."}
# Commit cells that name no commit.
_NO_COMMIT = {"", "-", "--", "n/a", "na", "none", "null"}
_HEX = re.compile(r"^[0-9a-fA-F]{4,40}$")


@dataclass
class ImportRow:
    line: int
    commit: str  # "" when the row names no commit; else the (short) id as written
    fields: dict[str, Any] = field(default_factory=dict)
    segment: int = 0
    texts: tuple[str, ...] = ()  # the row's words (description, notes), read for "aborted"
    all_zero: bool = False  # every number of the row is 0 (Karpathy's "not measured")


@dataclass
class Parsed:
    fmt: str
    key: str  # identifies the file across snapshots: name, header and first row
    rows: list[ImportRow]
    direction: str | None = None
    metric_name: str | None = None
    skipped: int = 0  # lines that are not results (pi hook lines, comments)
    direction_from: str = ""  # "file" (stated), "inferred" (from the kept rows), "" (unknown)


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


class OutOfRange(ValueError):
    """A cell written as a number that no record can hold (1e999, 400 digits)."""


def number(text: str) -> int | float | None:
    """A cell as a number (ints stay ints); None for a cell naming no value; raises ValueError
    (OutOfRange for a number in ASCII digits that no record can hold: never a silent "no
    value"). Digits are ASCII: float() would also read Arabic-Indic ones."""
    t = text.strip().lstrip("~\u2248")  # `~0.51`: an approximate value is still a value
    if t.lower() in _NO_VALUE:
        return None
    if not t.isascii():
        raise ValueError(f"{t[:40]!r} is not written in ASCII digits")
    if re.fullmatch(r"[+-]?[0-9]+", t):
        if len(t.lstrip("+-")) > 18:
            raise OutOfRange(f"{t[:20]}… has too many digits")
        return int(t)
    value = float(t)
    if not math.isfinite(value) or abs(value) > 1e300:
        raise OutOfRange(f"{t[:40]} is not a finite number")
    return value


def checked_number(text: str, lineno: int, column: str, path: str) -> int | float | None:
    """`number`, with a number out of range an error naming the line and the column."""
    try:
        return number(text)
    except OutOfRange as exc:
        raise ImportFormatError(
            f"{path}:{lineno}: column {column!r}: {exc}", hint=NOTHING_IMPORTED
        ) from None


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


def drop_unmeasured_zeros(rows: list[ImportRow]) -> None:
    """A 0 that is the file's way of writing "not measured" is no value (see import_infer):
    on a row that was not kept, when its status or its words say so, or when all its numbers
    are 0 in a part of the file (a pi segment) whose kept rows never are."""
    parts: dict[int, list[ImportRow]] = {}
    for row in rows:
        parts.setdefault(row.segment, []).append(row)
    for part in parts.values():
        kept = [r.fields["metric"]["value"] for r in part if r.fields["status"] in KEPT]
        kept = [v for v in kept if v is not None]
        zero_is_none = bool(kept) and 0 not in kept
        for row in part:
            metric = row.fields["metric"]
            status = row.fields["status"]
            if metric["value"] != 0 or status in KEPT:
                continue
            if (
                status in NOT_MEASURED_STATUS
                or says_not_measured(row.texts)
                or (zero_is_none and row.all_zero)
            ):
                metric["value"], metric["samples"] = None, []
                metrics = {k: v for k, v in row.fields.get("metrics", {}).items() if v != 0}
                row.fields.pop("metrics", None)
                if metrics:
                    row.fields["metrics"] = metrics


def parse_text(text: str, path: str, *, name: str, metric_column: str | None = None) -> Parsed:
    first = next((ln for ln in raw_lines(text) if ln.strip()), "")
    if first.lstrip().startswith("{"):
        from gitimprove.state.import_pi import parse_jsonl

        return parse_jsonl(text, path, name)
    from gitimprove.state.import_tsv import parse_tsv

    return parse_tsv(text, path, name, metric_column)
