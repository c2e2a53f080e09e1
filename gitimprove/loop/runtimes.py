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

Each is treated as the files Python loads unnamed are (loop/implicit.py): a change is
`out-of-scope` unless a `[scope] mutable` pattern spells its name, and a metric or guard run
that writes one is tampering.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any

__all__ = ["make_includes", "node_shadows", "package_scripts", "why_runtime"]

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
    ".yarn": "yarn loads it: its release, plugins",
    ".bundle": "bundler reads its config",
    "node_modules": "Node resolves modules from it in place of the installed ones",
}
# files that take the place of one of their folder when new: make reads GNUmakefile, then
# makefile, then Makefile; cargo builds and runs a build.rs beside Cargo.toml
_NEW = {
    "GNUmakefile": "make reads it in place of Makefile",
    "makefile": "make reads it in place of Makefile",
    "build.rs": "cargo builds and runs it before the package",
    "gradle-wrapper.properties": "the Gradle wrapper reads it: the Gradle it downloads",
}


def why_runtime(path: str, new: bool) -> tuple[str, str] | None:
    """(why, the name a mutable pattern must spell) when another language's runner or runtime
    loads `path` without its name being on the command line; `new`: the run's base lacks it."""
    parts = path.split("/")
    name = parts[-1]
    for part in parts[:-1]:
        if part in _FOLDERS:
            return _FOLDERS[part], part
    if name in _FILES:
        return _FILES[name], name
    for prefix, why in _PREFIXES.items():
        if name.startswith(prefix):
            return why, prefix
    if new and name in _NEW:
        return _NEW[name], name
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
    return tuple(
        doc.get(k) for k in ("scripts", "packageManager", "main", "exports", "imports", "type")
    )


# what Node (and TypeScript's runners) try for `require("./x")` or `import "./x"`, in order
_JS_SOURCES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")
_JS_TRIES = ("", *_JS_SOURCES, ".json", ".node")
_RELATIVE = re.compile(
    r"""(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s*|\bimport\s+)(['"`])(\.{1,2}/[^'"`\n]*|\.{1,2})\1"""
)


def node_shadows(path: str, source: bytes) -> dict[str, str]:
    """{file a relative `require` or `import` of the JavaScript or TypeScript file `path` may
    resolve to: the specifier} — every place Node looks, so that a new file at any of them can
    be named (it would be loaded in place of, or before, what the sealed file loads)."""
    if not path.endswith(_JS_SOURCES):
        return {}
    folder = posixpath.dirname(path)
    text = source[:1_000_000].decode("utf-8", "replace")
    out: dict[str, str] = {}
    for match in _RELATIVE.finditer(text):
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


def make_includes(path: str, source: bytes) -> list[str]:
    """The files (glob patterns, from the repository's root) that the make file `path`
    includes, as written in its `include`, `-include` and `sinclude` lines; words naming a
    variable are left out (their value is not known here)."""
    name = path.rpartition("/")[2]
    if name not in _MAKE_FILES and not name.endswith(".mk"):
        return []
    folder = posixpath.dirname(path)
    text = source[:1_000_000].decode("utf-8", "replace").replace("\\\n", " ")
    out: list[str] = []
    for match in _INCLUDE.finditer(text):
        for word in match.group(1).split():
            if "$" in word or word.startswith("/"):
                continue
            # make reads it from the folder it runs in: the make file's, or the root's for a
            # file that one includes
            for base in dict.fromkeys((folder, "")):
                target = posixpath.normpath(posixpath.join(base, word))
                if not target.startswith(".."):
                    out.append(target)
    return out
