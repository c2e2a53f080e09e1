"""A credential in a table drawn with box-drawing bars (psql's unicode borders, rich,
cli-table, a hand-drawn `password│value`): a cell naming a credential, the next cell its
value, on one row, with or without blanks around the bars.

The bars are not folded into `|` for the other rules: a Claude Code panel draws its border
with the same `│`, and its wrapped lines are read with the border as it is (`views.py`).
This rule reads a row on its own, cell by cell, and adds the value's span only.
"""

from __future__ import annotations

import itertools
import re

from gitimprove.redaction.calls import credential_like
from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.values import assignment_is_secret, kind_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_BARS = "\u2502\u2503\u2551\u250a\u250b\u2506\u2507\u254e\u254f"
_KEY = r"[A-Za-z][\w.-]{0,40}(?:[ \t]+[\w.-]{1,40}){0,3}"


def _cells(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    line, base = m.group(), m.start()
    cells = list(compiled(f"[^{_BARS}]+", 0).finditer(line))
    for key, value in itertools.pairwise(cells):
        if line[key.end() : value.start()] not in _BARS:
            continue  # two bars between them: an empty cell
        name = key.group().strip()
        if not compiled(_KEY, 0).fullmatch(name):
            continue
        text = value.group()
        secret = text.strip()
        if not secret or " " in secret:
            continue
        k = "_".join(name.split())
        if kind_of(k) is None and not compiled(r"(?i).*(?:secret|token|key|pass\w*)", 0).match(k):
            continue
        if not assignment_is_secret(k, secret, quoted=False, env_style=False):
            continue
        if not credential_like(secret):
            continue
        start = base + value.start() + (len(text) - len(text.lstrip()))
        yield start, start + len(secret)


RULES: list[Rule] = [
    Rule(
        "credential",
        # a row: a line with two bars at the least (a cell between them or beside one)
        f"(?m)^[^\\n{_BARS}]{{0,300}}[{_BARS}][^\\n]{{0,600}}",
        tuple(_BARS),
        priority=CONTEXT,
        expand=_cells,
    ),
]
