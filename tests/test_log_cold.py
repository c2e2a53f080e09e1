"""A cold `log` (no cache) reads every note at once — the bulk reader, plain rows, the
one-pass TSV writer, notes parsed while git still reads them — and prints the same bytes as
the typed path it replaced: every line read alone by the tolerant reader, folded into
`Experiment`s, each TSV cell by its helper and each delta through `Decimal`. The typed path is
kept here as the oracle, on notes of every kind: loop records of several lines, hostile lines,
unknown fields, pending rows, and imports of every era."""

from __future__ import annotations

import json
import random
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from gitimprove.errors import GitImproveError
from gitimprove.git import memory, notes, refs
from gitimprove.state import logview, records, tsv_export, views
from gitimprove.state.imports import import_file, latest_versions
from gitimprove.state.record import Experiment
from gitimprove.util import gitdir, proc, reader, reader_bulk
from tests import oracle_tsv_export
from tests.conftest import TmpRepo, build_once, copy_scenario, fast_commits, git
from tests.test_hostile_records import HOSTILE_LINES

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
ERAS = [
    "autoresearch-plugin/v1-example.tsv",
    "autoresearch-plugin/v2-guard-example.tsv",
    "autoresearch-plugin/v3-log-iteration.tsv",
    "autoresearch-plugin/v4-guard-metric-example.tsv",
    "autoresearch-plugin/v4-log-iteration.tsv",
    "karpathy/program-example.tsv",
    "parameter-golf/autoresearch.jsonl",
    "trekoon/autoresearch.jsonl",
    "opencli/autoresearch-results.tsv",
]
STATUSES = [*records.STATUSES, "pending", "weird status", ""]


# --- the oracle: the typed path as it was ---------------------------------------------------


def typed_rows(loc: gitdir.Location) -> list[Experiment]:
    """Every experiment, each note line read alone by the tolerant reader (pygit2)."""
    from gitimprove.git.repo import open_repo

    repo = open_repo(loc.work_tree or loc.git_dir, need_work_tree=False)
    exps: list[Experiment] = []
    imported: list[Experiment] = []
    for commit, data in notes.iter_notes(repo):
        own, raw, on_commit = [], [], {}  # type: ignore[var-annotated]
        for line in data.decode("utf-8", errors="replace").splitlines():
            if not line.strip():
                continue
            obj = records.read_line(line.strip())
            if isinstance(obj, reader.Unreadable):
                raw.append(f"{obj.reason}: {obj.preview}")
            elif isinstance(obj.get("import_id"), str):
                on_commit.setdefault(obj["import_id"], []).append(obj)
            else:
                own.append(obj)
        if own or raw:
            exps.append(Experiment(commit, records.fold(own), tuple(raw)))
        imported.extend(Experiment(commit, records.fold(lines)) for lines in on_commit.values())
    has_memory = repo.ref_target(refs.MEMORY) is not None
    blobs = [d for _, d in memory.iter_entries(repo, "imports/")] if has_memory else []
    imported.extend(Experiment.from_row(r) for r in records.imported_rows_of(blobs))
    exps.extend(latest_versions(imported))
    return views.order(exps)


def typed_log(loc: gitdir.Location, req: logview.Request) -> tuple[bytes, bytes] | str:
    """(stdout, stderr) of `log` by the typed path, or the error it refuses with."""
    rows = views.select(typed_rows(loc), run=req.run, round_=req.round_)
    try:
        if req.fmt.startswith("tsv"):
            views.one_metric(rows, req.fmt)
            direction = views.direction_of(rows)
            err = "".join(
                f"warning: unreadable line in the note on {c[:10]}, skipped (kept as is): {line}\n"
                for c, line in views.raw_lines(rows)
            )
            out = oracle_tsv_export.render([r.to_row() for r in rows], direction, req.fmt)
            return out.encode(), err.encode()
        out_text, err_text = logview.render(rows, req)
    except GitImproveError as exc:
        return str(exc)
    return out_text.encode(), err_text.encode()


