"""Files other languages' runners and runtimes load without being named (`.npmrc`, a new
`GNUmakefile`, `package.json`'s scripts, `.cargo/config.toml`, `node_modules/`, `.Rprofile`…)
are sealed like Python's: with the benchmark and its runner's own file sealed and every other
path mutable, an agent that adds one is out of scope, never kept as a gain, in both sandbox
modes; a metric run that writes one is tampering.

The benchmarks here print the value of `src/value.txt` (lower is better); each hostile agent
leaves it alone and makes the runner print a better line instead."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from gitimprove.loop.runtimes import (
    make_includes,
    node_shadows,
    package_scripts,
    ts_resolution,
    why_runtime,
)
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import needs_bwrap

SANDBOXES = ["none", pytest.param("bwrap", marks=needs_bwrap)]
needs_npm = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")

BENCH_JS = """const v = parseFloat(require("fs").readFileSync("src/value.txt", "utf8"));
console.log(`METRIC score=${v}`);
"""
BENCH_PY = "print('METRIC score=' + open('src/value.txt').read().strip())\n"
PACKAGE = '{"name": "p", "version": "1.0.0", "scripts": {"bench": "node bench.js"}}\n'
# the interpreter itself, not a virtual environment's link to it: the sandbox gives the metric
# a private /tmp, where a test run's environment may live, and a make recipe names no path
# the sandbox could bind
PYTHON = os.path.realpath(sys.executable)
MAKEFILE = f"bench:\n\t@{PYTHON} bench.py\n"

# each hostile agent: a shell script run in its workspace
NPMRC_AGENT = """printf 'node-options=--require ./src/x.js\\n' > .npmrc
printf 'process.on("exit", () => console.log("METRIC score=1"));\\n' > src/x.js
"""
MAKE_AGENT = "printf 'bench:\\n\\t@echo METRIC score=1\\n' > GNUmakefile\n"
POST_AGENT = """cat > package.json <<'EOF'
{"name": "p", "version": "1.0.0",
 "scripts": {"bench": "node bench.js", "postbench": "echo METRIC score=1"}}
EOF
"""


def project(
    repo: TmpRepo,
    tmp_path: Path,
    *,
    metric: str,
    files: dict[str, str],
    sealed: str,
    agent: str,
    sandbox: str,
    mutable: str = '"**"',
) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\nset -e\n" + agent)
    script.chmod(0o755)
    repo.commit(
        "project",
        {
            **files,
            "src/value.txt": "100\n",
            ".gitimprove.toml": f"""[metric]
command = "{metric}"
direction = "lower"
timeout = "60s"

[scope]
mutable = [{mutable}]
sealed = [{sealed}]

[loop]
stuck_after = 100
plateau_patience = 100

