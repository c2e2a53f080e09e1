"""`git improve log`, rendered once per notes tip and served from a cache without click.

The CLI hands `log` arguments here before importing click (DESIGN §13: a warm `log` within
1x `git log --notes=improve`, a cold one within 4x). The rendered output of each format (and
`--run`/`--round` selection) is kept in `<git-common-dir>/improve/cache/view-*`, keyed by
the notes and memory tips and the gitimprove version, written atomically; it is never the
source of truth, and `--no-cache` ignores it. A cold render reads the notes with two git
processes (no pygit2). Anything this path does not understand goes to the click command,
which renders through `produce` too, so both give the same bytes.
"""

from __future__ import annotations

import os
import sys

from gitimprove.util import gitdir
from gitimprove.util.files import read_state
from gitimprove.util.text import printable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from gitimprove.state.record import Experiment

    Row = dict[str, Any]

FORMATS = ("table", "tsv", "tsv8", "tsv7", "tsv6", "karpathy", "jsonl")
VIEW_VERSION = "3"


class Request:
    __slots__ = ("fmt", "no_cache", "round_", "run")

    def __init__(
        self,
        fmt: str = "table",
        run: str | None = None,
        round_: int | None = None,
        no_cache: bool = False,
    ) -> None:
        self.fmt, self.run, self.round_, self.no_cache = fmt, run, round_, no_cache


def parse_args(args: Sequence[str]) -> Request | None:
    """The request in `log` arguments, or None for anything else (help, a typo, …)."""
    req = Request()
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if arg == "--no-cache":
            req.no_cache = True
            i += 1
            continue
        if name not in ("--format", "--run", "--round"):
            return None
        if not eq:
            if i + 1 >= len(args):
                return None
            value = args[i + 1]
            i += 1
        i += 1
        if name == "--format":
            if value not in FORMATS:
                return None
            req.fmt = value
        elif name == "--run":
            req.run = value
        else:
            digits = value[1:] if value.startswith("-") else value
            if not (digits.isascii() and digits.isdigit()) or len(digits) > 9:
                return None
            req.round_ = int(value)
    return req


