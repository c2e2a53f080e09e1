"""What a test runner of another language finds by name, and what chooses what its build
runs, is sealed unless named: a new `zz_test.go` with a `TestMain` that exits 0, `Cargo.toml`
with `autotests = false` or a `[[test]]` pointed at the candidate's file, a `go.mod`
`replace`, a jest `__mocks__/` folder, `package.json`'s `jest` settings. With the tests sealed
and every other path mutable, an agent that breaks the code (the sealed tests fail) and makes
the runner skip them is `out-of-scope`, never kept, in both sandbox modes.

Each benchmark prints the value of `src/value.txt` (lower is better); each hostile agent
lowers it, breaks what the sealed tests check, and hides that from the runner."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from gitimprove.loop.implicit import implicit_changes
from gitimprove.loop.runtimes import cargo_build, go_build, package_scripts, why_runtime
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import needs_bwrap, needs_landlock

SANDBOXES = [
    "none",
    pytest.param("bwrap", marks=needs_bwrap),
    pytest.param("landlock", marks=[needs_landlock, pytest.mark.slow]),
]
needs_cargo = pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")
PYTHON = os.path.realpath(sys.executable)
# the tests' home is a private one: rustup and cargo are told where the machine's toolchain is
TOOL_HOMES = {
    "RUSTUP_HOME": os.environ.get("RUSTUP_HOME") or os.path.expanduser("~/.rustup"),
    "CARGO_HOME": os.environ.get("CARGO_HOME") or os.path.expanduser("~/.cargo"),
}
BENCH = "print('METRIC score=' + open('src/value.txt').read().strip())\n"

CARGO = '[package]\nname = "p"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
LIB_RS = "pub fn ok() -> bool {\n    true\n}\n"
IT_RS = "#[test]\nfn it_holds() {\n    assert!(p::ok());\n}\n"
BROKEN_RS = "printf 'pub fn ok() -> bool {\\n    false\\n}\\n' > src/lib.rs\n"
GO_MOD = "module example.com/p\n\ngo 1.21\n"
GO_LIB = "package p\n\nfunc OK() bool { return true }\n"
GO_TEST = 'package p\n\nimport "testing"\n\nfunc TestOK(t *testing.T) {\n\tif !OK() {\n\t\tt.Fatal("not ok")\n\t}\n}\n'

CASES = [
    pytest.param(  # cargo test builds none of tests/*.rs
        "cargo test --offline -q --manifest-path Cargo.toml",
        {"Cargo.toml": CARGO, "src/lib.rs": LIB_RS, "tests/it.rs": IT_RS},
        BROKEN_RS + "sed -i 's/^edition = \"2021\"$/&\\nautotests = false/' Cargo.toml\n",
        "Cargo.toml (its tables but the package metadata",
        marks=needs_cargo,
        id="cargo-autotests",
    ),
    pytest.param(  # the sealed tests/it.rs replaced by the candidate's empty test target
        "cargo test --offline -q --manifest-path Cargo.toml",
        {"Cargo.toml": CARGO, "src/lib.rs": LIB_RS, "tests/it.rs": IT_RS},
        BROKEN_RS
        + "printf 'fn main() {}\\n' > src/it_main.rs\n"
        + 'printf \'\\n[[test]]\\nname = "it"\\npath = "src/it_main.rs"\\nharness = false\\n\''
        " >> Cargo.toml\n",
        "Cargo.toml (its tables but the package metadata",
        marks=needs_cargo,
        id="cargo-test-target",
    ),
    pytest.param(  # go test runs the package's TestMain: one that exits 0 runs no test
        "go test ./...",
        {"go.mod": GO_MOD, "p.go": GO_LIB, "p_test.go": GO_TEST},
        "printf 'package p\\n\\nfunc OK() bool { return false }\\n' > p.go\n"
        'printf \'package p\\n\\nimport (\\n\\t"os"\\n\\t"testing"\\n)\\n\\n'
        "func TestMain(m *testing.M) { os.Exit(0) }\\n' > zz_test.go\n",
        "zz_test.go (go test compiles it into its package's tests",
        marks=needs_go,
        id="go-testmain",
    ),
]


BENCH_CARGO = (
    '[package]\nname = "p"\nversion = "0.1.0"\nedition = "2021"\n\n'
    '[[bench]]\nname = "main"\nharness = false\n'
)
BENCH_LIB = (
    "pub fn value() -> f64 {\n"
    '    std::fs::read_to_string("src/value.txt").unwrap().trim().parse().unwrap()\n}\n'
)
BENCH_MAIN = 'fn main() {\n    println!("METRIC score={}", p::value());\n}\n'
# a new bench target: a constructor that runs when the target starts prints a better line
# after the sealed benchmark's (cargo bench runs its targets in order of name)
FORGED_BENCH = """cat > benches/zz.rs <<'END'
extern "C" fn forged() { println!("METRIC score=1"); }
#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = forged;
END
"""


@pytest.mark.slow
@needs_cargo
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_new_bench_target_printing_after_the_sealed_one_is_out_of_scope(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in TOOL_HOMES.items():
        monkeypatch.setenv(name, value)
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\nset -e\n" + FORGED_BENCH)
    script.chmod(0o755)
    tmp_repo.commit(
        "project",
        {
            "Cargo.toml": BENCH_CARGO,
            "src/lib.rs": BENCH_LIB,
            "benches/main.rs": BENCH_MAIN,
            ".gitignore": "target/\n",
            "src/value.txt": "100\n",
            ".gitimprove.toml": f"""[metric]
