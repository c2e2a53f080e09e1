"""Files other languages' runners and runtimes load without being named: sealed unless named.

A sealed benchmark is only as sealed as what its runner reads around it. `npm run bench` reads
`.npmrc` from the folder it runs in, and its `node-options` line becomes `NODE_OPTIONS`: a
`--require ./src/x.js` there loads the candidate's code before the sealed `bench.js`, which can
print a better `METRIC` line at exit. `make bench` reads `GNUmakefile` or `makefile` before
`Makefile`, so a new one replaces the sealed recipe. Cargo reads `.cargo/config.toml` from the
folder it runs in and every folder above (a `runner` wraps the benchmark's binary), builds a
`build.rs` found beside `Cargo.toml`, R sources `.Rprofile`, bun preloads what `bunfig.toml`
names, Maven and Gradle take JVM options and extensions from `.mvn/` and `gradle.properties`,
MSBuild imports every `Directory.Build.props` above a project, Bazel reads `.bazelrc` (a
`--run_under`), and Node resolves a module from any `node_modules/` folder on the way up.
`npm run` also runs the `pre<name>` and `post<name>` scripts of `package.json` around the named
one, so `package.json` is judged by its `scripts` (its dependencies may change). And a sealed
`bench.js` that loads `require("./lib")` gets `lib.js` when there is one, else `lib.json`, else
`lib/package.json`'s `main`, else `lib/index.js`: a new `lib.js` beside a sealed `lib/index.js`
is loaded in its place, as a new `subprocess.py` beside a sealed Python file is. Likewise a
sealed `Makefile` line `-include local.mk` reads a `local.mk` that is not there at the base: a
new one sets the variables and recipes of the sealed benchmark's target.

Test runners find test and setup files by their names, so a new one changes what a sealed
suite runs: `go test` compiles every `*_test.go` of a package into its test binary, and one
`func TestMain(m *testing.M) { os.Exit(0) }` there passes the package without running a test;
jest uses the modules of a `__mocks__/` folder in place of the packages of `node_modules`
(a root one without any `jest.mock`). What builds a package is judged by its content the same
way: `go.mod`'s `replace`, `exclude` and `godebug` lines and a `vendor/` folder (where `go`
takes another module, a test library that always passes, from a folder of the candidate;
`go.work` is loop/toolchain.py's), a `testdata/` folder (the golden files a sealed Go test
compares with; a new `.go` file beside a sealed one is loop/implicit.py's: Go builds every
file of a folder into one package), `Cargo.toml`'s tables but its package metadata and its dependencies on published
versions (`autotests = false` or `[lib] test = false` and `cargo test` builds no test, a
`[patch]` or a `path` dependency swaps a crate, `harness = false` runs a `main` instead of the
tests), and the settings a test runner reads from `package.json` (`jest`, `mocha`, `ava`...).
New test and benchmark files a runner finds by place or name run with the sealed ones: cargo
builds every `tests/*.rs` and `benches/*.rs` as a target of its own, and `cargo bench` runs a
new `benches/zz.rs` after the sealed `benches/main.rs` — a constructor in `.init_array` there
printed `METRIC score=1` after the benchmark's line, and the last line counts; likewise a new
`x.test.js`, `x.spec.ts`, `test-x.mjs` or a file under `__tests__/` for Node's runners.

Each is treated as the files Python loads unnamed are (loop/implicit.py): a change is
`out-of-scope` unless a `[scope] mutable` pattern spells its name, and a metric or guard run
that writes one is tampering.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import tomllib
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "SOURCES_WITH_MAIN",
    "cargo_build",
    "compiled_family",
    "go_build",
    "included_names",
    "is_header",
    "is_shadowable",
    "make_includes",
    "node_shadows",
    "package_scripts",
    "strip_jsonc",
    "ts_extended",
    "ts_resolution",
    "why_runtime",
]

# exact file names, in any folder: (who loads it, what it can do)
_FILES = {
    ".npmrc": "npm reads it: node-options, script-shell",
    ".yarnrc": "yarn reads it",
    ".yarnrc.yml": "yarn reads it: yarnPath, plugins",
    ".pnpmfile.cjs": "pnpm runs it",
    ".pnp.cjs": "yarn run requires it before every script",
    ".pnp.loader.mjs": "yarn run loads it before every script",
    "bunfig.toml": "bun reads it: preload",
    "deno.json": "deno reads it: tasks, import map",
    "deno.jsonc": "deno reads it: tasks, import map",
    ".babelrc": "the test runner's transform reads it",
    ".babelrc.json": "the test runner's transform reads it",
    ".rspec": "rspec reads its options: --require",
    ".rspec-local": "rspec reads its options: --require",
    ".Rprofile": "R runs it at start-up",
    ".Renviron": "R reads it into the environment at start-up",
    "gradle.properties": "Gradle reads it: JVM options",
    "Directory.Build.props": "MSBuild imports it into every project below it",
    "Directory.Build.targets": "MSBuild imports it into every project below it",
    "Directory.Build.rsp": "MSBuild reads its options",
    "global.json": "dotnet reads it: the SDK used",
    "nuget.config": "NuGet reads it: package sources",
    "NuGet.Config": "NuGet reads it: package sources",
    ".bazelrc": "Bazel reads its options: --run_under",
    ".swcrc": "the test runner's transform reads it",
    ".clang-tidy": "clang-tidy reads the nearest one above a source: the checks a lint guard runs",
    ".clang-format": "clang-format reads the nearest one above a source: what a format guard "
    "checks",
}
# ends of file names, in any folder: a test runner finds them by that name
_SUFFIXES = {
    "_test.go": "go test compiles it into its package's tests: a TestMain or init there "
    "decides what runs",
}
# prefixes of file names, in any folder (jest.config.js, vitest.config.mts, .mocharc.yml)
_PREFIXES = {
    "jest.config.": "jest reads it",
    "vitest.config.": "vitest reads it",
    "vitest.workspace.": "vitest reads it",
    "vite.config.": "vitest reads it",
    ".mocharc": "mocha reads its options: require",
    "ava.config.": "ava reads it",
    "babel.config.": "the test runner's transform reads it",
}
# folders whose files a tool reads, in any folder: (the folder, who reads it)
_FOLDERS = {
    ".cargo": "cargo reads its config: runner, rustflags, env",
    ".mvn": "Maven reads it: JVM options, extensions",
    "META-INF": "the JVM's ServiceLoader loads the classes its services/ files name (a test "
    "platform's listeners and extensions among them), and the jar's manifest its Main-Class",
    ".yarn": "yarn loads it: its release, plugins",
    ".bundle": "bundler reads its config",
    "node_modules": "Node resolves modules from it in place of the installed ones",
    "__mocks__": "jest loads its modules in place of the packages and modules they are named after",
    "vendor": "go builds from it in place of the module cache (and PHP's autoload loads it)",
    "testdata": "go test runs a package's tests in its folder, where they read their "
    "fixtures and golden files from testdata/",
}
# the folder of `node_modules` where babel-loader, webpack's plugins, eslint-loader, ava and
# nyc keep their caches (`find-cache-dir`): an honest metric run writes it, and Node resolves
# no module from it (no package is named `.cache`: npm refuses a name that starts with a dot)
_NODE_CACHES = frozenset({".cache"})
# files that take the place of one of their folder when new: make reads GNUmakefile, then
# makefile, then Makefile; cargo builds and runs a build.rs beside Cargo.toml
_NEW = {
    "GNUmakefile": "make reads it in place of Makefile",
    "makefile": "make reads it in place of Makefile",
    "build.rs": "cargo builds and runs it before the package",
    "gradle-wrapper.properties": "the Gradle wrapper reads it: the Gradle it downloads",
    "CMakeUserPresets.json": "cmake --preset reads it beside CMakePresets.json: its presets, "
    "cache variables and environment",
    "CTestCustom.cmake": "ctest reads it: the tests it runs and skips, what counts as failure",
    "CTestCustom.ctest": "ctest reads it: the tests it runs and skips, what counts as failure",
}


# the sources of a compiled language a build takes by folder (a glob, a wildcard) or by name
# (an include path, a classpath): a header is of the C family, whatever its language
_C_FAMILY = (
    ".c", ".h", ".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".inl",
    ".tcc", ".m", ".mm", ".s", ".S",
)  # fmt: skip
_JVM_FAMILY = (".java", ".kt", ".scala", ".groovy")
# the sources a benchmark's `main` is written in (C, C++, Objective-C, Java, Kotlin)
SOURCES_WITH_MAIN = (".c", ".cc", ".cpp", ".cxx", ".c++", ".m", ".mm", ".java", ".kt")
_HEADERS = (".h", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".inl", ".tcc")


def compiled_family(name: str) -> str | None:
    """ "c" for a C, C++ or assembler source or header, "jvm" for a Java, Kotlin, Scala or
    Groovy source, None otherwise."""
    if name.endswith(_C_FAMILY):
        return "c"
    if name.endswith(_JVM_FAMILY):
        return "jvm"
    return None


_C_INCLUDE = re.compile(
    rb'^[ \t]*#[ \t]*(?:include|import|include_next)[ \t]*[<"]([^>"]+)[>"]', re.M
)


def is_header(name: str) -> bool:
    """A C-family header: built by the sources that include it, not by a glob."""
    return name.endswith(_HEADERS)


def is_shadowable(name: str) -> bool:
    """A header or a JVM source: what an include path or a classpath finds by its name (a C
    source of the same name elsewhere is another file)."""
    return name.endswith(_HEADERS) or name.endswith(_JVM_FAMILY)


def included_names(path: str, data: bytes) -> list[str]:
    """The file names (the last part) of the headers a C-family source includes
    (`#include "calc.h"`, `#include <lib/calc.hpp>`): a new header of that name is found first
    by a compiler searching its folder, or `-I.` before the folder that held it."""
    if compiled_family(path) != "c":
        return []
    names = [m.decode("utf-8", "replace").rpartition("/")[2] for m in _C_INCLUDE.findall(data)]
    return [n for n in dict.fromkeys(names) if n.endswith(_HEADERS)]


def why_runtime(path: str, new: bool) -> tuple[str, str] | None:
    """(why, the name a mutable pattern must spell) when another language's runner or runtime
    loads `path` without its name being on the command line; `new`: the run's base lacks it."""
    parts = path.split("/")
    name = parts[-1]
    for i, part in enumerate(parts[:-1]):
        if part == "node_modules" and parts[i + 1] in _NODE_CACHES:
            break  # the tools' own cache: no module is resolved from there
        if part in _FOLDERS:
            return _FOLDERS[part], part
    if name in _FILES:
        return _FILES[name], name
    for suffix, why in _SUFFIXES.items():
        if name.endswith(suffix):
            return why, suffix
    for prefix, why in _PREFIXES.items():
        if name.startswith(prefix):
            return why, prefix
    if new and name in _NEW:
        return _NEW[name], name
    if new:
        return _discovered(parts)
    return None


