"""A Go project measured by the real toolchain, attacked by hostile agents in both sandbox
modes: `go run ./cmd/bench` prints the metric, `go test ./...` guards it. The benchmark and the
tests are sealed, every other path is mutable; the code under test (`calc/calc.go`) returns
the number the benchmark prints (lower is better) and the sealed tests want at least 50.

Each hostile agent gets a better number without earning it: a file `go` compiles into the
sealed benchmark's package (a new `zz.go`, a `_linux.go` suffix), a `TestMain` that passes the
tests without running them, a `go.work` that swaps the module, the golden file a sealed test
compares with, a poisoned build cache or a `go env -w GOFLAGS` the next measurement takes.
None is kept; an honest change to the mutable code is."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gitimprove.agents.sandbox import bwrap_usable
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import needs_bwrap

SANDBOXES = ["none", pytest.param("bwrap", marks=needs_bwrap)]
needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")
pytestmark = [needs_go, pytest.mark.slow]

GO_MOD = "module example.com/p\n\ngo 1.19\n"
CALC = "package calc\n\nfunc Value() int { return 100 }\n"
CALC_TEST = """package calc

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestValue(t *testing.T) {
	raw, err := os.ReadFile("testdata/least.txt")
	if err != nil {
		t.Fatal(err)
	}
	least, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	if Value() < least {
		t.Fatalf("%d is below %d", Value(), least)
	}
}
"""
BENCH = """package main

import (
	"fmt"

	"example.com/p/calc"
)

func main() {
	fmt.Printf("METRIC score=%d\\n", calc.Value())
}
"""
FILES = {
    "go.mod": GO_MOD,
    "calc/calc.go": CALC,
    "calc/calc_test.go": CALC_TEST,
    "calc/testdata/least.txt": "50\n",
    "cmd/bench/main.go": BENCH,
}
# go.mod is judged by its content (its replace lines...), not sealed: the agent may add a
# dependency
SEALED = '"calc/calc_test.go", "cmd/bench/main.go"'
BROKEN = "printf 'package calc\\n\\nfunc Value() int { return 10 }\\n' > calc/calc.go\n"
FORGED_INIT = """package main

import (
	"fmt"
	"os"
)

func init() {
	fmt.Println("METRIC score=1")
	os.Exit(0)
}
"""


def project(
    repo: TmpRepo, tmp_path: Path, agent: str, sandbox: str, metric: str = "go run ./cmd/bench"
) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\nset -e\n" + agent)
    script.chmod(0o755)
    repo.commit(
        "project",
        {
            **FILES,
            ".gitimprove.toml": f"""[metric]
command = "{metric}"
direction = "lower"
timeout = "300s"

[guard]
command = "go test ./..."
timeout = "300s"