[agent]
name = "command"
command = "{script}"
sandbox = "{sandbox}"
""",
        },
    )


def one_attempt(repo: TmpRepo) -> dict[str, object]:
    res = repo.cli("run", "--run", "t", "-n", "1")
    assert res.returncode == 0, res.stderr
    rows = run_rows(repo, "t")
    assert [r["status"] for r in rows][:1] == ["baseline"], rows
    assert len(rows) == 2, rows
    base = repo.git("rev-parse", "refs/improve/runs/t/base")
    if rows[1]["status"] != "keep":
        assert repo.git("rev-parse", "improve/t") == base  # nothing kept
    return rows[1]


# (how the project measures, what is sealed, the hostile agent, what the reason names)
_INCLUDE_MAKEFILE = f"PYTHON ?= {PYTHON}\nbench:\n\t@$(PYTHON) bench.py\n-include local.mk\n"
OUT_OF_SCOPE = [
    pytest.param(  # `npm run` turns `.npmrc`'s node-options into NODE_OPTIONS: `--require`
        # loads the candidate's code before the sealed benchmark; it prints a line at exit
        "npm run -s bench",
        {"bench.js": BENCH_JS, "package.json": PACKAGE},
        '"bench.js", "package.json"',
        NPMRC_AGENT,
        ".npmrc (npm reads it",
        marks=needs_npm,
        id="npmrc",
    ),
    pytest.param(  # make reads `GNUmakefile`, then `makefile`, then `Makefile`
        "make -s bench",
        {"bench.py": BENCH_PY, "Makefile": MAKEFILE},
        '"bench.py", "Makefile"',
        MAKE_AGENT,
        "GNUmakefile (make reads it in place of Makefile)",
        marks=needs_make,
        id="gnumakefile",
    ),
    pytest.param(  # `package.json` may change (its dependencies), but `npm run bench` also
        # runs a `postbench` script, unasked: its scripts are sealed
        "npm run -s bench",
        {"bench.js": BENCH_JS, "package.json": PACKAGE},
        '"bench.js"',
        POST_AGENT,
        "package.json (its scripts, main, exports, imports or a test runner",
        marks=needs_npm,
        id="postbench",
    ),
    pytest.param(  # `-include local.mk` in the sealed Makefile: a new `local.mk` sets the
        # interpreter of the benchmark's recipe to a command that prints a better line
        "make -s bench",
        {"bench.py": BENCH_PY, "Makefile": _INCLUDE_MAKEFILE},
        '"bench.py", "Makefile"',
        "printf 'PYTHON = echo METRIC score=1; true\\n' > local.mk\n",
        "local.mk (a new file the sealed Makefile includes",
        marks=needs_make,
        id="make-include",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize(("metric", "files", "sealed", "agent", "named"), OUT_OF_SCOPE)
def test_a_file_the_runner_loads_unnamed_is_out_of_scope(
    tmp_repo: TmpRepo,
    tmp_path: Path,
    sandbox: str,
    metric: str,
    files: dict[str, str],
    sealed: str,
    agent: str,
    named: str,
) -> None:
    project(
        tmp_repo, tmp_path, metric=metric, files=files, sealed=sealed, agent=agent, sandbox=sandbox
    )
    row = one_attempt(tmp_repo)
    assert row["status"] == "out-of-scope", row
    assert named in str(row["reason"]), row


@needs_npm
@pytest.mark.slow
def test_a_package_json_whose_dependencies_change_may_be_kept(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    agent = """cat > package.json <<'EOF'
{"name": "p", "version": "1.0.1", "dependencies": {},
 "scripts": {"bench": "node bench.js"}}
EOF
echo 90 > src/value.txt
"""
    project(
        tmp_repo,
        tmp_path,
        metric="npm run -s bench",
        files={"bench.js": BENCH_JS, "package.json": PACKAGE},
        sealed='"bench.js"',
        agent=agent,
        sandbox="none",
    )
    assert one_attempt(tmp_repo)["status"] == "keep"


@needs_npm
@pytest.mark.slow
def test_an_npmrc_the_user_names_mutable_may_change(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    project(
        tmp_repo,
        tmp_path,
        metric="npm run -s bench",
        files={"bench.js": BENCH_JS, "package.json": PACKAGE},
        sealed='"bench.js", "package.json"',
        agent="printf 'fund=false\\n' > .npmrc\necho 90 > src/value.txt\n",
        sandbox="none",
        mutable='"**", ".npmrc"',
    )
    assert one_attempt(tmp_repo)["status"] == "keep"


@needs_node
@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_new_file_node_resolves_before_the_sealed_module_is_out_of_scope(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    """The sealed `bench.js` loads `require("./lib")`, the sealed `lib/index.js`: a new `lib.js`
    comes first in Node's resolution, and a new `lib/package.json` names another `main`."""
    lib = 'module.exports = () => parseFloat(require("fs").readFileSync("src/value.txt"));\n'
    agents = {
        "1": "echo 'module.exports = () => 1;' > lib.js\n",
        "2": (
            "echo 'module.exports = () => 1;' > src/fast.js\n"
            'echo \'{"main": "../src/fast.js"}\' > lib/package.json\n'
        ),
    }
    step = 'case "$GITIMPROVE_ITERATION" in\n' + "".join(
        f"{i}) {text};;\n" for i, text in agents.items()
    )
    project(
        tmp_repo,
        tmp_path,
        metric="node bench.js",
        files={
            "bench.js": 'console.log("METRIC score=" + require("./lib")());\n',
            "lib/index.js": lib,
        },
        sealed='"bench.js", "lib/index.js"',
        agent=step + "esac\n",
        sandbox=sandbox,
    )
    res = tmp_repo.cli("run", "--run", "t", "-n", "2")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "t")[1:]
    assert [r["status"] for r in rows] == ["out-of-scope", "out-of-scope"], rows
    assert "lib.js (a new file Node may load for './lib' of the sealed bench.js" in str(
        rows[0]["reason"]
    )
    assert "lib/package.json (a new file Node may load" in str(rows[1]["reason"])
    assert tmp_repo.git("rev-parse", "improve/t") == tmp_repo.git(
        "rev-parse", "refs/improve/runs/t/base"
    )


