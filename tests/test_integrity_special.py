"""Files git cannot hold (docs/integrity.md): a FIFO, a socket or a device is never silently
left out of the tree, and a symbolic link must resolve to a regular file or a folder inside
the workspace. A hostile agent leaves each; the attempt is `out-of-scope` naming the path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitimprove.git import listing
from gitimprove.git.workspace import agent_workspace, hash_workspace
from gitimprove.loop import scope
from tests.conftest import TmpRepo
from tests.loop_helpers import planned_project, run_rows
from tests.test_integrity import needs_bwrap

AGENT = Path(__file__).parent / "agents" / "special_agent.py"
REFUSED = {  # attack: the path the reason names
    "fifo": "src/fifo",
    "fifo-root": "bench.py.fifo",
    "socket": "src/sock",
    "link-to-fifo": "src/tofifo",
    "link-chain-to-fifo": "src/tofifo",
    "link-loop": "src/self",
    "link-pair-loop": "src/a",
    "link-dangling": "src/gone",
    "link-out": "src/out",
    "fifo-gitignore": ".gitignore (a FIFO",
    "fifo-nested-gitignore": "src/.gitignore (a FIFO",
    "fifo-gitattributes": ".gitattributes (a FIFO",
    "fifo-gitmodules": ".gitmodules (a FIFO",
    "link-gitignore-to-fifo": "src/.gitignore (a FIFO",
    "sparse-gitignore": "src/.gitignore (214,748,364,800 bytes, over scope.max_file_size",
    "nested-repo-fifo-head": "src/sub/.git/HEAD (a FIFO",
    "fifo-gitfile": "src/sub/.git (a FIFO",
}
if os.geteuid() == 0:
    REFUSED["device"] = "src/null"
FINE = ["ignored-fifo", "link-fine"]


def project(repo: TmpRepo, names: list[str], sandbox: str) -> None:
    planned_project(repo, AGENT, names, sandbox, {".gitignore": "build-fifo\n"})


@pytest.mark.parametrize(
    "sandbox", ["none", pytest.param("bwrap", marks=[needs_bwrap, pytest.mark.slow])]
)
@pytest.mark.slow
def test_special_files_and_unresolved_links_are_out_of_scope(
    tmp_repo: TmpRepo, sandbox: str
) -> None:
    names = [*REFUSED, *FINE]
    if sandbox == "bwrap":
        names = ["fifo", "link-loop", "link-to-fifo", "link-fine", "fifo-gitignore"]
        names += ["sparse-gitignore", "nested-repo-fifo-head"]  # no AF_UNIX socket there
    project(tmp_repo, names, sandbox)
    res = tmp_repo.cli("run", "--run", "h", "-n", str(len(names)), "--json")
    assert res.returncode == 0, res.stderr
    rows = {r["description"]: r for r in run_rows(tmp_repo, "h")[1:]}
    for name in names:
        row = rows[name]
        if name in REFUSED:
            assert row["status"] == "out-of-scope", (name, row)
            assert REFUSED[name] in row["reason"], (name, row["reason"])
        else:
            assert row["status"] == "keep", (name, row)
    tip = set(tmp_repo.git("ls-tree", "-r", "--name-only", "improve/h").split("\n"))
    assert "src/alias" in tip and not {REFUSED[n] for n in names if n in REFUSED} & tip, tip


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda ws: os.mkfifo(ws / "deep" / "a" / "f"), "a FIFO"),
        (lambda ws: os.symlink("deep", ws / "to-dir"), None),
        (lambda ws: os.symlink("deep/a/x.txt", ws / "to-file"), None),
        (lambda ws: os.symlink("deep/../deep/a/../a/x.txt", ws / "winding"), None),
        (lambda ws: os.symlink("x/y", ws / "deep" / "nowhere"), "does not resolve"),
        (lambda ws: os.symlink(".git/HEAD", ws / "into-git"), ".git"),
        (lambda ws: (os.mkfifo(ws / "deep" / "p"), os.symlink("deep/p", ws / "l")), "a FIFO"),
    ],
)
def test_what_the_hash_refuses(tmp_repo: TmpRepo, make: object, why: str | None) -> None:
    head = tmp_repo.commit("c", {"deep/a/x.txt": "x\n"})
    with agent_workspace(tmp_repo.open(), head, "w") as ws:
        make(ws)  # type: ignore[operator]
        got = hash_workspace(tmp_repo.open(), ws)
    text = "; ".join(got.refused + got.escaping)
    if why is None:
        assert not text, text
    else:
        assert why in text, text


def _deep(ws: Path, levels: int) -> Path:
    folder = ws.joinpath(*["d"] * levels)
    folder.mkdir(parents=True)
    return folder


@pytest.mark.slow
def test_a_git_input_past_the_walk_times_out_into_a_reason(
    tmp_repo: TmpRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second net: a FIFO git reads where the check does not look (here past a walk cut
    short) makes the listing time out, and the hash names why instead of hanging."""
    head = tmp_repo.commit("c", {"a.txt": "a\n"})
    monkeypatch.setattr(listing, "MAX_DEPTH", 1)
    monkeypatch.setattr(listing, "LIST_TIMEOUT", 2.0)
    with agent_workspace(tmp_repo.open(), head, "w") as ws:
        os.mkfifo(_deep(ws, 3) / ".gitignore")
        got = hash_workspace(tmp_repo.open(), ws)
    assert any("did not list them within 2s" in r for r in got.refused), got.refused