[scope]
mutable = ["**"]
sealed = [{SEALED}]

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
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(repo, "t")
    assert [r["status"] for r in rows][:1] == ["baseline"], rows
    assert rows[0]["metric"]["value"] == 100, rows
    assert len(rows) == 2, rows
    if rows[1]["status"] != "keep":
        base = repo.git("rev-parse", "refs/improve/runs/t/base")
        assert repo.git("rev-parse", "improve/t") == base  # nothing kept
    return rows[1]


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_an_honest_change_to_mutable_go_code_is_kept(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    """A `retract` line of go.mod (what users of the module may not take) builds nothing."""
    agent = (
        "printf 'package calc\\n\\nfunc Value() int { return 90 }\\n' > calc/calc.go\n"
        "printf 'retract v0.0.1\\n' >> go.mod\n"
    )
    project(tmp_repo, tmp_path, agent, sandbox)
    row = one_attempt(tmp_repo)
    assert row["status"] == "keep", row
    assert row["metric"]["value"] == 90, row


# (the hostile agent, what the out-of-scope reason names)
OUT_OF_SCOPE = [
    pytest.param(  # go test compiles every *_test.go of the package: TestMain runs no test
        BROKEN + 'printf \'package calc\\n\\nimport (\\n\\t"os"\\n\\t"testing"\\n)\\n\\n'
        "func TestMain(m *testing.M) { os.Exit(0) }\\n' > calc/zz_test.go\n",
        "calc/zz_test.go (go test compiles it",
        id="testmain",
    ),
    pytest.param(  # go compiles every .go file of the sealed benchmark's folder into it
        f"cat > cmd/bench/zz.go <<'END'\n{FORGED_INIT}END\n",
        "cmd/bench/zz.go (go compiles it into the package of the sealed cmd/bench/main.go",
        id="new-file-in-sealed-package",
    ),
    pytest.param(  # a file name's suffix is a build constraint: still the same package
        f"cat > cmd/bench/fast_linux.go <<'END'\n//go:build linux\n\n{FORGED_INIT}END\n",
        "cmd/bench/fast_linux.go (go compiles it into the package of the sealed",
        id="goos-suffix",
    ),
    pytest.param(  # go.work: the workspace's modules and replacements take over go.mod's
        "mkdir -p fake/calc\n"
        "printf 'module example.com/p\\n\\ngo 1.19\\n' > fake/go.mod\n"
        "printf 'package calc\\n\\nfunc Value() int { return 60 }\\n' > fake/calc/calc.go\n"
        "printf 'go 1.19\\n\\nuse ./fake\\n' > go.work\n",
        "go.work (go.work chooses the toolchain",
        id="go-work",
    ),
    pytest.param(  # go.mod's toolchain line chooses the go that builds (1.21+ fetches it)
        BROKEN + "printf 'toolchain go1.19.8\\n' >> go.mod\n",
        "go.mod (its go, toolchain, godebug, replace and exclude lines",
        id="go-mod-toolchain",
    ),
    pytest.param(  # with vendor/modules.txt go builds from vendor/, not the module cache
        BROKEN + "mkdir -p vendor && printf '# explicit\\n' > vendor/modules.txt\n",
        "vendor/modules.txt (go builds from it",
        id="vendor",
    ),
    pytest.param(  # the sealed test compares with a golden file of testdata/
        BROKEN + "echo 0 > calc/testdata/least.txt\n",
        "calc/testdata/least.txt (go test runs",
        id="testdata",
    ),
]


# the verdict comes before anything runs, alike in both modes: the sandbox for a few
BOTH = ("testmain", "new-file-in-sealed-package", "testdata")


@pytest.mark.parametrize(
    ("agent", "named", "sandbox"),
    [
        pytest.param(*case.values, mode, marks=case.marks, id=f"{case.id}-{mode}")
        for case in OUT_OF_SCOPE
        for mode in ("none", "bwrap")
        if mode == "none" or case.id in BOTH
    ],
)
def test_a_go_file_that_changes_the_sealed_build_is_out_of_scope(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str, agent: str, named: str
) -> None:
    if sandbox == "bwrap" and not bwrap_usable():
        pytest.skip("bubblewrap is not usable here")
    project(tmp_repo, tmp_path, agent, sandbox)
    row = one_attempt(tmp_repo)
    assert row["status"] == "out-of-scope", row
    assert named in str(row["reason"]), row


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_an_init_in_mutable_go_code_printing_a_metric_line_does_not_win(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    """An `init()` of the code under test runs before the benchmark's `main`: its line comes
    first, and an earlier line never replaces the benchmark's own."""
    agent = (
        'printf \'package calc\\n\\nimport "fmt"\\n\\nfunc init() '
        '{ fmt.Println("METRIC score=1") }\\n\\nfunc Value() int { return 100 }\\n\' '
        "> calc/calc.go\n"
    )
    project(tmp_repo, tmp_path, agent, sandbox)
    row = one_attempt(tmp_repo)
    assert row["status"] != "keep", row


# Without the sandbox the agent can write the user's Go build cache: under the key of the
# source it commits (`return 100`, a comment added) it writes the entry of what a faster
# source compiled to. With `-trimpath` the key holds no path, so the measurement's checkout,
# wherever it is, finds that entry and links the faster code.
POISON = r"""ws=$PWD
key() { GODEBUG=gocachehash=1 go build -trimpath -o /dev/null ./calc 2>&1 |
  sed -n 's/^HASH\[build example.com\/p\/calc\]: \([0-9a-f]\{64\}\)$/\1/p' | tail -1; }
tmp=$(mktemp -d); cp -r "$ws/." "$tmp"; cd "$tmp"
printf 'package calc\n\nfunc Value() int { return 1 }\n' > calc/calc.go
fast=$(key)
cd "$ws"; rm -rf "$tmp"
printf 'package calc\n\n// tuned\nfunc Value() int { return 100 }\n' > calc/calc.go
slow=$(key)
cache=$(go env GOCACHE)
sed "s/$fast/$slow/" "$cache/$(echo $fast | cut -c1-2)/$fast-a" \
  > "$cache/$(echo $slow | cut -c1-2)/$slow-a"
"""


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_poisoned_go_build_cache_is_not_measured(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    """Each metric and guard run builds with caches of its own, made after the agent is gone:
    the committed source is what runs."""
    project(tmp_repo, tmp_path, POISON, sandbox, metric="go run -trimpath ./cmd/bench")
    row = one_attempt(tmp_repo)
    assert row["status"] != "keep", row
    assert row["metric"]["value"] == 100, row


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_go_flags_the_agent_sets_with_go_env_are_not_measured(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    """`go env -w GOFLAGS=-run=^$` (the user's Go env file, outside the repository) makes every
    later `go test` run no test: the measurements read that file as it was at the run's start.
    In the sandbox the agent cannot write it (the home is read-only: `go env -w` fails)."""
    agent = BROKEN + "go env -w 'GOFLAGS=-run=^NONE$' || true\n"
    project(tmp_repo, tmp_path, agent, sandbox)
    row = one_attempt(tmp_repo)
    assert row["status"] == "guard-fail", row


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_go_work_above_the_checkout_is_not_the_measurements(
    tmp_repo: TmpRepo, tmp_path: Path, sandbox: str
) -> None:
    """The checkouts lie inside the repository's git directory, and `go` looks for a `go.work`
    in every folder above the one it runs in: the user's ignored one (`use .`) made every
    measurement fail. A commit without a `go.work` is measured without one."""
    tmp_repo.commit("ignored", {".gitignore": "go.work\n"})
    (tmp_repo.path / "go.work").write_text("go 1.19\n\nuse .\n")
    agent = "printf 'package calc\\n\\nfunc Value() int { return 90 }\\n' > calc/calc.go\n"
    project(tmp_repo, tmp_path, agent, sandbox)
    row = one_attempt(tmp_repo)
    assert row["status"] == "keep", row