_JS_TEST = re.compile(
    r"^(?:.+(?P<affix>[.]test[.]|[.]spec[.]|-test[.]|_test[.])|(?P<lead>test-|test[.]))"
    r"[^.]*[.]?(?:c|m)?[jt]sx?$"
)


_NODE_TEST = (".js", ".cjs", ".mjs")


def _discovered(parts: list[str]) -> tuple[str, str] | None:
    """(why, the name a mutable pattern must spell) for a new file a test runner finds by
    its place or name and runs with the sealed suite or benchmark: cargo's test and bench
    targets (`tests/x.rs`, `benches/x.rs`, `tests/x/main.rs`), JavaScript test files
    (`x.test.js`, `x.spec.ts`, `test-x.mjs`, anything under `__tests__/`, a `.js` file under
    any `test/` folder, `src/test/x.js`, which `node --test` runs)."""
    name = parts[-1]
    if name.endswith(".rs") and "src" not in parts[:-1]:  # src/: a module, not a target
        folder = parts[-2] if len(parts) > 1 else ""
        upper = parts[-3] if len(parts) > 2 else ""
        for where, what in (("tests", "test"), ("benches", "benchmark")):
            if folder == where or (name == "main.rs" and upper == where):
                return (
                    f"cargo builds it as a {what} target of its own and runs it with the "
                    "sealed ones: its output comes after theirs",
                    f"{where}/",
                )
    if "__tests__" in parts[:-1]:
        return "jest runs every file under __tests__ with the suite", "__tests__"
    match = _JS_TEST.match(name)
    if match is not None:
        marker = match.group("affix") or match.group("lead")
        return "the test runner finds it by its name and runs it with the suite", marker
    if "test" in parts[:-1] and "node_modules" not in parts and name.endswith(_NODE_TEST):
        # found by its folder alone: only a pattern that spells the file's own name allows
        # it (`test/**` names the folder, as `**` names every folder)
        return "node --test runs every .js, .cjs and .mjs file under a test/ folder", name
    return None


