"""Code under test a sealed benchmark (Python, JavaScript, TypeScript) loads into its own
process, and files of the repository the metric or guard command names that are not sealed:
named at run start.

A metric command that runs `bench.py` when `bench.py` is not sealed lets the agent rewrite the
benchmark (`print("METRIC score=1")`), and a guard `pytest tests` whose `tests/` is not sealed
lets it empty the tests: `git improve init` seals what the commands name unless told
otherwise, and a run names such a file at its start.

A benchmark that imports the code under test runs it in its own process, where that code can
patch the benchmark — its timer, its counters (the demo's minimizer once set the best value
through the objective's default arguments), `math.log10` — or print a `METRIC` line of the
benchmark's name after the benchmark's own (`atexit`). Nothing the harness checks tells that
from an honest result (the files are exactly the commit's), so the run names it at its start:
the benchmark should run the code under test in a child process and print the result itself
(docs/integrity.md, "What you must still do").
"""

from __future__ import annotations

import ast
import fnmatch
import json
import posixpath
import re
import shlex
import tomllib
from collections.abc import Callable, Sequence

from gitimprove.loop import runtimes, scope

__all__ = [
    "build_files",
    "imported_mutable",
    "measured_paths",
    "named_paths",
    "script_commands",
    "unbuilt_named",
    "unsealed_named",
]


def _script(command: str) -> str | None:
    """The Python script a metric command runs (`python3 bench.py`, `uv run tools/bench.py`),
    as a path from the repository's root; None when it names none inside it."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for word in words:
        if word.endswith(".py") and not word.startswith(("-", "/", "~")):
            return word.removeprefix("./")
    return None


def _top_imports(source: bytes) -> list[str]:
    """The top-level module names imported at module level (not inside a function or class:
    a benchmark that imports the code under test in the child process it starts does so
    there)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    names: list[str] = []
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.Import):
            names += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        else:
            todo += [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)]
    return list(dict.fromkeys(names))


def imported_mutable(
    command: str,
    sealed: Sequence[str],
    mutable: Sequence[str],
    read: Callable[[str], bytes | None],
    files: Sequence[str] = (),
) -> tuple[str, list[str]] | None:
    """(the sealed benchmark, the files of the code under test it imports at module level)
    when the metric command runs a sealed Python script that imports a module the agent may
    change from its own folder (where Python looks first); for a JavaScript or TypeScript
    benchmark (`node bench.js`, `npx tsx bench.ts`, `npm run bench`), the files its relative
    `require` and `import` load: `_js_imported`; for a Rust or Go one (`cargo bench`, `go run
    ./cmd/bench`, `go test -bench .`), the files of the tree (`files`) it is linked with:
    `_linked`."""
    linked = _linked(command, sealed, mutable, read, files)
    if linked is not None:
        return linked
    script = _script(command)
    if script is None:
        return _js_imported(command, sealed, mutable, read)
    if script not in set(sealed):
        return None
    source = read(script)
    if source is None:
        return None
    folder = script.rpartition("/")[0]
    prefix = f"{folder}/" if folder else ""
    found: list[str] = []
    for name in _top_imports(source):
        for path in (f"{prefix}{name}.py", f"{prefix}{name}/__init__.py"):
            if path not in sealed and read(path) is not None and scope.matches(path, mutable):
                found.append(path)
                break
    return (script, found) if found else None


_JS_EXTENSIONS = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")
# what TypeScript's runners load for an import written with the extension it compiles to
_TS_FOR = {".js": (".ts", ".tsx"), ".mjs": (".mts",), ".cjs": (".cts",), ".jsx": (".tsx",)}


def _js_script(command: str, read: Callable[[str], bytes | None]) -> str | None:
    """The JavaScript or TypeScript file a metric command runs (`node bench.js`, `npx tsx
    bench/run.ts`, or the `package.json` script `npm run bench` runs), from the root."""
    for text in script_commands(command, read):
        try:
            words = shlex.split(text)
        except ValueError:
            continue
        for word in words:
            if word.endswith(_JS_EXTENSIONS) and not word.startswith(("-", "/", "~", "$")):
                path = posixpath.normpath(word)
                if not path.startswith(".."):
                    return path
    return None


