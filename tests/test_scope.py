"""Scope patterns read as .gitignore reads them: the cases a user writes in `[scope]`."""

from __future__ import annotations

import pytest

from gitimprove.loop import scope

CASES = [
    # (pattern, path, matches)
    ("go.mod", "go.mod", True),
    ("go.mod", "fake/go.mod", True),  # no slash: a name in any folder
    ("/go.mod", "go.mod", True),
    ("/go.mod", "fake/go.mod", False),  # a leading slash anchors it to the top
    ("/tests/**", "tests/a/b.py", True),
    ("/tests/**", "src/tests/b.py", False),
    ("build/", "build/x.o", True),
    ("build/", "sub/build/x.o", True),  # a trailing slash alone does not anchor
    ("src/*.py", "src/a.py", True),
    ("src/*.py", "src/a/b.py", False),  # `*` stays in its folder
    ("src/**", "src/a/b.py", True),
    ("**/bench.py", "bench.py", True),
    ("**/bench.py", "a/b/bench.py", True),
    ("*.py", "deep/er/x.py", True),
    ("bench?.py", "bench1.py", True),
    ("bench?.py", "bench/.py", False),
    ("tests", "tests/test_x.py", True),  # a folder's name covers what is inside it
]


@pytest.mark.parametrize(("pattern", "path", "expected"), CASES)
def test_a_pattern_matches_as_gitignore_reads_it(pattern: str, path: str, expected: bool) -> None:
    assert scope.matches(path, [pattern]) is expected