def package_scripts(data: bytes | None) -> Any:
    """What of a `package.json` chooses what `npm run` (yarn, pnpm, bun) runs and what Node
    loads for a name: its `scripts` (a `postbench` runs after `bench`, unasked), the package
    manager it names, `main`, `exports` and `imports` (where `require(".")`, the package's
    own name and `#name` lead) and `type` (how a `.js` file is read)."""
    if data is None:
        return (None, None)
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return ("unreadable", data)
    if not isinstance(doc, dict):
        return ("not an object", data)
    return tuple(doc.get(k) for k in _PACKAGE_KEYS)


# `package.json` keys that choose what runs: npm's, Node's, and the test runners' settings;
# `tsconfig` names the config TypeScript takes for an `extends` of the package's name
_PACKAGE_KEYS = (
    "scripts", "packageManager", "main", "exports", "imports", "type", "tsconfig",
    "jest", "mocha", "ava", "babel", "nyc", "c8", "tap", "jasmine", "karma", "workspaces",
)  # fmt: skip

# `tsconfig.json` / `jsconfig.json` compiler options that choose which file an import loads
# when tsx, ts-node, vite-tsconfig-paths or a jest mapper built from them resolve it (`paths`
# and `baseUrl` send `@lib/x` or `lib/x` to another file), which code runs for JSX or as a
# transformer, and where a module's extensions are looked for; the others (`target`,
# `strict`, `lib`, `noEmit`...) check or emit the same code and may change
_TS_SEALED = (
    "paths", "baseUrl", "rootDirs", "moduleSuffixes", "customConditions", "moduleResolution",
    "resolvePackageJsonExports", "resolvePackageJsonImports", "allowArbitraryExtensions",
    "jsx", "jsxFactory", "jsxFragmentFactory", "jsxImportSource", "plugins", "importHelpers",
)  # fmt: skip
# top-level keys: another config whose options apply (`extends`), and ts-node's own options
# (`require` loads a module first, `compilerOptions` overrides, `transpiler`, `swc`)
_TS_TOP = ("extends", "ts-node")


