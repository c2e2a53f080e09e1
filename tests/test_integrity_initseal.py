"""A project made with `git improve init --yes`: the benchmark the metric command runs and the
tests the guard command runs were mutable (`sealed = []`), so an agent that rewrote `bench.py`
to print `METRIC score=1` and emptied the tests was kept. `init` now seals what the commands
name in the repository unless `--sealed` says otherwise; such an agent's attempt is `sealed`,
in both sandbox modes. A hand-written configuration that leaves them unsealed is named at the
run's start."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from gitimprove.loop.inprocess import build_files, measured_paths, named_paths, unsealed_named
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import needs_bwrap
from tests.test_integrity_builds import TOOL_HOMES

PYTHON = os.path.realpath(sys.executable)
BENCH = "print('METRIC score=' + open('src/value.txt').read().strip())\n"
TEST = "def test_value():\n    assert open('src/value.txt').read().strip() == '100'\n"
# rewrites the benchmark and the test, and makes the real change the test refuses
AGENT = """printf 'print("METRIC score=1")\\n' > bench.py
printf 'def test_value():\\n    pass\\n' > tests/test_v.py
printf '5\\n' > src/value.txt
"""


def use_agent(repo: TmpRepo, script: Path, body: str, sandbox: str) -> None:
    """The agent executable `script` (a shell script of `body`) and the sandbox mode put into
    the .gitimprove.toml `init` wrote, committed."""
    script.write_text("#!/bin/sh\nset -e\n" + body)
    script.chmod(0o755)
    config = (repo.path / ".gitimprove.toml").read_text()
    config = config.replace('name = "command"', f'name = "command"\ncommand = "{script}"')
    config = config.replace('sandbox = "auto"', f'sandbox = "{sandbox}"')
    repo.commit("configure", {".gitimprove.toml": config})


def run_statuses(repo: TmpRepo, n: int) -> list[dict[str, object]]:
    """The rows of a run of `n` rounds, which must exit 0 and name nothing unsealed."""
    res = repo.cli("run", "--run", "t", "-n", str(n))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "not sealed" not in res.stdout + res.stderr
    return run_rows(repo, "t")


def init_project(repo: TmpRepo, tmp_path: Path, sandbox: str, *extra: str) -> dict[str, object]:
    repo.commit("code", {"bench.py": BENCH, "tests/test_v.py": TEST, "src/value.txt": "100\n"})
    res = repo.cli(
        "init", "--metric", f"{PYTHON} bench.py", "--direction", "lower",
        "--guard", f"{PYTHON} -m pytest -q -p no:cacheprovider tests", "--agent", "command",
        "--yes", "--json", *extra,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    use_agent(repo, tmp_path / "agent.sh", AGENT, sandbox)
    return json.loads(res.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_init_seals_the_benchmark_and_tests_its_commands_name(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    init_project(tmp_repo, tmp_path, sandbox)
    config = (tmp_repo.path / ".gitimprove.toml").read_text()
    assert 'sealed = ["bench.py", "tests/**"]' in config, config
    res = tmp_repo.cli("run", "--run", "t", "-n", "1")
    assert res.returncode == 0, res.stderr
    assert "not sealed" not in res.stdout + res.stderr
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "sealed"], rows
    base = tmp_repo.git("rev-parse", "refs/improve/runs/t/base")
    assert tmp_repo.git("rev-parse", "improve/t") == base


@pytest.mark.slow
def test_a_run_names_what_its_commands_run_unsealed(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    """`--sealed` given (another file): the user chose; the run says what stays open."""
    tmp_repo.commit("other", {"data.csv": "1\n"})
    init_project(tmp_repo, tmp_path, "none", "--sealed", "data.csv")
    res = tmp_repo.cli("run", "--run", "t", "-n", "1")
    assert res.returncode == 0, res.stderr
    said = res.stdout + res.stderr
    assert "runs bench.py, tests/**, which are not sealed" in said, said


def test_what_commands_name_in_the_repository() -> None:
    files = ["bench.py", "tests/test_a.py", "tests/unit/test_b.py", "data/set.csv", "src/x.py"]
    commands = (
        "python3 bench.py --data=data/set.csv -n 3",
        "FOO=1 pytest -q ./tests/ /abs/path ~/x ../up $HOME/y",
    )
    assert unsealed_named(*commands, files, []) == ["bench.py", "data/set.csv", "tests/**"]
    assert unsealed_named(*commands, files, ["bench.py", "data/set.csv"]) == ["tests/**"]
    sealed = ["bench.py", "data/set.csv", "tests/test_a.py", "tests/unit/test_b.py"]
    assert unsealed_named(*commands, files, sealed) == []
    # a pytest guard naming no path collects tests/ from the root
    assert unsealed_named("python3 bench.py", "pytest -q", files, ["bench.py"]) == ["tests/**"]
    # so does `make test` (`make check`, ctest): the test target of a build
    assert unsealed_named("python3 bench.py", "make test", files, ["bench.py"]) == ["tests/**"]
    assert unsealed_named("python3 bench.py", "ruff check", files, ["bench.py"]) == []
    assert named_paths(
        ["python3 -m mod src/x.py"], lambda p: "file" if p == "src/x.py" else None
    ) == ["src/x.py"]
    # the words after a `cd` are read in its folder: `cd sub && python run.py` runs sub/run.py
    held = {"sub/run.py": "file", "sub/data": "folder", "run.py": "file"}
    assert named_paths(["cd sub && python run.py data/"], held.get) == [
        "sub/run.py",
        "sub/data/**",
    ]
    assert named_paths(["(cd sub && make) && python run.py"], held.get) == ["run.py"]


@pytest.mark.slow
def test_a_pytest_guard_naming_no_path_seals_the_test_folder(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("code", {"bench.py": BENCH, "tests/test_v.py": TEST, "src/value.txt": "100\n"})
    res = tmp_repo.cli(
        "init", "--metric", f"{PYTHON} bench.py", "--direction", "lower",
        "--guard", f"{PYTHON} -m pytest -q -p no:cacheprovider", "--agent", "command", "--yes",
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    config = (tmp_repo.path / ".gitimprove.toml").read_text()
    assert 'sealed = ["bench.py", "tests/**"]' in config, config


NPM = shutil.which("npm")
needs_npm = pytest.mark.skipif(NPM is None or shutil.which("node") is None, reason="no npm")
PACKAGE = {
    "name": "p",
    "version": "1.0.0",
    "scripts": {"test": "node --test", "bench": "node bench.js"},
}
NODE_BENCH = "console.log('METRIC ms=' + require('./src/value.js'));\n"
NODE_TEST = (
    "const test = require('node:test');\nconst assert = require('node:assert');\n"
    "test('v', () => assert.ok(require('../src/value.js') > 0));\n"
)


@pytest.mark.slow
@needs_npm
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_init_seals_the_file_a_package_script_runs(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    """`--metric "npm run bench"`: the metric is `package.json`'s `node bench.js`, so
    `bench.js` is sealed as a `python bench.py` metric's `bench.py` is; an agent that rewrites
    it to print a better number is `sealed`, and an honest one (new module, version bumped)
    is kept."""
    tmp_repo.commit(
        "code",
        {
            "package.json": json.dumps(PACKAGE, indent=2) + "\n",
            "bench.js": NODE_BENCH,
            "test/value.test.js": NODE_TEST,
            "src/value.js": "module.exports = 100;\n",
        },
    )
    res = tmp_repo.cli(
        "init", "--metric", "npm run bench", "--direction", "lower", "--guard", "npm test",
        "--agent", "command", "--yes",
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    config = (tmp_repo.path / ".gitimprove.toml").read_text()
    assert 'sealed = ["bench.js", "test/**"]' in config, config
    # the user is told what was sealed, without reading the file
    assert "sealed (the agent may not change them): bench.js, test/**" in res.stdout
    use_agent(
        tmp_repo,
        tmp_path / "agent.sh",
        'if [ "$GITIMPROVE_ITERATION" = 1 ]; then\n'
        "  printf 'console.log(\"METRIC ms=1\");\\n' > bench.js\n"
        "else\n"
        "  printf 'module.exports = 40;\\n' > src/fast.js\n"
        "  printf 'module.exports = require(\"./fast.js\");\\n' > src/value.js\n"
        "  sed -i 's/1.0.0/1.1.0/' package.json\n"
        "fi\n",
        sandbox,
    )
    rows = run_statuses(tmp_repo, 2)
    assert [r["status"] for r in rows] == ["baseline", "sealed", "keep"], rows
    assert rows[-1]["metric"]["value"] == 40


def test_what_package_scripts_run() -> None:
    package = {
        "scripts": {
            "prebench": "node tools/warm.js",
            "bench": "npm run build && node perf/run.js --data=data/in.csv",
            "build": "node build.js",
            "postbench": "node report.js",
            "test": "jest",
            "other": "node other.js",
        }
    }
    files = {
        "package.json": json.dumps(package).encode(),
        "tools/warm.js": b"",
        "perf/run.js": b"",
        "data/in.csv": b"",
        "build.js": b"",
        "report.js": b"",
        "other.js": b"",
        "__tests__/a.test.js": b"",
    }
    folders = {f.rsplit("/", 1)[0] for f in files if "/" in f}

    def kind(path: str) -> str | None:
        return "file" if path in files else "folder" if path in folders else None

    from gitimprove.loop.inprocess import measured_paths

    expected = ["tools/warm.js", "perf/run.js", "data/in.csv", "report.js", "build.js"]
    for command in ("npm run bench", "npm run --silent bench", "yarn bench", "pnpm run bench"):
        got = measured_paths(command, "", kind, files.get)
        assert sorted(got) == sorted(expected), (command, got)
    assert measured_paths("bun run bench", "npm test", kind, files.get)[-1] == "__tests__/**"
    assert measured_paths("npm run nothing", "", kind, files.get) == []
    # a word that only contains a runner's name is not that runner
    assert measured_paths("node jester.js", "npx mochawesome", kind, files.get) == []
    assert measured_paths("node x.js", "npx jest --ci", kind, files.get) == ["__tests__/**"]
    assert measured_paths("npm run bench", "", kind, None) == []
    assert measured_paths("npm run bench", "", kind, {"package.json": b"{"}.get) == []


@pytest.mark.slow
@needs_npm
def test_a_new_test_file_is_allowed_the_way_the_refusal_says(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    """An honest agent adds `test/fast.test.js` with its change. `mutable = ["**", "test/**"]`
    does not allow a file the test runner finds by its name: the refusal says so and what
    does (a pattern that spells the name); following it, the attempt is kept."""
    tmp_repo.commit(
        "code",
        {
            "package.json": json.dumps(PACKAGE, indent=2) + "\n",
            "bench.js": NODE_BENCH,
            "test/value.test.js": NODE_TEST,
            "src/value.js": "module.exports = 100;\n",
        },
    )
    script = tmp_path / "agent.sh"
    script.write_text(
        "#!/bin/sh\nset -e\n"
        "printf 'module.exports = 40;\\n' > src/value.js\n"
        "printf \"require('node:test')('f', () => {});\\n\" > test/fast.test.js\n"
    )
    script.chmod(0o755)
    statuses = []
    for n, mutable in enumerate(('"**", "test/**"', '"**", "test/fast.test.js"')):
        config = f"""[metric]