def cold_log(loc: gitdir.Location, req: logview.Request) -> tuple[bytes, bytes] | str:
    shutil.rmtree(Path(loc.improve_dir) / "cache", ignore_errors=True)
    try:
        return logview.produce(loc, req)
    except GitImproveError as exc:
        return str(exc)


# --- a corpus of notes of every kind --------------------------------------------------------


def _line(rng: random.Random, i: int, run: str) -> dict[str, object]:
    value = rng.choice(
        [
            round(rng.uniform(0, 200), rng.randint(0, 6)),
            rng.randint(-5, 500),
            rng.uniform(1e-9, 1e-4),  # repr in scientific notation
            1e17 * rng.random(),
            rng.choice([0.1, 0.2, 0.30000000000000004, -0.0, 0.0, 100.0]),
            None,
            "fast",
        ]
    )
    fields: dict[str, object] = {
        "run": run,
        "iteration": rng.choice([i, i, i, None, "7", True]),
        "candidate": rng.choice([0, 1, 2, None]),
        "status": rng.choice(STATUSES),
        "description": rng.choice(["", "a\tb  c", "[x] y", "plain words", "ünïcödé ✓"]),
        "metric": {
            "name": rng.choice(["ms", "ms", None]),
            "direction": rng.choice(["lower", "lower", "sideways", None]),
            "value": value,
            "samples": rng.choice([[value] * 2, [1, 2.5], [], [True], None]),
            "future": {"deep": [1, {"x": None}]},
        },
        "guard": rng.choice(
            [{"status": "pass"}, {"status": "fail", "metric": 3}, {"metric": 2.5}, None, "x"]
        ),
        "timestamp": rng.choice([None, "2026-01-01 10:00", "  ", 5]),
        "started": rng.choice([None, "2026-01-01T09:00:00.5Z", "yesterday"]),
        "source": rng.choice([None, None, {"row": i, "delta": "+1.5"}, {"delta": "x"}, "s"]),
        "label": rng.choice([None, "7b", "  a  b "]),
        "unknown_field": rng.choice([None, [1, [2, [3]]], {"k": "v"}, 10**30]),
    }
    return {k: v for k, v in fields.items() if v is not None or rng.random() < 0.2}