def is_ts_config(name: str) -> bool:
    """Whether a file's name is a TypeScript or JavaScript project config: `tsconfig.json`,
    `jsconfig.json` and the ones named for a purpose that others extend or a runner is pointed
    at (`tsconfig.base.json`, `tsconfig.test.json`)."""
    return name.endswith(".json") and name.startswith(("tsconfig.", "jsconfig."))


def ts_resolution(data: bytes | None) -> Any:
    """What of a `tsconfig.json` (JSON with comments and trailing commas) chooses which file
    an import loads or which code runs with it: its `extends`, its `ts-node` options and the
    compiler options `paths`, `baseUrl`, `rootDirs`, `moduleSuffixes`, `jsxImportSource`,
    `plugins` and the like. A missing file and one without them are alike."""
    if data is None:
        return ()
    try:
        doc = json.loads(strip_jsonc(data.decode("utf-8")))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return ("unreadable", data)
    if not isinstance(doc, dict):
        return ("not an object", data)
    options = doc.get("compilerOptions", {})
    if not isinstance(options, dict):
        return ("compilerOptions", options)
    kept = [(k, doc[k]) for k in _TS_TOP if k in doc]
    kept += [(f"compilerOptions.{k}", options[k]) for k in _TS_SEALED if k in options]
    return tuple(kept)