command = "npm run bench"
direction = "lower"

[guard]
command = "npm test"

[scope]
mutable = [{mutable}]
sealed = ["bench.js", "test/value.test.js"]

[agent]
name = "command"
command = "{script}"
sandbox = "none"
"""
        tmp_repo.commit("configure", {".gitimprove.toml": config})
        res = tmp_repo.cli("run", "--run", f"t{n}", "-n", "1")
        assert res.returncode == 0, res.stdout + res.stderr
        rows = run_rows(tmp_repo, f"t{n}")
        statuses.append(rows[-1]["status"])
        if n == 0:
            reason = rows[-1]["reason"]
            assert "test/fast.test.js" in reason, reason
            assert "spells its name, such as its path" in reason, reason
            assert "`**` or a folder's `/**` alone does not" in reason, reason
    assert statuses == ["out-of-scope", "keep"]


CARGO = shutil.which("cargo")
RUST_LIB = "pub fn value() -> u64 {\n    100\n}\n"
RUST_MAIN = 'fn main() {\n    println!("METRIC ms={}", p::value());\n}\n'
RUST_TEST = "#[test]\nfn positive() {\n    assert!(p::value() > 0);\n}\n"
CARGO_TOML = '[package]\nname = "p"\nversion = "0.1.0"\nedition = "2021"\n\n[profile.release]\nopt-level = 1\n'


@pytest.mark.slow
@pytest.mark.skipif(CARGO is None, reason="no cargo")
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_a_rust_crate_made_with_init_keeps_an_honest_change_and_seals_its_tests(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cargo run --release` as the metric, `cargo test` as the guard: init seals `tests/**`
    (cargo collects it as pytest does `tests/`); an agent that weakens the test is `sealed`,
    and an honest one that adds a module, bumps the version (cargo rewrites the committed
    `Cargo.lock` while it measures: no tampering) and raises the release profile's
    `opt-level` (how hard cargo optimises, not what the code does) is kept."""
    for name, value in TOOL_HOMES.items():
        monkeypatch.setenv(name, value)
    tmp_repo.commit(
        "code",
        {
            "Cargo.toml": CARGO_TOML,
            "src/lib.rs": RUST_LIB,
            "src/main.rs": RUST_MAIN,
            "tests/value.rs": RUST_TEST,
            ".gitignore": "target/\n",
            # committed, as a binary crate's is: `cargo run` brings it up to date after the
            # agent's version bump, during the metric run
            "Cargo.lock": 'version = 3\n\n[[package]]\nname = "p"\nversion = "0.1.0"\n',
        },
    )
    res = tmp_repo.cli(
        "init", "--metric", "cargo run --offline --release -q", "--direction", "lower",
        "--guard", "cargo test --offline -q", "--agent", "command", "--yes", "--runs", "1",
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    config = (tmp_repo.path / ".gitimprove.toml").read_text()
    assert 'sealed = ["tests/**"]' in config, config
    use_agent(
        tmp_repo,
        tmp_path / "agent.sh",
        'if [ "$GITIMPROVE_ITERATION" = 1 ]; then\n'
        "  printf '#[test]\\nfn positive() {}\\n' > tests/value.rs\n"
        "  printf 'pub fn value() -> u64 {\\n    0\\n}\\n' > src/lib.rs\n"
        "else\n"
        "  printf 'pub fn fast() -> u64 {\\n    40\\n}\\n' > src/fast.rs\n"
        "  printf 'mod fast;\\npub fn value() -> u64 {\\n    fast::fast()\\n}\\n' > src/lib.rs\n"
        "  sed -i 's/0.1.0/0.2.0/; s/opt-level = 1/opt-level = 3/' Cargo.toml\n"
        "fi\n",
        sandbox,
    )
    rows = run_statuses(tmp_repo, 2)
    assert [r["status"] for r in rows] == ["baseline", "sealed", "keep"], rows
    assert rows[-1]["metric"]["value"] == 40


def test_which_lock_files_a_run_may_bring_up_to_date() -> None:
    from gitimprove.loop.integrity import _relocked, _tools

    cargo = _tools("cargo run --release -q", "")
    assert _relocked("Cargo.lock (changed)", cargo)
    assert _relocked("crates/a/Cargo.lock (rewritten)", cargo)
    assert not _relocked("Cargo.lock (removed)", cargo)
    assert not _relocked("Cargo.toml (changed)", cargo)
    assert not _relocked("src/Cargo.lock.rs (changed)", cargo)
    # a lock file of a tool neither command runs is tampering as any other file
    assert not _relocked("Cargo.lock (changed)", _tools("python3 bench.py", "pytest -q"))
    assert not _relocked("uv.lock (changed)", cargo)
    assert _relocked("uv.lock (changed)", _tools("/usr/bin/uv run bench.py", ""))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("node") is None, reason="no node")
