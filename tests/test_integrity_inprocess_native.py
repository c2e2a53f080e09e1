"""A sealed Rust or Go benchmark that links the code under test into its own binary runs that
code in its own process, before it and during it: a Rust constructor in `.init_array` or a
`static` initializer of the library, a Go `init()` of a package it imports. A run names it at
its start, as it names a Python or JavaScript benchmark that imports mutable code."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitimprove.loop.inprocess import imported_mutable
from tests.conftest import TmpRepo
from tests.test_integrity_builds import BENCH_CARGO, BENCH_LIB, BENCH_MAIN, TOOL_HOMES, needs_cargo
from tests.test_integrity_go import FILES as GO_FILES
from tests.test_integrity_go import needs_go
from tests.test_integrity_runtimes import project

CARGO = b'[package]\nname = "my-crate"\nversion = "0.1.0"\nedition = "2021"\n'
RUST = {
    "Cargo.toml": CARGO,
    "src/lib.rs": b"pub mod fast;\npub fn value() -> u32 { fast::v() }\n",
    "src/fast.rs": b"pub fn v() -> u32 { 100 }\n",
    "src/main.rs": b'fn main() { println!("METRIC score={}", my_crate::value()); }\n',
    "src/bin/solo.rs": b'fn main() { println!("METRIC score=100"); }\n',
    "benches/main.rs": b'use my_crate::value;\nfn main() { println!("METRIC score={}", value()); }\n',
    "benches/alone.rs": b'fn main() { println!("METRIC score=1"); }\n',
    "tests/it.rs": b"#[test]\nfn t() { assert!(my_crate::value() > 0); }\n",
    "examples/ex.rs": b'fn main() { println!("{}", my_crate::value()); }\n',
}
GO = {
    "go.mod": b"module example.com/p\n\ngo 1.19\n",
    "calc/calc.go": b"package calc\n\nfunc Value() int { return 100 }\n",
    "calc/extra.go": b"package calc\n\nfunc init() {}\n",
    "calc/calc_test.go": b'package calc\n\nimport "testing"\n\nfunc BenchmarkV(b *testing.B) {}\n',
    "cmd/bench/main.go": b'package main\n\nimport (\n\t"fmt"\n\n\t"example.com/p/calc"\n)\n\n'
    b"func main() { fmt.Println(calc.Value()) }\n",
    "cmd/alone/main.go": b'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println(1) }\n',
    "cmd/alias/main.go": b'package main\n\nimport c "example.com/p/calc"\n\nfunc main() { c.Value() }\n',
    "cmd/own/main.go": b"package main\n\nfunc main() { helper() }\n",
    "cmd/own/helper.go": b"package main\n\nfunc helper() {}\n",
}
CALC = ["calc/calc.go", "calc/extra.go"]
# the same packages in a folder of the repository: a Cargo workspace's member, a Go module
WORKSPACE = b'[workspace]\nmembers = ["crates/*"]\n'
RUST_SUB = {"Cargo.toml": WORKSPACE, **{f"crates/calc/{k}": v for k, v in RUST.items()}}
RUST_SUB["crates/other/Cargo.toml"] = CARGO.replace(b"my-crate", b"other")
RUST_SUB["crates/other/src/lib.rs"] = b"pub fn o() {}\n"
GO_SUB = {f"svc/{k}": v for k, v in GO.items()}
SUB_CALC = [f"svc/{f}" for f in CALC]
SUB_LIB = ["crates/calc/src/fast.rs", "crates/calc/src/lib.rs"]


@pytest.mark.parametrize(
    ("command", "sources", "sealed", "mutable", "found"),
    [
        ("cargo bench", RUST, ["benches/main.rs"], ["src/**"],
         ("benches/main.rs", ["src/fast.rs", "src/lib.rs"])),
        ("cargo bench --offline -q", RUST, ["benches/main.rs", "src/lib.rs"], ["**"],
         ("benches/main.rs", ["src/fast.rs"])),  # what is sealed is not named
        ("cargo run --release", RUST, ["src/main.rs"], ["src/**"],
         ("src/main.rs", ["src/fast.rs", "src/lib.rs"])),
        ("cargo run --example ex", RUST, ["examples/ex.rs"], ["src/**"],
         ("examples/ex.rs", ["src/fast.rs", "src/lib.rs"])),
        ("cargo bench", RUST, ["benches/alone.rs"], ["src/**"], None),  # links no library
        ("cargo run --bin solo", RUST, ["src/bin/solo.rs"], ["src/lib.rs"], None),
        ("cargo bench", RUST, ["benches/main.rs"], ["benches/**"], None),  # the lib is sealed
        ("cargo bench", RUST, [], ["**"], None),  # the benchmark itself is not sealed
        ("cargo build", RUST, ["benches/main.rs"], ["**"], None),
        ("cargo bench", {**RUST, "Cargo.toml": CARGO + b'[lib]\nname = "other"\n'},
         ["benches/main.rs"], ["**"], None),  # the library is `other`: my_crate is not it
        ("cargo bench", {**RUST, "Cargo.toml": b"[package\n"}, ["benches/main.rs"], ["**"],
         None),
        ("go run ./cmd/bench", GO, ["cmd/bench/main.go"], ["calc/**"],
         ("cmd/bench/main.go", CALC)),
        ("go run cmd/bench/main.go -n 3", GO, ["cmd/bench/main.go"], ["**"],
         ("cmd/bench/main.go", CALC)),
        ("go run ./cmd/alias", GO, ["cmd/alias/main.go"], ["**"], ("cmd/alias/main.go", CALC)),
        ("go run ./cmd/own", GO, ["cmd/own/main.go"], ["**"],  # its own folder's files
         ("cmd/own/main.go", ["cmd/own/helper.go"])),
        ("go test -run ^$ -bench . ./calc", GO, ["calc/calc_test.go"], ["calc/*.go"],
         ("calc/calc_test.go", CALC)),
        ("go test -bench . ./...", GO, ["calc/calc_test.go"], ["**"], ("calc/calc_test.go", CALC)),
        ("go run ./cmd/alone", GO, ["cmd/alone/main.go"], ["**"], None),
        ("go run ./cmd/bench", GO, ["cmd/bench/main.go", *CALC], ["**"], None),
        ("go run ./cmd/bench", GO, [], ["**"], None),
        ("go build ./...", GO, ["cmd/bench/main.go"], ["**"], None),
        # the package in a folder: `cd`, `go -C`, `--manifest-path`, a workspace member
        ("go -C svc run ./cmd/bench", GO_SUB, ["svc/cmd/bench/main.go"], ["svc/calc/**"],
         ("svc/cmd/bench/main.go", SUB_CALC)),
        ("cd svc && go run ./cmd/bench", GO_SUB, ["svc/cmd/bench/main.go"], ["**"],
         ("svc/cmd/bench/main.go", SUB_CALC)),
        ("go -C=svc test -p 2 -bench . ./calc", GO_SUB, ["svc/calc/calc_test.go"], ["**"],
         ("svc/calc/calc_test.go", SUB_CALC)),
        ("cargo bench", RUST_SUB, ["crates/calc/benches/main.rs"], ["crates/*/src/**"],
         ("crates/calc/benches/main.rs", SUB_LIB)),
        ("cargo bench -p my-crate", RUST_SUB, ["crates/calc/benches/main.rs"], ["**"],
         ("crates/calc/benches/main.rs", SUB_LIB)),
        ("cargo bench -p other", RUST_SUB, ["crates/calc/benches/main.rs"], ["**"], None),
        ("cargo bench --manifest-path crates/calc/Cargo.toml", {**RUST_SUB, "Cargo.toml": b""},
         ["crates/calc/benches/main.rs"], ["**"], ("crates/calc/benches/main.rs", SUB_LIB)),
        ("cd crates/calc && cargo run", RUST_SUB, ["crates/calc/src/main.rs"], ["**"],
         ("crates/calc/src/main.rs", SUB_LIB)),
        ("cargo bench", RUST_SUB, ["crates/calc/benches/main.rs"], ["crates/other/**"], None),
        ("cd /tmp && go run ./cmd/bench", GO_SUB, ["svc/cmd/bench/main.go"], ["**"], None),
    ],
)  # fmt: skip
def test_which_sealed_rust_or_go_benchmark_links_mutable_code(
    command: str,
    sources: dict[str, bytes],
    sealed: list[str],
    mutable: list[str],
    found: tuple[str, list[str]] | None,
) -> None:
    assert imported_mutable(command, sealed, mutable, sources.get, list(sources)) == found


@pytest.mark.slow
@needs_go
def test_a_run_names_a_go_benchmark_that_links_the_code_under_test(
    tmp_repo: TmpRepo, tmp_path: Path
) -> None:
    project(
        tmp_repo,
        tmp_path,
        metric="go run ./cmd/bench",
        files=GO_FILES,
        sealed='"cmd/bench/main.go", "calc/calc_test.go"',
        mutable='"calc/calc.go"',
        agent="true\n",
        sandbox="none",
    )
    res = tmp_repo.cli("run", "--run", "w", "-n", "1")
    assert res.returncode == 0, res.stderr
    said = res.stdout + res.stderr
    assert "the sealed benchmark cmd/bench/main.go links calc/calc.go into its own process" in said
    assert "run the code under test in a child process of the benchmark" in said


@pytest.mark.slow
@needs_cargo
def test_a_run_names_a_rust_benchmark_that_links_the_code_under_test(
    tmp_repo: TmpRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in TOOL_HOMES.items():
        monkeypatch.setenv(name, value)
    project(
        tmp_repo,
        tmp_path,
        metric="cargo bench --offline -q",
        files={
            "Cargo.toml": BENCH_CARGO,
            "src/lib.rs": BENCH_LIB,
            "benches/main.rs": BENCH_MAIN,
            ".gitignore": "target/\n",
        },
        sealed='"benches/main.rs", "Cargo.toml"',
        mutable='"src/**"',
        agent="true\n",
        sandbox="none",
    )
    res = tmp_repo.cli("run", "--run", "w", "-n", "1")
    assert res.returncode == 0, res.stderr
    said = res.stdout + res.stderr
    assert "the sealed benchmark benches/main.rs links src/lib.rs into its own process" in said
