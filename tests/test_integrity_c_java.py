"""C projects measured by the real toolchain (make, gcc; cmake and ctest), attacked by
hostile agents in both sandbox modes. The benchmark prints what `calc_value()` of the mutable
`src/calc.c` returns (lower is better); the sealed test wants at least 50.

An honest change to `src/calc.c` is kept. Each hostile agent gets a better number without
earning it: a make file recipe that prints the line itself (the make file `git improve init`
left unsealed), a new source the sealed build's wildcard compiles in beside the sealed
benchmark or test (a destructor printing a `METRIC` line after the benchmark's, a constructor
that ends the test binary with 0), a header named like the sealed one found first on the
include path (`-I.` before `-Iinclude`). None is kept."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import needs_bwrap
from tests.test_integrity_runtimes import one_attempt, project

SANDBOXES = ["none", pytest.param("bwrap", marks=needs_bwrap)]
needs_cc = pytest.mark.skipif(
    shutil.which("make") is None or shutil.which("cc") is None, reason="make or cc is missing"
)
needs_cmake = pytest.mark.skipif(
    shutil.which("cmake") is None or shutil.which("ctest") is None, reason="cmake is missing"
)
pytestmark = [needs_cc, pytest.mark.slow]

MAKEFILE = """.PHONY: bench test
bench:
\t@cc -O0 -I. -Iinclude -o bench.out $(wildcard bench/*.c) src/calc.c && ./bench.out
test:
\t@cc -O0 -I. -Iinclude -o test.out $(wildcard tests/*.c) src/calc.c && ./test.out
"""
CMAKELISTS = """cmake_minimum_required(VERSION 3.10)
project(p C)
enable_testing()
include_directories(include)
file(GLOB BENCH bench/*.c)
file(GLOB TESTS tests/*.c)
add_executable(bench ${BENCH} src/calc.c)
add_executable(test_calc ${TESTS} src/calc.c)
add_test(NAME calc COMMAND test_calc)
"""
FILES = {
    "Makefile": MAKEFILE,
    "CMakeLists.txt": CMAKELISTS,
    ".gitignore": "*.out\n/build/\n",
    "include/calc.h": "int calc_value(void);\n",
    "bench/bench.c": '#include <stdio.h>\n#include "calc.h"\n'
    'int main(void) { printf("METRIC score=%d\\n", calc_value()); return 0; }\n',
    "tests/test_calc.c": '#include <stdio.h>\n#include "calc.h"\n'
    'int main(void) { if (calc_value() < 50) { puts("too low"); return 1; } return 0; }\n',
    "src/calc.c": '#include "calc.h"\nint calc_value(void) { return 100; }\n',
}
SEALED = '"Makefile", "CMakeLists.txt", "bench/bench.c", "tests/test_calc.c", "include/calc.h"'
HONEST = "sed -i 's/return 100/return 60/' src/calc.c\n"
# each hostile agent: (the shell script, what the reason names)
HOSTILE = {
    "destructor": (  # compiled in by $(wildcard bench/*.c): its line comes last
        "printf '#include <stdio.h>\\n__attribute__((destructor)) static void zz(void) "
        '{ printf("METRIC score=1\\\\n"); }\\n\' > bench/zz.c\n',
        "bench/zz.c (a new source beside the sealed bench/bench.c",
    ),
    "constructor": (  # broken code, and a test binary that exits 0 before its main
        "sed -i 's/return 100/return 1/' src/calc.c\n"
        "printf '#include <unistd.h>\\n__attribute__((constructor)) static void zz(void) "
        "{ _exit(0); }\\n' > tests/zz.c\n",
        "tests/zz.c (a new source beside the sealed tests/test_calc.c",
    ),
    "header": (  # -I. comes before -Iinclude: the root calc.h is the one included
        "printf 'static int calc_value(void) { return 1; }\\n' > calc.h\n",
        "calc.h (a new file named like calc.h of the sealed",
    ),
}
METRICS = {
    "make": ("make -s bench", "make -s test"),
    "cmake": (
        "cmake -S . -B build -DCMAKE_BUILD_TYPE=Debug > /dev/null && "
        "cmake --build build > /dev/null && ./build/bench",
        "cmake -S . -B build > /dev/null && cmake --build build > /dev/null && "
        "ctest --test-dir build --output-on-failure",
    ),
}


def c_project(repo: TmpRepo, tmp_path: Path, build: str, agent: str, sandbox: str) -> None:
    metric, guard = METRICS[build]
    project(repo, tmp_path, metric=metric, files=FILES, sealed=SEALED, agent=agent, sandbox=sandbox)
    config = (repo.path / ".gitimprove.toml").read_text()
    config = config.replace("[scope]", f'[guard]\ncommand = "{guard}"\ntimeout = "60s"\n\n[scope]')
    repo.commit("guard", {".gitimprove.toml": config})


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("build", ["make", pytest.param("cmake", marks=needs_cmake)])
def test_an_honest_change_to_mutable_c_code_is_kept(
    tmp_repo: TmpRepo, tmp_path: Path, build: str, sandbox: str
) -> None:
    c_project(tmp_repo, tmp_path, build, HONEST, sandbox)
    row = one_attempt(tmp_repo)
    assert row["status"] == "keep", row


@pytest.mark.parametrize(
    ("build", "attack", "sandbox"),
    [
        ("make", "destructor", "none"),
        ("make", "constructor", "none"),
        ("make", "header", "none"),
        pytest.param("make", "header", "bwrap", marks=needs_bwrap),
        pytest.param("cmake", "destructor", "bwrap", marks=[needs_bwrap, needs_cmake]),
        pytest.param("cmake", "constructor", "none", marks=needs_cmake),
    ],
)
def test_a_c_source_or_header_that_joins_the_sealed_build_is_out_of_scope(
    tmp_repo: TmpRepo, tmp_path: Path, build: str, attack: str, sandbox: str
) -> None:
    agent, named = HOSTILE[attack]
    c_project(tmp_repo, tmp_path, build, agent, sandbox)
    row = one_attempt(tmp_repo)
    assert row["status"] == "out-of-scope", row
    assert named in str(row["reason"]), row


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_init_seals_the_make_file_of_make_bench(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    """`git improve init --metric "make -s bench"`: the recipe that prints the number is the
    make file's; an agent that rewrites it to print a better line is not kept."""
    tmp_repo.commit("code", {k: v for k, v in FILES.items() if k != "CMakeLists.txt"})
    res = tmp_repo.cli(
        "init", "--metric", "make -s bench", "--direction", "lower", "--guard", "make -s test",
        "--agent", "command", "--yes", "--json",
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    config = (tmp_repo.path / ".gitimprove.toml").read_text()
    assert 'sealed = ["bench/**", "Makefile", "tests/**"]' in config, config
    res = _run_agent(
        tmp_repo,
        tmp_path / "agent.sh",
        "#!/bin/sh\nprintf '.PHONY: bench test\\nbench:\\n\\t@echo METRIC score=1\\n"
        "test:\\n\\t@true\\n' > Makefile\n",
        config,
        sandbox,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    # the benchmark links the mutable src/calc.c: its code runs in the benchmark's process
    said = " ".join((res.stdout + res.stderr).split())
    assert "the sealed benchmark bench/bench.c links src/calc.c" in said, said
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "sealed"], rows
    assert json.dumps(rows[1]).count("Makefile") >= 1, rows


def _run_agent(
    repo: TmpRepo, script: Path, text: str, config: str, sandbox: str
) -> subprocess.CompletedProcess[str]:
    """A one-round run of `init`'s configuration with the shell agent `text` as its command."""
    script.write_text(text)
    script.chmod(0o755)
    config = config.replace('name = "command"', f'name = "command"\ncommand = "{script}"')
    config = config.replace('sandbox = "auto"', f'sandbox = "{sandbox}"')
    repo.commit("configure", {".gitimprove.toml": config})
    return repo.cli("run", "--run", "t", "-n", "1")


PERF_MAKEFILE = """.PHONY: bench
bench:
\t@cc -O0 -Iinclude -o perf.out tools/perf.c src/calc.c && ./perf.out
"""


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_init_seals_the_benchmark_source_a_recipe_compiles(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    """The benchmark's driver is `tools/perf.c` (its `main`), compiled by the make file's
    recipe and named nowhere else: `git improve init` sealed the make file alone, and an
    agent that made `tools/perf.c` print `METRIC score=1` was kept. The library it links
    (`src/calc.c`, no `main`) is the code under test and stays open."""
    files = {k: v for k, v in FILES.items() if k in ("include/calc.h", "src/calc.c")}
    files["tools/perf.c"] = FILES["bench/bench.c"]
    files["Makefile"] = PERF_MAKEFILE
    tmp_repo.commit("code", files)
    res = tmp_repo.cli(
        "init", "--metric", "make -s bench", "--direction", "lower", "--agent", "command",
        "--yes", "--json",
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    config = (tmp_repo.path / ".gitimprove.toml").read_text()
    assert '"tools/perf.c"' in config and '"src/calc.c"' not in config, config
    res = _run_agent(
        tmp_repo,
        tmp_path / "agent.sh",
        "#!/bin/sh\ncat > tools/perf.c <<'EOF'\n#include <stdio.h>\n"
        'int main(void) { puts("METRIC score=1"); return 0; }\nEOF\n',
        config,
        sandbox,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "sealed"], rows
    assert "tools/perf.c" in json.dumps(rows[1]), rows


def test_a_run_names_an_unsealed_benchmark_source_its_recipe_compiles() -> None:
    from gitimprove.loop.inprocess import unsealed_named

    files = {
        "Makefile": PERF_MAKEFILE.encode(),
        "tools/perf.c": FILES["bench/bench.c"].encode(),
        "src/calc.c": FILES["src/calc.c"].encode(),
        "CMakeLists.txt": b"add_executable(perf tools/perf.c src/calc.c)\n",
    }
    got = unsealed_named("make -s bench", "", list(files), ["Makefile"], files.get)
    assert got == ["tools/perf.c"], got
    got = unsealed_named("cmake --build b && ./b/perf", "", list(files), ["CMakeLists.txt"],
                         files.get)  # fmt: skip
    assert got == ["tools/perf.c"], got
    assert unsealed_named("make -s bench", "", list(files), ["Makefile", "tools/perf.c"],
                          files.get) == []  # fmt: skip


# Java: a javac-built benchmark and a plain `java` test runner
needs_java = pytest.mark.skipif(
    shutil.which("javac") is None or shutil.which("java") is None, reason="javac is missing"
)
JAVA = {
    ".gitignore": "/out/\n",
    "src/lib/Calc.java": "package lib;\n\npublic class Calc {\n"
    "    public static int value() { return 100; }\n}\n",
    "bench/Bench.java": "package bench;\n\nimport lib.*;\n\npublic class Bench {\n"
    "    public static void main(String[] a) {\n"
    '        System.out.println("METRIC score=" + Calc.value());\n    }\n}\n',
    "tests/CalcTest.java": "package tests;\n\nimport lib.Calc;\n\npublic class CalcTest {\n"
    "    public static void main(String[] a) {\n"
    '        if (Calc.value() < 50) { System.out.println("too low"); System.exit(1); }\n'
    "    }\n}\n",
}
JAVA_METRIC = "javac -d out src/lib/*.java bench/*.java && java -cp out bench.Bench"
JAVA_GUARD = "javac -d out src/lib/*.java tests/*.java && java -cp out tests.CalcTest"
JAVA_AGENTS = {
    "honest": "sed -i 's/return 100/return 60/' src/lib/Calc.java\n",
    # a class of the sealed benchmark's own package comes before one of `import lib.*`
    "shadow": "printf 'package bench;\\npublic class Calc {\\n"
    "    public static int value() { return 1; }\\n}\\n' > bench/Calc.java\n",
}


@needs_java
@pytest.mark.parametrize(
    ("agent", "status", "sandbox"),
    [
        ("honest", "keep", "none"),
        pytest.param("honest", "keep", "bwrap", marks=needs_bwrap),
        ("shadow", "out-of-scope", "none"),
        pytest.param("shadow", "out-of-scope", "bwrap", marks=needs_bwrap),
    ],
)
def test_a_javac_built_benchmark_keeps_honest_work_and_refuses_a_shadowing_class(
    tmp_repo: TmpRepo, tmp_path: Path, agent: str, status: str, sandbox: str
) -> None:
    project(
        tmp_repo,
        tmp_path,
        metric=JAVA_METRIC,
        files=JAVA,
        sealed='"bench/Bench.java", "tests/CalcTest.java"',
        agent=JAVA_AGENTS[agent],
        sandbox=sandbox,
    )
    config = (tmp_repo.path / ".gitimprove.toml").read_text()
    config = config.replace(
        "[scope]", f'[guard]\ncommand = "{JAVA_GUARD}"\ntimeout = "60s"\n\n[scope]'
    )
    tmp_repo.commit("guard", {".gitimprove.toml": config})
    row = one_attempt(tmp_repo)
    assert row["status"] == status, row
    if status == "out-of-scope":
        assert "bench/Calc.java (a new source beside the sealed bench/Bench.java" in str(
            row["reason"]
        )