def build_corpus(path: Path) -> None:
    git(path, "init", "-q")
    repo = TmpRepo(path)
    repo.commit("initial", {"f": "0"})
    commits = fast_commits(repo, 160, "exp")
    rng = random.Random(13)
    batch: dict[str, list[str]] = {}
    for i, c in enumerate(commits[:150]):
        run = ["r1", "r2", "", "r3"][i % 4]
        lines = [records.make_line("create", _line(rng, i, run), ts=f"2026-02-01T00:{i:02d}Z")]
        for k in range(rng.choice([0, 0, 1, 2])):  # updates, some from an earlier time
            update = {"status": rng.choice(STATUSES), "reason": "r", "gone": rng.random() < 0.1}
            lines.append(records.make_line("update", update, ts=f"2026-02-0{k}T00:00Z"))
        if i % 9 == 0:
            lines.append(HOSTILE_LINES[(i // 9) % len(HOSTILE_LINES)])
        if i % 25 == 0:
            lines.append("  \t ")
        batch[c] = lines
    notes.append_lines(repo.open(), batch)
    raw_note = path / "raw-note"
    for c, text in zip(
        commits[150:],
        [
            '{"v":1,"run":"r1","iter\\u0061tion":"x","status":"keep"}',  # an escaped known key
            '{"v":1,"run":"r1","status":"keep"} trailing',
            ' {"v":1,"run":"r1","status":"keep","iteration":3}',
            '{"v":2,"status":"keep"}',
            '{"v":1,"status":"keep","escalation":9223372036854775809}',
            '{"v":1,"status":"keep","unknown":1e301}',
            '{"v":1,"status":"keep","metric":{"value":1.5e300}}',
            '{"v":1,"status":"discard","metric":{"value":1e299,"samples":[1e-320]}}',
            '{"v":1,"status":"keep","iteration":-9223372036854775808}',
            '{"v":1,"status":"keep"}\r{"v":1,"status":"crash"}\u2028{"v":1,"reason":"x"}',
        ],
        strict=True,
    ):
        raw_note.write_text(text)
        git(path, "notes", "--ref=improve", "add", "-f", "-F", str(raw_note), c)
    git(path, "notes", "--ref=improve", "append", "-m", "\xff\xfe", commits[0], check=False)
    for era in ERAS:
        import_file(repo.open(), FIXTURES / era)
    # our own TSV of one run, imported back onto its commits (import rows in the notes)
    own = path / "own.tsv"
    loc = gitdir.discover(str(path))
    assert loc is not None
    out = cold_log(loc, logview.Request("tsv", run="r2"))
    assert isinstance(out, tuple)
    own.write_bytes(out[0])
    import_file(repo.open(), own)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_once(tmp_path_factory, "log-corpus", build_corpus)


def _requests(loc: gitdir.Location) -> list[logview.Request]:
    runs = sorted({str(r.run or "") for r in typed_rows(loc)})
    reqs = [logview.Request(fmt) for fmt in logview.FORMATS]
    for run in runs:
        reqs += [logview.Request(fmt, run=run) for fmt in ("tsv", "tsv6", "karpathy", "jsonl")]
    reqs += [logview.Request("table", round_=r) for r in (0, 1, 7, -1)]
    return reqs


@pytest.mark.slow
def test_cold_log_prints_what_the_typed_path_prints(corpus: Path, tmp_path: Path) -> None:
    root = copy_scenario(corpus, tmp_path / "c")
    loc = gitdir.discover(str(root))
    assert loc is not None
    typed = typed_rows(loc)
    assert len(typed) > 150 and any(r.raw for r in typed)
    assert any(r.import_id for r in typed) and any(r.state.get("gone") for r in typed)
    tsv_seen = 0
    for req in _requests(loc):
        want, got = typed_log(loc, req), cold_log(loc, req)
        assert got == want, (req.fmt, req.run, req.round_)
        tsv_seen += req.fmt.startswith("tsv") and isinstance(want, tuple) and len(want[0]) > 200
    assert tsv_seen >= 4  # the TSV writer itself was compared, not only its refusal
    # the rows every other command reads are the typed path's too
    rows = views.load_rows(loc, use_cache=False)
    assert [e.to_row() for e in rows] == [e.to_row() for e in typed]
    assert [e.raw for e in rows] == [e.raw for e in typed]


@pytest.mark.slow
def test_cold_log_through_the_cli_is_the_typed_path(corpus: Path, tmp_path: Path) -> None:
    root = copy_scenario(corpus, tmp_path / "c")
    repo = TmpRepo(root)
    loc = gitdir.discover(str(root))
    assert loc is not None
    git(root, "gc", "-q")  # packed, as a real repository is
    for req, args in [
        (logview.Request("tsv", run="r1"), ["--format", "tsv", "--run", "r1"]),
        (logview.Request("jsonl"), ["--format", "jsonl"]),
        (logview.Request("table"), []),
    ]:
        want = typed_log(loc, req)
        assert isinstance(want, tuple)
        shutil.rmtree(root / ".git" / "improve" / "cache", ignore_errors=True)
        res = repo.cli("log", *args)
        assert res.returncode == 0, res.stderr
        assert (res.stdout.encode(), res.stderr.encode()) == want, args


@pytest.mark.slow
def test_log_reads_notes_without_the_pipeline_the_same(corpus: Path, tmp_path: Path) -> None:
    """When git cannot stream (an old git), the two-step and pygit2 reads give the same rows."""
    from gitimprove.state import noterows

    root = copy_scenario(corpus, tmp_path / "c")
    loc = gitdir.discover(str(root))
    assert loc is not None
    streamed = noterows.view_rows(loc, use_cache=False, store=False)
    found = noterows._blobs_by_git(loc, gitdir.read_ref(loc, refs.NOTES), None)
    assert found is not None
    with_imports = noterows.load(loc, gitdir.read_ref(loc, refs.NOTES), None)
    assert noterows.rows(*found) == with_imports
    assert len(streamed) > len(with_imports)  # the memory branch's imports/ rows come too


# --- the parts ------------------------------------------------------------------------------


def _mutations(rng: random.Random, base: str) -> list[str]:
    obj = json.loads(base)
    keys = list(obj)
    k = rng.choice(keys)
    wrong = rng.choice(
        ['"x"', "true", "1.5", "[1]", '{"a":1}', "null", "1e400", "NaN", "-Infinity", "2e300"]
    )
    return [
        base,
        base[: rng.randint(0, len(base))],
        " " + base,
        base + " ",
        base + "x",
        base.replace(f'"{k}":', f'"{k}":{wrong},"{k}_was":', 1),
        base.replace(f'"{k}"', '"' + "".join(f"\\u{ord(c):04x}" for c in k) + '"', 1),
        base.replace("{", "[" * 40 + "{", 1) + "]" * 40,
        base.replace("}", ',"z":' + "[" * 20 + "]" * 20 + "}", 1),
        base.replace(
            '"v":1', '"v":' + rng.choice(["2", "0", "-3", "1.0", '"1"', "true", "99" * 10])
        ),
        base.replace("1", "\\ud800", 1),
        json.dumps([obj]),
        "null",
        "",
    ]


SCHEMAS: list[reader.Schema] = [
    records.LINE_SCHEMA,
    {"id": "str", "n": "int", "tags": ["str"], "items": [{"k": "str", "w": "num?"}], "o": "num?"},
]


@pytest.mark.parametrize("schema", SCHEMAS, ids=["note-line", "required-fields"])
def test_bulk_reader_reads_as_the_reader_does(schema: reader.Schema) -> None:
    rng = random.Random(7)
    bases = [records.make_line("create", _line(rng, i, "r")) for i in range(60)] + [
        json.dumps({"id": "a", "n": 3, "tags": ["x"], "items": [{"k": "y", "w": 1}], "o": 2.5}),
        json.dumps({"id": "a", "n": True, "tags": [1], "items": [{"w": "x"}]}),
        json.dumps({"id": "a", "n": 2**64, "tags": [], "items": [], "o": 10**20}),
        json.dumps({"n": 1, "tags": None, "items": [None]}),
    ]
    texts = [m for base in bases for m in _mutations(rng, base)]
    rng.shuffle(texts)
    for version in (1, None):
        bulk = reader_bulk.load_objects(texts, schema, version=version)
        one = [reader.load_object(t, schema, version=version) for t in texts]
        assert [_shown(x) for x in bulk] == [_shown(x) for x in one]
        readable = sum(isinstance(x, dict) for x in one)
        assert readable > (50 if schema is records.LINE_SCHEMA else 3)  # compared too


def _shown(x: object) -> object:
    return (x.reason, x.preview) if isinstance(x, reader.Unreadable) else x


def _reprs(rng: random.Random) -> list[int | float]:
    return [
        rng.choice(
            [
                round(rng.uniform(-1000, 1000), rng.randint(0, 8)),
                rng.randint(-(10**30), 10**30),
                rng.randint(-3, 3),
                rng.uniform(-1e-6, 1e-6),
                rng.uniform(-1e22, 1e22),
                float(rng.randint(-100, 100)),
                -0.0,
            ]
        )
        for _ in range(4000)
    ]


def test_exact_deltas_are_the_decimal_ones() -> None:
    rng = random.Random(3)
    values = _reprs(rng)
    for value, prev in zip(values, values[1:] + values[:1], strict=True):
        d = Decimal(value) if isinstance(value, int) else Decimal(repr(value))
        p = Decimal(prev) if isinstance(prev, int) else Decimal(repr(prev))
        ev, ep = tsv_export._exact(value), tsv_export._exact(prev)
        if ev is None or ep is None:
            continue
        assert tsv_export._signed_exact(ev, ep) == tsv_export.signed(d - p), (value, prev)
        assert tsv_export._less(ev, ep) == (d < p)


def test_the_tsv_writer_is_the_old_one_on_random_rows() -> None:
    rng = random.Random(11)
    values: list[int | float | None] = [*_reprs(rng)[:300], None]
    for trial in range(30):
        rows = []
        for i in range(60):
            row = _line(rng, i, rng.choice(["a", "b", ""]))
            row["commit"] = rng.choice([f"{i:040x}", "", None])
            row["ts"] = rng.choice([f"2026-03-01T00:00:{i:02d}Z", None, 7])
            if isinstance(row.get("metric"), dict):
                row["metric"]["value"] = rng.choice(values)  # type: ignore[index]
            rows.append(row)
        for direction in ("lower", "higher", None):
            for layout in tsv_export.LAYOUTS:
                want = oracle_tsv_export.render(rows, direction, layout)
                assert tsv_export.render(rows, direction, layout) == want, (trial, layout)


@pytest.mark.slow
def test_a_pipeline_left_early_leaves_no_process(corpus: Path, tmp_path: Path) -> None:
    from gitimprove.git import catfile

    root = copy_scenario(corpus, tmp_path / "c")
    loc = gitdir.discover(str(root))
    assert loc is not None
    tip = gitdir.read_ref(loc, "refs/notes/improve")
    assert tip
    listed = catfile.tree_blobs(loc, tip)
    assert listed
    stream = catfile.stream_blobs(loc, [blob for _, blob in listed])
    assert next(stream)
    assert proc.live_children()  # cat-file is running, or waiting to be reaped
    stream.close()
    assert not proc.live_children()
    with pytest.raises(catfile.Unanswered):
        list(catfile.stream_blobs(loc, ["0" * 40]))
    assert not proc.live_children()


def test_rows_cache_that_is_not_rows_is_ignored(corpus: Path, tmp_path: Path) -> None:
    from gitimprove.state import noterows

    root = copy_scenario(corpus, tmp_path / "c")
    loc = gitdir.discover(str(root))
    assert loc is not None
    fresh = noterows.view_rows(loc, use_cache=False, store=True)
    cache = Path(loc.improve_dir) / "cache" / "log.json"
    data = json.loads(cache.read_text())
    data["rows"][0] = "not a row"
    cache.write_text(json.dumps(data))
    assert noterows.view_rows(loc) == fresh


def test_deltas_of_values_with_as_many_places_are_the_old_ones() -> None:
    """The usual run: every value with the same number of decimal places (87.15 then 85.05:
    `-2.1`, not `-2.10`), each row kept or not, in both directions."""
    rng = random.Random(17)
    for trial in range(40):
        places = rng.randint(1, 6)
        scale = rng.choice([1, 100, 10**6, 10**12])
        rows = []
        for i in range(40):
            value = float(f"{rng.uniform(-scale, scale):.{places}f}")
            if rng.random() < 0.3:  # the same digits again, or ending in zeros
                value = float(f"{round(value, places - 1):.{places}f}")
            status = rng.choice(["keep", "keep", "discard", "baseline", "crash"])
            metric = {"name": "ms", "direction": "lower", "value": value}
            rows.append({"run": "r", "iteration": i, "status": status, "metric": metric})
        for direction in ("lower", "higher", None):
            want = oracle_tsv_export.render(rows, direction, "tsv")
            assert tsv_export.render(rows, direction, "tsv") == want, trial
