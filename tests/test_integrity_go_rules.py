"""Go's rules without the toolchain (tests/test_integrity_go.py runs them with it): a new
`.go` file in the folder of a sealed one is compiled into the sealed package, a `testdata/`
folder holds what the sealed tests compare with, `go.work.sum` goes with `go.work`."""

from __future__ import annotations

import pytest

from gitimprove.loop.runtimes import why_runtime
from gitimprove.loop.toolchain import why_selector
from tests.loop_helpers import assert_named, new_file_judged

SEALED = ["cmd/bench/main.go", "calc/calc_test.go", "bench.py"]
BASE = {"cmd/bench/main.go", "cmd/bench/old.go", "calc/calc.go", "calc/calc_test.go"}


def judged(path: str, mutable: list[str]) -> list[str]:
    return new_file_judged(path, SEALED, mutable, BASE, lambda p: b"package x\n")


@pytest.mark.parametrize(
    ("path", "mutable", "named"),
    [
        ("cmd/bench/zz.go", ["**"], "the package of the sealed cmd/bench/main.go"),
        ("cmd/bench/fast_linux.go", ["cmd/**"], "the package of the sealed cmd/bench/main.go"),
        ("calc/helper.go", ["**"], "the package of the sealed calc/calc_test.go"),
        ("cmd/bench/zz.go", ["cmd/bench/zz.go"], None),  # its path spelled: allowed
        ("cmd/bench/old.go", ["**"], None),  # not new: the user's mutable file
        ("cmd/other/zz.go", ["**"], None),  # no sealed Go file in that folder
        ("cmd/bench/notes.txt", ["**"], None),
        ("calc/testdata/least.txt", ["**"], "testdata/"),
        ("calc/testdata/least.txt", ["calc/testdata/**"], None),
        ("calc/zz_test.go", ["**"], "go test compiles it"),
    ],
)
def test_which_go_files_are_sealed_unless_named(
    path: str, mutable: list[str], named: str | None
) -> None:
    assert_named(judged(path, mutable), named)


def test_go_work_sum_chooses_the_modules_like_go_work() -> None:
    assert why_selector("go.work.sum") is not None
    assert why_selector("sub/go.work.sum") is not None
    assert why_runtime("go.sum", new=True) is None  # the dependencies' sums may change
