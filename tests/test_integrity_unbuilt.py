"""A program the metric command runs that the run's base does not hold is a build's output
(`tsc && node dist/bench.js`, `make && ./out/bench`, `cargo build && target/release/bench`):
a candidate that commits it (un-ignoring the folder) decides what runs whenever the build
leaves it in place — an incremental build that finds it up to date, or `noEmit` / `outDir`
set in a `tsconfig.json` it may change. Such a file is `out-of-scope`, in both sandbox modes,
unless a `mutable` pattern spells its name."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitimprove.loop.implicit import built_outputs
from gitimprove.loop.inprocess import unbuilt_named
from tests.conftest import TmpRepo
from tests.test_integrity_runtimes import SANDBOXES, needs_node, one_attempt, project

# the sealed build: compiles (here: copies) the sealed source unless the output is up to date
BUILD = "mkdir -p dist\n[ -e dist/bench.js ] || cp bench.src.js dist/bench.js\n"
SOURCE = """const v = parseFloat(require("fs").readFileSync("src/value.txt", "utf8"));
console.log(`METRIC score=${v}`);
"""
AGENT = """printf '/node_modules/\\n' > .gitignore
mkdir -p dist && printf 'console.log("METRIC score=1");\\n' > dist/bench.js
"""


@pytest.mark.slow
@needs_node
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_committed_build_output_the_metric_runs_is_out_of_scope(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    project(
        tmp_repo,
        tmp_path,
        metric="sh build.sh && node dist/bench.js",
        files={"build.sh": BUILD, "bench.src.js": SOURCE, ".gitignore": "/dist/\n"},
        sealed='"build.sh", "bench.src.js"',
        agent=AGENT,
        sandbox=sandbox,
    )
    row = one_attempt(tmp_repo)
    assert row["status"] == "out-of-scope", row
    assert "dist/bench.js (the metric or guard command runs dist/bench.js" in str(row["reason"])


@pytest.mark.parametrize(
    ("metric", "held", "unbuilt"),
    [
        ("tsc -p . && node dist/bench.js", {"tsconfig.json"}, ["dist/bench.js"]),
        ("make -s && ./out/bench --fast", {"Makefile"}, ["out/bench"]),
        ("cargo build --release && target/release/bench", set(), ["target/release/bench"]),
        ("node bench.js", {"bench.js"}, []),  # held: sealed or mutable as configured
        ("node gen/bench.mjs", set(), ["gen/bench.mjs"]),
        ("npm run -s bench", {"package.json"}, []),  # a script's name is no path
        ("python3 -m pkg.bench", set(), []),  # a module
        ("FOO=a/b python3 x.py", {"x.py"}, []),  # a variable's value
        ("sh -c 'test -e src/fast; echo 1'", set(), []),  # one word, a shell's program
        ("curl -s https://example.com/x.py", set(), []),
        ("python3 /abs/bench.py ../up/bench.py ~/b.py", set(), []),
        ("python3 bench.py --data data/big.csv", {"bench.py"}, ["data/big.csv"]),
        # the words after a `cd` are read in its folder
        ("cd sub && python run.py", {"sub/run.py"}, []),
        ("cd sub; make -s && ./out/bench", {"sub/Makefile"}, ["sub/out/bench"]),
        ("cd a/b && cd ../c && java -jar app.jar", set(), ["a/c/app.jar"]),
        ("(cd sub && make) && python3 run.py", {"sub/Makefile"}, ["run.py"]),
        ("pushd build && ctest; popd", set(), []),
        ("cd sub && make bench", {"sub/Makefile"}, []),  # a target's name is no path
        ("cd $HOME && python run.py", set(), []),  # where cannot be told
        ("cd /tmp && node x.js", set(), []),
        ("cd .. && python run.py", set(), []),  # above the root
        # a classpath's entries, in order, are where the JVM takes a class from first
        ("java -cp extra:out:lib/* bench.Bench", {"lib"}, ["extra", "out"]),
        ("java -classpath build/classes:lib/a.jar B", {"lib/a.jar"}, ["build/classes"]),
        ("CLASSPATH=gen:x.jar java B", {"x.jar"}, ["gen"]),
        ("javac --class-path=deps -d out B.java", {"B.java"}, ["deps"]),
    ],
)
def test_what_a_command_runs_that_the_base_does_not_hold(
    metric: str, held: set[str], unbuilt: list[str]
) -> None:
    assert unbuilt_named(metric, "", lambda p: "file" if p in held else None) == unbuilt


def test_a_build_output_is_judged_by_path_and_may_be_named_mutable() -> None:
    changed = ["dist/bench.js", "dist/x/y.js", "src/a.js", "distant.js"]
    assert [
        o.split(" ")[0] for o in built_outputs(changed, ["dist/bench.js", "dist/x"], ["**"])
    ] == [
        "dist/bench.js",
        "dist/x/y.js",
    ]
    assert built_outputs(changed, ["dist/bench.js"], ["**", "dist/bench.js"]) == []


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_new_root_file_named_like_what_a_cd_command_runs_is_honest_work(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    """`cd sub && sh run.sh` runs `sub/run.sh`: a new root `run.sh` is none of it."""
    project(
        tmp_repo,
        tmp_path,
        metric="cd sub && sh run.sh",
        files={"sub/run.sh": 'echo "METRIC score=$(cat ../src/value.txt)"\n'},
        sealed='"sub/run.sh"',
        agent="printf 'echo helper\\n' > run.sh\nprintf '60\\n' > src/value.txt\n",
        sandbox=sandbox,
    )
    row = one_attempt(tmp_repo)
    assert row["status"] == "keep", row.get("reason")
