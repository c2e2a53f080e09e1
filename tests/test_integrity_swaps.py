"""An agent that attacks its workspace folder itself, the harness's process table, or the
reading of its report (docs/integrity.md), through a real `git improve run` with
tests/agents/swap_agent.py, with and without the sandbox.

Without the sandbox, a workspace replaced by a link (to a copy, or to your work tree), a file,
a FIFO, or moved away is a write into gitimprove's folder: `tampered`, nothing followed or
read through it, and the run goes on; in the sandbox the workspace is a mount the agent cannot
move. A root of mode 000, thousands of unreaped children and a report of 180 KB change
nothing. A report of brackets held the loop for 26 s while it was read. A link named
`.gitmodules` (or `GITMOD~1`) was kept: the run branch was one `git switch` refused and
`git fsck` failed on; it is `out-of-scope`."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from gitimprove.agents.base import json_values, last_json_object
from gitimprove.git.attributes import tree_reader
from gitimprove.git.workspace import agent_workspace, hash_workspace
from gitimprove.loop.implicit import implicit_in
from tests.conftest import TmpRepo
from tests.loop_helpers import planned_project, run_rows
from tests.test_integrity import BENCH, MOD, needs_bwrap, needs_landlock, user_state

AGENT = Path(__file__).parent / "agents" / "swap_agent.py"
ATTACKS = [  # attack, its status without the sandbox | in it
    ("ws-link:95", "tampered|keep"),
    ("ws-link-user:94", "tampered|keep"),
    ("ws-gone:93", "tampered|keep"),
    ("ws-file:92", "tampered|keep"),
    ("ws-fifo:91", "tampered|keep"),
    ("ws-mode:90.5", "keep"),
    ("zombies:2000", "keep"),  # value 90
    ("zombies-left", "no-op"),  # value 90 again
    ("long-text:89", "keep"),
    ("link-dotfile:.gitmodules/88", "out-of-scope"),  # a link git refuses by that name
    ("link-dotfile:GITMOD~1/88", "out-of-scope"),
    ("gitmodules-url:87", "out-of-scope"),  # a URL git would read as an option
    ("long-attributes:87", "out-of-scope"),  # a line git's fsck refuses
    ("slow-report:nest", "crash"),  # its value is no number: the metric fails
]


def project(repo: TmpRepo, names: list[str], sandbox: str) -> None:
    planned_project(repo, AGENT, names, sandbox, {"README.txt": "readme\n"}, 'timeout = "20s"\n')


@pytest.mark.slow
@pytest.mark.parametrize(
    "sandbox",
    [
        "none",
        pytest.param("bwrap", marks=needs_bwrap),
        pytest.param("landlock", marks=needs_landlock),
    ],
)
def test_an_agent_that_swaps_its_workspace(tmp_repo: TmpRepo, sandbox: str) -> None:
    project(tmp_repo, [a for a, _ in ATTACKS], sandbox)
    before = user_state(tmp_repo)
    res = tmp_repo.cli("run", "--run", "h", "-n", str(len(ATTACKS)), "--json")
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    rows = run_rows(tmp_repo, "h")
    assert [r["iteration"] for r in rows] == list(range(len(ATTACKS) + 1))
    want = [s.split("|")[0 if sandbox == "none" else -1] for _, s in ATTACKS]
    got = [r["status"] for r in rows[1:]]
    assert got == want, [(r["status"], r.get("reason")) for r in rows[1:]]
    by = {r["description"].split(" ")[0]: r for r in rows[1:]}
    if sandbox == "none":
        for attack in ("ws-link:95", "ws-link-user:94", "ws-file:92", "ws-fifo:91"):
            assert "(replaced)" in by[attack]["reason"], by[attack]["reason"]
        assert "-elsewhere (a folder gitimprove did not write there)" in by["ws-gone:93"]["reason"]
    assert "zombies-left:0" in by, "the harness holds the agent's dead children unreaped"
    long = by["long"]  # the report read, its text clipped
    assert long["status"] == "keep" and len(long["description"]) <= 300
    for name in (".gitmodules", "GITMOD~1"):
        reason = by[f"link-dotfile:{name}/88"]["reason"]
        assert f"{name} (a link named .gitmodules: git refuses it)" in reason, reason
    reason = by["gitmodules-url:87"]["reason"]
    assert ".gitmodules (git refuses it: gitmodulesUrl: disallowed submodule url" in reason
    reason = by["long-attributes:87"]["reason"]
    assert ".gitattributes (git refuses it: gitattributesLineLength" in reason, reason
    tmp_repo.git("fsck", "--no-progress")  # no tree of the run holds what git's fsck refuses
    assert user_state(tmp_repo) == before
    assert tmp_repo.git("rev-parse", "improve/h") == by["long"]["commit"]
    work = tmp_repo.path / ".git" / "improve" / "work"
    assert not [p.name for p in work.iterdir() if p.is_dir() or p.is_symlink()]


GITMODULES = [  # a .gitmodules of the candidate's, and what git's fsck says of it
    ('[submodule "x"]\n\tpath = a\n\turl = ./ok\n', None),
    ('[submodule "x"]\n\turl = "--upload-pack=touch x"\n', "gitmodulesUrl"),
    ('[submodule "x"]\n\turl = ./a%0ab\n', "gitmodulesUrl"),  # a line end, URL-encoded
    ('[submodule "x"]\n\tpath = -a\n', "gitmodulesPath"),
    ('[submodule "../x"]\n\tpath = a\n', "gitmodulesName"),
    ('[submodule "x"]\n\tpath = a\n\tupdate = !sh x\n', "gitmodulesUpdate"),
]


@pytest.mark.parametrize(("content", "check"), GITMODULES)
@pytest.mark.parametrize("name", [".gitmodules", "src/GITMOD~1"])
def test_a_gitmodules_git_refuses_is_left_out(
    tmp_repo: TmpRepo, content: str, check: str | None, name: str
) -> None:
    head = tmp_repo.commit("c", {"src/value.txt": "1\n"})
    with agent_workspace(tmp_repo.open(), head, "w") as ws:
        (ws / name).write_text(content)
        (ws / "src" / ".gitmodules.").mkdir()  # a folder git reads as .gitmodules
        (ws / "src" / ".gitmodules." / "x").write_text("x\n")
        got = hash_workspace(tmp_repo.open(), ws)
    assert "src/.gitmodules./x (in a folder named .gitmodules: git refuses it)" in got.refused
    named = [r for r in got.refused if r.startswith(name + " ")]
    if check is None:
        assert not named, got.refused
    else:
        assert named == [named[0]] and f"git refuses it: {check}: disallowed" in named[0]


@pytest.mark.parametrize("name", [".gitattributes", "src/GITATT~1", "src/.gitattributes."])
def test_a_gitattributes_git_refuses_is_left_out(tmp_repo: TmpRepo, name: str) -> None:
    """A line over 2,048 bytes (a comment, no attribute): `gitattributesLineLength`."""
    head = tmp_repo.commit("c", {"src/value.txt": "1\n"})
    with agent_workspace(tmp_repo.open(), head, "w") as ws:
        (ws / name).write_text("# " + "x" * 3000 + "\n")
        (ws / "src" / "ok").mkdir()
        (ws / "src" / "ok" / ".gitattributes").write_text("# " + "x" * 2000 + "\n")
        got = hash_workspace(tmp_repo.open(), ws)
    assert got.refused == [
        f"{name} (git refuses it: gitattributesLineLength: .gitattributes "
        "has too long lines to parse)"
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    "sandbox",
    [
        "none",
        pytest.param("bwrap", marks=needs_bwrap),
        pytest.param("landlock", marks=needs_landlock),
    ],
)
def test_an_agent_that_outstays_its_timeout(tmp_repo: TmpRepo, sandbox: str) -> None:
    """Deaf to SIGTERM beside a child with no file descriptors in its own session, or 300
    sleeping children and a chain 300 deep: stopped at its timeout (under bubblewrap the
    swarm dies with the agent), nothing left alive, the run goes on."""
    project(tmp_repo, ["hang:95", "swarm:300", "set:80"], sandbox)
    tmp_repo.git("config", "improve.agent.timeout", "8s")  # the swarm starts in time, loaded
    res = tmp_repo.cli("run", "--run", "h", "-n", "3", "--json")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "h")
    # its children hold its stdout open until they are killed, in time or not (bubblewrap's
    # pid namespace dies with the agent)
    swarm = {"keep"} if sandbox == "bwrap" else {"keep", "timeout"}
    statuses = [r["status"] for r in rows]
    assert statuses[:2] == ["baseline", "timeout"] and statuses[3] == "keep", statuses
    assert statuses[2] in swarm, statuses
    assert rows[1]["agent"]["seconds"] < 30  # not its 600 s
    plan = str(tmp_repo.path.parent / "plan.json").encode()
    assert not [pid for pid in os.listdir("/proc") if pid.isdigit() and _ours(pid, plan)]


def _ours(pid: str, plan: bytes) -> bool:
    """Whether a live process runs this test's agent (a dead one may linger in /proc)."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return plan in cmd and state not in "ZX"