def _js_loaded(folder: str, spec: str, read: Callable[[str], bytes | None]) -> str | None:
    """The file of the repository Node (or tsx, ts-node) loads for the relative specifier
    `spec` of a file in `folder`: the specifier itself, with an added extension, the
    TypeScript file an import written with `.js` stands for, or the folder's `index`."""
    target = posixpath.normpath(posixpath.join(folder, spec))
    if target == ".." or target.startswith("../"):
        return None
    base = "" if target == "." else target
    tries: list[str] = []
    if base:
        stem, ext = posixpath.splitext(base)
        tries += [base, *(base + e for e in (*_JS_EXTENSIONS, ".json", ".node"))]
        tries += [stem + e for e in _TS_FOR.get(ext, ())]
    inside = f"{base}/" if base else ""
    tries += [f"{inside}index{e}" for e in (*_JS_EXTENSIONS, ".json", ".node")]
    for path in tries:
        if read(path) is not None:
            return path
    return None


def _js_subpaths(
    folder: str, text: str, read: Callable[[str], bytes | None]
) -> list[tuple[str, str]]:
    """(folder, relative specifier) of what the `#name` imports of a file in `folder` lead to
    through the `imports` of the nearest `package.json` (`"#lib/*": "./src/lib/*.js"`; each
    condition's target)."""
    names = [spec for spec in runtimes.js_specifiers(text) if spec.startswith("#")]
    if not names:
        return []
    parts = folder.split("/") if folder else []
    for depth in range(len(parts), -1, -1):
        at = "/".join(parts[:depth])
        data = read(f"{at}/package.json" if at else "package.json")
        if data is None:
            continue
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return []
        imports = doc.get("imports") if isinstance(doc, dict) else None
        if not isinstance(imports, dict):
            return []
        out: list[tuple[str, str]] = []
        for name in names:
            for key, target in imports.items():
                fill = _filled(str(key), name)
                if fill is None:
                    continue
                for leaf in _leaves(target):
                    if leaf.startswith("./"):
                        out.append((at, leaf.replace("*", fill)))
        return out
    return []


_BARE = re.compile(r"[^./#]")  # a package's name (or a tsconfig alias), not a path
_RELATIVE = re.compile(r"\.{1,2}(?:/|$)")


def _ts_aliases(
    folder: str, text: str, read: Callable[[str], bytes | None]
) -> list[tuple[str, str]]:
    """(folder, relative specifier) of what the bare imports of a file in `folder` lead to
    through the `paths` (from `baseUrl`) of the nearest `tsconfig.json` or `jsconfig.json`,
    as tsx, ts-node and vite-tsconfig-paths resolve them (`"@lib/*": ["src/lib/*"]`)."""
    names = [spec for spec in runtimes.js_specifiers(text) if _BARE.match(spec)]
    if not names:
        return []
    parts = folder.split("/") if folder else []
    for depth in range(len(parts), -1, -1):
        at = "/".join(parts[:depth])
        for config in ("tsconfig.json", "jsconfig.json"):
            data = read(f"{at}/{config}" if at else config)
            if data is None:
                continue
            try:
                doc = json.loads(runtimes.strip_jsonc(data.decode("utf-8")))
            except (UnicodeDecodeError, ValueError, RecursionError):
                return []
            options = doc.get("compilerOptions") if isinstance(doc, dict) else None
            if not isinstance(options, dict):
                return []
            paths, base = options.get("paths"), options.get("baseUrl", ".")
            if not isinstance(paths, dict) or not isinstance(base, str):
                return []
            root = posixpath.normpath(posixpath.join(at, base))
            out: list[tuple[str, str]] = []
            for name in names:
                for key, targets in paths.items():
                    fill = _filled(str(key), name)
                    if fill is None:
                        continue
                    for leaf in _leaves(targets):
                        spec = "./" + leaf.replace("*", fill).removeprefix("./")
                        out.append(("" if root == "." else root, spec))
            return out
    return []


def _filled(key: str, name: str) -> str | None:
    """What the `*` of a mapping's key (package.json `imports`, tsconfig `paths`) stands for
    in `name`: "" for a key without one that is `name` itself, None when it does not match."""
    head, star, tail = key.partition("*")
    if star and name.startswith(head) and name.endswith(tail):
        return name[len(head) : len(name) - len(tail) if tail else None]
    return "" if key == name else None


def _leaves(target: object) -> list[str]:
    """The strings of an `imports` target: itself, or each condition's (nested) and each of
    a list's."""
    if isinstance(target, str):
        return [target]
    if isinstance(target, dict):
        return [leaf for v in target.values() for leaf in _leaves(v)]
    if isinstance(target, list):
        return [leaf for v in target for leaf in _leaves(v)]
    return []