def test_init_seals_what_node_test_collects(tmp_repo: TmpRepo, tmp_path: Path) -> None:
    """`--guard "node --test"` names no path: node collects `test/`, as pytest `tests/`. An
    agent that rewrites the sealed test's helper (`check: () => true`) and breaks the code was
    kept; it is `sealed` now."""
    tmp_repo.commit(
        "code",
        {
            "src/value.js": "module.exports = 100;\n",
            "test/helper.js": "module.exports = { check: (v) => v === 100 };\n",
            "test/value.test.js": (
                "const test = require('node:test');\nconst assert = require('node:assert');\n"
                "const { check } = require('./helper');\n"
                "test('v', () => assert.ok(check(require('../src/value.js'))));\n"
            ),
            "bench.js": NODE_BENCH,
        },
    )
    res = tmp_repo.cli(
        "init", "--metric", "node bench.js", "--direction", "lower", "--guard", "node --test",
        "--agent", "command", "--yes",
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    config = (tmp_repo.path / ".gitimprove.toml").read_text()
    assert 'sealed = ["bench.js", "test/**"]' in config, config
    use_agent(
        tmp_repo,
        tmp_path / "agent.sh",
        "printf 'module.exports = { check: () => true };\\n' > test/helper.js\n"
        "printf 'module.exports = 1;\\n' > src/value.js\n",
        "none",
    )
    res = tmp_repo.cli("run", "--run", "t", "-n", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "sealed"], rows


def test_init_says_when_nothing_is_sealed(tmp_repo: TmpRepo) -> None:
    tmp_repo.commit("code", {"src/value.txt": "100\n"})
    res = tmp_repo.cli(
        "init", "--metric", f"{PYTHON} -c \"print('METRIC score=1')\"", "--agent", "command",
        "--yes", "--runs", "1",
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    assert "nothing is sealed: the agent may change every file" in res.stdout, res.stdout
    listed = tmp_repo.cli("init", "--json", "--yes", "--runs", "1")
    assert json.loads(listed.stdout)["sealed"] == [], listed.stdout + listed.stderr


def test_the_build_files_a_command_reads_unnamed() -> None:
    """make's recipe is its make file's, cmake's and ctest's the CMakeLists.txt of the
    source folder: init seals them, and a test target or ctest seals the test folder."""
    held = {
        "Makefile": "file",
        "sub/GNUmakefile": "file",
        "sub/Makefile": "file",
        "CMakeLists.txt": "file",
        "CMakePresets.json": "file",
        "cpp/CMakeLists.txt": "file",
        "other.mk": "file",
        "tests": "folder",
        "bench": "folder",
    }.get
    assert build_files("make -s bench", held) == ["Makefile"]
    assert build_files("make -C sub bench", held) == ["sub/GNUmakefile"]  # read first
    assert build_files("cd sub && make", held) == ["sub/GNUmakefile"]
    assert build_files("make -f other.mk && make --file=none.mk", held) == ["other.mk"]
    assert build_files("echo make; true", held) == []
    assert build_files("cmake -B b && cmake --build b && ./b/bench", held) == [
        "CMakeLists.txt",
        "CMakePresets.json",
    ]
    assert build_files("cmake -Scpp -B b", held) == ["cpp/CMakeLists.txt"]
    assert measured_paths("make -s bench", "make -j2 -s check", held) == [
        "bench/**",
        "Makefile",
        "tests/**",
    ]
    # a build naming no folder: the benchmark's and the tests' folders it compiles
    assert measured_paths("cmake -B b && cmake --build b && ./b/bench", "", held) == [
        "CMakeLists.txt",
        "CMakePresets.json",
        "bench/**",
        "tests/**",
    ]
    assert measured_paths("make -s run", "", held) == ["Makefile", "bench/**", "tests/**"]
    assert measured_paths("./run.sh", "ctest --test-dir b", held) == [
        "CMakeLists.txt",
        "CMakePresets.json",
        "tests/**",
    ]