@pytest.mark.slow
@pytest.mark.parametrize(
    "sandbox",
    [
        pytest.param("bwrap", marks=needs_bwrap),
        pytest.param("landlock", marks=needs_landlock),
    ],
)
def test_measured_code_cannot_take_a_siblings_number(tmp_repo: TmpRepo, sandbox: str) -> None:
    """In a tournament, candidate 0's code (its own value 60) returns one less than the best
    value it finds in the folders beside its checkout: candidate 1's honest 50 there made it
    49, kept over the candidate that earned it. bwrap hides those folders, Landlock carves
    them out of the reads; without a sandbox it can (docs/integrity.md), when the sibling's
    folder is there at that moment, so that case is no test."""
    plan = tmp_repo.path.parent / "plan.json"
    plan.write_text(json.dumps({"1.0": "thief:60", "1.1": "set:50"}))
    tmp_repo.commit(
        "project",
        {
            "bench.py": BENCH,
            "src/mod.py": MOD,
            "src/value.txt": "100\n",
            ".gitimprove.toml": f"""[metric]
command = "{sys.executable} bench.py"

[scope]
mutable = ["src/**"]
sealed = ["bench.py"]

[agent]
name = "command"
command = "{sys.executable} {AGENT} {plan}"
sandbox = "{sandbox}"
timeout = "20s"
""",
        },
    )
    res = tmp_repo.cli("run", "--run", "h", "-n", "1", "--candidates", "2", "--json")
    assert res.returncode == 0, res.stderr
    rows = {r.get("description"): r for r in run_rows(tmp_repo, "h")[1:]}
    assert rows["thief:60"]["metric"]["value"] == 60
    assert rows["set:50"]["status"] == "keep"