def _cache_file(loc: gitdir.Location, req: Request) -> str:
    name = req.fmt
    if req.run is not None:
        import hashlib

        name += "-run-" + hashlib.sha1(req.run.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    if req.round_ is not None:
        name += f"-round-{req.round_}"
    return os.path.join(loc.improve_dir, "cache", f"view-{name}")


def _key(loc: gitdir.Location) -> bytes:
    from gitimprove import __version__
    from gitimprove.git import refs

    notes = gitdir.read_ref(loc, refs.NOTES) or "-"
    memory = gitdir.read_ref(loc, refs.MEMORY) or "-"
    return f"gitimprove-view {VIEW_VERSION} {__version__} {notes} {memory}".encode()


def _cached(path: str, key: bytes) -> tuple[bytes, bytes] | None:
    """(stdout, stderr) from the cache file when its key matches."""
    try:
        data = read_state(path)
    except OSError:
        return None
    head, nl, rest = data.partition(b"\n")
    key_part, _, err_len = head.rpartition(b" ")
    if not nl or key_part != key or not err_len.isdigit():
        return None
    n = int(err_len)
    return rest[n:], rest[:n]


def render(rows: Sequence[Experiment], req: Request) -> tuple[str, str]:
    """(stdout, stderr) of `log` over `rows` (already selected)."""
    from gitimprove import output
    from gitimprove.state import views

    err = "".join(
        f"warning: unreadable line in the note on {commit[:10]}, skipped (kept as is): {line}\n"
        for commit, line in views.raw_lines(rows)
    )
    if req.fmt.startswith("tsv") or req.fmt == "karpathy":
        views.one_metric(rows, req.fmt)  # refuses runs of different direction or metric
    direction = views.direction_of(rows)
    if req.fmt.startswith("tsv"):
        return views.render_tsv(rows, direction, req.fmt), err
    if req.fmt == "karpathy":
        return views.render_karpathy(rows, views.metric_name_of(rows)), err
    if req.fmt == "jsonl":
        return views.render_jsonl(rows), err
    if req.round_ is not None:
        runs = sorted({r.run or "" for r in rows})
        if not runs:
            return f"no round {req.round_} recorded\n", err
        parts = [views.render_round([r for r in rows if (r.run or "") == run]) for run in runs]
        return "".join(parts), err
    if not rows:
        return "no experiments recorded yet; start with `git improve init`\n", err
    headers, cells = views.table_cells(rows, direction)
    return output.table(headers, cells), err


def produce(loc: gitdir.Location, req: Request) -> tuple[bytes, bytes]:
    """(stdout, stderr) of `log` as UTF-8: from the cache, else rendered and cached."""
    path = _cache_file(loc, req)
    key = _key(loc)
    if not req.no_cache:
        hit = _cached(path, key)
        if hit is not None:
            return hit
    from gitimprove.state import noterows
    from gitimprove.util.reader_bulk import no_gc

    with no_gc():
        fast = _from_digests(loc, req) if req.fmt.startswith("tsv") else None
        if fast is None and req.fmt.startswith("tsv"):
            rows = _select(noterows.view_rows(loc, use_cache=not req.no_cache, store=False), req)
            fast = _render_tsv(rows, req)
        if fast is not None:
            out_text, err_text = fast
        else:
            from gitimprove.state.record import Experiment

            rows = _select(noterows.view_rows(loc, use_cache=not req.no_cache, store=False), req)
            out_text, err_text = render([Experiment.from_row(r) for r in rows], req)
    # records an older gitimprove stored unmasked are shown masked (and the cache keeps them
    # so); a long log sends a row through the redactor only when a secret could be on it
    from gitimprove.redaction.display import STORED, mask_lines

    clean = set() if req.no_cache else _clean_rows(loc)
    known = len(clean)
    masked = mask_lines(out_text, json_lines=req.fmt == "jsonl", rows=True, clean=clean)
    if len(clean) != known:
        _keep_clean_rows(loc, clean)
    if masked != out_text:
        out_text, err_text = masked, err_text + f"warning: {STORED}\n"
    if req.fmt != "jsonl":  # JSON escapes control characters itself
        out_text = printable(out_text, lines=True)
    err_text = printable(err_text, lines=True)
    out, err = out_text.encode("utf-8"), err_text.encode("utf-8")
    try:
        from gitimprove.util.files import atomic_write

        atomic_write(path, key + b" %d\n" % len(err) + err + out, durable=False)
    except OSError:
        pass
    return out, err


# the digests of rows the redactor found clean (`redaction/display.py`), kept for the next
# render: one more experiment re-renders every row, and only the new ones are masked again
_CLEAN = "log-clean-rows"
_CLEAN_MAX = 200_000  # (16 bytes each)


def _clean_key() -> bytes:
    from gitimprove import __version__

    return f"gitimprove-clean-rows {VIEW_VERSION} {__version__}\n".encode()


def _clean_rows(loc: gitdir.Location) -> set[bytes]:
    """The digests of rows found clean by this gitimprove (none when the file is another
    version's, damaged or missing)."""
    try:
        data = read_state(os.path.join(loc.improve_dir, "cache", _CLEAN))
    except OSError:
        return set()
    key = _clean_key()
    if not data.startswith(key) or (len(data) - len(key)) % 16:
        return set()
    return {data[i : i + 16] for i in range(len(key), len(data), 16)}


def _keep_clean_rows(loc: gitdir.Location, clean: set[bytes]) -> None:
    """Write `clean` for the next render; past `_CLEAN_MAX` digests, drop the file (the next
    render keeps its own rows alone)."""
    path = os.path.join(loc.improve_dir, "cache", _CLEAN)
    try:
        if len(clean) > _CLEAN_MAX:
            os.unlink(path)
            return
        from gitimprove.util.files import atomic_write

        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write(path, _clean_key() + b"".join(sorted(clean)), durable=False)
    except OSError:
        pass


def _select(rows: list[Row], req: Request) -> list[Row]:
    """`views.select` over rows."""
    if req.run is not None:
        rows = [
            r for r in rows if (r.get("run") if isinstance(r.get("run"), str) else "") == req.run
        ]
    if req.round_ is not None:
        rows = [r for r in rows if _iteration(r) == req.round_]
    return rows


def _iteration(row: Row) -> int | None:
    it = row.get("iteration")
    return it if isinstance(it, int) and not isinstance(it, bool) else None


def _from_digests(loc: gitdir.Location, req: Request) -> tuple[str, str] | None:
    """`_render_tsv` from the TSV view's digests (`tsvrows`); None when git cannot answer,
    or the runs disagree, or a cached digest is damaged: the rows path then decides."""
    from gitimprove.state import tsvrows

    try:
        found = tsvrows.digests(loc, use_cache=not req.no_cache)
        return None if found is None else tsvrows.render(found, req.fmt, req.run, req.round_)
    except (TypeError, ValueError, IndexError, AttributeError, KeyError):  # a damaged cache
        return None


def _render_tsv(rows: list[Row], req: Request) -> tuple[str, str] | None:
    """`render` for the TSV formats straight from rows (no typed records); None when the
    rows' runs disagree on direction or metric (`render` refuses them, naming the runs)."""
    from gitimprove.state import tsv_export

    runs: dict[str, tuple[str | None, str | None]] = {}
    direction: str | None = None
    for row in rows:
        metric = row.get("metric")
        said = metric.get("direction") if isinstance(metric, dict) else None
        said = said if said in ("lower", "higher") else None
        name = metric.get("name") if isinstance(metric, dict) else None
        name = name if isinstance(name, str) and name else None
        run = row.get("run")
        group = run if isinstance(run, str) else ""
        known = runs.get(group, (None, None))
        runs[group] = (known[0] or said, known[1] or name)
        direction = said or direction
    if len({d for d, _ in runs.values() if d}) > 1 or len({m for _, m in runs.values() if m}) > 1:
        return None
    err = "".join(
        f"warning: unreadable line in the note on {str(row.get('commit') or '')[:10]}, "
        f"skipped (kept as is): {line}\n"
        for row in rows
        if isinstance(row.get("raw"), list | tuple)
        for line in row["raw"]
    )
    return tsv_export.render(rows, direction, req.fmt), err


def write(out: bytes, err: bytes) -> None:
    if err:
        sys.stderr.flush()
        sys.stderr.buffer.write(err)
        sys.stderr.buffer.flush()
    sys.stdout.flush()
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()


def serve(args: Sequence[str]) -> int | None:
    """Answer `git improve log ARGS` without click; None hands it to the click command."""
    req = parse_args(args)
    if req is None:
        return None
    loc = gitdir.discover()
    if loc is None:
        return None
    import gc

    # This process only prints the log and exits: the cycle collector would walk the ten
    # thousand rows of a cold render again once re-enabled, to find no cycle.
    gc.disable()
    try:
        out, err = produce(loc, req)
    except KeyboardInterrupt:
        return 130
    except Exception:  # the click command reports it through the error boundary
        return None
    try:
        write(out, err)
    except BrokenPipeError:  # `git improve log | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 0
