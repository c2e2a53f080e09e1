"""What a sealed `tsconfig.json` reaches through `extends` is judged as the tsconfig itself is.

tsx, ts-node, vite-tsconfig-paths and a jest mapper built from the config resolve `@lib/x`
through the `paths` and `baseUrl` of the whole `extends` chain: a relative file under another
name (`./configs/base.json`, `./configs/base` taking `.json`), each of an array, a file that
one extends in turn, a package of `node_modules` (`@tsconfig/node20`). An agent that leaves
the sealed `tsconfig.json` alone and changes `paths` in the file it extends sends the sealed
benchmark's import to a file of its own; it must be `out-of-scope`, never kept, in both
sandbox modes. The benchmark here resolves its import as those loaders do (no TypeScript
loader is installed where the tests run): the chain, in order, the last `paths` winning."""

from __future__ import annotations

import json

import pytest

from gitimprove.loop.implicit import implicit_changes
from gitimprove.loop.runtimes import ts_extended
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity_runtimes import SANDBOXES, needs_node, one_attempt, project

# the sealed benchmark: resolves `@lib/value` through tsconfig.json's extends chain
BENCH = r"""const fs = require("fs"), path = require("path");
function file(p) { try { return fs.statSync(p).isFile(); } catch { return false; } }
function find(spec, from) {
  if (spec.startsWith("./") || spec.startsWith("../")) {
    const p = path.join(from, spec);
    return file(p) ? p : p + ".json";
  }
  for (let d = from; ; d = path.dirname(d)) {
    const base = path.join(d, "node_modules", spec);
    for (const p of [base, base + ".json", path.join(base, "tsconfig.json")]) if (file(p)) return p;
    if (d === path.dirname(d) || d === ".") throw new Error("no " + spec);
  }
}
function load(p) {
  const doc = JSON.parse(fs.readFileSync(p, "utf8").replace(/\/\/[^\n]*/g, "").replace(/,(\s*[}\]])/g, "$1"));
  const opts = {};
  for (const e of [].concat(doc.extends || [])) Object.assign(opts, load(find(e, path.dirname(p))));
  const own = doc.compilerOptions || {};
  if (own.baseUrl !== undefined) opts.baseUrl = path.join(path.dirname(p), own.baseUrl);
  if (own.paths !== undefined) { opts.paths = own.paths; opts.pathsFrom = opts.baseUrl || path.dirname(p); }
  return opts;
}
const o = load("tsconfig.json");
const target = o.paths["@lib/*"][0].replace("*", "value.txt");
const v = parseFloat(fs.readFileSync(path.join(o.pathsFrom, target), "utf8"));
console.log(`METRIC score=${v}`);
"""
PATHS = '{"compilerOptions": {"baseUrl": "..", "paths": {"@lib/*": ["src/lib/*"]}}}\n'
FAST = "mkdir -p src/fast && echo 1 > src/fast/value.txt\n"
REDIRECT = "sed -i 's#src/lib/#src/fast/#' {file}\n" + FAST