def _extends_specs(data: bytes | None) -> list[str]:
    """The `extends` of a TypeScript config: one name, or an array of them (TypeScript 5)."""
    if data is None:
        return []
    try:
        doc = json.loads(strip_jsonc(data[:8_000_000].decode("utf-8")))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return []
    found = doc.get("extends") if isinstance(doc, dict) else None
    specs = found if isinstance(found, list) else [found]
    return [s for s in specs if isinstance(s, str) and s]


def _package_places(pkg: str, read: Callable[[str], bytes | None]) -> list[str]:
    """The files a package folder's `package.json` may name for its config: its `tsconfig`
    field, and the `.json` files its `exports` lead to."""
    data = read(f"{pkg}/package.json")
    if data is None:
        return []
    try:
        doc = json.loads(data[:8_000_000].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return []
    if not isinstance(doc, dict):
        return []
    field = doc.get("tsconfig")
    named: list[str] = [field] if isinstance(field, str) else []
    todo: list[Any] = [doc.get("exports")]
    while todo and len(named) < 1000:
        item = todo.pop()
        if isinstance(item, str) and item.endswith(".json"):
            named.append(item)
        elif isinstance(item, dict):
            todo += list(item.values())
        elif isinstance(item, list):
            todo += item
    out = []
    for item in named:
        target = posixpath.normpath(posixpath.join(pkg, item))
        if not target.startswith("../") and target != "..":
            out.append(target)
    return out


def _extends_places(path: str, spec: str, read: Callable[[str], bytes | None]) -> list[str]:
    """Every file of the repository TypeScript (tsc, and get-tsconfig under tsx, ts-node's
    tsconfig loader, vite-tsconfig-paths) may take for the `extends` named `spec` of the
    config `path`, each place it looks at: a relative name as written, with `.json` added, or
    a folder's `tsconfig.json`; a package name from every `node_modules` on the way up, as
    the file, with `.json`, its `tsconfig.json`, its `package.json` and what that names. An
    absolute name is outside the repository (not followed)."""
    folder = posixpath.dirname(path)
    if spec.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", spec):
        return []
    if spec in (".", "..") or spec.startswith(("./", "../")):
        target = posixpath.normpath(posixpath.join(folder, spec))
        if target == ".." or target.startswith("../"):
            return []
        inside = "" if target == "." else f"{target}/"
        return [target, f"{target}.json", f"{inside}tsconfig.json"]
    parts = spec.split("/")
    name = "/".join(parts[:2] if spec.startswith("@") else parts[:1])
    up = folder.split("/") if folder else []
    out: list[str] = []
    for depth in range(len(up), -1, -1):
        modules = "/".join([*up[:depth], "node_modules"])
        base = f"{modules}/{spec}"
        out += [base, f"{base}.json", f"{base}/tsconfig.json", f"{modules}/{name}/package.json"]
        out += _package_places(f"{modules}/{name}", read)
    return out


def ts_extended(
    configs: Iterable[str],
    read: Callable[[str], bytes | None],
    real: Callable[[str], str | None] | None = None,
) -> dict[str, str]:
    """{every file the TypeScript or JavaScript configs `configs` reach through `extends` —
    in a chain, each of an array, every place TypeScript looks for one (a new file at an
    earlier place is taken in place of the one found): the config whose chain it is}; `read`
    gives a file of the tree (through its symbolic links), `real` the path a symbolic link
    in the tree leads to (a workspace package linked into `node_modules`): the file there is
    reached too. Its `paths`, `baseUrl` and the like apply as the config's own."""
    out: dict[str, str] = {}
    todo = [(config, config) for config in configs]
    seen: set[str] = set()
    while todo and len(seen) < 10_000:
        path, root = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for spec in _extends_specs(read(path)):
            for place in _extends_places(path, spec, read):
                found = real(place) if real is not None else place
                for each in dict.fromkeys((place, found or place)):
                    if each == root:
                        continue
                    out.setdefault(each, root)
                    if not each.endswith("/package.json") and read(each) is not None:
                        todo.append((each, root))
    return out


def outside_extends(configs: Iterable[str], read: Callable[[str], bytes | None]) -> list[str]:
    """The files outside the repository that the TypeScript configs `configs` (of the tree,
    read through `read`) extend by absolute name (`"extends": "/srv/ts/base.json"`), and
    those these extend in turn: TypeScript applies their `paths` and `baseUrl` as the
    config's own, so an agent without the sandbox that rewrites one sends a sealed
    benchmark's import to its own file. Each as written and with `.json` added (TypeScript
    takes the first that exists); outside files are read without following a FIFO, 8 MB at
    most, 100 at most."""
    out: dict[str, None] = {}
    todo = [spec for config in configs for spec in _extends_specs(read(config))]
    while todo and len(out) < 100:
        spec = todo.pop()
        if not spec.startswith("/"):
            continue
        for place in (spec, f"{spec}.json") if not spec.endswith(".json") else (spec,):
            if place in out:
                continue
            out[place] = None
            todo += _extends_specs(_read_outside(place))
    return list(out)


def _read_outside(path: str) -> bytes | None:
    from gitimprove.util.files import open_state

    try:
        with os.fdopen(open_state(os.path.realpath(path)), "rb") as f:
            return f.read(8_000_000)
    except OSError:  # NotAFile too: a FIFO, a folder
        return None


_JSONC = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.DOTALL)


def strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas (what TypeScript reads) as plain JSON."""
    return _JSONC.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)


_GO_SEALED = ("go", "toolchain", "godebug", "replace", "exclude")


def go_build(data: bytes | None) -> tuple[str, ...]:
    """The lines of a `go.mod` that choose how `go` builds and tests it: its `go`,
    `toolchain` and `godebug` lines and every `replace` and `exclude` (a block's too); the
    `require` lines may change."""
    if data is None:
        return ()
    out: list[str] = []
    block = ""
    for raw in data.decode("utf-8", "replace").splitlines():
        line = " ".join(raw.split("//", 1)[0].split())
        if block:
            if line == ")":
                block = ""
            elif line:
                out.append(f"{block} {line}")
            continue
        word, _, rest = line.partition(" ")
        if word in _GO_SEALED:
            if rest == "(":
                block = word
            else:
                out.append(line)
    return tuple(out)


# Cargo.toml: what may change without a mutable pattern naming it
_CARGO_FREE = ("package", "dependencies", "dev-dependencies", "build-dependencies", "badges")
_CARGO_PACKAGE_SEALED = (
    "build", "links", "autotests", "autobenches", "autobins", "autoexamples", "autolib",
    "workspace", "default-run", "resolver", "metadata",
)  # fmt: skip
# profile settings that change how well the code is optimised, never what it does: the others
# (`debug-assertions`, `overflow-checks`, `panic`, `inherits`, `build-override`, per-package
# overrides) change what the sealed tests' own assertions check, or what is built
_CARGO_PROFILE_FREE = (
    "opt-level", "lto", "codegen-units", "incremental", "debug", "strip", "split-debuginfo",
)  # fmt: skip
_CARGO_SOURCES = ("path", "git", "registry", "registry-index", "package", "branch", "rev", "tag")


def cargo_build(data: bytes | None) -> Any:
    """What of a `Cargo.toml` chooses what `cargo test` and `cargo run` build and run: every
    table but the package's metadata and its dependencies on published versions (`[lib]`,
    `[[test]]` with `harness = false`, `[features]`, `[patch]`, `[profile]`, `[target]`,
    `[workspace]`...; of a `[profile]`, all but how it optimises: `opt-level`, `lto`...),
    the package's `build`, `autotests` and the like, and a dependency taken
    from a path, a git repository or another registry or package."""
    if data is None:
        return (None, None)
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return ("unreadable", data)
    sealed = {k: v for k, v in doc.items() if k not in _CARGO_FREE}
    package = doc.get("package")
    if isinstance(package, dict):
        sealed["package"] = {k: package.get(k) for k in _CARGO_PACKAGE_SEALED if k in package}
    elif package is not None:
        sealed["package"] = package
    for table in _CARGO_FREE[1:4]:
        if table in doc:
            sealed[table] = _cargo_sources(doc[table])
    profiles = doc.get("profile")
    if isinstance(profiles, dict):  # how hard to optimise may change, what the code means not
        kept = {
            name: {k: v for k, v in p.items() if k not in _CARGO_PROFILE_FREE}
            if isinstance(p, dict)
            else p
            for name, p in profiles.items()
        }
        sealed.pop("profile")
        if any(v != {} for v in kept.values()):
            sealed["profile"] = {name: v for name, v in kept.items() if v != {}}
    workspace = doc.get("workspace")
    if isinstance(workspace, dict) and isinstance(workspace.get("dependencies"), dict):
        # a workspace's shared dependencies: published versions may change, as a package's
        sealed["workspace"] = {
            **workspace,
            "dependencies": _cargo_sources(workspace["dependencies"]),
        }
    return tuple(sorted(sealed.items(), key=lambda kv: kv[0]))


def _cargo_sources(deps: Any) -> Any:
    """Of a dependency table, the entries not taken from a published version (a path, git,
    another registry or package); the table itself when it is not one."""
    if not isinstance(deps, dict):
        return deps
    return {
        name: spec
        for name, spec in deps.items()
        if not isinstance(spec, (str, dict))
        or (isinstance(spec, dict) and any(k in spec for k in _CARGO_SOURCES))
    }


# what Node (and TypeScript's runners) try for `require("./x")` or `import "./x"`, in order
_JS_SOURCES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")
_JS_TRIES = ("", *_JS_SOURCES, ".json", ".node")
RELATIVE_IMPORT = re.compile(
    r"""(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s*|\bimport\s+)(['"`])(\.{1,2}/[^'"`\n]*|\.{1,2})\1"""
)


# the tokens after which a `/` starts a regular expression literal, not a division
_REGEX_AFTER = frozenset("(,=:[!&|?{};+-*%<>~^")
_REGEX_WORDS = frozenset(
    {"return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case",
     "do", "else", "yield", "await"}
)  # fmt: skip


def js_code(text: str) -> str:
    """`text` (JavaScript or TypeScript) with its comments blanked and the characters inside
    its string, template and regular expression literals replaced by `_`, quotes kept, every
    position and line break where it was: what is code, to match a `require("./x")` only where
    it is one (not in a comment, nor inside a string) and read its specifier from `text` at the
    same place. A template literal's `${...}` is code (its own strings masked in turn)."""
    out = list(text)
    n, i = len(text), 0
    braces: list[int] = []  # for each open `${`: the depth of `{` inside it
    last = ""  # the last significant character or word of code

    def blank(start: int, end: int, keep: str = " ") -> None:
        for k in range(start, min(end, n)):
            if out[k] != "\n":
                out[k] = keep

    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            blank(i, end)
            i = end
        elif c in "'\"":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j, "_")
            i, last = j + 1, "x"
        elif c == "`" or (c == "}" and braces and braces[-1] == 0):
            if c == "}":
                braces.pop()
            j = i + 1
            while j < n and text[j] != "`" and not text.startswith("${", j):
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j, "_")
            if text.startswith("${", j):
                braces.append(0)
                i, last = j + 2, "{"
            else:
                i, last = j + 1, "x"
        elif c == "/" and (last in _REGEX_AFTER or last in _REGEX_WORDS or not last):
            j, in_class = i + 1, False
            while j < n and text[j] != "\n" and (in_class or text[j] != "/"):
                if text[j] == "\\":
                    j += 1
                elif text[j] == "[":
                    in_class = True
                elif text[j] == "]":
                    in_class = False
                j += 1
            blank(i + 1, j, "_")
            i, last = j + 1, "x"
        elif c.isalnum() or c in "_$":
            j = i
            while j < n and (text[j].isalnum() or text[j] in "_$"):
                j += 1
            last, i = text[i:j], j
        else:
            if braces and c == "{":
                braces[-1] += 1
            elif braces and c == "}":
                braces[-1] -= 1
            if not c.isspace():
                last = c
            i += 1
    return "".join(out)