def test_git_failing_to_list_is_a_reason_not_an_error(
    tmp_repo: TmpRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git out of memory on a sparse `.gitignore` the check did not reach: named, not raised."""
    head = tmp_repo.commit("c", {"a.txt": "a\n"})
    monkeypatch.setattr(listing, "MAX_DEPTH", 1)
    with agent_workspace(tmp_repo.open(), head, "w") as ws:
        with open(_deep(ws, 3) / ".gitignore", "wb") as f:
            f.truncate(200 << 30)
        got = hash_workspace(tmp_repo.open(), ws)
    assert any("git could not list them" in r for r in got.refused), got.refused


@pytest.mark.parametrize("name", [".gitignore", "src/.gitattributes", "x/.gitmodules"])
def test_git_inputs_over_the_size_cap_are_removed_before_git_reads_them(
    tmp_repo: TmpRepo, name: str
) -> None:
    head = tmp_repo.commit("c", {"src/a.txt": "a\n", "x/b.txt": "b\n"})
    with agent_workspace(tmp_repo.open(), head, "w") as ws:
        (ws / name).write_text("*.log\n" * 100)
        got = hash_workspace(tmp_repo.open(), ws, max_file=50)
        assert not (ws / name).exists()
    assert any(r.startswith(f"{name} (600 bytes, over scope.max_file_size") for r in got.refused)
    small = hash_workspace(tmp_repo.open(), tmp_repo.path, max_file=10_000)
    assert not small.refused, small.refused


@pytest.mark.parametrize("where", [".gitconfig", ".config/git/ignore", "xdg/git/ignore"])
def test_the_listing_reads_no_global_git_file_an_agent_could_plant(
    tmp_repo: TmpRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Without the sandbox an agent can write the home folder: a FIFO there is never read."""
    head = tmp_repo.commit("c", {"a.txt": "a\n"})
    home = tmp_path / "home"
    (home / where).parent.mkdir(parents=True)
    os.mkfifo(home / where)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    monkeypatch.setattr(listing, "LIST_TIMEOUT", 10.0)
    with agent_workspace(tmp_repo.open(), head, "w") as ws:
        (ws / "new.txt").write_text("n\n")
        got = hash_workspace(tmp_repo.open(), ws)
    assert not got.refused, got.refused


@pytest.mark.parametrize(
    ("path", "pattern"),
    [("tests/test_x\n.py", "tests/**"), ("src/new\nline.txt", "**"), ("a\nb/c.txt", "a\nb")],
)
def test_a_name_with_a_newline_is_matched_like_any_other(path: str, pattern: str) -> None:
    """A sealed `tests/**` covers `tests/test_x\\n.py` (pytest collects it), as `tests/*` does."""
    assert scope.matches(path, [pattern])
    assert scope.sealed_paths([path], [pattern]) == [path]