def _js_imported(
    command: str,
    sealed: Sequence[str],
    mutable: Sequence[str],
    read: Callable[[str], bytes | None],
) -> tuple[str, list[str]] | None:
    """(the sealed benchmark, the files of the code under test it loads into its own process)
    when the metric command runs a sealed JavaScript or TypeScript file whose relative
    `require`, `import` or `import()` loads a file the agent may change. Wherever the call is
    (a function, a branch), it runs in the benchmark's process: a benchmark that runs the code
    under test in a child process (`child_process.fork("./child.js")`) requires none."""
    script = _js_script(command, read)
    pinned = set(sealed)
    if script is None or script not in pinned:
        return None
    source = read(script)
    if source is None:
        return None
    folder = posixpath.dirname(script)
    text = source[:1_000_000].decode("utf-8", "replace")
    # what is code: a `require("./x")` commented out or inside a string loads nothing
    loads = [(folder, spec) for spec in runtimes.js_specifiers(text) if _RELATIVE.match(spec)]
    loads += _js_subpaths(folder, text, read)
    loads += _ts_aliases(folder, text, read)
    found: list[str] = []
    for where, spec in loads:
        path = _js_loaded(where, spec, read)
        if path is None or path.endswith(".json"):  # data, parsed: it runs nothing
            continue
        if path not in pinned and scope.matches(path, mutable):
            found.append(path)
    found = list(dict.fromkeys(found))
    return (script, found) if found else None


_CARGO_VERBS = {"bench": ("benches/",), "test": ("tests/",), "run": ("src/main.rs", "src/bin/")}


