"""Files an interpreter or a test runner loads without being named: sealed unless named.

A sealed benchmark is only as sealed as what it loads. Python puts the script's folder first on
`sys.path`, so a `subprocess.py` next to `bench.py` replaces the standard library's; pytest
imports every `conftest.py` above a test and reads its configuration from `pytest.ini`,
`tox.ini`, `setup.cfg` or `pyproject.toml`; `site` runs `sitecustomize.py`, `usercustomize.py`
and the code lines of `*.pth` files; and a `__pycache__/*.pyc` whose header matches the
source's size and mtime is run instead of the source. Importing a sealed `tools/reader.py`
runs `tools/__init__.py` first, and a new `numpy.py` next to a sealed file that imports numpy
is imported in its place. Any NEW top-level module or package of the workspace (its root is
on `sys.path` for `python -m …`), and any new module named like one the metric's or the
guard's interpreter can import (its standard library and site-packages: a new `iniconfig.py`
shadows pytest's dependency) where the workspace is on `sys.path`, is loaded instead of what
it is named after; so is any file of a `*.dist-info` or `*.egg-info` folder (its
`entry_points.txt` registers a pytest plugin), and a tool's cache or state (`.mypy_cache/`,
`.pytest_cache/`, `.tox/`, `*.tsbuildinfo`…: git/checkout.py `TOOL_STATE`), which the tool
reads in place of doing its work and which measurement checkouts never hold. A change to any of these is
`out-of-scope` unless a `[scope] mutable` pattern names it (a pattern that matches the path
*and* spells the name: `conftest.py`, `tests/conftest.py`, `*.pth`, `subprocess.py`; `**`
alone does not).

Files that choose the toolchain or environment a command runs with (`.python-version`,
`.tool-versions`, `rust-toolchain.toml`, `.nvmrc`, `.envrc`, `.env`…: loop/toolchain.py) are
sealed the same way; `go.mod` by its `go` and `toolchain` lines. So are the files other
languages' runners and runtimes load unnamed (`.npmrc`, a new `GNUmakefile`, `.cargo/`,
`node_modules/`, `.Rprofile`…: loop/runtimes.py), and `package.json` by its `scripts`.

`pyproject.toml` is judged by its content: its `[tool]` tables (pytest's `ini_options`, and
the settings of every other tool a guard may run) and `[build-system]` are sealed, the rest of
it (project metadata, dependencies) may change.
"""

from __future__ import annotations

import ast
import fnmatch
import re
import sys
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from gitimprove.git import trees
from gitimprove.git.attributes import attributes_of
from gitimprove.git.checkout import tool_state
from gitimprove.git.repo import Repo
from gitimprove.loop import lookup, runtimes, scope, toolchain

__all__ = ["implicit_changes"]

# the test runners' configuration files (pytest, tox, nose, coverage): they can empty a suite
RUNNER_CONFIG = frozenset(
    {"pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "tox.ini", "setup.cfg",
     ".coveragerc", "noxfile.py"}
)  # fmt: skip
STARTUP = frozenset({"conftest.py", "sitecustomize.py", "usercustomize.py"})
# suffixes of what an import can load for a module named `x`: x.py, x.pyc, x.cpython-311-….so
_MODULE_SUFFIXES = (".py", ".pyw", ".pyc", ".pyo", ".so", ".pyd")
_STDLIB = frozenset(sys.stdlib_module_names)


def _module_name(part: str) -> str | None:
    """`subprocess` for `subprocess.py` or `subprocess.cpython-311-x86_64-linux-gnu.so`."""
    if not part.endswith(_MODULE_SUFFIXES):
        return None
    return part.split(".", 1)[0]