# (the project's files beside the benchmark, the hostile agent, what the reason names)
CASES = {
    "relative": (
        {"tsconfig.json": '{"extends": "./configs/base.json"}', "configs/base.json": PATHS},
        REDIRECT.format(file="configs/base.json"),
        "configs/base.json (tsconfig.json extends it",
    ),
    "without-json": (  # `./configs/base` takes `.json`
        {"tsconfig.json": '{"extends": "./configs/base"}', "configs/base.json": PATHS},
        REDIRECT.format(file="configs/base.json"),
        "configs/base.json (tsconfig.json extends it",
    ),
    "array": (
        {
            "tsconfig.json": '{"extends": ["./configs/strict.json", "./configs/paths"]}',
            "configs/strict.json": '{"compilerOptions": {"strict": true}}',
            "configs/paths.json": PATHS,
        },
        REDIRECT.format(file="configs/paths.json"),
        "configs/paths.json (tsconfig.json extends it",
    ),
    "chain": (
        {
            "tsconfig.json": '{"extends": "./configs/base.json"}',
            "configs/base.json": '{"extends": "../common/paths.json", "compilerOptions": {}}',
            "common/paths.json": PATHS.replace('".."', '"../"'),
        },
        REDIRECT.format(file="common/paths.json"),
        "common/paths.json (tsconfig.json extends it",
    ),
    "package": (  # resolved from node_modules, as `@tsconfig/node20` is
        {
            "tsconfig.json": '{"extends": "@acme/tsconfig"}',
            "node_modules/@acme/tsconfig/tsconfig.json": PATHS.replace('".."', '"../../.."'),
            "node_modules/@acme/tsconfig/package.json": '{"name": "@acme/tsconfig"}',
        },
        REDIRECT.format(file="node_modules/@acme/tsconfig/tsconfig.json"),
        "node_modules/@acme/tsconfig/tsconfig.json (tsconfig.json extends it",
    ),
    "shadowing": (  # a new `configs/base` is taken before `configs/base.json`
        {"tsconfig.json": '{"extends": "./configs/base"}', "configs/base.json": PATHS},
        "sed 's#src/lib/#src/fast/#' configs/base.json > configs/base\n" + FAST,
        "configs/base (a new file TypeScript may take for the extends of tsconfig.json",
    ),
}
# the user lets the agent change node_modules (the pattern spells it): the extended file
# within is still judged by its content
MUTABLE = '"**", "node_modules/**"'


def _project(repo: TmpRepo, tmp_path, case: str, agent: str, sandbox: str) -> None:  # type: ignore[no-untyped-def]
    files, _, _ = CASES[case]
    project(
        repo,
        tmp_path,
        metric="node bench.js",
        files={"bench.js": BENCH, "src/lib/value.txt": "100\n", **files},
        sealed='"bench.js", "src/lib/**"',  # tsconfig.json: judged by its content
        agent=agent,
        sandbox=sandbox,
        mutable=MUTABLE,
    )


@pytest.mark.slow
@needs_node
@pytest.mark.parametrize("case", list(CASES))
def test_a_file_a_sealed_tsconfig_extends_is_judged_by_its_content(
    tmp_repo: TmpRepo,
    tmp_path,
    case: str,  # type: ignore[no-untyped-def]
) -> None:
    _, agent, named = CASES[case]
    _project(tmp_repo, tmp_path, case, agent, "none")
    row = one_attempt(tmp_repo)
    assert row["status"] == "out-of-scope", row
    assert named in str(row["reason"]), row
    assert "which file an import loads" in str(row["reason"]) or "new file" in named


@pytest.mark.slow
@needs_node
@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("case", ["relative", "package"])
def test_in_both_modes_the_extended_file_is_out_of_scope_and_an_honest_change_is_kept(
    tmp_repo: TmpRepo,
    tmp_path,
    case: str,
    sandbox: str,  # type: ignore[no-untyped-def]
) -> None:
    _, agent, named = CASES[case]
    _project(tmp_repo, tmp_path, case, agent, sandbox)
    row = one_attempt(tmp_repo)
    assert row["status"] == "out-of-scope" and named in str(row["reason"]), row


@pytest.mark.slow
@needs_node
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_an_honest_change_beside_an_extended_tsconfig_is_kept(
    tmp_repo: TmpRepo,
    tmp_path,
    sandbox: str,  # type: ignore[no-untyped-def]
) -> None:
    """What does not choose which file an import loads may change in the extended file too."""
    agent = (
        'sed -i \'s#"baseUrl"#"target": "es2022", "baseUrl"#\' configs/base.json\n'
        "mkdir -p src/other && echo hello > src/other/notes.txt\n"
    )
    files, _, _ = CASES["relative"]
    project(
        tmp_repo,
        tmp_path,
        metric="node bench.js",
        files={"bench.js": BENCH, "src/lib/value.txt": "100\n", **files},
        sealed='"bench.js", "tsconfig.json"',
        agent=agent + "echo 50 > src/lib/value.txt\n",
        sandbox=sandbox,
        mutable=MUTABLE,
    )
    row = one_attempt(tmp_repo)
    assert row["status"] == "keep", row


