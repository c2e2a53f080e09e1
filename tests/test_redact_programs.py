"""Compiled rule programs kept between processes: the same findings as compiling afresh,
whatever state the cache file is in, and several hooks writing it at once."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gitimprove.redaction import ends, engine, programs, ruleset, views, wraps
from tests.conftest import ROOT
from tests.secret_corpus import corpus

# a child: masks the texts given as JSON, prints the results and how many patterns it had
# to compile (the rest came from the cache file)
CHILD = """
import json, sys
from gitimprove.redaction import clip, programs, redact
texts = json.load(sys.stdin)
out = [redact(t) for t in texts] + [clip(t, 40) for t in texts]
print(json.dumps({"out": out, "fresh": len(programs._new)}))
"""


def _texts() -> list[str]:
    own = [(ROOT / "gitimprove" / "redaction" / name).read_text() for name in ("engine.py",)]
    # the secrets are the corpus's (generated); these exercise the views
    dressed = "a \x1b[32mcoloured\x1b[0m line, a wrapped one\nand a\\\ncontinued one"
    secrets = [f.text for f in corpus()]
    return secrets + own + ["\n".join(secrets[:20]), dressed, "ordinary prose, nothing to mask"]


def _run(texts: list[str], **env: str) -> dict[str, object]:
    ran = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=True,
    )
    assert ran.stderr == ""
    result: dict[str, object] = json.loads(ran.stdout)
    return result


def _cache() -> Path:
    return Path(programs.path())


@pytest.mark.slow
def test_every_rule_program_matches_as_a_fresh_compile() -> None:
    """The program kept for each pattern finds exactly what `re.compile` finds."""
    sample = "\n".join(_texts())
    patterns = {(r.regex, int(r.flags)) for r in ruleset().rules}
    patterns |= {
        (views._DROP, 0),
        (wraps._CANDIDATE, 0),
        (wraps._DECORATION, 0),
        (ends._VALUE_END, 0),
        (engine.MARKER, 0),
    }
    for regex, flags in sorted(patterns):
        fresh = re.compile(regex, flags)
        kept, raw = programs._compile(regex, flags)
        again = programs._from_program(regex, raw)
        for p in (kept, again):
            assert (p.pattern, p.flags, p.groups, p.groupindex) == (
                fresh.pattern,
                fresh.flags,
                fresh.groups,
                fresh.groupindex,
            ), regex
            got = [m.span() + m.groups() for m in p.finditer(sample)]
            assert got == [m.span() + m.groups() for m in fresh.finditer(sample)], regex


@pytest.mark.slow
def test_a_second_process_compiles_nothing_and_finds_the_same() -> None:
    texts = _texts()
    reference = _run(texts, GITIMPROVE_REGEX_CACHE="0")
    assert not _cache().exists()
    first = _run(texts)
    assert first["out"] == reference["out"]
    assert isinstance(first["fresh"], int) and first["fresh"] > 20
    assert _cache().stat().st_mode & 0o777 == 0o600
    second = _run(texts)
    assert second == {"out": reference["out"], "fresh": 0}
    masks = sum(o.count("[REDACTED:") for o in second["out"])  # type: ignore[union-attr]
    assert masks >= len(corpus())


def _damage(kind: str, file: Path) -> None:
    data = file.read_bytes()
    header, digest, body = data.split(b"\n", 2)
    if kind == "truncated":
        file.write_bytes(data[: len(data) // 2])
    elif kind == "flipped byte":
        at = len(body) // 2
        file.write_bytes(
            b"\n".join([header, digest, body[:at] + bytes([body[at] ^ 1]) + body[at + 1 :]])
        )
    elif kind == "another python":
        file.write_bytes(
            b"\n".join([header.replace(b"gitimprove-sre 1", b"gitimprove-sre 0"), digest, body])
        )
    elif kind == "garbage":
        file.write_bytes(os.urandom(4096))
    elif kind == "empty":
        file.write_bytes(b"")
    elif kind == "writable by others":
        file.chmod(0o666)
    elif kind == "not a dict":
        import marshal
        import zlib

        body = marshal.dumps([1, 2, 3])
        file.write_bytes(b"\n".join([header, b"%08x" % zlib.crc32(body), body]))
    elif kind == "a folder":
        file.unlink()
        file.mkdir()
    else:
        raise AssertionError(kind)


@pytest.mark.slow
@pytest.mark.parametrize(
    "kind",
    [
        "truncated",
        "flipped byte",
        "another python",
        "garbage",
        "empty",
        "writable by others",
        "not a dict",
        "a folder",
    ],
)
def test_a_damaged_or_foreign_cache_is_compiled_around(kind: str) -> None:
    texts = _texts()[:40] + _texts()[-3:]
    reference = _run(texts, GITIMPROVE_REGEX_CACHE="0")
    _run(texts)
    _damage(kind, _cache())
    ran = _run(texts)
    assert ran["out"] == reference["out"]
    assert isinstance(ran["fresh"], int) and ran["fresh"] > 0  # the file was not believed
    if kind != "a folder":
        assert _run(texts) == {"out": reference["out"], "fresh": 0}  # and was written anew


@pytest.mark.slow
def test_several_processes_fill_the_cache_at_once() -> None:
    texts = _texts()
    parts = [texts[n::6] for n in range(6)]
    reference = [_run(p, GITIMPROVE_REGEX_CACHE="0")["out"] for p in parts]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in parts
    ]
    for proc, part, ref in zip(procs, parts, reference, strict=True):
        out, err = proc.communicate(json.dumps(part))
        assert proc.returncode == 0 and err == ""
        assert json.loads(out)["out"] == ref
    table = programs._read(str(_cache()))
    assert len(table) > 20
    assert [p.name for p in _cache().parent.iterdir()] == [_cache().name]  # no temp file left
    for part, ref in zip(parts, reference, strict=True):
        assert _run(part)["out"] == ref


def test_the_cache_is_kept_outside_the_repository(tmp_path: Path) -> None:
    assert _cache().is_relative_to(Path(os.environ["XDG_CACHE_HOME"]))
    assert _cache().name == f"sre-{sys.implementation.cache_tag}"
