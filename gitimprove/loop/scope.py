"""Path patterns: `src/**`, `*.py`, `bench.py`. `**` crosses folders, `*` and `?` do not."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

CONFIG_FILE = ".gitimprove.toml"


@lru_cache(maxsize=256)
def _compile(pattern: str) -> re.Pattern[str]:
    p = pattern.strip().lstrip("/")
    if p.endswith("/"):
        p += "**"
    out = []
    i = 0
    while i < len(p):
        c = p[i]
        if p.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif p.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(c))
            i += 1
    body = "".join(out)
    # a pattern without a slash matches a file name in any folder, as .gitignore does; a
    # leading slash anchors it to the top (`/go.mod` is the top one only), a trailing one
    # alone does not (`build/` is any folder named build)
    if "/" not in pattern.strip().rstrip("/"):
        body = "(?:.*/)?" + body
    # DOTALL: a file name may hold a newline (git stores it); `**` and a folder's pattern
    # must cover it as `*` does, or `tests/x\n.py` would slip past a sealed `tests/**`
    return re.compile(f"^{body}(?:/.*)?$", re.DOTALL)


def matches(path: str, patterns: Sequence[str]) -> bool:
    return any(_compile(p).match(path) for p in patterns)


def sealed_paths(paths: Iterable[str], sealed: Sequence[str]) -> list[str]:
    return [p for p in paths if p == CONFIG_FILE or matches(p, sealed)]


def outside(paths: Iterable[str], mutable: Sequence[str]) -> list[str]:
    return [p for p in paths if not matches(p, mutable)]