BRACKETS = {  # output of brackets: each one a try that failed late (seconds before: 26 in all)
    "nested arrays": "[1," * 70_000,  # 13 s
    "nested objects": '{"a":[' * 40_000,  # 7 s
    "arrays of objects": '[{"a":1},' * 25_000,  # 10 s
    "braces in a string": '{"' + "{" * 199_990,  # 8 s
    "open strings": '["' * 100_000,  # 5 s
}


@pytest.mark.parametrize("name", BRACKETS)
def test_a_report_after_brackets_is_read_quickly(name: str) -> None:
    start = time.process_time()
    got = last_json_object(BRACKETS[name] + '\n{"description": "ok"}\n')
    assert got == {"description": "ok"}
    assert time.process_time() - start < 3


def test_values_across_the_reading_window() -> None:
    """A value longer than the first window read is read whole; one cut there is not."""
    for size in range(1000, 1040):
        for tail in ("true}", "false}", "null}", "-12.5e3}", '"\\u00e9"}', '"\\n"}', "[1, 2]}"):
            doc = '{"p": "' + "q" * size + '", "x": ' + tail
            assert last_json_object("prose " + doc) == json.loads(doc), (size, tail)
        assert json_values(doc[:-1]) == [[1, 2]]  # cut: only what it holds whole
    inner = '[{"type": "result", "n": 1}, ' + '"x", ' * 5000  # a truncated array: its items
    assert json_values(inner) == [{"type": "result", "n": 1}]


@pytest.mark.slow
def test_a_candidate_of_thousands_of_folders_is_judged_quickly(tmp_repo: TmpRepo) -> None:
    """2,000 new folders in one: every path read through that folder parsed its tree again
    (libgit2 caches no tree over 4 KB), 10 reads a file, and the run took a minute to judge
    the attempt; each folder is read once now."""
    base = tmp_repo.commit("base", {"src/value.txt": "1\n", "bench.py": "print(1)\n"})
    name = "n" * 200
    cand = tmp_repo.commit("many", {f"src/{name}{i}/config.py": "x = 1\n" for i in range(2000)})
    repo = tmp_repo.open()
    tree = tmp_repo.git("rev-parse", f"{cand}^{{tree}}")
    base_tree = tmp_repo.git("rev-parse", f"{base}^{{tree}}")
    start = time.process_time()
    found = implicit_in(repo, base_tree, tree, base_tree, ["src/**"])
    took = time.process_time() - start
    assert found == []
    assert took < 2, f"{took:.1f} s to judge 2,000 new folders"  # was 5.4 s
    read = tree_reader(repo, repo.raw[tree])
    assert read(f"src/{name}7/config.py") == b"x = 1\n" and read("src/nothing") is None
