"""Result views rebuilt from notes and imports: table, autoresearch TSV, Karpathy TSV, JSONL.

Views are never the truth (DESIGN §1). The folded rows are cached in
`<git-common-dir>/improve/cache/` keyed by the notes and memory tips, read with the
pure-Python ref reader, so a warm `log` imports neither pygit2 nor tomllib.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gitimprove.git import refs  # ref names only: imports no pygit2
from gitimprove.util import gitdir
from gitimprove.util.files import atomic_write

CACHE_VERSION = 1

Row = dict[str, Any]

# autoresearch's status words; our finer status goes in brackets in the description.
_TSV_STATUS = {
    "baseline": "baseline",
    "keep": "keep",
    "keep-reworked": "keep (reworked)",
    "discard": "discard",
    "crash": "crash",
    "no-op": "no-op",
    "metric-error": "metric-error",
    "guard-fail": "discard",
    "timeout": "crash",
    "sealed": "discard",
    "out-of-scope": "discard",
    "duplicate": "discard",
    "pending": "pending",
}
_KARPATHY_STATUS = {
    "baseline": "keep",
    "keep": "keep",
    "keep-reworked": "keep",
    "crash": "crash",
    "timeout": "crash",
    "metric-error": "crash",
}
_KEPT = frozenset({"baseline", "keep", "keep-reworked"})


def load_rows(loc: gitdir.Location, *, use_cache: bool = True) -> list[Row]:
    """Every experiment row (notes, then imports), folded, in display order."""
    notes_tip = gitdir.read_ref(loc, refs.NOTES) or ""
    memory_tip = gitdir.read_ref(loc, refs.MEMORY) or ""
    cache_file = Path(loc.improve_dir) / "cache" / "log.json"
    if use_cache:
        try:
            cached = json.loads(cache_file.read_bytes())
            if (
                cached.get("version") == CACHE_VERSION
                and cached.get("notes") == notes_tip
                and cached.get("memory") == memory_tip
            ):
                rows: list[Row] = cached["rows"]
                return rows
        except (OSError, ValueError, AttributeError, KeyError):
            pass
    rows = _build_rows(loc, notes_tip or None, memory_tip or None)
    try:
        atomic_write(
            cache_file,
            json.dumps(
                {"version": CACHE_VERSION, "notes": notes_tip, "memory": memory_tip, "rows": rows},
                separators=(",", ":"),
            ),
        )
    except OSError:
        pass
    return rows


def latest_run_tail(loc: gitdir.Location, n: int = 10) -> tuple[str | None, list[Row]]:
    """The last `n` rows of the most recent run, from a small cache of its own (SessionStart
    must not parse the whole log to show ten rows)."""
    key = [gitdir.read_ref(loc, refs.NOTES) or "", gitdir.read_ref(loc, refs.MEMORY) or "", n]
    path = Path(loc.improve_dir) / "cache" / "tail.json"
    try:
        cached = json.loads(path.read_bytes())
        if cached.get("key") == key:
            return cached["run"], cached["rows"]
    except (OSError, ValueError, AttributeError, KeyError):
        pass
    rows = load_rows(loc)
    runs = [r for r in rows if r.get("run")]
    run = str(runs[-1]["run"]) if runs else None
    tail = [r for r in rows if r.get("run") == run][-n:] if run else []
    try:
        atomic_write(path, json.dumps({"key": key, "run": run, "rows": tail}))
    except OSError:
        pass
    return run, tail


def _build_rows(loc: gitdir.Location, notes_tip: str | None, memory_tip: str | None) -> list[Row]:
    from gitimprove.git.repo import open_repo
    from gitimprove.state import experiments, imports

    repo = open_repo(loc.work_tree or loc.git_dir, need_work_tree=False)
    rows: list[Row] = []
    if notes_tip:
        for exp in experiments.all_experiments(repo, notes_tip):
            row: Row = {"commit": exp.commit, **exp.state}
            if exp.raw:
                row["raw"] = exp.raw
            rows.append(row)
    if memory_tip:
        rows.extend(imports.imported_rows(repo, memory_tip))
    return order_rows(rows)


def order_rows(rows: Iterable[Row]) -> list[Row]:
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(str(row.get("run") or ""), []).append(row)

    def in_group(r: Row) -> tuple[int, int, int, str]:
        it = r.get("iteration")
        cand = r.get("candidate")
        return (
            0 if isinstance(it, int) else 1,
            it if isinstance(it, int) else 0,
            cand if isinstance(cand, int) else 0,
            str(r.get("ts") or ""),
        )

    ordered: list[Row] = []
    for _, members in sorted(
        groups.items(), key=lambda kv: min(str(r.get("ts") or "") for r in kv[1])
    ):
        ordered.extend(sorted(members, key=in_group))
    return ordered


def select(rows: Sequence[Row], *, run: str | None = None, round_: int | None = None) -> list[Row]:
    out = list(rows)
    if run is not None:
        out = [r for r in out if (r.get("run") or "") == run]
    if round_ is not None:
        out = [r for r in out if r.get("iteration") == round_]
    return out


# --- formatting -------------------------------------------------------------------------------


def _num(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-"
    return f"{float(value):.10g}"


def metric_value(row: Row) -> float | None:
    metric = row.get("metric")
    if isinstance(metric, Mapping):
        v = metric.get("value")
        if isinstance(v, int | float) and not isinstance(v, bool):
            return float(v)
    return None


def direction_of(rows: Sequence[Row], default: str = "lower") -> str:
    for row in reversed(rows):
        metric = row.get("metric")
        if isinstance(metric, Mapping) and metric.get("direction") in ("lower", "higher"):
            return str(metric["direction"])
    return default


def metric_name_of(rows: Sequence[Row], default: str = "metric") -> str:
    for row in reversed(rows):
        metric = row.get("metric")
        if isinstance(metric, Mapping) and isinstance(metric.get("name"), str):
            return str(metric["name"])
    return default


def _deltas(rows: Sequence[Row], direction: str) -> list[float | None]:
    """Each row's metric minus the best kept value before it in its run (signed)."""
    best: dict[str, float] = {}
    out: list[float | None] = []
    for row in rows:
        group = str(row.get("run") or "")
        value = metric_value(row)
        prev = best.get(group)
        if value is None:
            out.append(None)
        elif prev is None:
            out.append(0.0)
        else:
            out.append(value - prev)
        if value is not None and row.get("status") in _KEPT:
            better = prev is None or (value < prev if direction == "lower" else value > prev)
            if better:
                best[group] = value
    return out


