"""The benchmark's output is out of the measured code's reach, while the benchmark runs too.

A sealed benchmark runs the code under test in a child process and prints its line last. That
child leaves a grandchild in its own session that writes a better `METRIC` line into the
benchmark's stdout right after the benchmark's own line, before the benchmark exits
(tests/agents/output_forger.py). The stdout is a socket no process can open through
`/proc/<pid>/fd` (both sandboxes), and in the sandbox the measured code cannot take the
descriptor (`pidfd_getfd`) or trace the benchmark: the forged line never counts, the worse
change is never kept.
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

import pytest

from gitimprove.util import proc
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project
from tests.test_integrity import needs_bwrap, survivors

AGENT = Path(__file__).parent / "agents" / "output_forger.py"
BENCH = """import pathlib, subprocess, sys
subprocess.run([sys.executable, "src/work.py"], check=True)
print("METRIC score=" + pathlib.Path("src/value.txt").read_text().strip(), flush=True)
"""


def forger_project(repo: TmpRepo, how: str, sandbox: str) -> str:
    mark = f"forger-{secrets.token_hex(6)}"
    agent = f"{sys.executable} {AGENT} {how} {mark}"
    value_project(repo, agent, BENCH, {"src/work.py": "pass\n"}, sandbox=sandbox, timeouts=True)
    return mark


@pytest.mark.slow
@pytest.mark.parametrize(
    ("how", "sandbox"),
    [
        ("procfd", "none"),
        pytest.param("procfd", "bwrap", marks=needs_bwrap),
        pytest.param("getfd", "bwrap", marks=needs_bwrap),
    ],
)
def test_a_line_written_into_the_running_benchmarks_stdout_never_counts(
    tmp_repo: TmpRepo, how: str, sandbox: str
) -> None:
    mark = forger_project(tmp_repo, how, sandbox)
    res = tmp_repo.cli("run", "--run", "f", "-n", "2")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = run_rows(tmp_repo, "f")
    assert rows[0]["metric"]["value"] == 100
    for row in rows[1:]:
        assert row["status"] in ("discard", "duplicate", "tampered"), row
        assert (row.get("metric") or {}).get("value") != 1, row
    assert rows[1]["status"] == "discard"
    assert rows[1]["metric"]["value"] == 101
    assert tmp_repo.git("rev-parse", "improve/f") == tmp_repo.git(
        "rev-parse", "refs/improve/runs/f/base"
    )
    assert survivors(mark, tmp_repo) == []


REOPEN = """import os, sys
leader = os.getppid()
target = "/proc/%d/fd/%s" % (leader, sys.argv[1])
try:
    fd = os.open(target, os.O_WRONLY)
except OSError as e:
    print("refused", e.errno, file=sys.stderr)
else:
    os.write(fd, b"METRIC score=1\\n")
"""


@pytest.mark.parametrize("fd", ["1", "2"])
def test_no_process_can_reopen_a_commands_output_through_proc(tmp_path: Path, fd: str) -> None:
    """Without any sandbox: a child of the command (the same user) opens the command's
    stdout or stderr through /proc while the command still runs; the kernel refuses (a socket
    cannot be opened by path), so what the command printed is all there is."""
    script = tmp_path / "reopen.py"
    script.write_text(REOPEN)
    command = f"{sys.executable} {script} {fd}; echo METRIC score=7"
    res = proc.run(command, shell=True, cwd=tmp_path, timeout=20, limit=1 << 20)
    assert res.ok, res.stderr
    assert res.stdout.splitlines() == ["METRIC score=7"], res.stdout
    assert f"refused {__import__('errno').ENXIO}" in res.stderr, res.stderr
    assert "METRIC score=1" not in res.stderr


def test_a_command_still_sees_ordinary_output_streams(tmp_path: Path) -> None:
    """The streams are sockets, yet every ordinary way of printing still works: a shell's
    echo, a child's inherited stdout, a large write, stderr apart from stdout."""
    command = (
        f"echo one; {sys.executable} -c \"import sys; sys.stdout.write('x' * 300000 + '\\\\n')\"; "
        "echo err >&2; printf 'two\\n'"
    )
    res = proc.run(command, shell=True, cwd=tmp_path, timeout=20, limit=1 << 20)
    lines = res.stdout.splitlines()
    assert lines[0] == "one" and lines[1] == "x" * 300000 and lines[2] == "two"
    assert res.stderr == "err\n"
    assert os.path.exists(tmp_path)


STATVFS = """import os, sys
for where in ("/tmp", "/dev/shm"):
    st = os.statvfs(where)
    print(where, st.f_blocks * st.f_frsize)
    try:
        with open(os.path.join(where, "fill"), "wb") as f:
            f.write(b"x" * (12 << 20))
    except OSError as e:
        print(where, "full", e.errno)
"""


@needs_bwrap
@pytest.mark.parametrize("measure", [False, True])
def test_the_sandboxes_private_tmp_and_shm_are_bounded(tmp_path: Path, measure: bool) -> None:
    """`[agent] tmp_size` bounds the private /tmp and /dev/shm of the agent's and the
    measurement's sandbox (a tmpfs is half the RAM otherwise): writing past it is ENOSPC."""
    import errno

    from gitimprove.agents.sandbox import choose

    hidden = tmp_path / "repo"
    hidden.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / "probe.py").write_text(STATVFS)
    box = choose("bwrap", [hidden], tmp_size=8_000_000)
    argv, shell = box.wrap(f"{sys.executable} probe.py", shell=True, workdir=work, measure=measure)
    res = proc.run(argv, shell=shell, cwd=work, timeout=30, limit=1 << 20)
    assert res.ok, res.stderr
    sizes = dict(line.split()[:2] for line in res.stdout.splitlines() if "full" not in line)
    assert set(sizes) == {"/tmp", "/dev/shm"}, res.stdout
    assert all(0 < int(v) <= 8_000_000 + 4096 for v in sizes.values()), sizes
    assert f"/tmp full {errno.ENOSPC}" in res.stdout
    assert f"/dev/shm full {errno.ENOSPC}" in res.stdout


def test_tmp_size_is_a_setting_with_a_bounded_default(tmp_path: Path) -> None:
    from gitimprove import config
    from gitimprove.errors import ConfigError

    (tmp_path / ".gitimprove.toml").write_text('[metric]\ncommand = "true"\n')
    assert config.load(tmp_path).get("agent", "tmp_size") == 2_000_000_000
    (tmp_path / ".gitimprove.toml").write_text(
        '[metric]\ncommand = "true"\n[agent]\ntmp_size = "512MB"\n'
    )
    assert config.load(tmp_path).get("agent", "tmp_size") == 512_000_000
    (tmp_path / ".gitimprove.toml").write_text(
        '[metric]\ncommand = "true"\n[agent]\ntmp_size = "lots"\n'
    )
    with pytest.raises(ConfigError, match="tmp_size"):
        config.load(tmp_path).get("agent", "tmp_size")