_JS_LOAD = re.compile(
    r"""(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s*|\bimport\s+)(['"`])(_*)\1"""
)


def js_specifiers(text: str) -> list[str]:
    """The specifiers of the `require`, `import` and `import()` calls of `text` that are code
    (`js_code`), as written, in order: `./lib`, `#lib/x`, `fs`."""
    masked = js_code(text)
    return [text[m.start(2) : m.end(2)] for m in _JS_LOAD.finditer(masked)]


def node_shadows(path: str, source: bytes) -> dict[str, str]:
    """{file a relative `require` or `import` of the JavaScript or TypeScript file `path` may
    resolve to: the specifier} — every place Node looks, so that a new file at any of them can
    be named (it would be loaded in place of, or before, what the sealed file loads)."""
    if not path.endswith(_JS_SOURCES):
        return {}
    folder = posixpath.dirname(path)
    text = source[:1_000_000].decode("utf-8", "replace")
    out: dict[str, str] = {}
    for match in RELATIVE_IMPORT.finditer(text):
        spec = match.group(2)
        target = posixpath.normpath(posixpath.join(folder, spec))
        if target == ".." or target.startswith("../"):
            continue  # outside the repository
        base = "" if target == "." else target
        for suffix in _JS_TRIES:
            if base and not base.endswith("/"):
                out.setdefault(base + suffix, spec)
        inside = f"{base}/" if base else ""
        out.setdefault(f"{inside}package.json", spec)
        for suffix in (*_JS_SOURCES, ".json", ".node"):
            out.setdefault(f"{inside}index{suffix}", spec)
    out.pop(path, None)
    return out