def _clean_text(text: Any) -> str:
    return " ".join(str(text or "").split())


def _guard_word(row: Row) -> str:
    guard = row.get("guard")
    if isinstance(guard, Mapping):
        return {"pass": "pass", "fail": "fail"}.get(str(guard.get("status")), "-")
    return "-"


def _description(row: Row, mapped: str) -> str:
    text = _clean_text(row.get("description"))
    status = str(row.get("status") or "pending")
    if status not in (mapped, "keep-reworked"):
        text = f"[{status}] {text}".rstrip()
    return text


def render_tsv(rows: Sequence[Row], direction: str) -> str:
    lines = [
        f"# metric_direction: {'lower' if direction == 'lower' else 'higher'}_is_better",
        "iteration\tcommit\tmetric\tdelta\tguard\tstatus\tdescription",
    ]
    for row, delta in zip(rows, _deltas(rows, direction), strict=True):
        status = str(row.get("status") or "pending")
        mapped = _TSV_STATUS.get(status, status)
        it = row.get("iteration")
        lines.append(
            "\t".join(
                [
                    str(it) if isinstance(it, int) else "-",
                    str(row.get("commit", ""))[:7],
                    _num(metric_value(row)),
                    "-" if delta is None else _num(delta),
                    _guard_word(row),
                    mapped,
                    _description(row, mapped),
                ]
            )
        )
    return "\n".join(lines) + "\n"


def render_karpathy(rows: Sequence[Row], name: str) -> str:
    lines = [f"commit\t{name}\tmemory_gb\tstatus\tdescription"]
    for row in rows:
        status = str(row.get("status") or "pending")
        mapped = _KARPATHY_STATUS.get(status, "discard")
        value = metric_value(row)
        metrics = row.get("metrics") if isinstance(row.get("metrics"), Mapping) else {}
        assert isinstance(metrics, Mapping)
        mem = metrics.get("memory_gb")
        mem_text = (
            f"{float(mem):.1f}" if isinstance(mem, int | float) and mapped != "crash" else "0.0"
        )
        lines.append(
            "\t".join(
                [
                    str(row.get("commit", ""))[:7],
                    f"{value:.6f}" if value is not None and mapped != "crash" else "0.000000",
                    mem_text,
                    mapped,
                    _description(
                        row, status if status in _KEPT or status in ("discard", "crash") else mapped
                    ),
                ]
            )
        )
    return "\n".join(lines) + "\n"


def render_jsonl(rows: Sequence[Row]) -> str:
    return "".join(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n" for row in rows)


def table_cells(rows: Sequence[Row], direction: str) -> tuple[list[str], list[list[str]]]:
    runs = {str(r.get("run") or "") for r in rows}
    show_run = len(runs) > 1
    headers = (["run"] if show_run else []) + [
        "iter",
        "commit",
        "metric",
        "delta",
        "guard",
        "status",
        "description",
    ]
    out = []
    for row, delta in zip(rows, _deltas(rows, direction), strict=True):
        it = row.get("iteration")
        desc = _clean_text(row.get("description"))
        cells = ([str(row.get("run") or "-")] if show_run else []) + [
            str(it) if isinstance(it, int) else "-",
            str(row.get("commit", ""))[:10],
            _num(metric_value(row)),
            "-" if delta is None else (("+" if delta > 0 else "") + _num(delta)),
            _guard_word(row),
            str(row.get("status") or "pending"),
            desc if len(desc) <= 60 else desc[:57] + "...",
        ]
        out.append(cells)
    return headers, out


def raw_lines(rows: Sequence[Row]) -> list[tuple[str, str]]:
    """(commit, line) for every note line that could not be read."""
    return [(str(r.get("commit", "")), line) for r in rows for line in r.get("raw", ())]


def render_round(rows: Sequence[Row]) -> str:
    """A tournament round as a report: who won and why each other candidate lost."""
    if not rows:
        return "no such round\n"
    it = rows[0].get("iteration")
    winner = next((r for r in rows if r.get("winner") and r.get("commit") == r.get("winner")), None)
    if winner is not None:
        head = (
            f"round {it}: candidate {winner.get('candidate')} ({winner.get('family') or winner.get('approach') or 'other'}) "
            f"wins with {_num(metric_value(winner))} at {str(winner.get('commit'))[:10]}"
        )
    else:
        head = f"round {it}: no winner"
    cells = []
    for r in sorted(
        rows, key=lambda r: (r.get("rank") is None, r.get("rank") or 0, r.get("candidate") or 0)
    ):
        cells.append(
            [
                str(r.get("rank") or "-"),
                str(r.get("candidate", 0)),
                str(r.get("family") or "-"),
                str(r.get("commit", ""))[:10],
                _num(metric_value(r)),
                str(r.get("status") or "pending"),
                _clean_text(r.get("reason"))[:100],
            ]
        )
    from gitimprove.output import table

    return (
        head
        + "\n"
        + table(["rank", "cand", "family", "commit", "metric", "status", "reason"], cells)
    )