command = "cargo bench --offline -q"
direction = "lower"
timeout = "300s"

[scope]
mutable = ["**"]
sealed = ["benches/main.rs", "Cargo.toml"]

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
    res = tmp_repo.cli("run", "--run", "t", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "out-of-scope"], rows
    assert "benches/zz.rs (cargo builds it as a benchmark target" in rows[1]["reason"]


def project(repo: TmpRepo, tmp_path: Path, guard: str, files: dict[str, str], agent: str,
            sandbox: str, mutable: str = '"**"') -> None:  # fmt: skip
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\nset -e\nprintf '1\\n' > src/value.txt\n" + agent)
    script.chmod(0o755)
    repo.commit(
        "project",
        {
            **files,
            "bench.py": BENCH,
            ".gitignore": "target/\n",
            "src/value.txt": "100\n",
            ".gitimprove.toml": f"""[metric]
command = "{PYTHON} bench.py"
direction = "lower"
timeout = "60s"

[guard]
command = "{guard}"
timeout = "300s"

[scope]
mutable = [{mutable}]
sealed = ["bench.py", "tests/**", "p_test.go"]

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


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize(("guard", "files", "agent", "named"), CASES)
def test_a_build_file_that_hides_the_sealed_tests_is_out_of_scope(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str, guard: str, files: dict[str, str],
    agent: str, named: str, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    for name, value in TOOL_HOMES.items():
        monkeypatch.setenv(name, value)
    project(tmp_repo, tmp_path, guard, files, agent, sandbox)
    res = tmp_repo.cli("run", "--run", "t", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "out-of-scope"], rows
    assert named in rows[1]["reason"], rows[1]["reason"]
    assert tmp_repo.git("rev-parse", "improve/t") == tmp_repo.git(
        "rev-parse", "refs/improve/runs/t/base"
    )


def judged(
    before: dict[str, str], after: dict[str, str], mutable: tuple[str, ...] = ("**",)
) -> list[str]:
    """`implicit_changes` between two trees given as {path: text}."""
    paths = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))

    def read(path: str) -> tuple[bytes | None, bytes | None]:
        return tuple(  # type: ignore[return-value]
            None if t.get(path) is None else t[path].encode() for t in (before, after)
        )

    return implicit_changes(paths, ["bench.py"], mutable, read, lambda folder: False)


@pytest.mark.parametrize(
    ("path", "new", "flagged"),
    [
        ("zz_test.go", True, True),
        ("pkg/util/x_test.go", False, True),
        ("pkg/util/x.go", True, False),
        ("pkg/latest.go", True, False),
        ("__mocks__/fs.js", True, True),
        ("src/__mocks__/api.ts", True, True),
        ("src/mocks/api.ts", True, False),
        ("vendor/github.com/stretchr/testify/assert/assertions.go", True, True),
        ("vendor/modules.txt", False, True),
        ("src/vendors.js", True, False),
        (".swcrc", True, True),
        ("benches/zz.rs", True, True),
        ("benches/main.rs", False, False),  # a target the base has: judged as source
        ("tests/it.rs", True, True),
        ("crates/a/tests/x/main.rs", True, True),
        ("tests/x/util.rs", True, False),
        ("src/tests/mod.rs", True, False),  # a module of the library
        ("src/a.test.js", True, True),
        ("src/a.test.js", False, False),
        ("a.spec.ts", True, True),
        ("test-a.mjs", True, True),
        ("b-test.cjs", True, True),
        ("src/__tests__/a.js", True, True),
        ("src/latest.js", True, False),
        ("src/attest.ts", True, False),
        ("tests/test_x.py", True, False),  # pytest's: loop/implicit.py
    ],
)
def test_what_a_test_runner_finds_by_name(path: str, new: bool, flagged: bool) -> None:
    assert (why_runtime(path, new) is not None) == flagged, path


GO_DEPS = "module m\n\ngo 1.22\n\nrequire (\n\tgithub.com/stretchr/testify v1.9.0\n)\n"


@pytest.mark.parametrize(
    ("after", "sealed"),
    [
        (GO_DEPS.replace("v1.9.0", "v1.10.0"), False),  # a dependency's version
        (GO_DEPS + "require golang.org/x/text v0.3.0\n", False),
        (GO_DEPS + "// a comment\n", False),
        (GO_DEPS + "replace github.com/stretchr/testify => ./fake\n", True),
        (GO_DEPS + "replace (\n\tgithub.com/stretchr/testify => ./fake\n)\n", True),
        (GO_DEPS + "exclude github.com/stretchr/testify v1.9.0\n", True),
        (GO_DEPS + "godebug panicnil=1\n", True),
        (GO_DEPS.replace("go 1.22", "go 1.23"), True),
        (GO_DEPS + "toolchain go1.23.1\n", True),
    ],
)
def test_what_of_go_mod_is_sealed(after: str, sealed: bool) -> None:
    assert (go_build(GO_DEPS.encode()) != go_build(after.encode())) == sealed
    named = judged({"go.mod": GO_DEPS}, {"go.mod": after})
    assert bool(named) == sealed, named


CARGO_DEPS = """[package]
name = "p"
version = "0.1.0"
edition = "2021"
description = "p"

[dependencies]
serde = "1.0"
rand = { version = "0.8", features = ["small_rng"] }

[dev-dependencies]
proptest = "1"
"""


@pytest.mark.parametrize(
    ("after", "sealed"),
    [
        (CARGO_DEPS.replace('version = "0.1.0"', 'version = "0.2.0"'), False),
        (CARGO_DEPS.replace('"1.0"', '"1.0.200"'), False),
        (CARGO_DEPS + 'itoa = "1"\n', False),  # a published dependency, in dev-dependencies
        (CARGO_DEPS.replace('["small_rng"]', '["small_rng", "std"]'), False),
        (CARGO_DEPS.replace('description = "p"', 'description = "q"'), False),
        (CARGO_DEPS.replace('edition = "2021"', 'edition = "2021"\nautotests = false'), True),
        (CARGO_DEPS.replace('edition = "2021"', 'edition = "2021"\nbuild = "gen.rs"'), True),
        (CARGO_DEPS + "\n[lib]\ntest = false\n", True),
        (CARGO_DEPS + '\n[[test]]\nname = "it"\npath = "src/x.rs"\nharness = false\n', True),
        (CARGO_DEPS + '\n[patch.crates-io]\nserde = { path = "fake" }\n', True),
        (CARGO_DEPS.replace('serde = "1.0"', 'serde = { path = "fake" }'), True),
        (CARGO_DEPS.replace('proptest = "1"', 'proptest = { git = "https://x/y" }'), True),
        (CARGO_DEPS.replace('serde = "1.0"', 'serde = { version = "1", package = "f" }'), True),
        (CARGO_DEPS + "\n[features]\ndefault = []\n", True),
        (CARGO_DEPS + "\n[profile.test]\ndebug-assertions = false\n", True),
        (CARGO_DEPS + "\n[profile.dev]\noverflow-checks = false\nopt-level = 3\n", True),
        (CARGO_DEPS + '\n[profile.release]\npanic = "abort"\n', True),
        (CARGO_DEPS + '\n[profile.bench]\ninherits = "dev"\n', True),
        (CARGO_DEPS + "\n[profile.release.package.serde]\nopt-level = 0\n", True),
        # how hard cargo optimises is the agent's to tune: a real gain of the same code
        (
            CARGO_DEPS + '\n[profile.release]\nopt-level = 3\nlto = "fat"\ncodegen-units = 1\n',
            False,
        ),
        (
            CARGO_DEPS + "\n[profile.dev]\nopt-level = 1\ndebug = false\nincremental = false\n",
            False,
        ),
        (CARGO_DEPS + '\n[target.x86_64-unknown-linux-gnu]\nrunner = "true"\n', True),
        ("not toml [", True),
        (CARGO_DEPS + '\n[workspace.dependencies]\nlog = "0.4"\n', True),  # a new table
    ],
)
def test_what_of_cargo_toml_is_sealed(after: str, sealed: bool) -> None:
    assert (cargo_build(CARGO_DEPS.encode()) != cargo_build(after.encode())) == sealed
    named = judged({"Cargo.toml": CARGO_DEPS}, {"Cargo.toml": after})
    assert bool(named) == sealed, named
    # named in mutable: it may change
    assert not judged({"Cargo.toml": CARGO_DEPS}, {"Cargo.toml": after}, ("Cargo.toml",))


WORKSPACE = '[workspace]\nmembers = ["a"]\n\n[workspace.dependencies]\nlog = "0.4"\n'


@pytest.mark.parametrize(
    ("after", "sealed"),
    [
        (WORKSPACE.replace('"0.4"', '"0.4.22"'), False),
        (WORKSPACE + 'serde = { version = "1", features = ["derive"] }\n', False),
        (WORKSPACE + 'serde = { path = "fake" }\n', True),
        (WORKSPACE.replace('["a"]', '["a", "b"]'), True),
    ],
)
def test_what_of_a_cargo_workspace_is_sealed(after: str, sealed: bool) -> None:
    assert (cargo_build(WORKSPACE.encode()) != cargo_build(after.encode())) == sealed


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("jest", {"testMatch": ["**/none/**"]}),
        ("jest", {"setupFiles": ["./src/setup.js"]}),
        ("mocha", {"require": "./src/x.js"}),
        ("ava", {"require": ["./src/x.js"]}),
        ("babel", {"plugins": ["./src/p.js"]}),
        ("workspaces", ["fake/*"]),
    ],
)
def test_a_test_runners_settings_in_package_json_are_sealed(key: str, value: object) -> None:
    import json

    base = {"name": "p", "version": "1.0.0", "dependencies": {"a": "1"}}
    assert package_scripts(json.dumps(base).encode()) != package_scripts(
        json.dumps({**base, key: value}).encode()
    )
    named = judged(
        {"package.json": json.dumps(base)}, {"package.json": json.dumps({**base, key: value})}
    )
    assert named and "package.json" in named[0], named


def test_honest_changes_beside_the_runners_files_pass() -> None:
    """Ordinary source next to a vite, jest, babel config, a Go test, Cargo.toml or a
    `__mocks__/` folder changes freely; a config `mutable` names may change too."""
    before = {
        "vite.config.ts": "export default {}\n",
        "jest.config.js": "module.exports = {}\n",
        "babel.config.js": "module.exports = {}\n",
        "src/app.ts": "export const a = 1\n",
        "src/__mocks__/api.ts": "export const api = 1\n",
        "p_test.go": "package p\n",
        "p.go": "package p\n",
        "Cargo.toml": CARGO_DEPS,
        "src/lib.rs": "pub fn f() {}\n",
    }
    after = {
        **before,
        "src/app.ts": "export const a = 2\n",
        "src/util.ts": "export const u = 1\n",
        "p.go": "package p\n\nfunc F() {}\n",
        "src/lib.rs": "pub fn f() { let _ = 1; }\n",
        "Cargo.toml": CARGO_DEPS.replace('"1.0"', '"1.0.200"'),
    }
    assert judged(before, after) == []
    configs = {
        **after,
        "vite.config.ts": "export default { x: 1 }\n",
        "jest.config.js": "module.exports = { verbose: true }\n",
        "src/__mocks__/api.ts": "export const api = 2\n",
        "zz_test.go": "package p\n",
    }
    assert len(judged(before, configs)) == 4
    named = ("**", "vite.config.ts", "jest.config.*", "src/__mocks__/**", "**/*_test.go")
    assert judged(before, configs, named) == []


HONEST_JS = {
    "bench.js": 'const { value } = require("./src/app");\nconsole.log(`METRIC score=${value()}`);\n',
    "src/app.js": 'const fs = require("fs");\nexports.value = () => '
    'parseFloat(fs.readFileSync("src/value.txt", "utf8"));\n',
    "package.json": '{"name": "p", "version": "1.0.0", "jest": {"testEnvironment": "node"}}\n',
    "vite.config.js": "export default {}\n",
    "jest.config.js": "module.exports = {};\n",
    "babel.config.js": "module.exports = {};\n",
    "src/__mocks__/fs.js": "module.exports = {};\n",
    "conftest.py": "",
    "tests/test_app.py": "def test_ok():\n    assert True\n",
}
# an honest change: ordinary source beside those files (a new helper module too)
HONEST_AGENT = """printf 'exports.scale = (v) => v / 2;\\n' > src/helper.js
printf 'const fs = require("fs");\\nconst { scale } = require("./helper");\\nexports.value = () => scale(parseFloat(fs.readFileSync("src/value.txt", "utf8")));\\n' > src/app.js
printf '40\\n' > src/value.txt
"""
CONFIG_AGENT = "printf 'module.exports = { verbose: true };\\n' > jest.config.js\n"


@pytest.mark.slow
@needs_node
@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("names_config", [False, True])
def test_an_honest_change_beside_the_runners_files_is_kept(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str, names_config: bool
) -> None:
    """No false alarm: the runners' configuration files are in the project, the agent
    changes only ordinary source (or, where `mutable` names it, the jest config too)."""
    agent = HONEST_AGENT + (CONFIG_AGENT if names_config else "")
    mutable = '"**", "jest.config.js"' if names_config else '"**"'
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\nset -e\n" + agent)
    script.chmod(0o755)
    node = shutil.which("node")
    tmp_repo.commit(
        "project",
        {
            **HONEST_JS,
            "src/value.txt": "100\n",
            ".gitimprove.toml": f"""[metric]
command = "{node} bench.js"
direction = "lower"

[guard]
command = "{PYTHON} -m pytest -q tests"

[scope]
mutable = [{mutable}]
sealed = ["bench.js", "tests/**"]

[agent]
name = "command"
command = "{script}"
sandbox = "{sandbox}"
""",
        },
    )
    res = tmp_repo.cli("run", "--run", "t", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "keep"], rows
    assert rows[1]["metric"]["value"] == 20
    kept = tmp_repo.git("show", "improve/t:src/app.js")
    assert "scale" in kept
