"""A sealed JavaScript or TypeScript benchmark that loads the code under test into its own
process (`require("./src/solver")`, `import { value } from "./solver.js"`) can be patched by
that code (its timer, `process.stdout.write`) or see a `METRIC` line printed after its own
(`process.on("exit")`): a run names it at its start, as it names a Python one, with what to
do (run the code under test in a child process of the benchmark)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gitimprove.loop.inprocess import imported_mutable
from gitimprove.loop.runtimes import why_runtime
from tests.conftest import TmpRepo
from tests.test_integrity_runtimes import project

SOURCES = {
    "bench.js": b'const { value } = require("./src/solver");\nconsole.log(value());\n',
    "bench.mjs": b'import { value } from "./solver.mjs";\nconsole.log(value());\n',
    "bench/run.ts": b'const m = await import("../src/solver.js");\nconsole.log(m.value());\n',
    "lazy.js": b'function run() {\n  return require("./src/solver").value();\n}\nrun();\n',
    "pkg.js": b'const s = require("./src");\nconsole.log(s.value());\n',
    "child.js": b'const { execFileSync } = require("child_process");\n'
    b'console.log(String(execFileSync("node", ["src/solver.js"])));\n',
    "json.js": b'const cfg = require("./data/cfg.json");\nconsole.log(cfg.n);\n',
    "out.js": b'const x = require("../elsewhere/x");\n',
    "package.json": b'{"scripts": {"bench": "node bench.js"}, "imports": {"#solver": '
    b'{"node": "./src/solver.js"}, "#lib/*": "./src/*.js", "#data": "./data/cfg.json"}}',
    "hash.mjs": b'import { value } from "#solver";\nconsole.log(value());\n',
    "bench/star.js": b'const s = require("#lib/solver");\nconst d = require("#data");\n',
    "tsconfig.json": b'{// tsx reads it\n "compilerOptions": {"baseUrl": ".", "paths": '
    b'{"@lib/*": ["src/*"], "solver": ["./src/solver.ts"]},},}',
    "alias.ts": b'import { value } from "@lib/solver";\nimport fs from "fs";\n',
    "exact.ts": b'import { value } from "solver";\n',
    "bench/none.js": b'const s = require("#missing");\n',
    # what is not code loads nothing: a comment, a string, a template's text, a regex
    "quiet.js": b'// const s = require("./src/solver");\n/* import { value } from "./src/solver"'
    b" */\nconst note = \"require('./src/solver')\";\nconst t = `import('./src/solver')`;\n"
    b"const r = /require\\(['\"]\\.\\/src\\/solver['\"]\\)/;\n"
    b'const { execFileSync } = require("child_process");\n',
    # ...and code after them still does: a `${}` of a template, a line after a regex
    "loud.js": b"const q = /[\"'`]/g; const half = a / 2 / 3;\n"
    b'const t = `run ${require("./src/solver").value()} // not a comment`;\n',
    "loud.ts": b"/* a comment */ const s = '\\'';\nimport { value } from './src/solver';\n",
    "src/solver.js": b"exports.value = () => 100;\n",
    "src/solver.ts": b"export const value = () => 100;\n",
    "src/index.js": b"exports.value = () => 100;\n",
    "solver.mjs": b"export const value = () => 100;\n",
    "data/cfg.json": b'{"n": 1}',
}


@pytest.mark.parametrize(
    ("command", "sealed", "mutable", "found"),
    [
        ("node bench.js", ["bench.js"], ["src/**"], ("bench.js", ["src/solver.js"])),
        ("npm run -s bench", ["bench.js"], ["src/**"], ("bench.js", ["src/solver.js"])),
        ("node ./bench.mjs --fast", ["bench.mjs"], ["**"], ("bench.mjs", ["solver.mjs"])),
        # tsx loads the `.js` an import names when there is one
        ("npx tsx bench/run.ts", ["bench/run.ts"], ["src/**"], ("bench/run.ts", ["src/solver.js"])),
        ("node lazy.js", ["lazy.js"], ["src/**"], ("lazy.js", ["src/solver.js"])),  # in a function
        ("node pkg.js", ["pkg.js"], ["src/**"], ("pkg.js", ["src/index.js"])),  # a folder's index
        # `#name` through package.json's `imports`: a condition's target, a `*` pattern
        ("node hash.mjs", ["hash.mjs"], ["src/**"], ("hash.mjs", ["src/solver.js"])),
        ("node bench/star.js", ["bench/star.js"], ["**"], ("bench/star.js", ["src/solver.js"])),
        # a bare import through tsconfig.json's `paths`, from its `baseUrl`
        ("npx tsx alias.ts", ["alias.ts"], ["src/**"], ("alias.ts", ["src/solver.js"])),
        ("npx tsx exact.ts", ["exact.ts"], ["src/**"], ("exact.ts", ["src/solver.ts"])),
        ("node bench/none.js", ["bench/none.js"], ["**"], None),
        ("node quiet.js", ["quiet.js"], ["src/**"], None),
        ("node loud.js", ["loud.js"], ["src/**"], ("loud.js", ["src/solver.js"])),
        ("npx tsx loud.ts", ["loud.ts"], ["src/**"], ("loud.ts", ["src/solver.js"])),
        ("node child.js", ["child.js"], ["src/**"], None),  # in a child process: nothing to say
        ("node json.js", ["json.js"], ["src/**"], None),  # data the agent may not change
        ("node json.js", ["json.js"], ["**"], None),  # data: it runs nothing
        ("node bench.js", ["bench.js", "src/solver.js"], ["**"], None),  # sealed too
        ("node bench.js", [], ["**"], None),  # the benchmark itself is not sealed
        ("node out.js", ["out.js"], ["**"], None),  # outside the repository
        ("node 'unclosed", ["bench.js"], ["**"], None),
    ],
)
def test_which_sealed_js_benchmark_loads_mutable_code(
    command: str,
    sealed: list[str],
    mutable: list[str],
    found: tuple[str, list[str]] | None,
) -> None:
    got = imported_mutable(command, sealed, mutable, SOURCES.get)
    assert got == found


def test_tsx_loads_the_typescript_file_an_import_written_with_js_stands_for() -> None:
    sources = {k: v for k, v in SOURCES.items() if k != "src/solver.js"}
    got = imported_mutable("npx tsx bench/run.ts", ["bench/run.ts"], ["src/**"], sources.get)
    assert got == ("bench/run.ts", ["src/solver.ts"])


needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
SOLVER_JS = 'const fs = require("fs");\nexports.value = () => fs.readFileSync("src/value.txt", "utf8").trim();\n'


@pytest.mark.slow
@needs_node
@pytest.mark.parametrize(
    ("bench", "warned"),
    [
        (
            'const { value } = require("./src/solver");\nconsole.log(`METRIC score=${value()}`);\n',
            True,
        ),
        (  # the code under test in a child process, the benchmark prints: no warning
            'const { execFileSync } = require("child_process");\n'
            'const v = String(execFileSync("node", ["-p", "require(\\"./src/solver\\").value()"]));\n'
            "console.log(`METRIC score=${v.trim()}`);\n",
            False,
        ),
    ],
)
def test_a_run_names_a_js_benchmark_that_loads_the_code_under_test(
    tmp_repo: TmpRepo, tmp_path: Path, bench: str, warned: bool
) -> None:
    project(
        tmp_repo,
        tmp_path,
        metric="npm run -s bench" if shutil.which("npm") else "node bench.js",
        files={
            "bench.js": bench,
            "src/solver.js": SOLVER_JS,
            "package.json": '{"name": "p", "scripts": {"bench": "node bench.js"}}\n',
        },
        sealed='"bench.js", "package.json"',
        mutable='"src/**"',
        agent="true\n",
        sandbox="none",
    )
    res = tmp_repo.cli("run", "--run", "w", "-n", "1")
    assert res.returncode == 0, res.stderr
    said = res.stdout + res.stderr
    message = "the sealed benchmark bench.js imports src/solver.js into its own process"
    assert (message in said) == warned, said
    if warned:
        assert "run the code under test in a child process of the benchmark" in said


# files a project may hold: which of them does `node --test` (naming no file) run?
NODE_TEST_FILES = [
    "src/test/x.js", "src/test/deep/y.mjs", "test/z.cjs", "a/b/test/c.js", "x.test.js",
    "lib/y-test.mjs", "lib/z_test.cjs", "test-w.js", "lib/test.js", "lib/helper.js",
    "tests/v.js", "src/testing/u.js", "src/test/t.ts", "src/test/data.json",
]  # fmt: skip


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_every_file_node_test_runs_by_its_place_or_name_is_sealed_when_new(
    tmp_path: Path,
) -> None:
    """Asked of the real runner: each file `node --test` runs is one a new copy of which
    is sealed unless named (`src/test/x.js` too: node runs every `.js` under a `test/`
    folder), and the files it does not run are not sealed for it."""
    for name in NODE_TEST_FILES:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"console.log('RAN {name}');\n" if name.endswith("js") else "{}\n")
    res = subprocess.run(
        ["node", "--test"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    ran = {line.split("RAN ", 1)[1].strip() for line in res.stdout.splitlines() if "RAN " in line}
    assert "src/test/x.js" in ran and "lib/helper.js" not in ran, res.stdout
    for name in NODE_TEST_FILES:
        if name in ran:
            assert why_runtime(name, True) is not None, name
    for name in ("lib/helper.js", "src/testing/u.js", "src/test/data.json"):
        assert name not in ran and why_runtime(name, True) is None, name
    assert why_runtime("src/test/x.js", False) is None  # an existing one may change
