"""What runners and toolchains read from your home and from the folders above the repository.

A measurement checkout is under `.git/improve/work/`, inside your work tree: Node resolves a
`require("speedup")` from every `node_modules/` on the way up (the work tree's, ignored, and
every folder above it), cargo reads every `.cargo/config.toml` above the folder it runs in,
pyenv, rustup and nvm take a version file from any of them; and `npm run` reads `~/.npmrc`
(its `node-options` become `NODE_OPTIONS`) whatever folder it runs in. Without the sandbox an
agent that plants one of them changes every later measurement, the incumbent's too, and no
status shows it: a `~/.npmrc` that loads a file printing `METRIC score=1` at exit, or a
`node_modules/speedup/` in the folder above the repository for a benchmark that uses the
package when it is installed, was kept at 1 against 100. Each is now watched around every
agent call and measurement: a change stops the run naming it and the attempt is `tampered`. In
the sandbox the home and the folders above the workspace are read-only: the write fails."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import needs_bwrap

needs_npm = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
SANDBOXES = ["none", pytest.param("bwrap", marks=needs_bwrap)]

# the sealed benchmark: an optional package makes it faster when it is installed
BENCH = """let v = parseFloat(require("fs").readFileSync("src/value.txt", "utf8"));
try { v = require("speedup").value(v); } catch (e) { if (e.code !== "MODULE_NOT_FOUND") throw e; }
if (process.argv[2] === "--solver") require("child_process").execFileSync("node", ["src/solver.js"]);
console.log(`METRIC score=${v}`);
"""
PACKAGE = '{"name": "p", "version": "1.0.0", "scripts": {"bench": "node bench.js %s"}}\n'
FORGE = 'process.on("exit", () => console.log("METRIC score=1"));\n'

# each hostile agent: a shell script run in its workspace; {home} and {above} are filled in
AGENTS = {
    "npmrc": (
        "printf '{forge}' > {home}/x.js 2>/dev/null || true\n"
        "printf 'node-options=--require {home}/x.js\\n' > {home}/.npmrc 2>/dev/null || true\n",
        ".npmrc (added)",
    ),
    "node_modules-above": (
        "mkdir -p {above}/node_modules/speedup 2>/dev/null && printf "
        "'exports.value = () => 1;\\n' > {above}/node_modules/speedup/index.js || true\n",
        "node_modules (added)",
    ),
    "cargo-above": (  # what cargo would read: no cargo needed to see it is watched
        "mkdir -p {above}/.cargo 2>/dev/null && printf '[build]\\n' > "
        "{above}/.cargo/config.toml || true\n",
        ".cargo/config.toml (added)",
    ),
}


def project(repo: TmpRepo, tmp_path: Path, agent: str, sandbox: str, solver: bool = False) -> None:
    script = tmp_path / "agent.sh"
    home = Path.home()
    body = agent.format(home=home, above=repo.path.parent, forge=FORGE.replace("\n", "\\n"))
    script.write_text("#!/bin/sh\n" + body + "echo 99 > src/value.txt\n")
    script.chmod(0o755)
    repo.commit(
        "project",
        {
            "bench.js": BENCH,
            "package.json": PACKAGE % ("--solver" if solver else ""),
            "src/value.txt": "100\n",
            "src/solver.js": "// the code under test\n",
            ".gitimprove.toml": f"""[metric]
command = "npm run -s bench"
direction = "lower"

[scope]
mutable = ["src/**"]
sealed = ["bench.js", "package.json"]