def _crate_name(data: bytes | None) -> str | None:
    """The name a target uses the package's library by (`[lib] name`, else the package's,
    with `-` as `_`); None without a readable `Cargo.toml`."""
    try:
        doc = tomllib.loads((data or b"").decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return None
    for table in ("lib", "package"):
        part = doc.get(table)
        if isinstance(part, dict) and isinstance(part.get("name"), str):
            return str(part["name"]).replace("-", "_")
    return None


def _linked(
    command: str,
    sealed: Sequence[str],
    mutable: Sequence[str],
    read: Callable[[str], bytes | None],
    files: Sequence[str],
) -> tuple[str, list[str]] | None:
    """(the sealed benchmark, the files of the code under test built into its binary) when
    the metric command is `cargo bench`/`run`/`test` or `go run`/`test` and the sealed target
    it runs links code the agent may change: a Rust target that uses the package's library
    (`p::value()`: every `.rs` of `src/` but the binaries), a Go package (the `main` of `go run
    ./cmd/bench`, or the tested package of `go test -bench`) with a mutable `.go` file of its
    own folder or of a folder of the module it imports. Such code runs in the benchmark's
    process before it (a Rust constructor in `.init_array`, a `static` initializer, a Go
    `init()`) and during it, as an imported Python module does. The package may be in a
    folder of the repository: after a `cd sub &&`, `go -C sub`, `cargo --manifest-path
    sub/Cargo.toml`, or a member of a Cargo workspace (`-p name` picks one)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    tool = next((w for w in words if w.rsplit("/", 1)[-1] in ("cargo", "go")), None)
    if tool is None:
        return _compiled_linked(words, sealed, mutable, read, files)
    where = next((f for w, f in _words_where(command) if w == tool), "")
    if where is None:
        return None  # a `cd` the folder of which cannot be told
    rest, chosen, package = _project_options(words[words.index(tool) + 1 :])
    base = posixpath.normpath(posixpath.join(where or ".", chosen or "."))
    if base == ".." or base.startswith("../"):
        return None
    for folder in _package_folders("" if base == "." else base, tool, package, read, files):
        found = _linked_at(folder, tool, rest, sealed, mutable, read, files)
        if found is not None:
            return found
    return None


def _project_options(rest: Sequence[str]) -> tuple[list[str], str | None, str | None]:
    """(the words without the options naming the project, the folder they name — `go -C dir`,
    `cargo --manifest-path dir/Cargo.toml` —, the package `cargo -p name` names)."""
    out: list[str] = []
    folder = package = None
    i = 0
    while i < len(rest):
        word = rest[i]
        key, eq, value = word.partition("=")
        if key in ("-C", "--manifest-path", "-p", "--package"):
            if not eq:
                value = rest[i + 1] if i + 1 < len(rest) else ""
                i += 1
            if key == "-C":
                folder = value
            elif key == "--manifest-path":
                folder = posixpath.dirname(value) or "."
            else:
                package = value
        else:
            out.append(word)
        i += 1
    return out, folder, package


def _package_folders(
    base: str,
    tool: str,
    package: str | None,
    read: Callable[[str], bytes | None],
    files: Sequence[str],
) -> list[str]:
    """The folders of the packages the command builds: `base`, and for Cargo each member of
    the workspace `base/Cargo.toml` declares (`crates/*` as a glob), only `package` if named."""
    if not tool.endswith("cargo"):
        return [base]
    prefix = f"{base}/" if base else ""
    try:
        doc = tomllib.loads((read(f"{prefix}Cargo.toml") or b"").decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return [base]
    workspace = doc.get("workspace")
    members = workspace.get("members") if isinstance(workspace, dict) else None
    folders = [base] if isinstance(doc.get("package"), dict) else []
    if isinstance(members, list):
        manifests = [f[len(prefix) : -len("/Cargo.toml")] for f in files if f.startswith(prefix)
                     and f.endswith("/Cargo.toml")]  # fmt: skip
        for pattern in members:
            if isinstance(pattern, str):
                folders += [
                    f"{prefix}{m}" for m in manifests if fnmatch.fnmatchcase(m, pattern.strip("/"))
                ]
    folders = list(dict.fromkeys(folders))
    if package is not None:
        named = [f for f in folders if _crate_name(read(f"{f}/Cargo.toml" if f else "Cargo.toml"))
                 == package.replace("-", "_")]  # fmt: skip
        folders = named or folders
    return folders


def _linked_at(
    folder: str,
    tool: str,
    rest: Sequence[str],
    sealed: Sequence[str],
    mutable: Sequence[str],
    read: Callable[[str], bytes | None],
    files: Sequence[str],
) -> tuple[str, list[str]] | None:
    """`_linked` for the package in `folder` ("" for the root): its paths relative to it."""
    verbs = [w for w in rest if not w.startswith(("-", "+"))]
    if not verbs:
        return None
    prefix = f"{folder}/" if folder else ""
    pinned_full = set(sealed)
    pinned = {s[len(prefix) :] for s in sealed if s.startswith(prefix)}
    inner = [f[len(prefix) :] for f in files if f.startswith(prefix)]

    def read_in(path: str) -> bytes | None:
        return read(prefix + path)

    def open_to_agent(path: str) -> bool:
        return prefix + path not in pinned_full and scope.matches(prefix + path, mutable)

    def full(found: tuple[str, list[str]] | None) -> tuple[str, list[str]] | None:
        return None if found is None else (prefix + found[0], [prefix + f for f in found[1]])

    if tool.endswith("cargo"):
        places = _CARGO_VERBS.get(verbs[0])
        if places is None or "--example" in rest:
            places = ("examples/",) if "--example" in rest else None
        if places is None:
            return None
        name = _crate_name(read_in("Cargo.toml"))
        if name is None:
            return None
        use = re.compile(rf"\b{re.escape(name)}::|\buse\s+{re.escape(name)}\b")
        lib = sorted(
            f
            for f in inner
            if f.startswith("src/") and f.endswith(".rs") and f != "src/main.rs"
            and not f.startswith("src/bin/") and open_to_agent(f)
        )  # fmt: skip
        for target in sorted(pinned):
            if target.endswith(".rs") and target.startswith(places) and lib:
                source = (read_in(target) or b"").decode("utf-8", "replace")
                if use.search(source):
                    return full((target, lib))
        return None
    return full(_go_linked(verbs, inner, pinned, open_to_agent, read_in))


# the programs of a C, C++ or JVM build: a benchmark they build links what it includes
_C_BUILDS = frozenset(
    {"make", "gmake", "cmake", "ctest", "ninja", "meson", "cc", "gcc", "g++", "c++", "clang",
     "clang++", "javac", "java", "mvn", "gradle", "./gradlew", "./mvnw", "kotlinc", "scala"}
)  # fmt: skip
_JAVA_IMPORT = re.compile(r"^\s*import\s+(?:static\s+)?([\w.]+?)(?:\.\*|\.\w+)?\s*;", re.M)


def _compiled_linked(
    words: Sequence[str],
    sealed: Sequence[str],
    mutable: Sequence[str],
    read: Callable[[str], bytes | None],
    files: Sequence[str],
) -> tuple[str, list[str]] | None:
    """`_linked` for a C, C++ or Java build (`make bench`, `cmake --build b && ./b/bench`,
    `javac … && java bench.Bench`): a sealed source with a `main` that includes a header
    whose source (`calc.h` → `calc.c`, `calc.cpp`) the agent may change, or a sealed Java
    source that imports a package with a mutable class. That code runs in the benchmark's
    process: a C `__attribute__((destructor))` or a Java shutdown hook prints a `METRIC` line
    after the benchmark's."""
    if not any(w.rsplit("/", 1)[-1] in _C_BUILDS or w in _C_BUILDS for w in words):
        return None
    pinned = set(sealed)
    open_files = [f for f in files if f not in pinned and scope.matches(f, mutable)]
    by_stem: dict[str, list[str]] = {}
    by_package: dict[str, list[str]] = {}
    for f in open_files:
        folder, _, name = f.rpartition("/")
        stem, dot, ext = name.rpartition(".")
        if dot and f".{ext}" in (".c", ".cc", ".cpp", ".cxx", ".c++", ".m", ".mm"):
            by_stem.setdefault(stem, []).append(f)
        elif name.endswith((".java", ".kt")):
            by_package.setdefault(folder.replace("/", "."), []).append(f)
    for target in sorted(pinned):
        name = target.rpartition("/")[2]
        if not name.endswith(runtimes.SOURCES_WITH_MAIN):
            continue
        text = (read(target) or b"").decode("utf-8", "replace")
        if not re.search(r"\bmain\s*\(", text):
            continue
        found: list[str] = []
        if name.endswith((".java", ".kt")):
            found += by_package.get(target.rpartition("/")[0].replace("/", "."), [])
            for package in _JAVA_IMPORT.findall(text):
                found += [f for key, fs in by_package.items() for f in fs if key.endswith(package)]
        else:
            for header in runtimes.included_names(target, text.encode()):
                found += by_stem.get(header.rpartition(".")[0], [])
        if found:
            return target, list(dict.fromkeys(found))
    return None


_GO_IMPORT = re.compile(r'^\s*(?:import\s+)?(?:[\w.]+\s+)?"([^"]+)"\s*$', re.MULTILINE)


def _go_linked(
    verbs: Sequence[str],
    files: Sequence[str],
    pinned: set[str],
    open_to_agent: Callable[[str], bool],
    read: Callable[[str], bytes | None],
) -> tuple[str, list[str]] | None:
    """`_linked` for `go run <package or files>` and `go test [-bench …] <packages>`."""
    if verbs[0] not in ("run", "test"):
        return None
    module = re.search(
        r"^\s*module\s+(\S+)", (read("go.mod") or b"").decode("utf-8", "replace"), re.MULTILINE
    )
    if module is None:
        return None
    go_files = [f for f in files if f.endswith(".go")]
    folders: list[str] = []
    for arg in verbs[1:] or ["."]:
        if arg.endswith(".go"):
            folders.append(posixpath.dirname(posixpath.normpath(arg)))
        elif arg.startswith("."):
            path = posixpath.normpath(arg)
            if path.endswith("..."):
                base = path.removesuffix("...").rstrip("/").removeprefix(".")
                folders += sorted({posixpath.dirname(f) for f in go_files if f.startswith(base)})
            else:
                folders.append("" if path == "." else path)
        if verbs[0] == "run":
            break  # what follows is the program's own arguments
    for folder in folders:
        own = [f for f in go_files if posixpath.dirname(f) == folder]
        bench = [f for f in own if f in pinned and (verbs[0] == "test") == f.endswith("_test.go")]
        if not bench:
            continue
        found = [f for f in own if not f.endswith("_test.go") and open_to_agent(f)]
        for path in own:
            if path not in pinned:
                continue
            for name in _GO_IMPORT.findall((read(path) or b"").decode("utf-8", "replace")):
                if name == module.group(1) or name.startswith(module.group(1) + "/"):
                    where = name[len(module.group(1)) :].strip("/")
                    found += [
                        f
                        for f in go_files
                        if posixpath.dirname(f) == where
                        and not f.endswith("_test.go")
                        and open_to_agent(f)
                    ]
        found = list(dict.fromkeys(found))
        if found:
            return bench[0], found
    return None


# what ends one shell command and begins the next in the same shell (a `cd` before it holds)
_SEPARATORS = frozenset({"&&", "||", ";", "&", "\n"})


def _words_where(command: str) -> list[tuple[str, str | None]]:
    """The words of a shell command, each with the folder it is read in, from the
    repository's root ("" for the root): a `cd sub` (or `pushd sub`) makes the words after it
    in the same shell relative to `sub/` (`cd sub && python run.py` runs `sub/run.py`); inside
    `( … )` the folder is put back after. None where the folder cannot be told (`cd /tmp`,
    `cd $DIR`, `cd ..` above the root, `cd` alone: your home). Words split as `shlex.split`
    does, with `&&`, `||`, `;`, `|`, `(`, `)` as words of their own."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:
        return []
    out: list[tuple[str, str | None]] = []
    where: str | None = ""
    stack: list[str | None] = []
    start = True  # the next word begins a command
    i = 0
    while i < len(tokens):
        word = tokens[i]
        if word in _SEPARATORS or word == "|":
            out.append((word, where))
            start = True
        elif word == "(":
            stack.append(where)
            start = True
        elif word == ")":
            where = stack.pop() if stack else where
            start = False
        elif start and word in ("cd", "pushd"):
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            plain = target and target not in _SEPARATORS and target not in ("|", "(", ")")
            if not plain or target.startswith(("/", "~", "$", "-")) or where is None:
                where = None
            else:
                path = posixpath.normpath(posixpath.join(where or ".", target))
                where = (
                    None
                    if path == ".." or path.startswith("../")
                    else ("" if path == "." else path)
                )
            i += 2 if plain else 1
            start = False
            continue
        else:
            out.append((word, where))
            start = False
        i += 1
    return out


def named_paths(commands: Sequence[str], kind: Callable[[str], str | None]) -> list[str]:
    """The repository's files and folders the commands name by a relative path (`bench.py`,
    `tests`, `--data=data/set.csv`), as patterns: a file as itself, a folder as `<folder>/**`.
    `kind(path)` says what the repository holds there: "file", "folder" or None."""
    out: dict[str, None] = {}
    for command in commands:
        for word, where in _words_where(command or ""):
            value = word.partition("=")[2] if word.startswith("-") else word
            if "=" in word and not word.startswith("-") and "/" not in word.partition("=")[0]:
                continue  # VAR=value before the program
            path = value.removeprefix("./").rstrip("/")
            if not path or path.startswith(("/", "~", "$", "-")) or where is None:
                continue
            path = posixpath.normpath(posixpath.join(where, path)) if where else path
            if path.split("/")[0] == ".." or path == ".":
                continue
            found = kind(path)
            if found == "file":
                out[path] = None
            elif found == "folder":
                out[f"{path}/**"] = None
    return list(out)


_MANAGERS = frozenset({"npm", "yarn", "pnpm", "bun"})
_NPM_SHORT = frozenset({"test", "t", "tst", "start", "stop", "restart"})


def _package_script(words: Sequence[str]) -> tuple[int, str] | None:
    """(where the package manager's words end, the `package.json` script they run) for
    `npm run bench`, `npm test`, `yarn bench`, `pnpm run bench`, `bun run bench`."""
    for i, word in enumerate(words):
        manager = word.rsplit("/", 1)[-1]
        if manager not in _MANAGERS:
            continue
        rest = [(j, w) for j, w in enumerate(words[i + 1 :], i + 1) if not w.startswith("-")]
        if not rest:
            return None
        j, verb = rest[0]
        if verb in ("run", "run-script"):
            return (rest[1][0], rest[1][1]) if len(rest) > 1 else None
        if manager == "npm" and verb not in _NPM_SHORT:
            return None
        if manager == "bun" and verb == "test":  # bun's own test runner, not a script
            return None
        return j, verb
    return None


def script_commands(command: str, read: Callable[[str], bytes | None] | None) -> list[str]:
    """The command and, when it runs a `package.json` script (`npm run bench`), the text of
    that script with its `pre` and `post` scripts, followed through scripts that run others
    (`npm run build && node bench.js`): what the command really runs, to find the files it
    names (`bench.js`)."""
    out, todo = [command], [command]
    while todo and read is not None and len(out) < 32:
        try:
            words = shlex.split(todo.pop(0) or "")
        except ValueError:
            continue
        found = _package_script(words)
        if found is None:
            continue
        try:
            doc = json.loads((read("package.json") or b"").decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            continue
        scripts = doc.get("scripts") if isinstance(doc, dict) else None
        if not isinstance(scripts, dict):
            continue
        name = found[1]
        for key in (f"pre{name}", name, f"post{name}"):
            text = scripts.get(key)
            if isinstance(text, str) and text not in out:
                out.append(text)
                todo.append(text)
    return out


# test runners that collect from the repository when the command names no path, and the
# folders they collect from
_JS_TESTS = ("tests", "test", "__tests__")
_BUILT = ("bench", "benches", "benchmark", "benchmarks", "tests", "test")
_COLLECTORS = {
    "pytest": ("tests", "test"),
    "ctest": ("tests", "test"),
    # a C, C++ or JVM build compiles the benchmark and the tests from their folders
    **dict.fromkeys(("make", "gmake", "cmake", "javac", "mvn", "gradle"), _BUILT),
    "node --test": _JS_TESTS,
    "jest": _JS_TESTS,
    "vitest": _JS_TESTS,
    "mocha": _JS_TESTS,
    "cargo test": ("tests",),
    "cargo bench": ("benches",),
}


_MAKES = frozenset({"make", "gmake"})
# `make test`, `make -s check`: a make target that runs the project's tests, as ctest does
_MAKE_TEST = re.compile(r"(?<![\w.-])g?make(?:\s+-\S+)*\s+(?:test|check|tests)(?![\w.-])")
# make reads the first of these of the folder it runs in
_MAKE_FILES = ("GNUmakefile", "makefile", "Makefile")


def build_files(command: str, kind: Callable[[str], str | None]) -> list[str]:
    """The files a build tool the command runs reads for its recipe, though the command does
    not name them: the make file of `make bench` (`GNUmakefile`, `makefile` or `Makefile` of
    the folder `-C` or a `cd` names, or `-f`'s), the `CMakeLists.txt` and `CMakePresets.json`
    of the source folder of `cmake`, `cmake --build` and `ctest` (`-S`, a `cd`, else where it
    runs). A benchmark's recipe there is what prints the number: a make file the agent may
    change makes `make bench` print `METRIC score=1`."""
    out: dict[str, None] = {}
    words = _words_where(command)
    for i, (word, where) in enumerate(words):
        tool = word.rsplit("/", 1)[-1]
        if where is None or tool not in (*_MAKES, "cmake", "ctest"):
            continue
        if i and words[i - 1][0] not in (*_SEPARATORS, "|") and "=" not in words[i - 1][0]:
            continue  # an argument, not the program (`echo make`)
        args: list[str] = []
        for arg, _ in words[i + 1 :]:
            if arg in _SEPARATORS or arg in ("|", "(", ")"):
                break
            args.append(arg)
        folder, chosen = where, None
        for j, arg in enumerate(args):
            value = args[j + 1] if j + 1 < len(args) else ""
            if tool in _MAKES and arg in ("-C", "--directory"):
                folder = posixpath.join(folder, value)
            elif tool in _MAKES and arg.startswith("--directory="):
                folder = posixpath.join(folder, arg.partition("=")[2])
            elif tool in _MAKES and arg in ("-f", "--file", "--makefile"):
                chosen = value
            elif tool in _MAKES and arg.startswith(("--file=", "--makefile=")):
                chosen = arg.partition("=")[2]
            elif tool == "cmake" and arg == "-S":
                folder = posixpath.join(where, value)
            elif tool == "cmake" and arg.startswith("-S") and len(arg) > 2:
                folder = posixpath.join(where, arg[2:])
        if tool in _MAKES:
            names = [chosen] if chosen else list(_MAKE_FILES)
        else:
            names = ["CMakeLists.txt", "CMakePresets.json"]
        for name in names:
            path = posixpath.normpath(posixpath.join(folder, name))
            if path.startswith(("../", "/")) or path == "..":
                continue
            if kind(path) == "file":
                out[path] = None
                if tool in _MAKES:
                    break  # make reads the first it finds
    return list(out)


def measured_paths(
    metric: str,
    guard: str,
    kind: Callable[[str], str | None],
    read: Callable[[str], bytes | None] | None = None,
) -> list[str]:
    """`named_paths` of the metric and guard commands (and of the `package.json` scripts
    they run: `script_commands`); for a test runner that names no path (it collects from the
    root), the usual test folders it finds (`tests/**`, `test/**`, `__tests__/**`; cargo's
    `tests/**` and `benches/**`)."""
    metrics, guards = script_commands(metric, read), script_commands(guard, read)
    named = named_paths([*metrics, *guards], kind)
    built = [p for c in [*metrics, *guards] for p in build_files(c, kind)]
    named += built
    if read is not None:
        named += [p for b in built for p in recipe_mains(b, kind, read)]
    for commands in (metrics, guards):
        text = " ".join(commands)
        if named_paths(commands, kind):
            continue
        for runner, folders in _COLLECTORS.items():
            if re.search(rf"(?<![\w.-]){re.escape(runner)}(?![\w.-])", text) or (
                runner == "ctest" and _MAKE_TEST.search(text)
            ):
                named += [f"{d}/**" for d in folders if kind(d) == "folder"]
    return list(dict.fromkeys(named))


# a source file a make file or CMakeLists.txt names (a prerequisite, a recipe's compiler
# call, `add_executable`): its path relative to the build file's folder
_RECIPE_SOURCE = re.compile(
    r"(?<![\w./$-])((?:[\w.+-]+/)*[\w.+-]+\.(?:c|cc|cpp|cxx|m|mm|java|kt))\b"
)
_MAIN = re.compile(rb"\b(?:int|void)\s+main\s*\(|\bstatic\s+void\s+main\s*\(|\bfun\s+main\s*\(")


def recipe_mains(
    build_file: str, kind: Callable[[str], str | None], read: Callable[[str], bytes | None]
) -> list[str]:
    """The sources of the tree that the build file `build_file` names and that hold a
    `main`: the benchmark's (or the tests') driver a recipe compiles (`cc -O2 tools/perf.c
    src/calc.c -o perf`), as much what prints the number as the recipe itself. The library
    it links (`src/calc.c`, no `main`) is the code under test: not named."""
    data = read(build_file)
    if not data:
        return []
    folder = posixpath.dirname(build_file)
    out: dict[str, None] = {}
    for name in _RECIPE_SOURCE.findall(data[:1_000_000].decode("utf-8", "replace")):
        path = posixpath.normpath(posixpath.join(folder, name))
        if path.startswith("../") or kind(path) != "file":
            continue
        if _MAIN.search(read(path) or b""):
            out[path] = None
    return list(out)


# what a word of a command ends with when it names a program or script to run
_RUNNABLE = (
    ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".py", ".sh", ".jar", ".wasm", ".exe",
    ".out", ".bin", ".pl", ".rb", ".php", ".class", ".so", ".dll",
)  # fmt: skip


def unbuilt_named(
    metric: str,
    guard: str,
    kind: Callable[[str], str | None],
    read: Callable[[str], bytes | None] | None = None,
) -> list[str]:
    """The paths the metric and guard commands (and the `package.json` scripts they run)
    name that the run's base does not hold — what a build makes before it runs
    (`tsc && node dist/bench.js`, `make && ./out/bench`, `cargo build && target/release/b`) or
    a run writes: a word with a `/`, or one ending like a program or script (`bench.js`).
    A candidate that commits one decides what runs when the build leaves it (an incremental
    build that finds it up to date, a `noEmit` or `outDir` set in a config it may change)."""
    out: dict[str, None] = {}
    for command in [*script_commands(metric, read), *script_commands(guard, read)]:
        before = ""
        for word, where in _words_where(command or ""):
            previous, before = before, word
            if where is None or word in _SEPARATORS or word == "|":
                continue  # after a `cd` to where the repository cannot say
            value = word.partition("=")[2] if word.startswith("-") else word
            classpath = previous in _CLASSPATH or word.startswith(
                tuple(f"{o}=" for o in (*_CLASSPATH, "CLASSPATH"))
            )
            if classpath and word.startswith("CLASSPATH="):
                value = word.partition("=")[2]
            elif "=" in word and not word.startswith("-") and "/" not in word.partition("=")[0]:
                continue  # VAR=value before the program
            # a classpath's entries are folders and jars the JVM loads classes from, in order
            for entry in value.split(":") if classpath else [value]:
                path = posixpath.normpath(entry).removeprefix("./") if entry else ""
                if (
                    not path
                    or path in (".", "..")
                    or "://" in entry
                    or path.startswith(("/", "~", "$", "-", "../"))
                    or any(c in path for c in "*?[]{}$`<>|&;")
                    or ("/" not in path and not path.endswith(_RUNNABLE) and not classpath)
                ):
                    continue
                path = posixpath.normpath(posixpath.join(where, path)) if where else path
                if path == ".." or path.startswith("../"):
                    continue
                if kind(path) is None:
                    out[path] = None
    return list(out)


# the options that give `java` (and `javac`, `kotlin`, `scala`) its classpath
_CLASSPATH = ("-cp", "-classpath", "--class-path")


def unsealed_named(
    metric: str,
    guard: str,
    files: Sequence[str],
    sealed: Sequence[str],
    read: Callable[[str], bytes | None] | None = None,
) -> list[str]:
    """Of `named_paths` in a tree holding `files`, those with a file that `sealed` (the sealed
    files) leaves out: what the agent may change although the metric or guard runs it."""
    held = set(files)
    folders = {f.rsplit("/", i)[0] for f in held for i in range(1, f.count("/") + 1)}
    pinned = set(sealed)

    def kind(path: str) -> str | None:
        return "file" if path in held else "folder" if path in folders else None

    out = []
    for pattern in measured_paths(metric, guard, kind, read):
        if pattern.endswith("/**"):
            prefix = pattern[:-2]
            if any(f.startswith(prefix) and f not in pinned for f in held):
                out.append(pattern)
        elif pattern not in pinned:
            out.append(pattern)
    return out