@needs_make
@pytest.mark.slow
def test_a_metric_run_that_writes_a_gnumakefile_is_tampering(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """The candidate's code, run by the benchmark, leaves a `GNUmakefile` for a later make."""
    bench = (
        "import subprocess, sys\n"
        "subprocess.run([sys.executable, 'src/prog.py'], check=True)\n"
        "print('METRIC score=' + open('src/value.txt').read().strip())\n"
    )
    prog = tmp_path / "prog.py"
    prog.write_text("open('GNUmakefile', 'w').write('bench:\\n\\t@echo METRIC score=1\\n')\n")
    agent = f"cp {prog} src/prog.py\necho 90 > src/value.txt\n"
    project(
        tmp_repo,
        tmp_path,
        metric="make -s bench",
        files={"bench.py": bench, "Makefile": MAKEFILE, "src/prog.py": "\n"},
        sealed='"bench.py", "Makefile"',
        agent=agent,
        sandbox="none",
    )
    row = one_attempt(tmp_repo)
    assert row["status"] == "tampered" and "GNUmakefile" in str(row["reason"]), row


@pytest.mark.parametrize(
    ("path", "new", "flagged"),
    [
        (".npmrc", False, True),
        ("web/.npmrc", True, True),
        (".yarnrc.yml", False, True),
        (".yarn/releases/yarn-4.cjs", True, True),
        (".pnp.cjs", True, True),
        ("bunfig.toml", True, True),
        ("deno.jsonc", False, True),
        ("jest.config.ts", True, True),
        ("vitest.config.mts", True, True),
        (".mocharc.yml", True, True),
        ("node_modules/left-pad/index.js", True, True),
        ("src/node_modules/fs/index.js", True, True),
        (".cargo/config.toml", True, True),
        ("crates/a/.cargo/config", True, True),
        ("build.rs", True, True),
        ("build.rs", False, False),
        ("GNUmakefile", True, True),
        ("sub/makefile", True, True),
        ("makefile", False, False),
        ("Makefile", True, False),
        (".Rprofile", False, True),
        (".Renviron", True, True),
        (".rspec", True, True),
        (".bundle/config", True, True),
        (".mvn/jvm.config", True, True),
        (".mvn/extensions.xml", True, True),
        ("gradle.properties", False, True),
        ("gradle/wrapper/gradle-wrapper.properties", True, True),
        ("Directory.Build.props", True, True),
        ("src/Directory.Build.targets", True, True),
        ("global.json", False, True),
        (".bazelrc", False, True),
        ("src/main.rs", True, False),
        ("src/index.js", True, False),
        ("docs/npmrc.md", True, False),
        ("src/cargo/config.toml", True, False),
        ("package.json", False, False),
        ("src/makefile.py", True, False),
    ],
)
def test_what_other_runtimes_load_unnamed(path: str, new: bool, flagged: bool) -> None:
    assert (why_runtime(path, new) is not None) == flagged, path


def test_where_node_may_resolve_a_relative_import() -> None:
    found = node_shadows(
        "src/bench.mjs",
        b'import a from "./a.js";\nconst b = require( "../lib" );\nawait import(`./c`);\n'
        b'import "./d/";\nconst e = require("../../outside");\nimport x from "pkg";\n',
    )
    assert {
        "src/a.js",
        "src/a.js.js",
        "lib.js",
        "lib.json",
        "lib/index.js",
        "lib/package.json",
    } <= (found.keys())
    assert {"src/c.ts", "src/c/index.mjs", "src/d/index.js"} <= found.keys()
    assert not any(p.startswith(("..", "pkg", "outside")) for p in found), found
    assert node_shadows("bench.py", b'require("./lib")') == {}


def test_what_a_make_file_includes() -> None:
    text = b"-include local.mk conf/*.mk $(EXTRA)\ninclude common.mk # c\n\tinclude recipe\n"
    assert make_includes("Makefile", text) == ["local.mk", "conf/*.mk", "common.mk"]
    assert make_includes("sub/GNUmakefile", b"sinclude ../x.mk\n") == ["x.mk"]
    assert make_includes("bench.py", text) == []


@pytest.mark.parametrize(
    ("after", "sealed"),
    [
        ('{"scripts": {"bench": "node bench.js"}, "dependencies": {"x": "1"}}', False),
        ('{"scripts": {"bench": "node bench.js", "postbench": "echo 1"}}', True),
        ('{"scripts": {"bench": "node bench.js"}, "imports": {"#lib": "./fast.js"}}', True),
        ('{"scripts": {"bench": "node bench.js"}, "main": "fast.js"}', True),
        ('{"scripts": {"bench": "node bench.js"}, "type": "module"}', True),
        ("[1, 2]", True),
        ("not json", True),
    ],
)
def test_what_of_package_json_is_sealed(after: str, sealed: bool) -> None:
    before = b'{"scripts": {"bench": "node bench.js"}}'
    assert (package_scripts(before) != package_scripts(after.encode())) == sealed


TSCONFIG = """{
  // what tsx and ts-node read
  "compilerOptions": {"target": "es2020", "strict": true, "baseUrl": ".",
    "paths": {"@lib/*": ["src/lib/*"]},},
}
"""


@pytest.mark.parametrize(
    ("after", "sealed"),
    [
        (TSCONFIG.replace("es2020", "es2022"), False),  # how the code is checked or emitted
        (TSCONFIG.replace('"strict": true', '"strict": false, "lib": ["dom"]'), False),
        ("/* reformatted */ " + TSCONFIG.replace("  ", "\t\t"), False),
        (TSCONFIG.replace("src/lib/*", "src/fast/*"), True),  # `@lib/x` loads another file
        (TSCONFIG.replace('"baseUrl": "."', '"baseUrl": "src"'), True),
        (TSCONFIG.replace('"strict": true', '"rootDirs": ["src", "gen"]'), True),
        (TSCONFIG.replace('"strict": true', '"moduleSuffixes": [".fast", ""]'), True),
        (TSCONFIG.replace('"strict": true', '"jsxImportSource": "./src/x"'), True),
        (TSCONFIG.replace('"strict": true', '"plugins": [{"transform": "./x.ts"}]'), True),
        (TSCONFIG.replace("{\n", '{"extends": "./other.json",\n', 1), True),
        (TSCONFIG.replace("{\n", '{"ts-node": {"require": ["./src/x.js"]},\n', 1), True),
        ('{"compilerOptions": "x"}', True),
        ("[1]", True),
        ("{not json", True),
    ],
)
def test_what_of_a_tsconfig_is_sealed(after: str, sealed: bool) -> None:
    before = TSCONFIG.encode()
    assert (ts_resolution(before) != ts_resolution(after.encode())) == sealed


def test_a_new_tsconfig_is_sealed_only_by_what_redirects_imports() -> None:
    assert ts_resolution(None) == ts_resolution(b'{"compilerOptions": {"strict": true}}')
    assert ts_resolution(None) != ts_resolution(b'{"compilerOptions": {"paths": {"a": ["b"]}}}')
    assert ts_resolution(None) != ts_resolution(b'{"extends": "../base.json"}')


TS_BENCH = """const v = parseFloat(require("fs").readFileSync("src/value.txt", "utf8"));
console.log(`METRIC score=${v}`);
"""


@pytest.mark.slow
@needs_node
@pytest.mark.parametrize(
    ("config", "agent", "status"),
    [
        # `paths` sends the sealed benchmark's `@lib/x` to a file of the candidate's
        ("tsconfig.json", "sed -i 's#src/lib/\\*#src/fast/*#' tsconfig.json\n", "out-of-scope"),
        ("jsconfig.json", 'sed -i \'s#"\\."#"src"#\' jsconfig.json\n', "out-of-scope"),
        # a config others extend, new in a subfolder
        (
            "tsconfig.json",
            'mkdir -p bench && printf \'{"compilerOptions": {"baseUrl": "../src"}}\''
            " > bench/tsconfig.base.json\n",
            "out-of-scope",
        ),
        # an honest agent may change the target (the value it leaves alone: no gain)
        ("tsconfig.json", "sed -i 's#es2020#es2022#' tsconfig.json\n", "discard"),
    ],
)
def test_a_tsconfig_that_redirects_imports_is_out_of_scope(
    tmp_repo: TmpRepo, tmp_path: Path, config: str, agent: str, status: str
) -> None:
    """No TypeScript loader is needed to judge the change: the benchmark runs under node."""
    project(
        tmp_repo,
        tmp_path,
        metric="node bench.js",
        files={"bench.js": TS_BENCH, config: TSCONFIG},
        sealed='"bench.js"',
        agent=agent,
        sandbox="none",
    )
    row = one_attempt(tmp_repo)
    assert row["status"] == status, row
    if status == "out-of-scope":
        assert "which file an import loads" in str(row["reason"]), row