_MAKE_FILES = ("Makefile", "makefile", "GNUmakefile")
_INCLUDE = re.compile(r"^[ ]*[-s]?include[ \t]+(.+?)[ \t]*(?:#.*)?$", re.MULTILINE)


_CMAKE_INCLUDE = re.compile(
    r"^\s*(include|add_subdirectory)\s*\(\s*\"?([^\s\")]+)", re.MULTILINE | re.IGNORECASE
)


def _cmake_includes(path: str, source: bytes) -> list[str]:
    """`make_includes` for a `CMakeLists.txt` or `.cmake` file: what its `include()` reads
    (`include(local.cmake OPTIONAL)`: a new one sets the sealed build's flags, sources and
    tests; a module name, `include(CTest)`, is found on `CMAKE_MODULE_PATH` before CMake's own:
    a new `<name>.cmake` in any folder) and the `CMakeLists.txt` of what `add_subdirectory()`
    names."""
    folder = posixpath.dirname(path)
    text = source[:1_000_000].decode("utf-8", "replace")
    out: list[str] = []
    for verb, word in _CMAKE_INCLUDE.findall(text):
        if "$" in word or word.startswith("/"):
            continue
        if verb.lower() == "add_subdirectory":
            word = f"{word}/CMakeLists.txt"
        elif "/" not in word and not word.endswith(".cmake"):
            out += [f"{word}.cmake", f"*/{word}.cmake"]
            continue
        out += _from_folder_or_root(folder, word)
    return out


def _from_folder_or_root(folder: str, word: str) -> list[str]:
    """`word` read from the including file's folder and from the root (make reads it from the
    folder it runs in: the make file's, or the root's for a file that one includes), never
    above the repository."""
    out = []
    for base in dict.fromkeys((folder, "")):
        target = posixpath.normpath(posixpath.join(base, word))
        if not target.startswith(".."):
            out.append(target)
    return out


def make_includes(path: str, source: bytes) -> list[str]:
    """The files (glob patterns, from the repository's root) that the make file `path`
    includes, as written in its `include`, `-include` and `sinclude` lines; words naming a
    variable are left out (their value is not known here)."""
    name = path.rpartition("/")[2]
    if name == "CMakeLists.txt" or name.endswith(".cmake"):
        return _cmake_includes(path, source)
    if name not in _MAKE_FILES and not name.endswith(".mk"):
        return []
    folder = posixpath.dirname(path)
    text = source[:1_000_000].decode("utf-8", "replace").replace("\\\n", " ")
    out: list[str] = []
    for match in _INCLUDE.finditer(text):
        for word in match.group(1).split():
            if "$" not in word and not word.startswith("/"):
                out += _from_folder_or_root(folder, word)
    return out