def _judge(base: dict[str, str], after: dict[str, str | None], mutable: list[str]) -> list[str]:
    def read(path: str) -> tuple[bytes | None, bytes | None]:
        b, a = base.get(path), after.get(path, base.get(path))
        return (None if b is None else b.encode(), None if a is None else a.encode())

    changed = sorted(set(after))
    extended = ts_extended(
        [p for p in base if p.rpartition("/")[2].startswith(("tsconfig.", "jsconfig."))],
        lambda p: read(p)[0],
    )
    return implicit_changes(
        changed,
        ["bench.js"],
        mutable,
        read,
        lambda folder: False,
        existed=lambda p: p in base,
        extended=extended,
    )


PATHS_DOC = json.loads(PATHS)


@pytest.mark.parametrize(
    ("base", "after", "mutable", "flagged"),
    [
        # a jsconfig, an extends through a folder's own tsconfig.json
        (
            {"app/jsconfig.json": '{"extends": "../cfg"}', "cfg/tsconfig.json": PATHS},
            {"cfg/tsconfig.json": PATHS.replace("lib", "fast")},
            ["**"],
            True,
        ),
        # the package's `tsconfig` field names the file it extends
        (
            {
                "tsconfig.json": '{"extends": "base-cfg"}',
                "node_modules/base-cfg/package.json": '{"tsconfig": "./cfg/ts.json"}',
                "node_modules/base-cfg/cfg/ts.json": PATHS,
            },
            {"node_modules/base-cfg/cfg/ts.json": PATHS.replace("lib", "fast")},
            ["**", "node_modules/**"],
            True,
        ),
        # a nested config's package resolved from a node_modules of a folder above it
        (
            {
                "pkg/a/tsconfig.json": '{"extends": "shared-cfg/base.json"}',
                "node_modules/shared-cfg/base.json": PATHS,
            },
            {"node_modules/shared-cfg/base.json": PATHS.replace("lib", "fast")},
            ["**", "node_modules/**"],
            True,
        ),
        # removed: TypeScript takes what is next, or fails
        (
            {"tsconfig.json": '{"extends": "./base.json"}', "base.json": PATHS},
            {"base.json": None},
            ["**"],
            True,
        ),
        # named in mutable (the pattern spells it): allowed
        (
            {"tsconfig.json": '{"extends": "./base.json"}', "base.json": PATHS},
            {"base.json": PATHS.replace("lib", "fast")},
            ["**", "base.json"],
            False,
        ),
        # what only checks or emits the code may change
        (
            {"tsconfig.json": '{"extends": "./base.json"}', "base.json": PATHS},
            {"base.json": PATHS.replace('{"baseUrl"', '{"strict": true, "baseUrl"')},
            ["**"],
            False,
        ),
        # a file no config extends is not judged
        (
            {"tsconfig.json": '{"extends": "./base.json"}', "base.json": PATHS},
            {"other.json": PATHS.replace("lib", "fast")},
            ["**"],
            False,
        ),
        # outside the repository: not followed (nothing to judge here)
        (
            {"tsconfig.json": '{"extends": "../../up.json"}'},
            {"x.json": PATHS},
            ["**"],
            False,
        ),
    ],
)
def test_what_an_extends_reaches(
    base: dict[str, str], after: dict[str, str | None], mutable: list[str], flagged: bool
) -> None:
    assert bool(_judge(base, after, mutable)) == flagged


def test_a_cycle_of_extends_ends() -> None:
    base = {"tsconfig.json": '{"extends": "./a.json"}', "a.json": '{"extends": "./tsconfig.json"}'}
    reached = ts_extended(["tsconfig.json"], lambda p: (base.get(p) or "").encode() or None)
    assert "a.json" in reached


