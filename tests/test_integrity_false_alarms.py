"""What an honest metric writes into its checkout never stops a run: a JavaScript tool's cache
in `node_modules/.cache/` (babel-loader, webpack's plugins, eslint-loader, ava and nyc keep
theirs there through `find-cache-dir`), pytest's `.pytest_cache/`, `__pycache__/`, cargo's
`target/`. Each is output, wiped before the next run; a module written elsewhere under
`node_modules/` is still `tampered` (Node would resolve it)."""

from __future__ import annotations

import shutil
import sys

import pytest

from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import needs_bwrap

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

# as find-cache-dir does: the cache under node_modules/.cache/<tool>/, written and read back
BENCH_JS = r"""const fs = require("fs"), path = require("path");
const dir = path.join("node_modules", ".cache", "babel-loader");
fs.mkdirSync(dir, { recursive: true });
const key = path.join(dir, "0f1e2d.json");
if (!fs.existsSync(key)) fs.writeFileSync(key, JSON.stringify({ code: "compiled" }));
JSON.parse(fs.readFileSync(key, "utf8"));
for (const p of [".pytest_cache/v/cache/lastfailed", "target/release/.fingerprint/x",
                 "__pycache__/bench.cpython-311.pyc"]) {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, "cache");
}
if (process.argv[2]) {  // a module Node would resolve: never honest output
  fs.mkdirSync("node_modules/lib", { recursive: true });
  fs.writeFileSync("node_modules/lib/index.js", "module.exports = 1;");
}
console.log(`METRIC score=${parseFloat(fs.readFileSync("src/value.txt", "utf8"))}`);
"""


def _project(repo: TmpRepo, sandbox: str, extra: str = "") -> None:
    agent = "import os, pathlib; pathlib.Path('src/value.txt').write_text(str(100 - int(os.environ['GITIMPROVE_ITERATION'])))"
    (repo.path.parent / "agent.py").write_text(agent)
    repo.commit(
        "project",
        {
            "bench.js": BENCH_JS,
            "src/value.txt": "100\n",
            ".gitignore": "node_modules/\n.pytest_cache/\ntarget/\n__pycache__/\n",
            ".gitimprove.toml": f"""[metric]
command = "node bench.js {extra}"
direction = "lower"

[scope]
sealed = ["bench.js"]

[agent]
name = "command"
command = "{sys.executable} {repo.path.parent / "agent.py"}"
sandbox = "{sandbox}"
""",
        },
    )


@needs_node
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
@pytest.mark.slow
def test_a_tools_cache_in_node_modules_is_output(tmp_repo: TmpRepo, sandbox: str) -> None:
    _project(tmp_repo, sandbox)
    res = tmp_repo.cli("run", "--run", "c", "-n", "2")
    assert res.returncode == 0, res.stderr
    assert [r["status"] for r in run_rows(tmp_repo, "c")] == ["baseline", "keep", "keep"]


@needs_node
def test_a_module_written_under_node_modules_is_still_tampering(tmp_repo: TmpRepo) -> None:
    _project(tmp_repo, "none", extra="plant")
    res = tmp_repo.cli("run", "--run", "c", "-n", "1")
    assert res.returncode == 1, res.stderr
    assert "node_modules/lib" in res.stderr and "Node resolves modules" in res.stderr, res.stderr