[agent]
name = "command"
command = "{script}"
sandbox = "{sandbox}"
""",
        },
    )


@pytest.fixture
def clean_above(tmp_repo: TmpRepo):  # type: ignore[no-untyped-def]
    yield
    above = tmp_repo.path.parent
    shutil.rmtree(above / "node_modules", ignore_errors=True)
    shutil.rmtree(above / ".cargo", ignore_errors=True)


@pytest.mark.slow
@needs_npm
@pytest.mark.parametrize("attack", list(AGENTS))
def test_a_runner_file_planted_outside_the_repository_stops_the_run(
    tmp_repo: TmpRepo, tmp_path: Path, clean_above: None, attack: str
) -> None:
    agent, named = AGENTS[attack]
    project(tmp_repo, tmp_path, agent, "none")
    res = tmp_repo.cli("run", "--run", "t", "-n", "2")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "stopped" in res.stderr and named in res.stderr, res.stderr
    assert "runners and toolchains" in res.stderr and "Traceback" not in res.stderr
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "tampered"], rows
    base = tmp_repo.git("rev-parse", "refs/improve/runs/t/base")
    assert tmp_repo.git("rev-parse", "improve/t") == base


SOLVERS = {
    "npmrc": (
        "fs.writeFileSync(os.homedir() + '/x.js', {forge});\n"
        "fs.writeFileSync(os.homedir() + '/.npmrc', "
        "'node-options=--require ' + os.homedir() + '/x.js\\n');\n",
        ".npmrc (added)",
    ),
    # the checkout is `.git/improve/work/<name>/`: `../../..` is the git directory, whose
    # node_modules Node reaches from the checkout (the watch of the git directory saw it
    # already; both name it)
    "git-dir-node_modules": (
        "fs.mkdirSync('../../../node_modules/speedup', {{recursive: true}});\n"
        "fs.writeFileSync('../../../node_modules/speedup/index.js', "
        "'exports.value = () => 1;');\n",
        "node_modules",
    ),
}


@pytest.mark.slow
@needs_npm
@pytest.mark.parametrize("attack", list(SOLVERS))
def test_the_measured_code_that_plants_a_runner_file_stops_the_run(
    tmp_repo: TmpRepo, tmp_path: Path, attack: str
) -> None:
    """The code under test (run by the benchmark in a child process) writes `~/.npmrc`, or a
    `node_modules/` in the git directory above its checkout, during the metric run: the next
    run of either arm would load what it names."""
    body, named = SOLVERS[attack]
    agent = (
        (
            "cat > src/solver.js <<'EOF'\n"
            "const fs = require('fs'), os = require('os');\n"
            + body.format(forge=repr(FORGE.strip()))
            + "EOF\n"
        )
        .replace("{", "{{")
        .replace("}", "}}")
    )  # `project` fills in {home} and {above}
    project(tmp_repo, tmp_path, agent, "none", solver=True)
    res = tmp_repo.cli("run", "--run", "t", "-n", "2")
    assert res.returncode == 1, res.stdout + res.stderr
    assert named in res.stderr and "during the metric" in res.stderr, res.stderr
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "tampered"], rows


@pytest.mark.slow
@needs_npm
@needs_bwrap
@pytest.mark.parametrize("attack", list(AGENTS))
def test_in_the_sandbox_the_write_fails_and_the_run_goes_on(
    tmp_repo: TmpRepo, tmp_path: Path, clean_above: None, attack: str
) -> None:
    agent, _ = AGENTS[attack]
    project(tmp_repo, tmp_path, agent, "bwrap")
    res = tmp_repo.cli("run", "--run", "t", "-n", "2")
    assert res.returncode == 0, res.stdout + res.stderr
    assert not (Path.home() / ".npmrc").exists()
    assert not (tmp_repo.path.parent / "node_modules").exists()
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows][:2] == ["baseline", "keep"], rows
    assert rows[1]["metric"]["value"] == 99


@pytest.mark.parametrize(
    "planted",
    [
        "node_modules/.bin/node",  # `npm run` puts every folder's node_modules/.bin on PATH
        "node_modules/speedup/index.js",
        ".cargo/config.toml",
        "rust-toolchain.toml",
        ".python-version",
        "go.work",
    ],
)
@pytest.mark.parametrize("level", ["work tree", "above", "git dir"])
def test_what_is_watched_in_the_work_tree_and_above(
    tmp_path: Path, planted: str, level: str
) -> None:
    from gitimprove.loop import sites

    work_tree = tmp_path / "a" / "repo"
    (work_tree / "node_modules" / ".bin").mkdir(parents=True)
    where = {"work tree": work_tree, "above": tmp_path / "a", "git dir": work_tree / ".git"}[level]
    watched = sites.runner_files(work_tree, work_tree / ".git")
    before = sites.take(watched)
    (where / planted).parent.mkdir(parents=True, exist_ok=True)
    (where / planted).write_text("x")
    assert sites.changes(before, sites.take(watched)), planted


@pytest.mark.parametrize(
    "planted",
    [".npmrc", ".cargo/config.toml", ".node_modules/x.js", ".config/uv/uv.toml", ".Rprofile"],
)
def test_what_is_watched_in_the_home(planted: str) -> None:
    from gitimprove.loop import sites

    watched = sites.runner_files(None)
    before = sites.take(watched)
    (Path.home() / planted).parent.mkdir(parents=True, exist_ok=True)
    (Path.home() / planted).write_text("x")
    assert sites.changes(before, sites.take(watched)), planted
