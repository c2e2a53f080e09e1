"""Text from records (file names, an agent's description and reasons) is shown, never obeyed:
no control sequence of it reaches the terminal through `run`, `log` (table, TSV), `show` or
`status`; each is shown escaped (`\\x1b`), and a TSV cell holds no control character."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from gitimprove import output
from gitimprove.util.text import cell, printable
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows, value_project

AGENT = Path(__file__).parent / "agents" / "escape_agent.py"
# anything a terminal acts on: C0 but newline and tab, DEL, C1, bidi and invisible formatting
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\x1b[2Kb", "a\\x1b[2Kb"),
        ("t\x1b]0;pwned\x07", "t\\x1b]0;pwned\\x07"),
        ("x\ry", "x\\ry"),
        ("n\nl", "n\\nl"),
        ("c1 \x9b31m", "c1 \\x9b31m"),
        ("bidi \u202eevil", "bidi \\u202eevil"),
        ("zero\u200bwidth", "zero\\u200bwidth"),
        ("plain é 日本", "plain é 日本"),
    ],
)
def test_untrusted_text_is_shown_escaped(text: str, shown: str) -> None:
    assert output.safe(text) == shown == printable(text)
    assert RAW.search(output.safe(text)) is None and "\n" not in output.safe(text)
    assert printable("a\tb\nc\x1b", lines=True) == "a\tb\nc\\x1b"
    assert RAW.search(cell(text)) is None and "\t" not in cell(text) and "\n" not in cell(text)
    assert cell("a\tb\n c\x1b[0m") == "a b c\\x1b[0m"


@pytest.mark.slow
def test_no_control_sequence_reaches_the_terminal(tmp_repo: TmpRepo) -> None:
    value_project(tmp_repo, f"{sys.executable} {AGENT}")
    res = tmp_repo.cli("run", "--run", "h", "-n", "2")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "h")
    assert [r["status"] for r in rows] == ["baseline", "out-of-scope", "keep"], rows
    assert "\x1b" in rows[2]["description"]  # the record keeps what the agent said
    shown = {"run": res.stdout + res.stderr}
    for args in (
        ["log"], ["log", "--run", "h"], ["log", "--format", "tsv"], ["log", "--format", "karpathy"],
        ["log", "--no-cache"], ["show", rows[1]["commit"]], ["show", rows[2]["commit"]],
        ["status"],
    ):  # fmt: skip
        got = tmp_repo.cli(*args)
        assert got.returncode == 0 and "Traceback" not in got.stderr, (args, got.stderr)
        shown[" ".join(args)] = got.stdout + got.stderr
    for what, text in shown.items():
        assert RAW.search(text) is None, (what, [m.group() for m in RAW.finditer(text)])
        assert not any(line.startswith("#1   0000000000") for line in text.splitlines()), what
    assert "\\x1b[2K" in shown["run"] and "\\r" in shown["run"]  # shown, escaped
    assert "\\x1b]0;pwned\\x07" in shown["log --run h"]
    tsv = [line for line in shown["log --format tsv"].splitlines() if not line.startswith("#")]
    assert len(tsv) == 4  # the header and a row an attempt: no cell broke its line
    assert all(line.count("\t") == tsv[0].count("\t") for line in tsv), tsv
    # git prints a commit's message as it is (`git log improve/h`, `git log --oneline`): the
    # harness writes the agent's description into it shown escaped, never as sequences
    for row in rows[1:]:
        message = tmp_repo.git("log", "-1", "--format=%B", str(row["commit"]))
        assert RAW.search(message) is None, (row["status"], message)
        assert "\\x1b]0;pwned\\x07" in message, message