def why_implicit(
    path: str, roots: set[str], is_package: Callable[[str], bool]
) -> tuple[str, str] | None:
    """(why, the name a mutable pattern must spell) when `path` is loaded implicitly."""
    parts = path.split("/")
    name = parts[-1]
    folder = "/".join(parts[:-1])
    cache = tool_state(path)
    if cache is not None:  # measurement checkouts never hold one (git/checkout.py)
        return f"{cache[0]}: a tool reads it in place of doing its work", cache[1]
    if "__pycache__" in parts[:-1]:
        return "compiled Python, run instead of its source", "__pycache__"
    if name.endswith((".pyc", ".pyo")):
        return "compiled Python, run instead of its source", name[-4:]
    if name in STARTUP:
        return f"{name} is imported without being named", name
    if name.endswith(".pth"):
        return "a .pth file runs its lines at start-up", ".pth"
    if name in RUNNER_CONFIG:
        return f"{name} configures the test runner", name
    selector = toolchain.why_selector(path)
    if selector is not None:
        return selector
    module = _module_name(name)
    if module in _STDLIB and folder in roots:
        return f"it shadows the standard library's {module}", module
    # a package named like the standard library's: any module of it (`logging/__init__.py`)
    for depth in range(len(parts) - 1):
        pkg, at = parts[depth], "/".join(parts[:depth])
        if module is None or pkg not in _STDLIB or at not in roots:
            continue
        if is_package("/".join(parts[: depth + 1])):
            return f"it shadows the standard library's {pkg}", pkg
    return None


