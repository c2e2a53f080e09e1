"""All terminal output goes through here (STYLE.md §1): the core returns values, this prints."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from gitimprove.util.text import printable


def safe(text: object) -> str:
    """Untrusted text (from a record, a file name, an agent) as one printable line: every
    control or invisible formatting character shown escaped (`\\x1b`, `\\r`, `\\n`)."""
    return printable(str(text))


def echo(message: str = "", *, err: bool = False) -> None:
    """Print a line; whatever it holds, no terminal control sequence reaches the terminal."""
    stream = sys.stderr if err else sys.stdout
    stream.write(printable(message, lines=True) + "\n")
    stream.flush()


def warn(message: str) -> None:
    echo(f"warning: {message}", err=True)


def error(message: str) -> None:
    """An error's message, masked: it may quote what it refuses (an import's cell, a file
    name, a command), and a secret there would reach a terminal, a CI log or an agent's
    transcript."""
    from gitimprove.redaction import redact

    echo(f"error: {redact(message)}", err=True)


_warned = False


def shown(text: str, *, json_lines: bool = False) -> str:
    """Text of stored records, masked for display (`redaction/display.py`): an older
    gitimprove stored it unmasked. The first time something is masked, stderr says so and
    names the command that masks the records themselves."""
    from gitimprove.redaction.display import mask_lines

    masked = mask_lines(text, json_lines=json_lines)
    if masked != text:
        stored_secrets()
    return masked


def shown_clip(text: str, limit: int) -> str:
    """The first `limit` characters of a stored record's text, masked (`shown`) before the
    cut."""
    from gitimprove.redaction import clip

    return clip(shown(text), limit)


def shown_json(value: Any) -> None:
    """`emit_json` of a stored record, masked (`shown`): it stays JSON."""
    echo(shown(json.dumps(value, sort_keys=True, ensure_ascii=False), json_lines=True).rstrip("\n"))


def stored_secrets() -> None:
    """Say once that stored records hold secrets, and how to mask them."""
    global _warned
    if not _warned:
        from gitimprove.redaction.display import STORED

        _warned = True
        warn(STORED)


def write(text: str) -> None:
    sys.stdout.write(printable(text, lines=True))
    sys.stdout.flush()


def emit_json(value: Any) -> None:
    echo(json.dumps(value, sort_keys=True, ensure_ascii=False))


def table(
    headers: Sequence[str], rows: Iterable[Sequence[str]], *, right: Sequence[int] = ()
) -> str:
    """Render a plain-text table; columns in `right` are right-aligned. Each cell is shown
    as one printable line (`safe`): a file name or description cannot forge a row."""
    materialized = [list(map(safe, r)) for r in rows]
    widths = [len(h) for h in headers]
    for row in materialized:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def fmt(cells: Sequence[str]) -> str:
        out = []
        for i, cell in enumerate(cells):
            last = i == len(cells) - 1
            if i in right:
                out.append(cell.rjust(widths[i]))
            else:
                out.append(cell if last else cell.ljust(widths[i]))
        return "  ".join(out).rstrip()

    lines = [fmt(headers), fmt(["-" * w for w in widths])]
    lines.extend(fmt(r) for r in materialized)
    return "\n".join(lines) + "\n"
