"""Result views rebuilt from notes and imports: table, autoresearch TSV, Karpathy TSV, JSONL.

Views are never the truth (DESIGN §1). The folded rows are cached in
`<git-common-dir>/improve/cache/` keyed by the notes and memory tips, read with the
pure-Python ref reader, so a warm `log` imports neither pygit2 nor tomllib.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from gitimprove.git import refs  # ref names only: imports no pygit2
from gitimprove.state import noterows
from gitimprove.state.record import Experiment
from gitimprove.state.records import KEPT
from gitimprove.util import gitdir
from gitimprove.util.files import atomic_write, read_state
from gitimprove.util.text import cell

CACHE_VERSION = noterows.CACHE_VERSION

Row = dict[str, Any]  # the cache's form of one experiment: {"commit": …, **folded fields}

_KARPATHY_STATUS = {
    "baseline": "keep",
    "keep": "keep",
    "keep-reworked": "keep",
    "crash": "crash",
    "timeout": "crash",
    "metric-error": "crash",
}


def load_rows(
    loc: gitdir.Location, *, use_cache: bool = True, store: bool = True
) -> list[Experiment]:
    """Every experiment (notes, then imports), folded, in display order; `store` keeps the
    rows in the rows cache for the next reader."""
    return [
        Experiment.from_row(r) for r in noterows.view_rows(loc, use_cache=use_cache, store=store)
    ]


def latest_run_tail(loc: gitdir.Location, n: int = 10) -> tuple[str | None, list[Experiment]]:
    """The last `n` rows of the most recent run, from a small cache of its own (SessionStart
    must not parse the whole log to show ten rows)."""
    key = [gitdir.read_ref(loc, refs.NOTES) or "", gitdir.read_ref(loc, refs.MEMORY) or "", n]
    path = Path(loc.improve_dir) / "cache" / "tail.json"
    try:
        cached = json.loads(read_state(path))
        if cached.get("key") == key:
            return cached["run"], [Experiment.from_row(r) for r in cached["rows"]]
    except (OSError, ValueError, AttributeError, KeyError, TypeError, RecursionError):
        pass
    rows = load_rows(loc)
    runs = [r.run for r in rows if r.run]
    run = runs[-1] if runs else None
    tail = [r for r in rows if r.run == run][-n:] if run else []
    try:
        atomic_write(
            path,
            json.dumps({"key": key, "run": run, "rows": [r.to_row() for r in tail]}),
            durable=False,
        )
    except OSError:
        pass
    return run, tail


def order(exps: Iterable[Experiment]) -> list[Experiment]:
    """Runs in the order they started; within a run, by iteration and candidate."""
    groups: dict[str, list[Experiment]] = {}
    for e in exps:
        groups.setdefault(e.run or "", []).append(e)

    def in_group(e: Experiment) -> tuple[int, int, int, str]:
        source = e.state.get("source")
        if isinstance(source, dict) and isinstance(source.get("row"), int):
            return (0, source["row"], 0, "")  # an imported row: its place in the file
        it = e.iteration
        return (0 if it is not None else 1, it or 0, e.candidate, e.ts)

    ordered: list[Experiment] = []
    for _, members in sorted(groups.items(), key=lambda kv: min(e.ts for e in kv[1])):
        ordered.extend(sorted(members, key=in_group))
    return ordered


def select(
    rows: Sequence[Experiment], *, run: str | None = None, round_: int | None = None
) -> list[Experiment]:
    out = list(rows)
    if run is not None:
        out = [r for r in out if (r.run or "") == run]
    if round_ is not None:
        out = [r for r in out if r.iteration == round_]
    return out


# --- formatting -------------------------------------------------------------------------------


def _num(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-"
    return f"{float(value):.10g}"


def direction_of(rows: Sequence[Experiment]) -> str | None:
    """The direction the rows state (the latest that does); None when none knows it."""
    for row in reversed(rows):
        if row.direction:
            return row.direction
    return None


def metric_name_of(rows: Sequence[Experiment], default: str = "metric") -> str:
    for row in reversed(rows):
        if row.metric_name:
            return row.metric_name
    return default


def one_metric(rows: Sequence[Experiment], fmt: str) -> None:
    """A results file has one metric column (and the plugin's, one direction line): refuse
    rows of runs that disagree on them, naming the runs. A run that does not know its
    direction or metric name agrees with any."""
    with_direction = fmt.startswith("tsv")
    runs: dict[str, tuple[str | None, str | None]] = {}
    for row in rows:
        name = row.run or ""
        direction, metric = runs.get(name, (None, None))
        runs[name] = (direction or row.direction, metric or row.metric_name)
    directions = {d for d, _ in runs.values() if d} if with_direction else set()
    names = {m for _, m in runs.values() if m}
    if len(directions) <= 1 and len(names) <= 1:
        return
    from gitimprove.errors import GitImproveError

    def shown(run: str) -> str:
        direction, metric = runs[run]
        said = [p for p in (metric, f"{direction} is better" if direction else None) if p]
        return f"{run or '(manual experiments)'}: {', '.join(said) or 'unknown'}"

    kind = (
        "the autoresearch TSV has one metric and one direction line"
        if with_direction
        else ("Karpathy's results.tsv has one metric column")
    )
    example = next((r for r in runs if r), "NAME")
    raise GitImproveError(
        f"{kind}, and the selected runs differ ({'; '.join(shown(r) for r in runs)})",
        hint=f"export one run at a time: git improve log --format {fmt} --run {example}",
    )


def row_deltas(rows: Sequence[Experiment], direction: str | None) -> list[float | None]:
    """Each row's delta as its record states it (a decision's note; an imported file); the
    same numbers the TSV writes (`tsv_export.deltas`). Never recomputed from other rows when
    the record has one: a view shows what the decision saw, as its note and reason do."""
    from gitimprove.state import tsv_export

    found = tsv_export.deltas([r.to_row() for r in rows], direction)
    return [None if d is None else float(d) for d in found]


def _clean_text(text: Any) -> str:
    return cell(str(text or ""))  # no control character reaches a cell (util/text.py)


def _guard_word(row: Experiment) -> str:
    guard = row.guard
    if guard is not None:
        return {"pass": "pass", "fail": "fail"}.get(str(guard.status), "-")
    return "-"


def _description(row: Experiment, mapped: str) -> str:
    text = _clean_text(row.description)
    status = row.status or "pending"
    if status not in (mapped, "keep-reworked"):
        text = f"[{status}] {text}".rstrip()
    return text


def _iteration(row: Experiment) -> str:
    return "-" if row.iteration is None else str(row.iteration)


def render_tsv(rows: Sequence[Experiment], direction: str | None, layout: str = "tsv") -> str:
    """The autoresearch plugin's TSV: `tsv` its current 9 columns, `tsv8`/`tsv7`/`tsv6` its
    older eras. No direction line when the direction is unknown."""
    from gitimprove.state import tsv_export

    return tsv_export.render([r.to_row() for r in rows], direction, layout)


def render_karpathy(rows: Sequence[Experiment], name: str) -> str:
    lines = [f"commit\t{name}\tmemory_gb\tstatus\tdescription"]
    for row in rows:
        status = row.status or "pending"
        mapped = _KARPATHY_STATUS.get(status, "discard")
        value = row.value
        mem = row.metrics.get("memory_gb")
        mem_text = f"{mem:.1f}" if mem is not None and mapped != "crash" else "0.0"
        lines.append(
            "\t".join(
                [
                    row.commit[:7],
                    f"{value:.6f}" if value is not None and mapped != "crash" else "0.000000",
                    mem_text,
                    mapped,
                    _description(
                        row, status if status in KEPT or status in ("discard", "crash") else mapped
                    ),
                ]
            )
        )
    return "\n".join(lines) + "\n"


# what `str.splitlines` and JavaScript take for a line end and JSON leaves raw
_RAW_ENDS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def render_jsonl(rows: Sequence[Experiment]) -> str:
    """One JSON object a line; no character inside a line that a reader could take for its end."""
    return "".join(
        json.dumps(row.to_row(), sort_keys=True, ensure_ascii=False).translate(_RAW_ENDS) + "\n"
        for row in rows
    )


def table_cells(
    rows: Sequence[Experiment], direction: str | None, last: int | None = None
) -> tuple[list[str], list[list[str]]]:
    """The log table; with `last`, its last rows only, their deltas found from all rows (a
    row the rule never compared is measured from the best kept value of the whole run)."""
    deltas = row_deltas(rows, direction)
    if last is not None:
        rows, deltas = rows[-last:], deltas[-last:]
    runs = {r.run or "" for r in rows}
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
    for row, delta in zip(rows, deltas, strict=True):
        desc = _clean_text(row.description)
        cells = ([row.run or "-"] if show_run else []) + [
            _iteration(row),
            row.commit[:10],
            _num(row.value),
            "-" if delta is None else (("+" if delta > 0 else "") + _num(delta)),
            _guard_word(row),
            row.status or "pending",
            desc if len(desc) <= 60 else desc[:57] + "...",
        ]
        out.append(cells)
    return headers, out


def raw_lines(rows: Sequence[Experiment]) -> list[tuple[str, str]]:
    """(commit, line) for every note line that could not be read."""
    return [(r.commit, line) for r in rows for line in r.raw]


def render_round(rows: Sequence[Experiment]) -> str:
    """A tournament round as a report: who won and why each other candidate lost."""
    if not rows:
        return "no such round\n"
    it = rows[0].iteration
    winner = next((r for r in rows if r.winner and r.commit == r.winner), None)
    if winner is not None:
        head = (
            f"round {it}: candidate {winner.candidate} ({winner.family_or_approach or 'other'}) "
            f"wins with {_num(winner.value)} at {winner.commit[:10]}"
        )
    else:
        head = f"round {it}: no winner"
    cells = []
    for r in sorted(rows, key=lambda r: (r.rank is None, r.rank or 0, r.candidate)):
        cells.append(
            [
                str(r.rank or "-"),
                str(r.candidate),
                r.family or "-",
                r.commit[:10],
                _num(r.value),
                r.status or "pending",
                _clean_text(r.reason)[:100],
            ]
        )
    from gitimprove.output import table

    return (
        head
        + "\n"
        + table(["rank", "cand", "family", "commit", "metric", "status", "reason"], cells)
    )
