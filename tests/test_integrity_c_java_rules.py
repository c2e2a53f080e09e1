"""C, C++ and Java's rules without the toolchains (tests/test_integrity_c_java.py runs them
with them): a new source in the folder of a sealed one is built in by a glob or a wildcard
(`file(GLOB bench/*.c)`, `$(wildcard bench/*.c)`, `javac bench/*.java`), a new header named
like one a sealed source includes is found first on an include path that searches its folder
(`-I.` before `-Iinclude`), a new class named like a sealed one comes first on a classpath;
`META-INF/` (ServiceLoader), `CMakeUserPresets.json`, `CTestCustom.cmake` and `.clang-tidy` are
read unnamed, and a new file a sealed `CMakeLists.txt` includes sets its build."""

from __future__ import annotations

import pytest

from gitimprove.loop.inprocess import imported_mutable
from gitimprove.loop.runtimes import included_names
from tests.loop_helpers import assert_named, new_file_judged

SEALED = [
    "bench/bench.c",
    "tests/test_calc.cpp",
    "include/calc.h",
    "jbench/src/bench/Bench.java",
    "CMakeLists.txt",
]
BASE = {*SEALED, "src/calc.c", "src/calc_old.h", "jsrc/lib/Util.java", "src/main.c"}
SOURCES = {
    "bench/bench.c": b'#include <stdio.h>\n#include "calc.h"\n  # include <util/fast.hpp>\n',
    "tests/test_calc.cpp": b'#include "calc.h"\n#include <vector>\n',
    "CMakeLists.txt": b"include(local.cmake OPTIONAL)\ninclude(CTest)\nadd_subdirectory(lib)\n",
}


def judged(path: str, mutable: list[str]) -> list[str]:
    return new_file_judged(path, SEALED, mutable, BASE, lambda p: SOURCES.get(p, b"x\n"))


@pytest.mark.parametrize(
    ("path", "mutable", "named"),
    [
        ("bench/zz.c", ["**"], "a new source beside the sealed bench/bench.c"),
        ("bench/zz.S", ["**"], "a new source beside the sealed bench/bench.c"),
        ("bench/calc.h", ["**"], "named like calc.h of the sealed"),
        ("tests/test_more.cc", ["**"], "beside the sealed tests/test_calc.cpp"),
        ("jbench/src/bench/Util.java", ["**"], "beside the sealed jbench/src/bench/Bench.java"),
        ("jbench/src/bench/Fast.kt", ["**"], "beside the sealed jbench/src/bench/Bench.java"),
        ("calc.h", ["**"], "named like calc.h of the sealed"),  # -I. before -Iinclude
        ("src/util/fast.hpp", ["**"], "named like fast.hpp of the sealed bench/bench.c"),
        ("override/bench/Bench.java", ["**"], "named like Bench.java of the sealed"),
        ("META-INF/services/org.junit.platform.launcher.LauncherSessionListener", ["**"],
         "ServiceLoader"),
        ("jbench/src/main/resources/META-INF/services/x.Y", ["**"], "ServiceLoader"),
        ("CMakeUserPresets.json", ["**"], "cmake --preset reads it"),
        ("build/CTestCustom.cmake", ["**"], "ctest reads it"),
        ("local.cmake", ["**"], "a new file the sealed CMakeLists.txt includes"),
        ("cmake/CTest.cmake", ["**"], "a new file the sealed CMakeLists.txt includes"),
        ("lib/CMakeLists.txt", ["**"], "a new file the sealed CMakeLists.txt includes"),
        ("src/.clang-tidy", ["**"], "clang-tidy reads the nearest one"),
        ("cmake/other.cmake", ["**"], None),  # included by none
        ("bench/zz.c", ["bench/zz.c"], None),  # its path spelled: allowed
        ("src/calc.c", ["**"], None),  # not new: the user's mutable file
        ("src/fast.c", ["**"], None),  # no sealed source in that folder
        ("src/calc_new.h", ["**"], None),  # a header no sealed source includes
        ("include/fast.h", ["**"], None),  # beside a sealed header: no glob builds headers
        ("bench/fast.h", ["**"], None),  # beside the sealed bench.c, included by none
        ("src/bench.c", ["**"], None),  # a C source of a sealed one's name: another file
        ("jsrc/lib/Helper.java", ["**"], None),
        ("bench/notes.txt", ["**"], None),
        ("bench/README.md", ["**"], None),
    ],
)  # fmt: skip
def test_which_c_and_java_files_are_sealed_unless_named(
    path: str, mutable: list[str], named: str | None
) -> None:
    assert_named(judged(path, mutable), named)


def test_the_headers_a_c_source_includes() -> None:
    source = b'#include "a.h"\n#  include <sys/b.hpp>\n#import "c.hh"\n#include <vector>\n'
    assert included_names("x.cpp", source) == ["a.h", "b.hpp", "c.hh"]
    assert included_names("x.py", source) == []


def test_a_c_or_java_benchmark_that_links_mutable_code_is_named() -> None:
    """A sealed C `main` including `calc.h` links a mutable `calc.c`; a sealed Java `main`
    importing `lib.*` (or of a package with mutable classes) links them: their code runs in
    the benchmark's process (a destructor, a shutdown hook): the run-start warning."""
    tree = {
        "bench/bench.c": b'#include <stdio.h>\n#include "calc.h"\nint main(void) { return 0; }\n',
        "include/calc.h": b"int calc_value(void);\n",
        "src/calc.c": b"int calc_value(void) { return 1; }\n",
        "bench/Bench.java": b"package bench;\nimport lib.*;\n"
        b"class Bench { public static void main(String[] a) {} }\n",
        "src/lib/Calc.java": b"package lib;\n",
        "jb/Main.java": b"package jb;\nclass Main { public static void main(String[] a) {} }\n",
        "jb/Helper.java": b"package jb;\n",
    }
    files = list(tree)
    java = "javac -d out src/lib/*.java bench/*.java && java -cp out bench.Bench"
    assert imported_mutable("make -s bench", ["bench/bench.c"], ["**"], tree.get, files) == (
        "bench/bench.c",
        ["src/calc.c"],
    )
    assert imported_mutable(java, ["bench/Bench.java"], ["**"], tree.get, files) == (
        "bench/Bench.java",
        ["src/lib/Calc.java"],
    )
    assert imported_mutable("java jb.Main", ["jb/Main.java"], ["**"], tree.get, files) == (
        "jb/Main.java",
        ["jb/Helper.java"],
    )
    # the linked code sealed too, or no C build run: nothing to say
    sealed = ["bench/bench.c", "src/calc.c"]
    assert imported_mutable("make -s bench", sealed, ["**"], tree.get, files) is None
    assert imported_mutable("sh run.sh", ["bench/bench.c"], ["**"], tree.get, files) is None