def test_an_extends_through_a_symbolic_link_reaches_the_file_it_leads_to(tmp_repo: TmpRepo) -> None:
    """A workspace package linked into `node_modules` (`@acme/cfg` → `packages/cfg`): the
    file TypeScript reads is the one under `packages/`, judged as the config itself."""
    import os

    from gitimprove.git import trees
    from gitimprove.loop.implicit import ts_extended_in

    tmp_repo.gen(
        {
            "tsconfig.json": '{"extends": "@acme/cfg/base.json"}',
            "packages/cfg/base.json": PATHS,
            "configs/real.json": PATHS,
        }
    )
    (tmp_repo.path / "node_modules" / "@acme").mkdir(parents=True)
    os.symlink("../../packages/cfg", tmp_repo.path / "node_modules" / "@acme" / "cfg")
    os.symlink("configs/real.json", tmp_repo.path / "linked.json")
    (tmp_repo.path / "jsconfig.json").write_text('{"extends": "./linked.json"}')
    commit = tmp_repo.commit("linked")
    repo = tmp_repo.open()
    reached = ts_extended_in(repo, trees.tree_of(repo, commit))
    assert reached["packages/cfg/base.json"] == "tsconfig.json", reached
    assert reached["configs/real.json"] == "jsconfig.json", reached
    assert trees.real_path(repo, trees.tree_of(repo, commit), "node_modules/@acme/cfg/x") == (
        "packages/cfg/x"
    )


# the sealed benchmark of the absolute case: `@lib/value` through the chain's `paths` when one
# is set, `src/lib/value.txt` otherwise; an absolute `extends` is a file outside the tree
BENCH_OUTSIDE = r"""const fs = require("fs"), path = require("path");
function load(p) {
  const doc = JSON.parse(fs.readFileSync(p, "utf8"));
  const opts = {};
  for (const e of [].concat(doc.extends || [])) {
    const f = fs.existsSync(e) ? e : e + ".json";
    Object.assign(opts, load(path.isAbsolute(f) ? f : path.join(path.dirname(p), f)));
  }
  const own = doc.compilerOptions || {};
  if (own.baseUrl !== undefined) opts.baseUrl = path.resolve(path.dirname(p), own.baseUrl);
  if (own.paths !== undefined) { opts.paths = own.paths; opts.pathsFrom = opts.baseUrl || path.dirname(p); }
  return opts;
}
const o = load("tsconfig.json");
const file = o.paths ? path.resolve(o.pathsFrom, o.paths["@lib/*"][0].replace("*", "value.txt"))
  : "src/lib/value.txt";
console.log(`METRIC score=${parseFloat(fs.readFileSync(file, "utf8"))}`);
"""


@needs_node
@pytest.mark.parametrize("spelled", ["/base.json", "/base"])
def test_a_tsconfig_extending_a_file_outside_the_repository_by_absolute_name(
    tmp_repo: TmpRepo,
    tmp_path,
    spelled: str,  # type: ignore[no-untyped-def]
) -> None:
    """The file is outside the tree, so no scope judges it; without the sandbox an agent gave
    it `paths` sending the sealed benchmark's import to a file of its own (kept at 1 against
    100). It is watched as a file the metric command names: the attempt is `tampered`, the
    run stops naming it."""
    shared = tmp_path / "shared"
    shared.mkdir()
    base = shared / "base.json"
    base.write_text('{"compilerOptions": {"strict": true}}\n')
    evil = tmp_path / "evil"
    agent = (
        f"mkdir -p {evil} && echo 1 > {evil}/value.txt\n"
        f'echo \'{{"compilerOptions": {{"baseUrl": "{evil}", "paths": {{"@lib/*": ["*"]}}}}}}\''
        f" > {base}\necho note > src/note.txt\n"
    )
    project(
        tmp_repo,
        tmp_path,
        metric="node bench.js",
        files={
            "bench.js": BENCH_OUTSIDE,
            "src/lib/value.txt": "100\n",
            "tsconfig.json": json.dumps({"extends": f"{shared}{spelled}"}),
        },
        sealed='"bench.js", "src/lib/**", "tsconfig.json"',
        agent=agent,
        sandbox="none",
    )
    res = tmp_repo.cli("run", "--run", "t", "-n", "2")
    assert res.returncode == 1, (res.stdout, res.stderr)
    assert str(base) in res.stderr and "stopped" in res.stderr, res.stderr
    rows = run_rows(tmp_repo, "t")
    assert [r["status"] for r in rows] == ["baseline", "tampered"], rows
    assert tmp_repo.git("rev-parse", "improve/t") == tmp_repo.git(
        "rev-parse", "refs/improve/runs/t/base"
    )