@lru_cache(maxsize=1024)
def _imports(source: bytes) -> frozenset[str]:
    """The top-level names of the modules a Python file imports (absolute imports only)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return frozenset()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return frozenset(names)


def _named(path: str, marker: str, mutable: Sequence[str]) -> bool:
    return any(marker in p and scope.matches(path, [p]) for p in mutable)


# files judged by their content: (the part that is sealed, why)
# attributes that make git write a file into a work tree otherwise than its blob holds
_CHECKOUT_ATTRIBUTES = frozenset(
    {"text", "eol", "crlf", "ident", "filter", "working-tree-encoding"}
)


# attributes git knows that leave the checkout as the blob is (`binary` is the macro
# `-diff -merge -text`); `linguist-*` and `gitlab-*` are read by hosting sites alone
_HARMLESS = frozenset(
    {"diff", "merge", "binary", "export-ignore", "export-subst", "delta", "whitespace",
     "conflict-marker-size", "lockable"}
)  # fmt: skip


def _known_harmless(name: str) -> bool:
    return name in _HARMLESS or name.startswith(("linguist-", "gitlab-", "github-"))


def checkout_attributes(data: bytes | None) -> tuple[tuple[str, str], ...]:
    """The (pattern, attribute) pairs of a `.gitattributes` that change how git checks the
    files out (`ident` expands `$Id$`, `eol`/`text` convert line ends, a `filter` smudges,
    `working-tree-encoding` re-encodes), or a name that may be a macro setting one; unsetting
    one (`-text`, `!eol`) changes nothing."""
    found = []
    for line in (data or b"").decode("utf-8", "replace").splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        for word in words[1:]:
            name = word.partition("=")[0]
            if word[0] in "-!" or not name:
                continue
            # a name git gives no meaning may be a macro (`[attr]kw ident` in the root
            # .gitattributes, .git/info/attributes or your global attributes file): judged
            # as one that sets them
            if name in _CHECKOUT_ATTRIBUTES or not _known_harmless(name):
                found.append((words[0], word))
    return tuple(sorted(found))


_ID = re.compile(rb"\$Id(?::[^$\n]*)?\$")


def _after(
    read: Callable[[str], tuple[bytes | None, bytes | None]],
) -> Callable[[str], bytes | None]:
    return lambda path: read(path)[1]


def converted_on_checkout(
    path: str, data: bytes, read: Callable[[str], bytes | None]
) -> str | None:
    """Why git would write `path` (holding `data`) into your work tree otherwise than the
    measured checkout holds it, by the attributes the commit's `.gitattributes` give it:
    `ident` with a `$Id$` in it, a `filter`, a `working-tree-encoding` other than UTF-8.
    (Line ends need no judging: a measurement checkout writes them as your git does, by the
    same files and your settings: git/attributes.py.)"""
    attrs = attributes_of(path, read)
    if attrs.get("ident") is True and _ID.search(data):
        return "ident: git expands its $Id$"
    if isinstance(attrs.get("filter"), str):
        return f"filter={attrs['filter']}: git smudges it"
    encoding = attrs.get("working-tree-encoding")
    if isinstance(encoding, str) and encoding.replace("-", "").lower() != "utf8":
        return f"working-tree-encoding={encoding}: git re-encodes it"
    return None


_BY_CONTENT: dict[str, tuple[Callable[[bytes | None], Any], str]] = {
    ".gitattributes": (
        checkout_attributes,
        "its ident, eol, text, filter or working-tree-encoding attributes (or a macro that may "
        "set one) make git write the "
        "files they match into your work tree otherwise than the measured checkout held them: "
        "the commit you check out would not be the one measured",
    ),
    "go.mod": (
        runtimes.go_build,
        "its go, toolchain, godebug, replace and exclude lines choose the Go toolchain and "
        "the modules a build takes",
    ),
    "package.json": (
        runtimes.package_scripts,
        "its scripts, main, exports, imports or a test runner's settings choose what npm run "
        "runs and what Node loads",
    ),
    "tsconfig.json": (  # and jsconfig.json, tsconfig.base.json...: runtimes.is_ts_config
        runtimes.ts_resolution,
        "its extends, ts-node options or compiler options paths, baseUrl and the like choose "
        "which file an import loads under tsx, ts-node or a jest mapper",
    ),
    "Cargo.toml": (
        runtimes.cargo_build,
        "its tables but the package metadata and published dependencies choose what cargo "
        "builds and runs: tests, features, patches, build script",
    ),
}


def _tool_sections(data: bytes | None) -> Any:
    if data is None:
        return (None, None)
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ("unreadable", data)
    return (doc.get("tool"), doc.get("build-system"))


_METADATA = (".dist-info", ".egg-info")


def _new_module(path: str, roots: set[str]) -> tuple[str, str] | None:
    """(folder on sys.path, module name) when `path` is a module or a package's `__init__`
    directly in one of `roots`."""
    folder, _, name = path.rpartition("/")
    if folder in roots and (module := _module_name(name)) is not None:
        return folder, module
    parent, _, package = folder.rpartition("/")
    if name == "__init__.py" and folder and parent in roots:
        return parent, package
    return None


def _loaded_new(
    path: str,
    roots: set[str],
    importable: frozenset[str],
    mutable: Sequence[str],
    *,
    new: bool,
    top_level: bool = True,
) -> str | None:
    """Why a changed `path` is out of scope as package metadata or, when `new`, as a module
    Python loads in place of another."""
    parts = path.split("/")
    for part in parts[:-1]:
        if part.endswith(_METADATA) and not _named(path, part[part.rindex(".") :], mutable):
            return f"{path} (package metadata: its entry points load plugins into the runner)"
    found = _new_module(path, roots) if new else None
    if found is None or _named(path, found[1], mutable):
        return None
    folder, module = found
    if module in importable:
        return f"{path} (a new module named like the installed {module}: imported instead)"
    if folder == "" and top_level:
        return f"{path} (a new top-level module: the root is on sys.path for python -m)"
    return None


def implicit_changes(
    changed: Iterable[str],
    sealed: Iterable[str],
    mutable: Sequence[str],
    read: Callable[[str], tuple[bytes | None, bytes | None]],
    is_package: Callable[[str], bool],
    importable: frozenset[str] = frozenset(),
    existed: Callable[[str], bool] | None = None,
    *,
    top_level: bool = True,
    extended: Mapping[str, str] | None = None,
) -> list[str]:
    """The changed paths an interpreter or test runner would load implicitly, each with why.

    `sealed` are the sealed files (their folders, the repository's root, and a folder a relative
    `PYTHONPATH` entry names are where a module named like the standard library's shadows it); `read(path)` gives the file before and after
    (for `pyproject.toml`); `is_package(folder)` says whether a folder holds `__init__.py`;
    `importable` are the module names the metric's and guard's interpreters import;
    `existed(path)` whether the base tree has `path` (read's first half by default); without
    `top_level`, a new module at the root that nothing named imports is not named;
    `extended` maps each file a TypeScript config of the base reaches through `extends`
    (`runtimes.ts_extended`) to that config: it is judged as the config itself."""
    if existed is None:
        existed = lambda path: read(path)[0] is not None  # noqa: E731
    sealed = list(sealed)
    # and the folders a relative PYTHONPATH entry of the environment puts on sys.path
    roots = {""} | {p.rpartition("/")[0] for p in sealed} | lookup.python_folders()
    # the packages a sealed module belongs to: their __init__.py runs when it is imported
    packages: dict[str, str] = {}
    imported: dict[str, str] = {}  # a module a sealed file imports -> that file
    for p in sealed:
        if p.endswith(".py"):
            parts = p.split("/")[:-1]
            for depth in range(len(parts), 0, -1):
                packages.setdefault("/".join(parts[:depth]), p)
            for name in _imports(read(p)[0] or b""):
                imported.setdefault(name, p)
    # a sealed module `F/m.py` and what Python's finder takes before it for `m` in F: a
    # package `F/m/` (its `__init__`), an extension module `F/m.<tag>.so`
    # (and a package's sealed `__init__.py`: an extension `F/__init__.abi3.so` comes first)
    shadowed = {
        (p.rpartition("/")[0], p.rpartition("/")[2][:-3]): p for p in sealed if p.endswith(".py")
    }
    # where a relative require or import of a sealed JavaScript file may resolve (Node)
    resolved: dict[str, str] = {}
    for p in sealed:
        for target, spec in runtimes.node_shadows(p, read(p)[0] or b"").items():
            resolved.setdefault(target, f"{spec!r} of the sealed {p}")
    # what a sealed make file includes (`-include local.mk`): a new one sets its recipes
    included = [
        (pattern, p) for p in sealed for pattern in runtimes.make_includes(p, read(p)[0] or b"")
    ]
    # Go compiles every .go file of a folder into one package: a new one beside a sealed one
    # is part of the sealed package (its `init` runs first, `os.Exit` ends the benchmark)
    go_packages = {p.rpartition("/")[0]: p for p in sealed if p.endswith(".go")}
    # a C-family or JVM source is built with the sealed ones of its folder by a glob or a
    # wildcard (`file(GLOB bench/*.c)`, `$(wildcard bench/*.c)`, `javac bench/*.java`): a new
    # one there adds a constructor, a static initializer, a test; and a compiler takes a new
    # header named like one a sealed source includes (its folder first, or `-I.` before the
    # folder that held it), the classpath a new class named like a sealed one
    compiled = {
        (p.rpartition("/")[0], runtimes.compiled_family(p)): p
        for p in sealed
        if runtimes.compiled_family(p) and not runtimes.is_header(p)
    }
    named_like: dict[str, str] = {}
    for p in sealed:
        if runtimes.is_shadowable(p):
            named_like.setdefault(p.rpartition("/")[2], p)
        if runtimes.compiled_family(p) != "c":
            continue
        for header in runtimes.included_names(p, read(p)[0] or b""):
            named_like.setdefault(header, p)
    out: list[str] = []
    for path in changed:
        after = read(path)[1]
        converted = None if after is None else converted_on_checkout(path, after, _after(read))
        if converted is not None:
            out.append(
                f"{path} ({converted} in your work tree, never in the checkout measured: the "
                "commit you check out would not be the one measured)"
            )
            continue
        if path in resolved and existed(path) is False and not _named(path, path, mutable):
            out.append(
                f"{path} (a new file Node may load for {resolved[path]}, before what it loaded)"
            )
            continue
        makefile = next((p for pattern, p in included if fnmatch.fnmatchcase(path, pattern)), None)
        if makefile is not None and existed(path) is False and not _named(path, path, mutable):
            out.append(
                f"{path} (a new file the sealed {makefile} includes: its recipes and variables)"
            )
            continue
        folder, _, name = path.rpartition("/")
        if (
            name.endswith(".go")
            and not name.endswith("_test.go")  # runtimes: in any folder
            and folder in go_packages
            and existed(path) is False
            and not _named(path, path, mutable)
        ):
            out.append(
                f"{path} (go compiles it into the package of the sealed {go_packages[folder]}: "
                "every .go file of a folder is built with it, whatever its build constraints "
                "or _linux-style suffix)"
            )
            continue
        family = runtimes.compiled_family(name)
        if family and existed(path) is False and not _named(path, path, mutable):
            beside = None if runtimes.is_header(name) else compiled.get((folder, family))
            if beside is not None:
                out.append(
                    f"{path} (a new source beside the sealed {beside}: a build that compiles "
                    "its folder by a glob or a wildcard builds it in, and a compiler or the "
                    "classpath may take it for a file of that folder)"
                )
                continue
            if name in named_like and runtimes.is_shadowable(name):
                out.append(
                    f"{path} (a new file named like {name} of the sealed {named_like[name]}: "
                    "a compiler's include path or the classpath may find it first)"
                )
                continue
        ahead = next((key for key in _ahead_of(folder, name) if key in shadowed), None)
        if ahead is not None and existed(path) is False and not _named(path, ahead[1], mutable):
            out.append(
                f"{path} (a new package or extension module named like the sealed "
                f"{shadowed[ahead]}: Python imports it in its place)"
            )
            continue
        beside = _source_beside(folder, name)
        if (
            beside is not None
            and read(beside)[1] is not None
            and not _named(path, "." + name.rpartition(".")[2], mutable)
        ):
            out.append(
                f"{path} ({_UNREADABLE}: Python imports it in place of {beside} beside it, "
                "the source a reviewer reads)"
            )
            continue
        if extended and path in extended and not _named(path, name, mutable):
            why = _extends_change(path, extended[path], read, existed(path))
            if why is not None:
                out.append(why)
                continue
        if name == "__init__.py" and folder in packages and not _named(path, name, mutable):
            out.append(f"{path} (it runs when the sealed {packages[folder]} is imported)")
            continue
        module = _module_name(name) if folder in roots else None
        if module is None and folder.rpartition("/")[0] in roots and name == "__init__.py":
            folder, module = folder.rpartition("/")[0], folder.rpartition("/")[2]
        if module in imported and read(path)[0] is None and not _named(path, module, mutable):
            out.append(
                f"{path} (a new module named like {module}, which the sealed "
                f"{imported[module]} imports: it would be imported instead)"
            )
            continue
        is_new = _new_module(path, roots) is not None and existed(path) is False
        why = _loaded_new(path, roots, importable, mutable, new=is_new, top_level=top_level)
        if why is not None:
            out.append(why)
            continue
        if path.rpartition("/")[2] == "pyproject.toml":
            before, after = read(path)
            if _tool_sections(before) != _tool_sections(after) and not _named(
                path, "pyproject.toml", mutable
            ):
                out.append(
                    f"{path} (its [tool] or [build-system] tables configure the test runner)"
                )
            continue
        name = path.rpartition("/")[2]
        judged = _BY_CONTENT.get("tsconfig.json" if runtimes.is_ts_config(name) else name)
        if judged is not None:
            sealed_part, why = judged
            before, after = read(path)
            if sealed_part(before) != sealed_part(after) and not _named(
                path, path.rpartition("/")[2], mutable
            ):
                out.append(f"{path} ({why})")
            continue
        found = why_implicit(path, roots, is_package) or runtimes.why_runtime(
            path, existed(path) is False
        )
        if found is not None and not _named(path, found[1], mutable):
            out.append(f"{path} ({found[0]})")
    return out


_EXTENSIONS = (".so", ".pyd")


def _ahead_of(folder: str, name: str) -> list[tuple[str, str]]:
    """Each (folder, module) whose source `<folder>/<module>.py` the file `name` of `folder`
    would be imported ahead of: a package's `__init__` (`m/__init__.py`, any suffix) before
    `m.py`, an extension module (`m.cpython-311-x86_64-linux-gnu.so`, `m.abi3.so`, `m.pyd`)
    before `m.py`, and an extension `__init__.abi3.so` before the package's `__init__.py`."""
    out = []
    if name.startswith("__init__.") and name.endswith(_MODULE_SUFFIXES) and folder:
        parent, _, package = folder.rpartition("/")
        out.append((parent, package))
    if name.endswith(_EXTENSIONS):
        out.append((folder, name.split(".", 1)[0]))
    return out


_UNREADABLE = "compiled code, an extension module"


def _source_beside(folder: str, name: str) -> str | None:
    """`F/m.py` for an extension module `F/m.so`, `F/m.pyd`, `F/m.<tag>.so` (`m.abi3.so`,
    `m.cpython-311-x86_64-linux-gnu.so`): the source Python's finder takes it before."""
    parts = name.split(".")
    if parts[-1] not in ("so", "pyd") or len(parts) not in (2, 3) or not parts[0]:
        return None
    if len(parts) == 3 and not parts[1].startswith(("abi3", "cpython-", "cp3", "pypy")):
        return None
    return f"{folder}/{parts[0]}.py" if folder else f"{parts[0]}.py"


def _extends_change(
    path: str, config: str, read: Callable[[str], tuple[bytes | None, bytes | None]], was: bool
) -> str | None:
    """Why a change to `path`, which the TypeScript config `config` reaches through `extends`,
    changes what that config resolves: new (TypeScript may take it before the file it took),
    removed (it takes the next place, or fails), or its `extends`, `paths`, `baseUrl`... (a
    `package.json`: its `tsconfig` and `exports`, judged with the other package.json files)."""
    before, after = read(path)
    if not was and after is not None:
        return (
            f"{path} (a new file TypeScript may take for the extends of {config}, in place of "
            "what it took: its paths, baseUrl and the like choose which file an import loads)"
        )
    if path.endswith("/package.json") or path == "package.json":
        return None
    if before is not None and after is None:
        return f"{path} ({config} extends it: removed, TypeScript takes what comes next)"
    if runtimes.ts_resolution(before) != runtimes.ts_resolution(after):
        return f"{path} ({config} extends it: {_BY_CONTENT['tsconfig.json'][1]})"
    return None


_EXTENDED: dict[str, dict[str, str]] = {}  # base tree -> what its TypeScript configs extend


def ts_extended_in(repo: Repo, base_tree: str) -> dict[str, str]:
    """`runtimes.ts_extended` of every TypeScript or JavaScript config of the tree (by name:
    `tsconfig.json`, `jsconfig.json`, `tsconfig.<purpose>.json`), once per tree."""
    found = _EXTENDED.get(base_tree)
    if found is None:
        configs = [
            p
            for p in trees.blob_paths(repo, base_tree)
            if runtimes.is_ts_config(p.rpartition("/")[2])
        ]
        found = runtimes.ts_extended(
            configs,
            lambda p: (lambda r: None if r is None else trees.read_in(repo, base_tree, r))(
                trees.real_path(repo, base_tree, p)
            ),
            lambda p: trees.real_path(repo, base_tree, p),
        )
        if len(_EXTENDED) > 8:
            _EXTENDED.clear()
        _EXTENDED[base_tree] = found
    return found


def built_outputs(
    changed: Iterable[str], unbuilt: Sequence[str], mutable: Sequence[str]
) -> list[str]:
    """The changed paths that are (or are under) a path the metric or guard command names
    and the run's base does not hold (`unbuilt`: `dist/bench.js`, what a build makes),
    each with why: committed, it is what runs whenever the build leaves it in place."""
    out = []
    for path in changed:
        for named in unbuilt:
            if path == named or path.startswith(named + "/"):
                if not _named(path, named.rpartition("/")[2], mutable):
                    out.append(
                        f"{path} (the metric or guard command runs {named}, which the run's "
                        "base does not hold: a build makes it, and a committed one is what "
                        "runs whenever the build leaves it in place)"
                    )
                break
    return out


def implicit_in(
    repo: Repo,
    base_tree: str,
    tree: str,
    sealed_tree: str,
    mutable: Sequence[str],
    importable: frozenset[str] = frozenset(),
) -> list[str]:
    """`implicit_changes` between the run's base tree and a candidate's tree."""

    in_base, in_tree = trees.blobs_in(repo, base_tree), trees.blobs_in(repo, tree)

    def read(path: str) -> tuple[bytes | None, bytes | None]:
        return in_base(path), in_tree(path)

    def is_package(folder: str) -> bool:
        return any(x is not None for x in read(f"{folder}/__init__.py"))

    changed = trees.changed_paths(repo, base_tree, tree)
    sealed = trees.blob_paths(repo, sealed_tree)

    def existed(path: str) -> bool:  # the base only: the candidate's objects are read later
        return in_base(path) is not None

    extended = ts_extended_in(repo, base_tree)
    return implicit_changes(
        changed, sealed, mutable, read, is_package, importable, existed, extended=extended
    )


def planted_during_run(
    added: Iterable[str],
    sealed: Sequence[str],
    read_sealed: Callable[[str], bytes | None],
    is_package: Callable[[str], bool],
    importable: frozenset[str] = frozenset(),
    extended: Mapping[str, str] | None = None,
) -> list[str]:
    """The files a metric or guard run wrote (`added`, paths under the checkout, folders
    expanded by the caller) that Python or the test runner would load implicitly in a later
    process of the same run: a `conftest.py`, `sitecustomize.py`, `*.pth`, a module named like
    the standard library's or an installed one beside a sealed file... Compiled Python (the
    `__pycache__` an interpreter writes, an extension module a build writes beside its
    source), a tool's cache (`.pytest_cache/`: `tool_state`) and a new module no one imports
    are plain output: every run's output is removed before the next run."""

    def read(path: str) -> tuple[bytes | None, bytes | None]:
        return read_sealed(path), b""

    found = implicit_changes(
        [p for p in added if tool_state(p) is None],
        sealed,
        [],
        read,
        is_package,
        importable,
        lambda path: False,
        top_level=False,
        extended=extended,
    )
    # a build in place (`build_ext --inplace`) writes the extension beside its source
    return [f for f in found if "compiled Python" not in f and _UNREADABLE not in f]
